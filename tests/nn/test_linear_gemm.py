"""``linear``'s bias added inside the matrix product (SciPy's BLAS ``gemm`` with
``beta = 1``, from ``_GEMM_MIN_OUTPUT`` output elements): the same values as numpy's
product plus the bias, a new C-contiguous result, and numpy's path wherever the
conditions do not hold (small outputs, strided matrices, a bias of another dtype, no
SciPy)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy.nn.functional import _linear
from lampy.nn.functional._linear import linear

pytest.importorskip("scipy")


def _calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record each call of the BLAS gemm that ``linear`` takes."""
    calls: list[Any] = []
    real = dict(_linear._gemm_by_dtype())

    def counting(dtype: Any) -> Any:
        def gemm(*args: Any, **kwargs: Any) -> Any:
            calls.append(dtype)
            return real[dtype](*args, **kwargs)

        return gemm

    monkeypatch.setattr(_linear, "_gemm_by_dtype", lambda: {d: counting(d) for d in real})
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lead", [(256,), (4, 64), (300,)])
def test_gemm_bias_matches_numpy(monkeypatch: pytest.MonkeyPatch, dtype: Any, lead: Any) -> None:
    """Above the threshold the bias goes into BLAS's product: values within a few ulp of
    numpy's ``x @ W.T + b`` (the products' sums may round in another order), a new
    C-contiguous array, and the gradients of every input as with numpy's path."""
    calls = _calls(monkeypatch)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((*lead, 96)).astype(dtype)
    w = rng.standard_normal((160, 96)).astype(dtype)
    b = rng.standard_normal(160).astype(dtype)
    g = rng.standard_normal((*lead, 160)).astype(dtype)
    with lampy.Scope():
        xv, wv, bv = lampy.param(x), lampy.param(w), lampy.param(b)
        y = linear(xv, wv, bv)
        assert calls == [np.dtype(dtype)]
        assert y.dtype == dtype and y.shape == (*lead, 160)
        assert y.value.flags.c_contiguous
        want = x @ w.T + b
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(y.value, want, rtol=tol, atol=tol)
        y.backward(g)
        g2 = g.reshape(-1, 160)
        np.testing.assert_allclose(xv.grad, (g2 @ w).reshape(x.shape), rtol=tol, atol=tol)
        np.testing.assert_allclose(wv.grad, g2.T @ x.reshape(-1, 96), rtol=tol, atol=tol)
        np.testing.assert_allclose(bv.grad, g2.sum(0), rtol=tol, atol=tol)


def test_gemm_bias_broadcast_bias_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bias of shape () or (1,) is spread over every column, as numpy's ``+`` does."""
    _calls(monkeypatch)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((512, 8))
    w = rng.standard_normal((128, 8))
    for b in (np.array(0.5), np.array([0.5])):
        with lampy.Scope():
            np.testing.assert_allclose(linear(x, w, b).value, x @ w.T + b, rtol=1e-12)


@pytest.mark.parametrize(
    "case", ["small", "strided input", "strided weight", "bias of another dtype", "no scipy"]
)
def test_numpy_path_where_gemm_does_not_apply(monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """Small outputs, matrices that are not C-contiguous, a bias of another dtype and an
    install without SciPy take numpy's product and add the bias after it: numpy's values
    bit for bit."""
    calls = _calls(monkeypatch)
    if case == "no scipy":
        monkeypatch.setattr(_linear, "_gemm_by_dtype", dict)
    rng = np.random.default_rng(2)
    rows = 16 if case == "small" else 512
    x = rng.standard_normal((rows, 64)).astype(np.float32)
    w = rng.standard_normal((128, 64)).astype(np.float32)
    b = rng.standard_normal(128).astype(np.float32)
    if case == "strided input":
        x = rng.standard_normal((rows, 128)).astype(np.float32)[:, ::2]
    if case == "strided weight":
        w = np.asfortranarray(w)
    if case == "bias of another dtype":
        b = b.astype(np.float64)
    x.flags.writeable = w.flags.writeable = False
    with lampy.Scope():
        y = linear(x, w, b).value.copy()
    assert not calls
    want = x @ w.T
    want += b
    np.testing.assert_array_equal(y, want)
