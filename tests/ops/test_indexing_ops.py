"""take, compress, take/put_along_axis and the PyTorch-named index ops beyond the table.

Expected arrays are written out by hand from numpy's and PyTorch's documented formulas
(PyTorch's own doc examples where it has them); torch itself is not used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lampy
from lampy._errors import BadIndexError, DTypeError, ShapeError
from lampy.ops._indexing import add_along, add_flat, compress, take
from lampy.ops._masking import masked_fill, one_hot
from lampy.ops._scatter import (
    gather,
    index_add,
    index_select,
    put_along_axis,
    scatter_add,
    take_along_axis,
)
from lampy.testing import check_grad
from lampy.testing import strategies as ls


def grads(fn: Callable[..., Any], *arrays: Any, g: Any = None) -> tuple[np.ndarray, list[Any]]:
    """The value of ``fn`` on params of ``arrays`` and their gradients for cotangent ``g``
    (default ones)."""
    with lampy.Scope():
        ps = [lampy.param(np.asarray(a, dtype=float)) for a in arrays]
        out = fn(*ps)
        out.backward(np.ones(out.shape) if g is None else np.asarray(g, dtype=float))
        return out.numpy(), [None if p.grad is None else p.grad.copy() for p in ps]


# ---------------------------------------------------------------------------------- take
def test_take_repeated_indices_accumulate() -> None:
    """take([0, 0, 2, 0]) sends three contributions to element 0 and one to element 2."""
    value, (dx,) = grads(lambda x: take(x, [0, 0, 2, 0]), [1.0, 2.0, 3.0])
    assert value.tolist() == [1.0, 1.0, 3.0, 1.0]
    assert dx.tolist() == [3.0, 0.0, 1.0]


def test_take_negative_indices_and_axis() -> None:
    """Negative indices count from the end; the gradient lands at the same positions."""
    a = np.arange(6.0).reshape(2, 3)
    value, (dx,) = grads(lambda x: take(x, [[-1, 0]], axis=1), a, g=[[[1.0, 2.0]], [[3.0, 4.0]]])
    assert value.tolist() == [[[2.0, 0.0]], [[5.0, 3.0]]]
    assert dx.tolist() == [[2.0, 0.0, 1.0], [4.0, 0.0, 3.0]]


def test_take_flattens_without_axis() -> None:
    """With axis=None take indexes the flattened array and the gradient keeps a's shape."""
    value, (dx,) = grads(lambda x: take(x, [5, 0, 5]), np.arange(6.0).reshape(2, 3))
    assert value.tolist() == [5.0, 0.0, 5.0]
    assert dx.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]]


def test_take_wrap_and_clip_modes() -> None:
    """mode='wrap' takes indices modulo n, mode='clip' clips them (negatives to 0)."""
    x = [10.0, 20.0, 30.0]
    value, (dx,) = grads(lambda v: take(v, [3, -4, 7], mode="wrap"), x)
    assert value.tolist() == [10.0, 30.0, 20.0]
    assert dx.tolist() == [1.0, 1.0, 1.0]
    value, (dx,) = grads(lambda v: take(v, [3, -4, 1], mode="clip"), x)
    assert value.tolist() == [30.0, 10.0, 20.0]
    assert dx.tolist() == [1.0, 1.0, 1.0]


def test_take_errors_name_the_op() -> None:
    """Out-of-range, non-integer and empty-axis takes raise BadIndexError naming take."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0, 3.0])
        with pytest.raises(BadIndexError, match=r"take: index 3 is out of bounds for the flat"):
            take(x, [0, 3])
        with pytest.raises(IndexError, match=r"take: index -4 is out of bounds for axis 0"):
            take(x, [-4], axis=0)
        with pytest.raises(BadIndexError, match="take: indices must hold integers"):
            take(x, [0.5])
        with pytest.raises(BadIndexError, match="empty axis"):
            take(lampy.param(np.zeros((2, 0))), [0], axis=1, mode="wrap")
        with pytest.raises(ValueError, match="mode must be"):
            take(x, [0], mode="nearest")
        assert take(x, []).shape == (0,)


# ------------------------------------------------------------------------------ compress
def test_compress_selects_and_differentiates() -> None:
    """compress keeps the slices where condition holds; the gradient goes back to them."""
    a = np.arange(6.0).reshape(2, 3)
    value, (dx,) = grads(lambda x: compress([False, True, True, False], x, axis=1), a)
    assert value.tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert dx.tolist() == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
    value, (dx,) = grads(lambda x: compress([1, 0, 0, 0, 2], x), a)
    assert value.tolist() == [0.0, 4.0]
    assert dx.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_compress_errors() -> None:
    """A condition true past the axis is a BadIndexError; an n-d condition a ShapeError."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        with pytest.raises(BadIndexError, match="compress: condition is true at position 2"):
            compress([True, False, True], x)
        with pytest.raises(ShapeError, match="compress: condition must be 1-d"):
            compress([[True, False]], x)


