"""linspace and full: numpy's arguments, gradients in start, stop and the fill value
(checked exactly), the step of retstep, dtypes and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import DTypeError, LampyValueError, ShapeError
from lampy.ops._creation import full, linspace
from lampy.testing import check_grad


@pytest.mark.parametrize("num", [0, 1, 2, 5])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_value_and_exact_gradient(num: int, endpoint: bool) -> None:
    """Sample i is start + t_i (stop - start): dstart = sum(1 - t), dstop = sum(t), with
    t = i / (num - 1) (endpoint) or i / num, and t = 0 for a single endpoint sample."""
    with lampy.Scope():
        s, e = lampy.param(-1.0), lampy.param(3.0)
        y = linspace(s, e, num, endpoint=endpoint)
        np.testing.assert_array_equal(y.value, np.linspace(-1.0, 3.0, num, endpoint=endpoint))
        y.sum().backward()
        div = num - 1 if endpoint else num
        t = np.arange(num) / div if div > 0 else np.zeros(num)
        assert s.grad == pytest.approx(np.sum(1 - t))
        assert e.grad == pytest.approx(np.sum(t))


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_linspace_array_endpoints_and_axis(axis: int) -> None:
    """Array start/stop broadcast together, the samples' axis goes where axis says, and
    each endpoint's gradient is summed back to its shape."""
    start, stop = np.array([0.0, 1.0]), np.array([[2.0], [5.0]])
    check_grad(lambda a, b: linspace(a, b, 4, axis=axis), start, stop)
    with lampy.Scope():
        y = linspace(lampy.param(start), stop, 4, axis=axis)
        np.testing.assert_allclose(y.value, np.linspace(start, stop, 4, axis=axis))


def test_linspace_retstep() -> None:
    """retstep gives (samples, step) with step a Variable of numpy's value, differentiable
    in start and stop; for a single endpoint sample numpy's step is nan, a constant."""
    with lampy.Scope():
        s, e = lampy.param(1.0), lampy.param(2.0)
        _, step = linspace(s, e, 5, retstep=True)
        assert step.value == np.linspace(1.0, 2.0, 5, retstep=True)[1]
        step.backward()
        assert (s.grad, e.grad) == (-0.25, 0.25)
        _, nan_step = linspace(s, e, 1, retstep=True)
        assert np.isnan(nan_step.value)
        assert not nan_step.needs_grad


def test_linspace_dtypes() -> None:
    """float32 endpoints give float32 samples and gradients; a Python number next to a
    Variable is a constant; an integer dtype gives numpy's floored constant, and is
    refused when an endpoint needs a gradient (it would silently drop it)."""
    check_grad(lambda a, b: linspace(a, b, 3), np.float32(0.5), np.float32(2.0))
    with lampy.Scope():
        s = lampy.param(np.float32(0.0))
        assert linspace(s, 1.0, 3).dtype == np.float32
        c = linspace(0, 10, 4, dtype=int)
        np.testing.assert_array_equal(c.value, np.linspace(0, 10, 4, dtype=int))
        assert not c.needs_grad
        with pytest.raises(DTypeError, match="linspace: dtype=int64 would make the result a"):
            linspace(s, 10.0, 4, dtype=int)
        with lampy.no_grad():  # nothing to drop
            assert linspace(s, 10.0, 4, dtype=int).dtype == np.int64


def test_linspace_errors() -> None:
    """A negative num, endpoints that do not broadcast and an axis out of range raise."""
    with lampy.Scope():
        with pytest.raises(LampyValueError, match="linspace: num must be >= 0"):
            linspace(0.0, 1.0, -1)
        with pytest.raises(ShapeError, match=r"linspace: start of shape \(2,\) and stop"):
            linspace(np.zeros(2), np.ones(3))
        with pytest.raises(ShapeError, match="linspace: axis 2 is out of bounds"):
            linspace(np.zeros(2), 1.0, axis=2)


@pytest.mark.parametrize(
    ("shape", "fill"),
    [((), 2.5), ((2, 3), 1.5), (4, np.array([1.0, 2.0, 3.0, 4.0])), ((2, 3), np.ones((2, 1)))],
)
def test_full_value_and_exact_gradient(shape: Any, fill: Any) -> None:
    """The fill value's gradient is g summed over the positions it fills."""
    with lampy.Scope():
        f = lampy.param(fill)
        y = full(shape, f)
        np.testing.assert_array_equal(y.value, np.full(shape, fill))
        w = np.arange(y.size, dtype=float).reshape(y.shape)
        (y * w).sum().backward()
        expected = w.sum() if np.ndim(fill) == 0 else lampy.unbroadcast(w, np.shape(fill))
        np.testing.assert_array_equal(f.grad, expected)


def test_full_order_dtype_and_errors() -> None:
    """order='F' gives a Fortran-ordered value; dtype casts (the gradient comes back in
    the fill value's dtype); an integer dtype with a param, or a fill value that does not
    broadcast to the shape, raise."""
    with lampy.Scope():
        f = lampy.param(1.5)
        assert full((2, 3), f, order="F").value.flags.f_contiguous
        y = full((2, 3), f, dtype=np.float32)
        assert y.dtype == np.float32
        y.sum().backward()
        assert f.grad == 6.0
        assert f.grad.dtype == np.float64
        with pytest.raises(DTypeError, match="full: dtype=int64"):
            full(3, f, dtype=np.int64)
        with pytest.raises(ShapeError, match=r"full: fill_value of shape \(2,\)"):
            full((3,), lampy.param([1.0, 2.0]))
        np.testing.assert_array_equal(full(2, 7, dtype=np.int8).value, [7, 7])
