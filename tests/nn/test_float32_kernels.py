"""The fused nn kernels stay float32 end to end: the value, every array a backward
closure keeps and every gradient of a float32 call are float32 (integer index arrays
aside); gelu gives the same results with SciPy's erf and with lampy's numpy erf."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy.nn.functional import _erf
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
def test_float32_values_saved_arrays_and_gradients(name: str) -> None:
    """float32 in: float32 value, float32 arrays kept for backward, float32 gradients."""
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
    code (to float32 and float64 accuracy: erf's last-ulp differences only), and both
    pass the gradient check."""
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
        tol = 1e-6 if i < 2 else 1e-14
        assert a.dtype == b.dtype == (np.float32 if i < 2 else np.float64)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