# ------------------------------------------------------------------- take/put along axis
def test_take_along_axis_with_argsort_sorts() -> None:
    """take_along_axis with argsort's indices gives np.sort; repeats accumulate."""
    a = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    with lampy.Scope():
        y = take_along_axis(lampy.param(a), np.argsort(a, axis=1), axis=1)
        np.testing.assert_array_equal(y.value, np.sort(a, axis=1))
    value, (dx,) = grads(lambda x: take_along_axis(x, np.array([[1, 1], [-1, 0]]), axis=1), a)
    assert value.tolist() == [[1.0, 1.0], [4.0, 0.0]]
    assert dx.tolist() == [[0.0, 2.0, 0.0], [1.0, 0.0, 1.0]]


def test_take_along_axis_errors() -> None:
    """Wrong number of dimensions and non-broadcasting shapes are ShapeErrors."""
    with lampy.Scope():
        x = lampy.param(np.zeros((2, 3)))
        with pytest.raises(ShapeError, match="as many dimensions"):
            take_along_axis(x, np.array([0, 1]), axis=1)
        with pytest.raises(ShapeError, match="do not broadcast"):
            take_along_axis(x, np.zeros((3, 1), int), axis=1)
        with pytest.raises(BadIndexError, match="take_along_axis: index 3 is out of bounds"):
            take_along_axis(x, np.array([[3]]), axis=1)
        with pytest.raises(ShapeError, match="axis=None, indices must be 1-d"):
            take_along_axis(x, np.zeros((1, 1), int), axis=None)


def test_put_along_axis_last_write_wins() -> None:
    """Repeated positions keep the last value; arr's gradient is 0 where written; only
    the winning value of a position gets its gradient."""
    arr = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    values = np.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]])
    idx = np.array([[0, 0, 2], [1, 1, 1]])
    g = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    value, (darr, dvalues) = grads(lambda a, v: put_along_axis(a, idx, v, axis=1), arr, values, g=g)
    assert value.tolist() == [[20.0, 2.0, 30.0], [4.0, 60.0, 6.0]]
    assert darr.tolist() == [[0.0, 2.0, 0.0], [4.0, 0.0, 6.0]]
    assert dvalues.tolist() == [[0.0, 1.0, 3.0], [0.0, 0.0, 5.0]]


def test_put_along_axis_is_functional() -> None:
    """arr itself is unchanged; values broadcast; axis=None keeps arr's shape; the result
    keeps arr's dtype."""
    arr = np.zeros((2, 2))
    with lampy.Scope():
        a = lampy.param(arr)
        y = put_along_axis(a, np.array([[1], [0]]), 7.0, axis=1)
        assert y.value.tolist() == [[0.0, 7.0], [7.0, 0.0]]
        assert a.value.tolist() == [[0.0, 0.0], [0.0, 0.0]]
        flat = put_along_axis(a, np.array([3, -4]), np.array([1.0, 2.0]), axis=None)
        assert flat.value.tolist() == [[2.0, 0.0], [0.0, 1.0]]
        as32 = put_along_axis(np.zeros(3, np.float32), np.array([1]), lampy.param([2.5]), 0)
        assert as32.dtype == np.float32
        with pytest.raises(ShapeError, match="values of shape"):
            put_along_axis(a, np.array([[1], [0]]), np.ones(3), axis=1)
    check_grad(lambda v: put_along_axis(np.zeros(3), np.array([1, 1, 2]), v, 0), np.ones(3))


