"""The fused nn kernels stay float32 end to end: the value, every array a backward
closure keeps and every gradient of a float32 call are float32 (integer index arrays
aside); gelu gives the same results with SciPy's erf and with lampy's numpy erf. The
kernels' numerics: float32 gelu, layer_norm, softmax, log_softmax and cross_entropy
against float64, the softmax shift (global or per slice) on awkward inputs, and the
helpers they share (spread, exp_, shifted_exp)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy.nn.functional import _activations, _erf, _shared
from lampy.nn.functional._shared import exp_, shifted_exp, spread
from lampy.testing import check_grad


def _captured_arrays(fn: Any, seen: set[int] | None = None) -> Iterator[np.ndarray]:
    """Every ndarray a closure (or a Contribution's function) keeps, followed through
    nested closures and shared values."""
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return
    seen.add(id(fn))
    inner = getattr(fn, "fn", None) or getattr(fn, "_fn", None)
    if inner is not None:
        yield from _captured_arrays(inner, seen)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(v, np.ndarray):
            yield v
        elif callable(v):
            yield from _captured_arrays(v, seen)


rng = np.random.default_rng(0)
X = rng.normal(size=(6, 10)).astype(np.float32)
W = rng.normal(size=10).astype(np.float32)
T = rng.integers(0, 10, 6)

CASES: dict[str, Callable[[lampy.Variable, lampy.Variable], lampy.Variable]] = {
    "gelu": lambda x, w: F.gelu(x),
    "gelu_tanh": lambda x, w: F.gelu(x, approximate="tanh"),
    "softmax": lambda x, w: F.softmax(x, 1),
    "softmax_dim0": lambda x, w: F.softmax(x, 0),
    "log_softmax": lambda x, w: F.log_softmax(x, 1),
    "layer_norm": lambda x, w: F.layer_norm(x, (10,), w, w),
    "cross_entropy": lambda x, w: F.cross_entropy(x, T),
    "cross_entropy_smoothed": lambda x, w: F.cross_entropy(x, T, weight=w * w, label_smoothing=0.1),
    "linear": lambda x, w: F.linear(x, w[None, :3].T @ w[None, :], w[:3]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_values_saved_arrays_and_gradients(path: Any, name: str) -> None:
    """float32 in: float32 value, float32 arrays kept for backward, float32 gradients,
    with and without the compiled kernels."""
    with lampy.Scope():
        x, w = lampy.param(X), lampy.param(W)
        y = CASES[name](x, w)
        assert y.dtype == np.float32
        assert y.op is not None
        for _node, closure in y.op.params:
            for arr in _captured_arrays(closure):
                assert arr.dtype.kind in "iub" or arr.dtype == np.float32, (name, arr.dtype)
        y.backward(np.ones(y.shape, np.float32))
        assert x.grad is not None and x.grad.dtype == np.float32
        assert w.grad is None or w.grad.dtype == np.float32


def test_gelu_with_and_without_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    """gelu's value and gradient agree whether erf comes from SciPy or from lampy's numpy
    code (float32 does not use erf: identical; float64 to erf's last-ulp differences),
    and both pass the gradient check."""
    pytest.importorskip("scipy.special")
    x32 = np.linspace(-6, 6, 2001, dtype=np.float32)
    x64 = x32.astype(np.float64)

    def run(x: np.ndarray) -> list[np.ndarray]:
        with lampy.Scope():
            p = lampy.param(x)
            y = F.gelu(p)
            y.sum().backward()
            assert p.grad is not None
            return [y.value.copy(), p.grad.copy()]

    with_scipy = run(x32) + run(x64)
    check_grad(F.gelu, x64[::50])
    monkeypatch.setattr(_erf, "_scipy_erf", lambda: None)
    without = run(x32) + run(x64)
    check_grad(F.gelu, x64[::50])
    for i, (a, b) in enumerate(zip(with_scipy, without, strict=True)):
        tol = 0 if i < 2 else 1e-14
        assert a.dtype == b.dtype == (np.float32 if i < 2 else np.float64)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _gelu64(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gelu and its derivative in float64."""
    x64 = x.astype(np.float64)
    erf = np.frompyfunc(math.erf, 1, 1)
    phi = (1 + np.asarray(erf(x64 / math.sqrt(2)), np.float64)) / 2
    return x64 * phi, phi + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)


def test_gelu_float32_and_float16_accuracy(path: Any) -> None:
    """float32 gelu is within 1.4e-7 |x| of x Phi(x) (Phi's error, 1.25e-7, and the
    product's rounding) and its gradient within 1.6e-7 of the derivative; float16 is
    computed in float32 and rounded once: on both paths (compiled, numpy)."""
    x = np.concatenate([np.linspace(-10, 10, 20_001), [0.0, 1e-30, -1e-30]]).astype(np.float32)
    want, dwant = _gelu64(x)
    with lampy.Scope():
        p = lampy.param(x)
        y = F.gelu(p)
        y.sum().backward()
        assert y.dtype == np.float32 and p.grad is not None and p.grad.dtype == np.float32
        assert np.all(np.abs(y.value - want) <= 1.4e-7 * np.abs(x) + 1e-45)
        assert np.abs(p.grad - dwant).max() <= 1.6e-7
        v32, g32 = y.value.astype(np.float16), p.grad.astype(np.float16)
    with lampy.Scope():
        p = lampy.param(x.astype(np.float16))
        y = F.gelu(p)
        y.sum().backward()
        assert y.dtype == np.float16 and p.grad is not None and p.grad.dtype == np.float16
        p32 = lampy.param(x.astype(np.float16).astype(np.float32))
        y32 = F.gelu(p32)
        y32.sum().backward()
        assert p32.grad is not None
        np.testing.assert_array_equal(y.value, y32.value.astype(np.float16))
        np.testing.assert_array_equal(p.grad, p32.grad.astype(np.float16))
        assert np.abs(y.value.astype(np.float32) - v32).max() <= 0.01  # float16 resolution
        assert np.abs(p.grad.astype(np.float32) - g32).max() <= 0.01


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_computes_its_slope_only_for_a_gradient(
    monkeypatch: pytest.MonkeyPatch, path: Any, approximate: str
) -> None:
    """float32 gelu computes only the value in forward (the op keeps its input, as
    PyTorch's); backward computes the slope from the input, and only when a gradient
    flows: without one the op records no closure."""
    if approximate == "tanh" and path is None:
        pytest.skip("the numpy path's tanh approximation computes its slope in backward")
    asked: list[bool] = []
    cdf = _activations.normal_cdf_float32
    value, grad = _activations._kernel_value, _activations._kernel_grad

    def cdf_spy(a: np.ndarray, slope: bool) -> Any:
        asked.append(slope)
        return cdf(a, slope)

    def value_spy(fn: Any, a: np.ndarray, *scalars: Any) -> Any:
        asked.append(False)
        return value(fn, a, *scalars)

    def grad_spy(fn: Any, a: np.ndarray, g: Any, *scalars: Any) -> Any:
        asked.append(True)
        return grad(fn, a, g, *scalars)

    monkeypatch.setattr(_activations, "normal_cdf_float32", cdf_spy)
    monkeypatch.setattr(_activations, "_kernel_value", value_spy)
    monkeypatch.setattr(_activations, "_kernel_grad", grad_spy)
    with lampy.Scope():
        p = lampy.param(X)
        y = F.gelu(p, approximate)
        assert y.needs_grad and asked == [False]
        y.sum().backward()
        # the compiled path: g * slope in one pass; numpy's: the slope block by block
        passes = 1 if path is not None else -(-X.size // _activations._BLOCK)
        assert asked[1:] == [True] * passes
        asked.clear()
        c = F.gelu(lampy.const(X), approximate)
        with lampy.no_grad():
            n = F.gelu(p, approximate)
        assert not c.needs_grad and not n.needs_grad and asked == [False, False]
        np.testing.assert_array_equal(n.value, y.value)
        np.testing.assert_array_equal(c.value, y.value)


# --- softmax family: the shift --------------------------------------------------------


def _log_softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    x64 = x.astype(np.float64)
    z = x64 - x64.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


_ROW_OFFSETS = np.array([[0.0], [0.0], [-60.0], [0.0], [30.0]])
# rows near each other (one shift for all), a row far below the others (a shift per
# row), and huge logits
AWKWARD = {
    "close": np.random.default_rng(3).normal(size=(5, 7)).astype(np.float32) * 4,
    "far_row": (np.random.default_rng(4).normal(size=(5, 7)) + _ROW_OFFSETS).astype(np.float32),
    "huge": (np.random.default_rng(5).normal(size=(5, 7)) * 3 + 1e4).astype(np.float32),
}


def test_shifted_exp_shifts_by_the_global_max_only_when_no_slice_underflows() -> None:
    """The shift is one scalar (the global max) for rows near each other, and each row's
    max when a row lies so far below the others that its sum would be tiny; either way
    e = exp(x - shift) and its sums are exact to float32 rounding."""
    for name, x in AWKWARD.items():
        e, s, shift = shifted_exp(x, 1)
        if name == "far_row":
            assert np.shape(shift) == (5, 1)
            np.testing.assert_array_equal(shift, x.max(axis=1, keepdims=True))
        else:
            assert np.ndim(shift) == 0 and shift == x.max()
        assert e.dtype == s.dtype == np.float32
        want = np.exp(x.astype(np.float64) - np.asarray(shift, np.float64))
        np.testing.assert_allclose(e, want, rtol=3e-6, atol=1e-37)
        np.testing.assert_allclose(s, want.sum(axis=1, keepdims=True), rtol=3e-6)
    _, s0, shift0 = shifted_exp(AWKWARD["close"], 0)  # along axis 0: sums of columns
    assert s0.shape == (1, 7) and np.ndim(shift0) == 0


@pytest.mark.parametrize("name", sorted(AWKWARD))
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_log_softmax_cross_entropy_on_awkward_rows(path: Any, name: str, dim: int) -> None:
    """float32 softmax, log_softmax and cross_entropy (value and gradient) match float64
    on rows near each other, far apart and huge, along either dim, with and without the
    compiled kernels."""
    x = AWKWARD[name]
    t = np.random.default_rng(0).integers(0, x.shape[1], x.shape[0])
    g = np.random.default_rng(1).normal(size=x.shape).astype(np.float32)
    lsm = _log_softmax64(x, dim)
    sm = np.exp(lsm)
    cases = {
        "softmax": (lambda v: F.softmax(v, dim), sm, sm * (g - (g * sm).sum(dim, keepdims=True))),
        "log_softmax": (
            lambda v: F.log_softmax(v, dim),
            lsm,
            g - sm * g.sum(dim, keepdims=True),
        ),
    }
    if dim == 1:
        onehot = np.eye(x.shape[1])[t]
        ce = -np.mean(_log_softmax64(x, 1)[np.arange(len(t)), t])
        cases["cross_entropy"] = (lambda v: F.cross_entropy(v, t), ce, (sm - onehot) / len(t))
    for fn, value, grad in cases.values():
        with lampy.Scope():
            p = lampy.param(x)
            y = fn(p)
            y.backward(g if y.shape else None)
            assert y.dtype == np.float32 and p.grad is not None and p.grad.dtype == np.float32
            np.testing.assert_allclose(y.value, value, rtol=2e-6, atol=2e-6)
            np.testing.assert_allclose(p.grad, grad, rtol=1e-4, atol=1e-6)


def test_softmax_rows_with_nan_or_infinities_stay_in_their_rows(path: Any) -> None:
    """A nan or +inf in one row makes that row nan and leaves the others exact (the
    per-row shift), as PyTorch; -inf entries get probability 0: on both paths."""
    x = np.random.default_rng(2).normal(size=(4, 5)).astype(np.float32)
    x[1, 2], x[2, 0], x[3, 1] = np.nan, np.inf, -np.inf
    with lampy.Scope(), np.errstate(invalid="ignore"):
        y = F.softmax(lampy.param(x), 1).value
    assert np.all(np.isnan(y[1])) and np.all(np.isnan(y[2]))
    for i in (0, 3):
        np.testing.assert_allclose(y[i], np.exp(_log_softmax64(x[i], 0)), rtol=2e-6)
    assert y[3, 1] == 0


# --- the shared helpers ---------------------------------------------------------------


def test_spread_equals_numpy_broadcasting() -> None:
    """spread(ufunc, a, v) is ufunc(a, v), bit for bit, for per-row and per-feature v."""
    rng = np.random.default_rng(6)
    a = rng.normal(size=(6, 9)).astype(np.float32)
    for v in (rng.normal(size=(6, 1)), rng.normal(size=9), rng.normal(size=(1, 9))):
        v = v.astype(np.float32)
        for ufunc in (np.add, np.subtract, np.multiply, np.divide):
            got = spread(ufunc, a, v)
            assert got.dtype == np.float32 and got.shape == a.shape
            np.testing.assert_array_equal(got, ufunc(a, v))


@pytest.mark.parametrize("exp2", [True, False], ids=["exp2", "exp"])
def test_exp_in_place_accuracy(monkeypatch: pytest.MonkeyPatch, exp2: bool) -> None:
    """exp_ writes exp(a) into its argument (or out) within (6 + 1.25 |a|) 2**-24
    relatively, on either path (exp2 of the argument times float32 log2(e), or numpy's
    exp); float64 goes through numpy's exp."""
    monkeypatch.setattr(_shared, "fast_exp2", lambda: exp2)
    a = np.linspace(-80, 80, 100_001, dtype=np.float32)
    want = np.exp(a.astype(np.float64))
    b = a.copy()
    got = exp_(b)
    assert got is b and got.dtype == np.float32
    assert np.all(np.abs(got - want) <= (6 + 1.25 * np.abs(a)) * 2.0**-24 * want)
    out = np.empty_like(a)
    assert exp_(a, out) is out
    np.testing.assert_array_equal(out, got)
    a64 = a.astype(np.float64)
    np.testing.assert_array_equal(exp_(a64.copy()), np.exp(a64))


def test_fast_exp2_is_a_bool() -> None:
    """fast_exp2 answers from numpy's dispatch table (False on numpy 1.x)."""
    assert isinstance(_shared.fast_exp2(), bool)


# --- layer_norm -----------------------------------------------------------------------


def _layer_norm64(x: np.ndarray, w: np.ndarray, b: np.ndarray, g: np.ndarray) -> Any:
    x64, w64, g64 = (v.astype(np.float64) for v in (x, w, g))
    mu = x64.mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(((x64 - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    xhat = (x64 - mu) * rstd
    dxhat = g64 * w64
    dx = rstd * (
        dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True)
    )
    lead = tuple(range(x.ndim - 1))
    return xhat * w64 + b, dx, (g64 * xhat).sum(axis=lead), g64.sum(axis=lead)


@pytest.mark.parametrize("offset", [0.0, 100.0])
@pytest.mark.parametrize("needs", ["all", "input", "weight"])
def test_layer_norm_float32_against_float64(offset: float, needs: str) -> None:
    """float32 layer_norm's value and its input, weight and bias gradients match float64
    (also for rows far from 0 and rows of one repeated value), whichever of input and
    weight need a gradient."""
    rng = np.random.default_rng(7)
    x = (rng.normal(size=(2, 3, 16)) + offset).astype(np.float32)
    x[1, 2] = offset  # a row of one value: variance 0
    w, b = rng.normal(size=16).astype(np.float32), rng.normal(size=16).astype(np.float32)
    g = rng.normal(size=x.shape).astype(np.float32)
    value, dx, dw, db = _layer_norm64(x, w, b, g)
    with lampy.Scope():
        px = lampy.param(x) if needs != "weight" else lampy.const(x)
        pw = lampy.param(w) if needs != "input" else lampy.const(w)
        pb = lampy.param(b)
        y = F.layer_norm(px, 16, pw, pb)
        y.backward(g)
        np.testing.assert_allclose(y.value, value, rtol=1e-4, atol=2e-4)
        if needs != "weight":
            np.testing.assert_allclose(px.grad, dx, rtol=1e-3, atol=2e-3)
        if needs != "input":
            np.testing.assert_allclose(pw.grad, dw, rtol=1e-4, atol=2e-4)
        np.testing.assert_allclose(pb.grad, db, rtol=1e-5, atol=1e-5)


def test_layer_norm_without_affine_and_empty_batches() -> None:
    """Without weight and bias layer_norm is the standardisation (float32), and a batch
    of no rows gives empty values and gradients."""
    x = np.random.default_rng(8).normal(size=(4, 6)).astype(np.float32)
    g = np.ones_like(x)
    value, dx, _, _ = _layer_norm64(x, np.ones(6, np.float32), np.zeros(6, np.float32), g)
    with lampy.Scope():
        p = lampy.param(x)
        y = F.layer_norm(p, 6)
        y.backward(g)
        np.testing.assert_allclose(y.value, value, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(p.grad, dx, rtol=1e-4, atol=1e-5)
        e = lampy.param(np.zeros((0, 6), np.float32))
        w = lampy.param(np.ones(6, np.float32))
        ye = F.layer_norm(e, 6, w, w)
        ye.backward(np.zeros((0, 6), np.float32))
        assert ye.shape == (0, 6) and e.grad is not None and e.grad.shape == (0, 6)
        assert w.grad is not None
        np.testing.assert_array_equal(w.grad, np.zeros(6, np.float32) * 2)
