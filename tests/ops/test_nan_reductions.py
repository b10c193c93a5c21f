"""The nan-ignoring reductions: nan entries and all-nan slices (values as numpy's,
gradients 0 as JAX's), ties, empty and 0-d inputs, float32, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad

NAN = np.nan
ROWS = np.array([[1.0, NAN, 3.0, 4.0], [NAN, NAN, NAN, NAN], [2.0, 2.0, NAN, -1.0]])

# name -> (lampy function, numpy function)
REDUCTIONS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "nansum": (lampy.nansum, np.nansum),
    "nanmean": (lampy.nanmean, np.nanmean),
    "nanprod": (lampy.nanprod, np.nanprod),
    "nanvar": (lampy.nanvar, np.nanvar),
    "nanstd": (lampy.nanstd, np.nanstd),
    "nanmax": (lampy.nanmax, np.nanmax),
    "nanmin": (lampy.nanmin, np.nanmin),
}
# Gradients of sum(f(ROWS, axis=1)) worked out by hand: row 0 holds 1, 3, 4 (mean 8/3),
# row 1 is all nan, row 2 holds 2, 2, -1 (mean 1, a tie at the maximum 2).
EXPECTED_GRAD = {
    "nansum": [[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1]],
    "nanmean": [[1 / 3, 0, 1 / 3, 1 / 3], [0, 0, 0, 0], [1 / 3, 1 / 3, 0, 1 / 3]],
    "nanprod": [[12, 0, 4, 3], [0, 0, 0, 0], [-2, -2, 0, 4]],
    "nanvar": [
        [2 * (1 - 8 / 3) / 3, 0, 2 * (3 - 8 / 3) / 3, 2 * (4 - 8 / 3) / 3],
        [0, 0, 0, 0],
        [2 / 3, 2 / 3, 0, -4 / 3],
    ],
    "nanstd": [
        [
            (1 - 8 / 3) / (3 * np.sqrt(14 / 9)),
            0,
            (3 - 8 / 3) / (3 * np.sqrt(14 / 9)),
            (4 - 8 / 3) / (3 * np.sqrt(14 / 9)),
        ],
        [0, 0, 0, 0],
        [1 / (3 * np.sqrt(2)), 1 / (3 * np.sqrt(2)), 0, -2 / (3 * np.sqrt(2))],
    ],
    "nanmax": [[0, 0, 0, 1], [0, 0, 0, 0], [0.5, 0.5, 0, 0]],
    "nanmin": [[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]],
}
# Which reductions numpy warns on for an all-nan slice.
WARNS = {"nanmean", "nanvar", "nanstd", "nanmax", "nanmin"}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_nan_entries_and_all_nan_slices(name: str) -> None:
    """Values equal numpy's (warning included); nan entries, and every entry of an
    all-nan slice, get gradient 0; the others get the gradient worked out by hand."""
    fn, ref = REDUCTIONS[name]
    if name in WARNS:
        with pytest.warns(RuntimeWarning):
            expected = ref(ROWS, axis=1)
    else:
        expected = ref(ROWS, axis=1)
    with lampy.Scope():
        x = lampy.param(ROWS)
        if name in WARNS:
            with pytest.warns(RuntimeWarning):
                y = fn(x, axis=1)
        else:
            y = fn(x, axis=1)
        np.testing.assert_allclose(y.value, expected, rtol=1e-14)
        y.sum().backward()
        np.testing.assert_allclose(x.grad, EXPECTED_GRAD[name], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_float32_kept(name: str) -> None:
    """A float32 input gives numpy's float32 result and a float32 gradient."""
    fn, ref = REDUCTIONS[name]
    a = np.array([[1.0, NAN, 3.0], [2.0, 5.0, NAN]], np.float32)
    with lampy.Scope():
        x = lampy.param(a)
        y = fn(x, axis=0)
        assert y.dtype == ref(a, axis=0).dtype == np.float32
        np.testing.assert_allclose(y.value, ref(a, axis=0), rtol=1e-6)
        y.sum().backward()
        assert x.grad.dtype == np.float32


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_zero_d_input(name: str) -> None:
    """A 0-d input reduces to a 0-d result, as numpy."""
    fn, ref = REDUCTIONS[name]
    with lampy.Scope():
        y = fn(lampy.param(2.5))
        assert y.shape == ()
        assert y.value == ref(np.float64(2.5))


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_gradient_with_tuple_axes_and_nans(name: str) -> None:
    """Gradients over a tuple of axes, with nans present, match finite differences."""
    rng = np.random.default_rng(3)
    a = rng.permutation(24).reshape(2, 3, 4) * 0.5 - 5.75  # distinct: no ties to straddle
    a[0, 1, 2] = a[1, 0, 0] = a[1, 2, 3] = NAN
    fn = REDUCTIONS[name][0]
    check_grad(lambda v: fn(v, axis=(0, 2), keepdims=True), a)
    check_grad(lambda v: fn(v, axis=(-1, 0)), a)