# ------------------------------------------------------------------ index_select, index_add
def test_index_select_matches_pytorch_example() -> None:
    """PyTorch's doc example: rows/columns 0 and 2; repeated indices accumulate."""
    x = np.arange(12.0).reshape(3, 4)
    value, (dx,) = grads(lambda v: index_select(v, 1, np.array([0, 2])), x)
    assert value.tolist() == [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]]
    value, (dx,) = grads(lambda v: index_select(v, 0, [2, -1, 0]), x)
    assert value.tolist() == [x[2].tolist(), x[2].tolist(), x[0].tolist()]
    assert dx.tolist() == [[1.0] * 4, [0.0] * 4, [2.0] * 4]


def test_index_select_edge_cases() -> None:
    """A 0-d index selects one slice (axis kept); a 0-d x takes one index; bad indices raise."""
    with lampy.Scope():
        x = lampy.param(np.arange(6.0).reshape(2, 3))
        assert index_select(x, 1, np.array(2)).value.tolist() == [[2.0], [5.0]]
        assert index_select(lampy.param(5.0), 0, [0]).shape == ()
        with pytest.raises(ShapeError, match="exactly one index"):
            index_select(lampy.param(5.0), 0, [0, 0])
        with pytest.raises(BadIndexError, match="index_select: indices must be a vector"):
            index_select(x, 0, [[0, 1]])
        with pytest.raises(
            BadIndexError, match="index_select: index 2 is out of bounds for axis 0"
        ):
            index_select(x, 0, [2])


def test_index_add_matches_pytorch_example() -> None:
    """PyTorch's doc example (ones(5, 3), rows 0, 4, 2), then repeats and alpha."""
    t = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    value, (dx, dt) = grads(lambda x, s: index_add(x, 0, [0, 4, 2], s), np.ones((5, 3)), t)
    assert value.tolist() == [
        [2.0, 3.0, 4.0],
        [1.0, 1.0, 1.0],
        [8.0, 9.0, 10.0],
        [1.0, 1.0, 1.0],
        [5.0, 6.0, 7.0],
    ]
    assert dx.tolist() == np.ones((5, 3)).tolist()
    assert dt.tolist() == np.ones((3, 3)).tolist()
    g = np.arange(6.0).reshape(2, 3)
    value, (dx, ds) = grads(
        lambda x, s: index_add(x, 1, [1, 1, -1], s, alpha=2.0),
        np.zeros((2, 3)),
        [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
        g=g,
    )
    assert value.tolist() == [[0.0, 6.0, 6.0], [0.0, 18.0, 12.0]]
    assert ds.tolist() == [[2.0, 2.0, 4.0], [8.0, 8.0, 10.0]]  # 2 * g[:, [1, 1, 2]]


def test_index_add_shape_errors() -> None:
    """A source of the wrong shape is a ShapeError naming the expected shape."""
    with lampy.Scope():
        x = lampy.param(np.zeros((3, 2)))
        with pytest.raises(ShapeError, match=r"source has shape \(2, 1\), expected \(2, 2\)"):
            index_add(x, 0, [0, 0], np.ones((2, 1)))


# ---------------------------------------------------------------------- gather, scatter_add
def test_gather_matches_pytorch_example() -> None:
    """PyTorch's doc example gather(t, 1, [[0, 0], [1, 0]]); repeats accumulate."""
    value, (dx,) = grads(lambda t: gather(t, 1, [[0, 0], [1, 0]]), [[1.0, 2.0], [3.0, 4.0]])
    assert value.tolist() == [[1.0, 1.0], [4.0, 3.0]]
    assert dx.tolist() == [[2.0, 0.0], [1.0, 1.0]]


def test_gather_index_smaller_than_x() -> None:
    """The index may be smaller than x on the other axes; the result has its shape."""
    x = np.arange(12.0).reshape(3, 4)
    value, (dx,) = grads(lambda t: gather(t, 0, [[2, -1], [0, 2]]), x)
    assert value.tolist() == [[8.0, 9.0], [0.0, 9.0]]
    assert dx.tolist() == [[1.0, 0.0, 0.0, 0.0], [0.0] * 4, [1.0, 2.0, 0.0, 0.0]]


def test_gather_shape_errors() -> None:
    """A different number of dimensions or a larger non-axis size is a ShapeError."""
    with lampy.Scope():
        x = lampy.param(np.zeros((2, 3)))
        with pytest.raises(ShapeError, match="gather: index of shape"):
            gather(x, 1, [0, 1])
        with pytest.raises(ShapeError, match="no larger than x"):
            gather(x, 1, np.zeros((3, 1), int))
        with pytest.raises(BadIndexError, match="gather: index 3 is out of bounds for axis 1"):
            gather(x, 1, [[3]])


def test_scatter_add_matches_pytorch_example() -> None:
    """PyTorch's doc example: ones(2, 5) scattered into zeros(3, 5) along axis 0."""
    src = np.ones((2, 5))
    one_row = np.array([[0, 1, 2, 0, 0]])
    value, (dx, dsrc) = grads(lambda x, s: scatter_add(x, 0, one_row, s), np.zeros((3, 5)), src)
    assert value.tolist() == [[1, 0, 0, 1, 1], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]]
    assert dsrc.tolist() == [[1.0] * 5, [0.0] * 5]  # the unused row of src gets nothing
    assert dx.tolist() == np.ones((3, 5)).tolist()
    two_rows = np.array([[0, 1, 2, 0, 0], [0, 1, 2, 2, 2]])
    value, _ = grads(lambda x, s: scatter_add(x, 0, two_rows, s), np.zeros((3, 5)), src)
    assert value.tolist() == [[2, 0, 0, 1, 1], [0, 2, 0, 0, 0], [0, 0, 2, 1, 1]]


