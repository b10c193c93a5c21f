"""layer_norm on both of its paths: the compiled row kernels (Numba, the lampy[fast]
extra) and the numpy fallback. Each path against float64 math and against the other,
gradients against finite differences, float32 kept float32 (results and saved arrays;
inside the compiled kernels: test_numba_kernels.py), the edge cases (empty batch, d = 1,
1-d input, no weight or no bias, non-contiguous arrays), and threads."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy._errors import ShapeError
from lampy.nn.functional import _normalization, _shared
from lampy.testing import check_grad
from tests.nn.test_float32_kernels import _captured_arrays


def _reference(
    x: np.ndarray, k: int, w: np.ndarray | None, b: np.ndarray | None, g: np.ndarray, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Value and input, weight and bias gradients of layer_norm over the last k axes, in
    float64 (eps rounded to the input's dtype first, as both paths add it)."""
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    w64 = np.ones(x.shape[x.ndim - k :]) if w is None else w.astype(np.float64)
    b64 = 0.0 if b is None else b.astype(np.float64)
    mu = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mu) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + float(x.dtype.type(eps)))
    xhat = (x64 - mu) * rstd
    dxhat = g64 * w64
    dx = rstd * (
        dxhat
        - dxhat.mean(axis=axes, keepdims=True)
        - xhat * (dxhat * xhat).mean(axis=axes, keepdims=True)
    )
    return xhat * w64 + b64, dx, (g64 * xhat).sum(axis=lead), g64.sum(axis=lead)


def _run(
    x: np.ndarray,
    shape: tuple[int, ...],
    w: np.ndarray | None,
    b: np.ndarray | None,
    g: np.ndarray,
    eps: float = 1e-5,
) -> list[Any]:
    """layer_norm's value and the input, weight and bias gradients (None where absent)."""
    with lampy.Scope():
        px = lampy.param(x)
        pw = None if w is None else lampy.param(w)
        pb = None if b is None else lampy.param(b)
        y = F.layer_norm(px, shape, pw, pb, eps=eps)
        y.backward(g)
        return [
            y.value.copy(),
            None if px.grad is None else px.grad.copy(),
            None if pw is None or pw.grad is None else pw.grad.copy(),
            None if pb is None or pb.grad is None else pb.grad.copy(),
        ]


# (input shape, normalized_shape): rows of many values, several trailing axes, d = 1, a
# 1-d input (one row), an empty batch
SHAPES = [
    ((6, 40), (40,)),
    ((2, 3, 4, 5), (4, 5)),
    ((7, 1), (1,)),
    ((9,), (9,)),
    ((0, 6), (6,)),
]
AFFINE = ["weight+bias", "weight", "bias", "none"]
# per dtype: tolerance relative to the largest reference entry, for the value and for
# the gradients (float32: a few units of float32 resolution, here for rows centred at
# 100 whose spread is 1, so that centring loses about 7 bits)
TOL = {np.float32: (2e-5, 5e-5), np.float64: (1e-12, 1e-11)}


def _close(got: Any, want: Any, tol: float, what: str) -> None:
    assert got.shape == want.shape, what
    if want.size:
        scale = max(float(np.abs(want).max()), 1.0)
        err = float(np.abs(got.astype(np.float64) - want).max())
        assert err <= tol * scale, f"{what}: {err:.3g} > {tol:.1g} * {scale:.3g}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", AFFINE)
