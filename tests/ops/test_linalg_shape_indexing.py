"""matmul, reshape, transpose and getitem beyond what the op table draws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy.testing import check_grad
from lampy.testing import strategies as ls

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3,)),
    ((4, 2, 3), (3,)),
    ((3,), (4, 3, 2)),
    ((2, 1, 2, 3), (5, 3, 2)),
    ((1, 2, 3), (4, 3, 1)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
]


@pytest.mark.parametrize(("s1", "s2"), MATMUL_SHAPES, ids=str)
def test_matmul_numpy_rules(s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    """matmul follows numpy for 1-d operands, batch broadcasting and empty axes."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    with lampy.Scope():
        out = lampy.param(a) @ lampy.param(b)
        np.testing.assert_allclose(out.value, a @ b)
    check_grad(lampy.matmul, a, b)


@pytest.mark.parametrize(("s1", "s2"), [((2, 3), (2, 3)), ((3,), (4,)), ((2, 2, 3), (3, 3, 1))])
def test_matmul_mismatch_is_clear(s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    """Incompatible matmul shapes raise a ValueError naming matmul and both shapes."""
    with lampy.Scope():
        with pytest.raises(ValueError, match=r"matmul: shapes"):
            lampy.param(np.ones(s1)) @ lampy.param(np.ones(s2))
        with pytest.raises(ValueError, match=r"matmul: .*0-d"):
            lampy.matmul(lampy.param(1.0), lampy.param(np.ones(2)))


def test_reshape_spellings() -> None:
    """v.reshape accepts separate ints, a tuple and -1, like numpy."""
    a = np.arange(12.0)
    with lampy.Scope():
        x = lampy.param(a)
        assert x.reshape(3, 4).shape == (3, 4)
        assert x.reshape((2, -1)).shape == (2, 6)
        assert x.reshape(-1).shape == (12,)
        assert (
            lampy.reshape(x, (4, 3), order="F").value.tolist()
            == a.reshape(4, 3, order="F").tolist()
        )
        with pytest.raises(ValueError, match=r"reshape: cannot reshape .* \(12,\)"):
            x.reshape(5, 5)


def test_transpose_spellings() -> None:
    """v.T, v.transpose(), v.transpose(axes) and v.transpose(*axes) match numpy."""
    a = np.arange(24.0).reshape(2, 3, 4)
    with lampy.Scope():
        x = lampy.param(a)
        np.testing.assert_array_equal(x.T.value, a.T)
        np.testing.assert_array_equal(x.transpose().value, a.transpose())
        np.testing.assert_array_equal(x.transpose(1, 0, 2).value, a.transpose(1, 0, 2))
        np.testing.assert_array_equal(x.transpose((2, 0, 1)).value, a.transpose((2, 0, 1)))
        with pytest.raises(ValueError, match="transpose: axes"):
            x.transpose(0, 0, 1)
    check_grad(lambda v: v.transpose(2, 0, 1) * np.arange(24.0).reshape(4, 2, 3), a)


def test_repeated_integer_indices_accumulate() -> None:
    """x[[0, 0, 2, 0]] sends three contributions to x[0]."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0, 3.0])
        x[[0, 0, 2, 0]].sum().backward()
        np.testing.assert_array_equal(x.grad, [3.0, 0.0, 1.0])
    check_grad(lambda v: v[np.array([[0, 1], [1, 1]]), np.array([2, 2])], np.ones((3, 3)))


@pytest.mark.parametrize(
    "index",
    [
        (Ellipsis, None, 1),
        (slice(None, None, -2), [0, 0]),
        (np.array([True, False, True]), slice(1, None)),
        ([1, 1], Ellipsis, [0, 2]),
        (0, 1, 2),
        (slice(None), None, [2, 0, 2]),
        np.array([[True, False, True, True]] * 3),
        (),
    ],
    ids=repr,
)
def test_index_combinations(index: object) -> None:
    """Mixed basic and advanced indices match numpy and differentiate correctly."""
    a = np.arange(36.0).reshape(3, 3, 4) / 7.0 if not isinstance(index, np.ndarray) else None
    a = np.arange(12.0).reshape(3, 4) / 7.0 if a is None else a
    with lampy.Scope():
        y = lampy.param(a)[index]
        np.testing.assert_array_equal(y.value, a[index])
    check_grad(lambda v: v[index], a)


def test_variable_as_index() -> None:
    """An integer constant Variable works as an index array."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0, 3.0])
        i = lampy.const([2, 2])
        x[i].sum().backward()
        np.testing.assert_array_equal(x.grad, [0.0, 0.0, 2.0])


def test_bad_index_is_a_clear_error() -> None:
    """An out-of-range index raises an error naming getitem and the shape."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        with pytest.raises(
            IndexError, match=r"getitem: index 5 does not fit an array of shape \(2,\)"
        ):
            x[5]
        with pytest.raises(IndexError, match="getitem: index arrays must hold integers"):
            x[np.array([0.5])]


@given(data=st.data(), dtype=ls.float_dtypes())
def test_generated_index_expressions(data: st.DataObject, dtype: np.dtype) -> None:
    """Generated index expressions match numpy; repeats accumulate in the gradient."""
    shape = data.draw(ls.shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    index = data.draw(ls.index_expressions(shape))
    a = data.draw(ls.arrays(shape, dtype))
    with lampy.Scope():
        y = lampy.param(a)[index]
        np.testing.assert_array_equal(y.value, a[index])
        assert y.dtype == dtype
    check_grad(lambda v: v[index], a)