def test_scatter_add_gradients() -> None:
    """dx = g and dsrc = g gathered at the index, 0 outside the index's shape."""
    g = np.arange(6.0).reshape(2, 3)
    idx = np.array([[2, 2], [0, 1]])
    _, (dx, dsrc) = grads(
        lambda x, s: scatter_add(x, 1, idx, s), np.zeros((2, 3)), np.ones((2, 3)), g=g
    )
    assert dx.tolist() == g.tolist()
    assert dsrc.tolist() == [[2.0, 2.0, 0.0], [3.0, 4.0, 0.0]]


def test_scatter_add_shape_errors() -> None:
    """An index larger than src, or than x off the axis, is a ShapeError."""
    with lampy.Scope():
        x = lampy.param(np.zeros((3, 2)))
        with pytest.raises(ShapeError, match="no larger than src"):
            scatter_add(x, 0, [[0, 1]], np.ones((1, 1)))
        with pytest.raises(ShapeError, match="scatter_add: index of shape"):
            scatter_add(x, 0, [[0, 1, 2]], np.ones((3, 3)))
        with pytest.raises(BadIndexError, match="scatter_add: index -4"):
            scatter_add(x, 0, [[-4]], np.ones((1, 1)))


def test_zero_d_inputs_act_as_one_element_vectors() -> None:
    """A 0-d x works with gather, scatter_add and index_add, giving 0-d results."""
    with lampy.Scope():
        x = lampy.param(5.0)
        y = gather(x, 0, np.array(0)) + scatter_add(x, 0, np.array(-1), 2.0)
        y = y + index_add(x, 0, [0], lampy.param(3.0), alpha=2.0)
        assert y.shape == ()
        assert y.item() == 5.0 + 7.0 + 11.0
        y.backward()
        assert x.grad.tolist() == 3.0


# ---------------------------------------------------------------------------- masked_fill
def test_masked_fill_broadcasts_both_ways() -> None:
    """x (3,) and mask (2, 1) give (2, 3); dx sums over the broadcast rows; dvalue sums g
    over the filled positions."""
    mask = np.array([[True], [False]])
    g = np.arange(6.0).reshape(2, 3)
    value, (dx, dv) = grads(lambda x, v: masked_fill(x, mask, v), [1.0, 2.0, 3.0], 9.0, g=g)
    assert value.tolist() == [[9.0, 9.0, 9.0], [1.0, 2.0, 3.0]]
    assert dx.tolist() == [3.0, 4.0, 5.0]
    assert dv.tolist() == 3.0


def test_masked_fill_dtypes_and_errors() -> None:
    """The result keeps x's dtype; masks must be boolean and value 0-d."""
    with lampy.Scope():
        x = lampy.param(np.ones(3, np.float32))
        v = lampy.param(2.0)
        y = masked_fill(x, np.array([True, False, True]), v)
        assert y.dtype == np.float32
        y.sum().backward()
        assert v.grad.dtype == np.float64
        assert v.grad.tolist() == 2.0
        assert x.grad.tolist() == [0.0, 1.0, 0.0]
        with pytest.raises(DTypeError, match="mask must be boolean"):
            masked_fill(x, np.array([1, 0, 1]), 0.0)
        with pytest.raises(ShapeError, match="value must be a number or 0-d"):
            masked_fill(x, np.array([True, False, True]), np.ones(1))
        with pytest.raises(ShapeError, match="does not broadcast"):
            masked_fill(x, np.ones(2, bool), 0.0)