@pytest.mark.parametrize(("xshape", "shape"), SHAPES)
def test_layer_norm_against_float64(
    path: Any, dtype: Any, affine: str, xshape: tuple[int, ...], shape: tuple[int, ...]
) -> None:
    """Each path's value and gradients are in the input's dtype and match float64 math,
    with weight and bias, either one alone or neither, for rows centred at 100; the
    compiled path runs its kernels whenever there are values to normalise."""
    rng = np.random.default_rng(len(xshape) * 10 + len(affine))
    x = (rng.normal(size=xshape) + 100).astype(dtype)
    g = rng.normal(size=xshape).astype(dtype)
    w = rng.normal(size=shape).astype(dtype) if "weight" in affine else None
    b = rng.normal(size=shape).astype(dtype) if "bias" in affine else None
    got = _run(x, shape, w, b, g)
    want = _reference(x, len(shape), w, b, g, 1e-5)
    vtol, gtol = TOL[dtype]
    for i, what in enumerate(["value", "dx", "dweight", "dbias"]):
        if i >= 2 and (w, b)[i - 2] is None:
            assert got[i] is None
            continue
        assert got[i].dtype == dtype, what
        _close(got[i], want[i], vtol if i == 0 else gtol, what)
    if path is not None:
        n = int(x.size > 0)
        assert path == Counter(layer_norm_rows=n, layer_norm_rows_backward=n)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_and_numpy_paths_agree(monkeypatch: pytest.MonkeyPatch, dtype: Any) -> None:
    """Both paths give the same values and gradients to a few units of the dtype's
    resolution, on a (64, 256) input far from 0 with weight and bias."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(64, 256)) * 3 + 50).astype(dtype)
    g = rng.normal(size=x.shape).astype(dtype)
    w, b = rng.normal(size=256).astype(dtype), rng.normal(size=256).astype(dtype)
    compiled = _run(x, (256,), w, b, g)
    monkeypatch.setattr(_shared, "numba_kernels", lambda: None)
    numpy = _run(x, (256,), w, b, g)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for c, n in zip(compiled, numpy, strict=True):
        assert c.dtype == n.dtype == dtype
        np.testing.assert_allclose(c, n, rtol=0, atol=tol * float(np.abs(n).max()))


def test_float32_values_saved_arrays_and_gradients(path: Any) -> None:
    """float32 in, float32 out on either path: the value, every array the closures keep
    and the gradients, when input, weight and bias all need one."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(5, 12)).astype(np.float32)
    w = rng.normal(size=12).astype(np.float32)
    with lampy.Scope():
        px, pw, pb = lampy.param(x), lampy.param(w), lampy.param(w * 2)
        y = F.layer_norm(px, 12, pw, pb)
        assert y.dtype == np.float32 and y.op is not None
        for _node, closure in y.op.params:
            for arr in _captured_arrays(closure):
                assert arr.dtype == np.float32
        y.backward(np.ones(y.shape, np.float32))
        for p in (px, pw, pb):
            assert p.grad is not None and p.grad.dtype == np.float32


@pytest.mark.parametrize("affine", AFFINE)
def test_gradients_match_finite_differences(path: Any, affine: str) -> None:
    """float64 gradients of both paths pass the finite-difference check."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 2, 5))
    w = rng.normal(size=(2, 5)) if "weight" in affine else None
    b = rng.normal(size=(2, 5)) if "bias" in affine else None
    args = [a for a in (x, w, b) if a is not None]

    def fn(*vs: Any) -> Any:
        it = iter(vs)
        xv = next(it)
        wv = next(it) if w is not None else None
        bv = next(it) if b is not None else None
        return F.layer_norm(xv, (2, 5), wv, bv, eps=0.1)

    check_grad(fn, *args)


def test_only_some_inputs_need_a_gradient(path: Any) -> None:
    """Only the weight, only the bias, or only the input needing a gradient gives that
    gradient alone, equal to the one computed with all three."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    w, b = rng.normal(size=16).astype(np.float32), rng.normal(size=16).astype(np.float32)
    g = rng.normal(size=x.shape).astype(np.float32)
    full = _run(x, (16,), w, b, g)
    for which in range(3):
        with lampy.Scope():
            vs = [lampy.param(v) if i == which else lampy.const(v) for i, v in enumerate((x, w, b))]
            F.layer_norm(vs[0], 16, vs[1], vs[2]).backward(g)
            for i, v in enumerate(vs):
                if i == which:
                    np.testing.assert_array_equal(v.grad, full[i + 1])
                else:
                    assert not v.needs_grad


def test_non_contiguous_input_and_gradient(path: Any) -> None:
    """A strided input and a transposed output gradient give the results of their
    contiguous copies: bit for bit on the compiled path (the kernels take contiguous
    copies), to float32 rounding on the numpy path (numpy's and BLAS's loops over
    strided memory group the row sums differently)."""
    rng = np.random.default_rng(7)
    big = rng.normal(size=(6, 20)).astype(np.float32)
    x = big[:, ::2]
    gt = rng.normal(size=(10, 6)).astype(np.float32)
    w = rng.normal(size=10).astype(np.float32)
    assert not x.flags.c_contiguous and not gt.T.flags.c_contiguous
    strided = _run(x, (10,), w, w, gt.T)
    contiguous = _run(x.copy(), (10,), w, w, gt.T.copy())
    for s, c in zip(strided, contiguous, strict=True):
        if path is not None:
            np.testing.assert_array_equal(s, c)
        np.testing.assert_allclose(s, c, rtol=0, atol=4e-7 * float(np.abs(c).max()))


