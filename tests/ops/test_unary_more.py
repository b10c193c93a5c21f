"""sinc, fabs, the degree/radian conversions and nan_to_num: conventions at 0, at nan
and the infinities, numpy's keyword arguments, dtypes and aliases."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lampy
from lampy._errors import DTypeError, ShapeError
from lampy.ops._magnitude import fabs
from lampy.ops._masking import nan_to_num
from lampy.ops._trig import deg2rad, degrees, rad2deg, radians, sinc
from lampy.testing import check_grad


def _grad(fn: object, a: np.ndarray) -> np.ndarray:
    with lampy.Scope():
        x = lampy.param(a)
        fn(x).sum().backward()  # type: ignore[operator]
        assert x.grad is not None
        return x.grad.copy()


# ----------------------------------------------------------------------------- sinc
def test_sinc_at_zero() -> None:
    """sinc(0) = 1 and its derivative there is exactly 0 (the closed form is 0/0)."""
    with lampy.Scope():
        x = lampy.param([0.0, -0.0])
        y = sinc(x)
        np.testing.assert_array_equal(y.value, [1.0, 1.0])
    np.testing.assert_array_equal(_grad(sinc, np.zeros(2)), [0.0, 0.0])


def _sinc_derivative(x: np.ndarray) -> np.ndarray:
    """The derivative of sinc from 12 terms of its power series, term by term in float64
    (accurate to rounding for |pi x| < 1): sum_k (-1)**k 2k pi**2k x**(2k-1) / (2k+1)!."""
    y = np.pi * x.astype(np.float64)
    total = np.zeros_like(y)
    for k in range(12, 0, -1):
        total += (-1) ** k * 2 * k * y ** (2 * k - 1) / math.factorial(2 * k + 1)
    return np.pi * total


@pytest.mark.parametrize(
    ("dtype", "edge", "rtol"), [(np.float64, 0.1, 1e-12), (np.float32, 0.5, 1e-5)]
)
def test_sinc_series_and_closed_form_agree_where_they_meet(
    dtype: type, edge: float, rtol: float
) -> None:
    """Just below and above |pi x| = edge, where the Taylor series hands over to the
    closed form, the derivative is continuous and accurate."""
    x0 = edge / math.pi
    x = np.array([x0 * (1 - 1e-6), x0 * (1 + 1e-6), -x0 * (1 + 1e-6)], dtype=dtype)
    np.testing.assert_allclose(_grad(sinc, x), _sinc_derivative(x), rtol=rtol)


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-13), (np.float32, 1e-6)])
def test_sinc_near_zero_keeps_its_accuracy(dtype: type, rtol: float) -> None:
    """Near 0 the derivative keeps full relative accuracy (no cancellation)."""
    x = np.array([0.3, 1e-3, -2e-5, 1e-8, -1e-30], dtype=dtype)
    np.testing.assert_allclose(_grad(sinc, x), _sinc_derivative(x), rtol=rtol)


def test_sinc_of_integers_is_a_float_constant() -> None:
    """Integer inputs give numpy's float64 values and no gradient."""
    with lampy.Scope():
        y = sinc(np.array([0, 1, 2]))
        np.testing.assert_array_equal(y.value, np.sinc(np.array([0, 1, 2])))
        assert not y.needs_grad


# ----------------------------------------------------------------------------- fabs
def test_fabs_matches_numpy_and_abs() -> None:
    """fabs is abs as a float: the same gradient (0 at 0), float64 for integers, and a
    DTypeError for complex inputs (numpy has no complex fabs)."""
    a = np.array([-2.0, -0.0, 0.0, 3.0])
    np.testing.assert_array_equal(_grad(fabs, a), [-1.0, 0.0, 0.0, 1.0])
    check_grad(fabs, np.array([-1.5, 0.5], np.float32))
    with lampy.Scope():
        ints = fabs(np.array([-1, 2]))
        assert ints.dtype == np.float64
        np.testing.assert_array_equal(ints.value, [1.0, 2.0])
        with pytest.raises(DTypeError, match="fabs: takes real numbers, got dtype complex128"):
            fabs(np.array([1j]))


# -------------------------------------------------------------- degrees and radians
def test_degree_conversions_and_aliases() -> None:
    """radians is deg2rad and degrees is rad2deg (as in numpy); the gradients are the
    constant factors, exactly, in the input's dtype."""
    assert radians is deg2rad
    assert degrees is rad2deg
    a = np.array([-180.0, 0.0, 90.0])
    np.testing.assert_array_equal(_grad(deg2rad, a), np.full(3, math.pi / 180))
    np.testing.assert_array_equal(_grad(rad2deg, a), np.full(3, 180 / math.pi))
    with lampy.Scope():
        x = lampy.param(a.astype(np.float32))
        y = deg2rad(x)
        assert y.dtype == np.float32
        np.testing.assert_array_equal(y.value, np.deg2rad(a.astype(np.float32)))
        rad2deg(y).sum().backward()
        assert x.grad is not None
        assert x.grad.dtype == np.float32


# ----------------------------------------------------------------------- nan_to_num
SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_to_num_defaults(dtype: type) -> None:
    """nan becomes 0 and the infinities the largest finite values of the dtype, as
    numpy; the gradient is g where x was finite and exactly 0 where it was replaced."""
    a = SPECIAL.astype(dtype)
    big = np.finfo(dtype).max
    with lampy.Scope():
        x = lampy.param(a)
        y = nan_to_num(x)
        assert y.dtype == dtype
        np.testing.assert_array_equal(y.value, [1.0, 0.0, big, -big, -2.0])
        y.backward(np.arange(1, 6, dtype=dtype))
        np.testing.assert_array_equal(x.grad, [1.0, 0.0, 0.0, 0.0, 5.0])


def test_nan_to_num_keywords_and_variable_replacements() -> None:
    """nan=, posinf= and neginf= replace as numpy; a 0-d Variable replacement gets the
    sum of g over the elements it replaced; a non-0-d Variable is refused."""
    with lampy.Scope():
        x = lampy.param(np.concatenate([SPECIAL, [np.nan]]))
        n, p = lampy.param(5.0), lampy.param(7.0)
        y = nan_to_num(x, nan=n, posinf=p, neginf=-3.0)
        np.testing.assert_array_equal(
            y.value, np.nan_to_num(x.value, nan=5.0, posinf=7.0, neginf=-3.0)
        )
        (y * np.arange(1.0, 7.0)).sum().backward()
        assert (n.grad, p.grad) == (2.0 + 6.0, 3.0)
        with pytest.raises(ShapeError, match="nan_to_num: posinf must be a number or 0-d"):
            nan_to_num(x, posinf=lampy.param([1.0, 2.0]))


def test_nan_to_num_never_modifies_its_input() -> None:
    """copy=False is accepted for numpy's signature, but the caller's array is left as
    it was and a new Variable is returned; integers and complex constants pass through
    as numpy's values."""
    a = SPECIAL.copy()
    with lampy.Scope():
        y = nan_to_num(a, copy=False)
        np.testing.assert_array_equal(a, SPECIAL)
        assert isinstance(y, lampy.Variable)
        np.testing.assert_array_equal(nan_to_num(np.array([1, 2])).value, [1, 2])
        z = nan_to_num(np.array([complex(np.nan, np.inf)]))
        np.testing.assert_array_equal(z.value, np.nan_to_num(np.array([complex(np.nan, np.inf)])))