# -------------------------------------------------------------------------------- one_hot
def test_one_hot_matches_pytorch() -> None:
    """one_hot infers num_classes, returns an int64 constant, and takes dtype=."""
    with lampy.Scope():
        y = one_hot(np.array([0, 2, 1]))
        assert y.value.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
        assert y.dtype == np.int64
        assert not y.needs_grad
        z = one_hot(lampy.const([[1], [3]]), 5, dtype=np.float32)
        assert z.shape == (2, 1, 5)
        assert z.dtype == np.float32
        assert z.value[1, 0].tolist() == [0, 0, 0, 1, 0]
        assert one_hot(np.array(1), 3).value.tolist() == [0, 1, 0]
        assert one_hot(np.zeros(0, int), 3).shape == (0, 3)


def test_one_hot_errors() -> None:
    """Negative or too-large classes, float indices and empty inference all raise."""
    with lampy.Scope():
        with pytest.raises(BadIndexError, match="class index -1 is out of range"):
            one_hot(np.array([-1]), 3)
        with pytest.raises(BadIndexError, match="class index 3 is out of range for 3"):
            one_hot(np.array([3]), 3)
        with pytest.raises(DTypeError, match="indices must be integers"):
            one_hot(np.array([1.0]))
        with pytest.raises(ValueError, match="cannot infer"):
            one_hot(np.zeros(0, int))


# --------------------------------------------------------------- helpers and properties
def test_closures_add_into_non_contiguous_buffers() -> None:
    """Every scatter closure adds correctly into a Fortran-ordered buffer holding other
    contributions."""
    a = np.arange(12.0).reshape(3, 4)
    cases = [
        lambda x: x[[0, 0, 2]],
        lambda x: x[:, [1, 1, 3]],
        lambda x: take(x, [5, 5, 0]),
        lambda x: take(x, [1, 1], axis=1),
        lambda x: take_along_axis(x, np.array([[1, 1, 0, 0]]), 0),
        lambda x: gather(x, 1, [[0, 0], [3, 3]]),
        lambda x: index_select(x, 0, [2, 2]),
    ]
    for fn in cases:
        with lampy.Scope():
            y = fn(lampy.param(a))
            [(_, closure)] = y.op.params
            g = np.arange(1.0, y.size + 1).reshape(y.shape)
            c_buf = np.ones(a.shape)
            f_buf = np.asfortranarray(np.ones(a.shape))
            closure(g, c_buf)
            closure(g, f_buf)
            np.testing.assert_array_equal(f_buf, c_buf)


def test_add_helpers_accumulate_like_add_at() -> None:
    """add_along and add_flat equal numpy.add.at, with and without repeats."""
    out = np.zeros((2, 5, 20))
    idx = np.array([4, 0, 4, 4])
    g = np.arange(2 * 4 * 20.0).reshape(2, 4, 20)
    expected = np.zeros((2, 5, 20))
    np.add.at(expected, (slice(None), idx), g)
    add_along(out, idx, g, 1)
    np.testing.assert_array_equal(out, expected)
    add_along(out, np.array([1, 2]), g[:, :2], 1, unique=True)
    np.add.at(expected, (slice(None), [1, 2]), g[:, :2])
    np.testing.assert_array_equal(out, expected)
    flat = np.zeros((3, 2)).T
    add_flat(flat, np.array([0, 0, 5]), np.array([1.0, 2.0, 3.0]))
    assert flat.T.tolist() == [[3.0, 0.0], [0.0, 0.0], [0.0, 3.0]]


def test_variable_used_by_several_ops() -> None:
    """Gradients of one Variable through gather, index_select and take add up."""
    x = np.arange(4.0)
    _, (dx,) = grads(
        lambda v: gather(v, 0, [3, 3]).sum() + index_select(v, 0, [3, 0]).sum() + take(v, 0),
        x,
    )
    assert dx.tolist() == [2.0, 0.0, 0.0, 3.0]