def test_without_bias_the_value_keeps_negative_zeros(path: Any) -> None:
    """Without a bias nothing is added: a centred 0 times a negative weight stays -0.0
    on both paths (the compiled kernel adds -0.0, not +0.0, for a missing bias)."""
    x = np.full((2, 4), 3.0, np.float32)
    w = np.array([-1.0, 1.0, -2.0, 2.0], np.float32)
    value = _run(x, (4,), w, None, np.ones_like(x))[0]
    assert np.all(value == 0)
    np.testing.assert_array_equal(np.signbit(value), np.tile(w < 0, (2, 1)))


def test_zero_dimensional_input_is_refused_as_pytorch(path: Any) -> None:
    """A 0-d input has no trailing dimension to normalise: normalized_shape () is a
    ShapeError, as PyTorch refuses an empty normalized_shape."""
    with lampy.Scope(), pytest.raises(ShapeError, match="normalized_shape"):
        F.layer_norm(lampy.param(np.float32(2.0)), ())


def test_no_grad_forward(path: Any) -> None:
    """Under no_grad the value is the same and no closure is recorded."""
    x = np.random.default_rng(8).normal(size=(4, 6)).astype(np.float32)
    with lampy.Scope():
        p = lampy.param(x)
        y = F.layer_norm(p, 6, p[0], p[1])
        with lampy.no_grad():
            n = F.layer_norm(p, 6, p[0], p[1])
        assert n.op is None
        np.testing.assert_array_equal(n.value, y.value)


def test_gradients_are_bitwise_equal_for_any_worker_count(
    path: Any, always_concurrent: None
) -> None:
    """Backward with 2 or 3 workers (the closures of one layer_norm may then run in two
    threads) gives the serial gradients bit for bit."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=(32, 64)).astype(np.float32)
    w, b = rng.normal(size=64).astype(np.float32), rng.normal(size=64).astype(np.float32)

    def grads(workers: int) -> list[bytes]:
        with lampy.Scope():
            px, pw, pb = lampy.param(x), lampy.param(w), lampy.param(b)
            h = F.layer_norm(px, 64, pw, pb)
            h2 = F.layer_norm(lampy.tanh(h), 64, pw, pb)
            (h * h2).sum().backward(workers=workers)
            return [p.grad.tobytes() for p in (px, pw, pb)]  # type: ignore[union-attr]

    serial = grads(1)
    assert grads(2) == serial
    assert grads(3) == serial


def test_kernels_in_two_threads_at_once(path: Any, in_two_threads: Any) -> None:
    """The row helpers called from two threads at the same time (the compiled kernels
    release the GIL) give the serial results bit for bit."""
    rng = np.random.default_rng(10)
    xs = [rng.normal(size=(128, 256)).astype(np.float32) for _ in range(2)]
    gs = [rng.normal(size=(128, 256)).astype(np.float32) for _ in range(2)]
    w = rng.normal(size=256).astype(np.float32)

    def work(k: int) -> list[bytes]:
        y, xc, rstd = _normalization._layer_norm_rows(xs[k], w, w, 1e-5)
        for _ in range(20):
            dx, dw, db = _normalization._layer_norm_rows_backward(
                gs[k], xc, rstd, w, True, True, True
            )
        return [a.tobytes() for a in (y, dx, dw, db)]

    assert in_two_threads(work) == [work(0), work(1)]


def test_column_sums_over_many_rows_stay_accurate(path: Any) -> None:
    """The weight and bias gradients over 4096 rows are within a few float32 units of
    the float64 sums (the compiled kernel sums blocks of sqrt(m) rows, then blocks)."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(4096, 32)).astype(np.float32)
    g = (rng.normal(size=x.shape) + 1).astype(np.float32)
    w = rng.normal(size=32).astype(np.float32)
    got = _run(x, (32,), w, w, g)
    want = _reference(x, 1, w, w, g, 1e-5)
    for i in (2, 3):
        err = np.abs(got[i] - want[i]).max() / np.abs(want[i]).max()
        assert err < 2e-6, (i, err)
