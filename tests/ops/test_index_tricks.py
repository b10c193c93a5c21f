"""lampy.r_ and lampy.c_ against numpy's, with gradients through every Variable item."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad

A = np.array([1.0, 2.0])
B = np.array([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    ("lampy_of", "numpy_value"),
    [
        (lambda x, y: lampy.r_[x, 0.5, x * 2], np.r_[A, 0.5, A * 2]),
        (lambda x, y: lampy.r_[x, 1:4], np.r_[A, 1:4]),
        (lambda x, y: lampy.r_[0:1:5j, x], np.r_[0:1:5j, A]),
        (lambda x, y: lampy.r_[y, y], np.r_[B, B]),
        (lambda x, y: lampy.r_[x], np.r_[A]),
        (lambda x, y: lampy.c_[x, x * 3], np.c_[A, A * 3]),
        (lambda x, y: lampy.c_[y, x], np.c_[B, A]),
        (lambda x, y: lampy.c_[1, 2], np.c_[1, 2]),
    ],
)
def test_values_are_numpys(lampy_of: object, numpy_value: np.ndarray) -> None:
    """The joined value, shape and dtype are numpy's r_ / c_."""
    with lampy.Scope():
        out = lampy_of(lampy.param(A), lampy.param(B))  # type: ignore[operator]
        assert out.shape == numpy_value.shape and out.dtype == numpy_value.dtype
        np.testing.assert_array_equal(out.value, numpy_value)


def test_gradients_reach_every_variable_item() -> None:
    """Each Variable item gets its part of the gradient (HIPS autograd's np.r_/np.c_)."""
    check_grad(lambda u, v: lampy.r_[u, 2.0, v.sum(0), u * u], A, B)
    check_grad(lambda u, v: lampy.c_[v, u, lampy.exp(u)], A, B)
    check_grad(lambda u: lampy.r_[u * (1 + 2j), u], A)


def test_string_directives_are_refused() -> None:
    """numpy's directives ('0,2', 'r', 'c') are not supported: a clear error."""
    with lampy.Scope(), pytest.raises(lampy.LampyTypeError, match="string directives"):
        lampy.r_["0,2", lampy.param(A)]
