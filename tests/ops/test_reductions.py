"""Reductions over every combination of axes, keepdims, and the awkward shapes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad

SHAPE = (2, 3, 4)
ALL_AXES = (
    [None]
    + [combo for r in range(0, 4) for combo in itertools.combinations(range(3), r)]
    + [-1, -2, (0, -1), (-3, -2, -1)]
)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", ALL_AXES, ids=str)
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_every_axis_combination(name: str, axis: object, keepdims: bool) -> None:
    """sum and mean match numpy and differentiate correctly over every axis subset."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(SHAPE)
    fn = getattr(lampy, name)
    with lampy.Scope():
        out = fn(lampy.param(a), axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(out.value, getattr(np, name)(a, axis=axis, keepdims=keepdims))
    check_grad(lambda x: fn(x, axis=axis, keepdims=keepdims), a)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_zero_d_input(name: str) -> None:
    """Reducing a 0-d array gives a 0-d array whose gradient is the seed (scaled by 1/1)."""
    with lampy.Scope():
        x = lampy.param(np.float32(3.0))
        y = getattr(lampy, name)(x)
        assert y.shape == () and y.dtype == np.float32
        y.backward()
        assert x.grad is not None and x.grad.dtype == np.float32
        assert x.grad == 1.0


def test_sum_of_empty_array() -> None:
    """The sum of an empty array is 0 and its gradient is an empty array."""
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 3)))
        y = lampy.sum(x)
        assert y.item() == 0.0
        y.backward()
        assert x.grad is not None and x.grad.shape == (0, 3)


def test_mean_of_empty_axis_warns_like_numpy() -> None:
    """The mean over an empty axis is nan with numpy's RuntimeWarning; backward is silent."""
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 2)))
        with pytest.warns(RuntimeWarning):
            y = lampy.mean(x, axis=0)
        assert np.isnan(y.value).all()
        y.backward(np.ones(2))
        assert x.grad is not None and x.grad.shape == (0, 2)


def test_method_forms() -> None:
    """Variable.sum and Variable.mean take numpy's arguments."""
    a = np.arange(6.0).reshape(2, 3)
    with lampy.Scope():
        x = lampy.param(a)
        np.testing.assert_array_equal(x.sum(axis=1).value, a.sum(axis=1))
        np.testing.assert_array_equal(x.mean(0, keepdims=True).value, a.mean(0, keepdims=True))


def test_bad_axis_is_a_clear_error() -> None:
    """An out-of-range or repeated axis raises a ValueError naming the op."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3)))
        with pytest.raises(ValueError, match=r"sum: axis 2 is out of bounds"):
            lampy.sum(x, axis=2)
        with pytest.raises(ValueError, match=r"mean: axis .* repeats"):
            lampy.mean(x, axis=(1, -1))


def test_float32_sum_with_float64_dtype() -> None:
    """sum(dtype=float64) of a float32 param returns float64 and a float32 gradient."""
    with lampy.Scope():
        x = lampy.param(np.ones(3, np.float32))
        y = lampy.sum(x, dtype=np.float64)
        assert y.dtype == np.float64
        y.backward()
        assert x.grad is not None and x.grad.dtype == np.float32