def test_empty_inputs() -> None:
    """Empty selections: nansum 0, nanprod 1 (empty gradients); nanmean nan with
    numpy's warning; nanmax an error naming the op."""
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 3)))
        assert lampy.nansum(x, axis=0).value.tolist() == [0.0, 0.0, 0.0]
        assert lampy.nanprod(x, axis=0).value.tolist() == [1.0, 1.0, 1.0]
        y = lampy.nansum(x) + lampy.nanprod(x)
        y.backward()
        assert x.grad.shape == (0, 3)
        with pytest.warns(RuntimeWarning):
            assert np.isnan(lampy.nanmean(x).value)
        with pytest.raises(lampy.ShapeError, match="nanmax"):
            lampy.nanmax(x, axis=0)


def test_nanvar_ddof_past_count_is_nan_like_numpy() -> None:
    """A slice with no more non-nan entries than ddof gives numpy's nan and warning."""
    a = np.array([[1.0, NAN], [2.0, 4.0]])
    with pytest.warns(RuntimeWarning):
        expected = np.nanvar(a, axis=1, ddof=1)
    with lampy.Scope():
        with pytest.warns(RuntimeWarning):
            y = lampy.nanvar(lampy.param(a), axis=1, ddof=1)
        np.testing.assert_array_equal(y.value, expected)


def test_nanargmax_nanargmin() -> None:
    """The arg-extremes skip nans and return numpy's integer indices; an all-nan slice is
    a LampyValueError naming the op, an empty one a ShapeError."""
    with lampy.Scope():
        x = lampy.param(ROWS[[0, 2]])
        assert lampy.nanargmax(x, axis=1).tolist() == [3, 0]
        assert lampy.nanargmin(x, axis=1).tolist() == [0, 3]
        assert lampy.nanargmax(x) == np.nanargmax(ROWS[[0, 2]])
        assert lampy.nanargmin(x, axis=1, keepdims=True).shape == (2, 1)
        with pytest.raises(lampy.LampyValueError, match=r"nanargmax.*all nan"):
            lampy.nanargmax(lampy.param(ROWS), axis=1)
        with pytest.raises(ValueError, match="nanargmin"):
            lampy.nanargmin(np.zeros(0))


def test_nancumsum_nancumprod_exact() -> None:
    """Cumulative ops take nans as 0 (sum) or 1 (product): values as numpy, gradients
    worked out by hand, exact at a zero."""
    a = np.array([2.0, NAN, 0.0, 3.0])
    with lampy.Scope():
        x = lampy.param(a)
        s = lampy.nancumsum(x)
        np.testing.assert_array_equal(s.value, np.nancumsum(a))
        s.sum().backward()
        assert x.grad.tolist() == [4.0, 0.0, 2.0, 1.0]
        x.zero_grad()
        p = lampy.nancumprod(x)
        np.testing.assert_array_equal(p.value, np.nancumprod(a))
        p.sum().backward()
        # sum = x0 + x0 + x0 z + x0 z t: d/dx0 = 2 + z + z t = 2, dz = x0 + x0 t = 8
        assert x.grad.tolist() == [2.0, 0.0, 8.0, 0.0]


def test_nancumulative_axis_none_flattens() -> None:
    """axis=None works on the flattened array (a 1-d result), as numpy."""
    a = np.array([[1.0, NAN], [3.0, 4.0]])
    with lampy.Scope():
        x = lampy.param(a)
        y = lampy.nancumsum(x)
        np.testing.assert_array_equal(y.value, np.nancumsum(a))
        y.sum().backward()
        assert x.grad.tolist() == [[4.0, 0.0], [2.0, 1.0]]


def test_list_of_variables_and_integers() -> None:
    """A list of Variables is stacked (each gets its gradient); integer arrays give
    numpy's integer results."""
    with lampy.Scope():
        x, y = lampy.param(1.0), lampy.param(NAN)
        lampy.nanmean([x, y, 3.0]).backward()
        assert x.grad == 0.5
        assert y.grad == 0.0
        ints = np.array([1, 2, 3])
        r = lampy.nansum(ints)
        assert r.dtype == np.nansum(ints).dtype
        assert r.value == 6


def test_dtype_argument() -> None:
    """dtype=float64 on a float32 input computes in float64 (numpy's value and dtype)
    and keeps the gradient float32; an integer dtype is refused."""
    a = np.array([1.0, NAN, 2.0], np.float32)
    with lampy.Scope():
        x = lampy.param(a)
        y = lampy.nanmean(x, dtype=np.float64)
        assert y.dtype == np.float64
        assert y.value == np.nanmean(a, dtype=np.float64)
        y.backward()
        assert x.grad.dtype == np.float32
        assert x.grad.tolist() == [0.5, 0.0, 0.5]
        with pytest.raises(TypeError, match="nansum"):
            lampy.nansum(x, dtype=np.int64)
