"""Comparisons, predicates and logical ops: numpy's results as plain boolean arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lampy
from lampy.ops import _comparison as cmp
from lampy.testing import strategies as ls

nan, inf = np.nan, np.inf

BINARY = [
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "isclose",
    "logical_and",
    "logical_or",
    "logical_xor",
]
UNARY = ["isfinite", "isnan", "isinf", "logical_not", "signbit"]

# Small values with repeats, signed zeros, infinities and nans, so that every branch of
# every comparison and predicate is hit.
_SPECIAL = st.sampled_from([0.0, -0.0, 1.0, -1.0, 1.0 + 1e-9, 2.5, inf, -inf, nan])


def _operands(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=_SPECIAL)


@pytest.mark.parametrize("name", BINARY)
@given(data=st.data())
def test_binary_matches_numpy(name: str, data: st.DataObject) -> None:
    """Each binary comparison equals numpy's on broadcast operands, as a bool ndarray."""
    s1, s2 = data.draw(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
    a, b = data.draw(_operands(s1)), data.draw(_operands(s2))
    with lampy.Scope() as s:
        x = lampy.param(a)
        before = len(s)
        for args, values in [
            ((x, b), (a, b)),
            ((b, x), (b, a)),
            ((x, x), (a, a)),
            ((a, b), (a, b)),
        ]:
            got = getattr(cmp, name)(*args)
            assert type(got) is np.ndarray and got.dtype == bool
            np.testing.assert_array_equal(got, getattr(np, name)(*values), strict=True)
        assert len(s) == before, "comparisons record nothing in the scope"


@pytest.mark.parametrize("name", UNARY)
@given(a=ls.shapes(max_dims=3, max_side=3).flatmap(_operands))
def test_unary_matches_numpy(name: str, a: np.ndarray) -> None:
    """Each predicate equals numpy's on a Variable or an array, as a bool ndarray."""
    expected = getattr(np, name)(a)
    with lampy.Scope():
        for arg in (lampy.param(a), a):
            got = getattr(cmp, name)(arg)
            assert type(got) is np.ndarray and got.dtype == bool
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (cmp.less, (1.0, 2.0)),
        (cmp.equal, (np.float32(1.0), 1)),
        (cmp.logical_xor, (True, 0)),
        (cmp.isnan, (nan,)),
        (cmp.signbit, (-0.0,)),
        (cmp.isclose, (1.0, 1.0 + 1e-9)),
    ],
    ids=["less", "equal", "logical_xor", "isnan", "signbit", "isclose"],
)
def test_scalars_give_zero_d_arrays(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Scalar operands give a 0-d bool ndarray, never a numpy bool scalar."""
    got = fn(*args)
    assert type(got) is np.ndarray and got.shape == () and got.dtype == bool
    assert bool(got)


def test_python_number_compares_in_float32_precision() -> None:
    """A Python float against float32 is compared at float32, as numpy 2 does."""
    with lampy.Scope():
        x = lampy.param(np.array([0.1, 0.2], np.float32))
        np.testing.assert_array_equal(cmp.equal(x, 0.1), [True, False])
        np.testing.assert_array_equal(cmp.greater_equal(0.2, x), [True, True])


def test_comparisons_accept_lists_and_variables_that_need_grad() -> None:
    """Lists and params work; no TypeError from numpy's array protocol on params."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0, 3.0])
        np.testing.assert_array_equal(cmp.less_equal(x, [2, 2, 2]), [True, True, False])
        np.testing.assert_array_equal(cmp.logical_and(x, [1, 0, 1]), [True, False, True])


def test_isclose_keywords() -> None:
    """rtol, atol and equal_nan mean what they mean in numpy."""
    a, b = np.array([1.0, 100.0, nan, inf]), np.array([1.1, 101.0, nan, inf])
    with lampy.Scope():
        x = lampy.param(a)
        for kwargs in [
            {},
            {"rtol": 0.2},
            {"atol": 0.5},
            {"rtol": 0.0, "atol": 2.0, "equal_nan": True},
        ]:
            np.testing.assert_array_equal(cmp.isclose(x, b, **kwargs), np.isclose(a, b, **kwargs))
            got = cmp.allclose(x, b, **kwargs)
            assert type(got) is bool and got == np.allclose(a, b, **kwargs)
    assert cmp.allclose([1.0, nan], [1.0, nan], equal_nan=True) is True


def test_array_equal() -> None:
    """array_equal compares shapes and values (nans with equal_nan) and returns a bool."""
    with lampy.Scope():
        x = lampy.param([1.0, nan])
        assert cmp.array_equal(x, [1.0, nan]) is False
        assert cmp.array_equal(x, [1.0, nan], equal_nan=True) is True
        assert cmp.array_equal(x, x.value[:1]) is False
        assert cmp.array_equal(lampy.const([[1, 2]]), [[1, 2]]) is True


@pytest.mark.parametrize("name", [*BINARY, "allclose"])
def test_shape_mismatch_names_the_op(name: str) -> None:
    """Operands that do not broadcast raise a ShapeError naming the function and shapes."""
    with (
        lampy.Scope(),
        pytest.raises(lampy.ShapeError, match=rf"^{name if name != 'allclose' else 'isclose'}: "),
    ):
        getattr(cmp, name)(lampy.param(np.ones((2, 3))), np.ones(4))


def test_released_variable_is_an_error() -> None:
    """Comparing a Variable whose scope exited raises ReleasedError, as other ops do."""
    with lampy.Scope():
        x = lampy.param([1.0])
    with pytest.raises(lampy.ReleasedError):
        cmp.equal(x, 1.0)


def test_empty_operands() -> None:
    """Empty operands give empty boolean arrays of the broadcast shape."""
    got = cmp.greater(np.zeros((0, 3)), np.zeros((2, 1, 1)))
    assert got.shape == (2, 0, 3) and got.dtype == bool
    assert cmp.isfinite(np.zeros(0)).shape == (0,)