@given(data=st.data(), dtype=ls.float_dtypes())
def test_generated_indices_accumulate_like_add_at(data: st.DataObject, dtype: np.dtype) -> None:
    """For generated indices with repeats, index_select/take/gather gradients equal
    numpy.add.at of g, and index_add/scatter_add values equal numpy.add.at of the source."""
    shape = data.draw(ls.shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx = data.draw(hnp.arrays(np.intp, st.integers(0, 6), elements=st.integers(-n, n - 1)))
    a = data.draw(ls.arrays(shape, dtype))
    gshape = (*shape[:axis], idx.size, *shape[axis + 1 :])
    g = data.draw(hnp.arrays(dtype, gshape, elements=st.integers(-4, 4).map(float)))
    expected = np.zeros(shape, dtype)
    np.add.at(expected, (slice(None),) * axis + (idx,), g)
    gather_idx = np.broadcast_to(
        idx.reshape((1,) * axis + (-1,) + (1,) * (len(shape) - axis - 1)), gshape
    )
    with lampy.Scope():
        x = lampy.param(a)
        for y in (index_select(x, axis, idx), take(x, idx, axis=axis), gather(x, axis, gather_idx)):
            x.zero_grad()
            y.backward(g)
            np.testing.assert_array_equal(x.grad, expected)
        zeros = np.zeros(shape, dtype)
        np.testing.assert_array_equal(index_add(zeros, axis, idx, g).value, expected)
        np.testing.assert_array_equal(scatter_add(zeros, axis, gather_idx, g).value, expected)


@pytest.mark.parametrize(
    "idx", [[5, 5, -95], [5, 7], [0, 99, 3, 3, 3], []], ids=["repeats", "distinct", "many", "empty"]
)
def test_wide_rows_accumulate_like_add_at(idx: list[int]) -> None:
    """Rows of 24 elements (fancy += without repeats, flat add.at with them) over 100 rows
    (the sort-based repeat check) give numpy.add.at's gradient for x[idx], take and
    index_select."""
    a = np.arange(100 * 3 * 8.0).reshape(100, 3, 8)
    i = np.array(idx, dtype=int)
    g = np.arange(1.0, i.size * 24 + 1).reshape(i.size, 3, 8)
    expected = np.zeros(a.shape)
    np.add.at(expected, i, g)
    for fn in (lambda v: v[i], lambda v: take(v, i, axis=0), lambda v: index_select(v, 0, i)):
        _, (dx,) = grads(fn, a, g=g)
        np.testing.assert_array_equal(dx, expected)


def test_constant_and_integer_inputs_give_constants() -> None:
    """On numpy arrays (float or integer) every op returns a constant of the input's
    dtype, equal to numpy's or PyTorch's result."""
    ints = np.arange(6).reshape(2, 3)
    idx = np.array([[1, 0, 1]])
    with lampy.Scope():
        results = {
            "take": take(ints, [4, 4]),
            "compress": compress([True, False], ints, axis=0),
            "take_along_axis": take_along_axis(ints, idx, 0),
            "put_along_axis": put_along_axis(ints, idx, 9, 0),
            "gather": gather(ints, 0, idx),
            "scatter_add": scatter_add(ints, 0, idx, np.ones((1, 3), int)),
            "index_select": index_select(ints, 1, [2]),
            "index_add": index_add(ints, 0, [1], np.ones((1, 3), int)),
            "masked_fill": masked_fill(ints, ints > 3, -1),
        }
        for name, y in results.items():
            assert not y.needs_grad, name
            assert y.dtype == ints.dtype, name
        assert results["take"].value.tolist() == [4, 4]
        assert results["put_along_axis"].value.tolist() == [[0, 9, 2], [9, 4, 9]]
        assert results["scatter_add"].value.tolist() == [[0, 2, 2], [4, 4, 6]]
        assert results["masked_fill"].value.tolist() == [[0, 1, 2], [3, -1, -1]]
        assert not take(np.ones(3), [0]).needs_grad


def test_getitem_sequences_are_index_arrays() -> None:
    """A tuple inside the index and an empty list are index arrays, as in numpy: repeats
    accumulate and `x[[]]` is an empty selection."""
    a = np.arange(6.0).reshape(2, 3)
    value, (dx,) = grads(lambda v: v[(0, 0),], a)
    assert value.shape == (2, 3)
    assert dx.tolist() == [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]
    value, (dx,) = grads(lambda v: v[[]], a)
    assert value.shape == (0, 3)
    assert dx.tolist() == np.zeros((2, 3)).tolist()
