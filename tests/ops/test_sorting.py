"""sort, argsort, partition and topk: conventions at ties and nan, errors, and generated
ties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lampy
from lampy._errors import LampyValueError, ShapeError
from lampy.ops._sorting import TopK, argsort, partition, sort, topk
from lampy.testing import check_grad
from lampy.testing import strategies as ls


# ---------------------------------------------------------------------------------- sort
def test_sort_gradient_follows_the_permutation() -> None:
    """sort([3, 1, 2]) = [1, 2, 3], and g flows back to where each value came from."""
    with lampy.Scope():
        x = lampy.param([3.0, 1.0, 2.0])
        y = sort(x)
        assert y.value.tolist() == [1.0, 2.0, 3.0]
        y.backward(np.array([10.0, 20.0, 30.0]))
        assert x.grad.tolist() == [30.0, 10.0, 20.0]


def test_sort_ties_with_stable_sort() -> None:
    """With stable=True tied values take output positions in order of appearance."""
    with lampy.Scope():
        x = lampy.param([1.0, 1.0, 0.0])
        sort(x, stable=True).backward(np.array([10.0, 20.0, 30.0]))
        assert x.grad.tolist() == [20.0, 30.0, 10.0]


def test_sort_axes_and_nan() -> None:
    """sort matches numpy along every axis and flattened; nan sorts last."""
    a = np.array([[3.0, np.nan, 1.0], [0.0, -1.0, 2.0]])
    with lampy.Scope():
        x = lampy.param(a)
        for axis in (0, 1, -1, None):
            np.testing.assert_array_equal(sort(x, axis=axis).value, np.sort(a, axis=axis))
        assert sort(lampy.param(2.5), axis=None).shape == (1,)
        assert sort(x, axis=0, kind="stable").dtype == np.float64
    check_grad(lambda v: sort(v, axis=0), np.array([[3.0, 1.0], [0.0, 2.0], [1.5, -1.0]]))
    check_grad(lambda v: sort(v, axis=None), np.array([[3.0, 1.0], [0.0, 2.0]], np.float32))


def test_sort_errors_and_constants() -> None:
    """A 0-d array needs axis=None; bad axes raise; constants sort without a graph."""
    with lampy.Scope():
        with pytest.raises(ShapeError, match="sort: axis -1 is out of bounds"):
            sort(lampy.param(1.0))
        with pytest.raises(TypeError, match="sort: axis must be an int"):
            sort(lampy.param([1.0]), axis=(0,))
        y = sort(np.array([2, 1, 3]))
        assert y.value.tolist() == [1, 2, 3]
        assert not y.needs_grad
        with lampy.no_grad():
            z = sort(lampy.param([2.0, 1.0]))
        assert z.value.tolist() == [1.0, 2.0]
        assert z.op is None


def test_argsort_is_a_plain_array() -> None:
    """argsort returns numpy's integer array (no Variable), with kind and stable."""
    a = np.array([[3.0, 1.0, 1.0], [0.0, 5.0, 4.0]])
    with lampy.Scope():
        x = lampy.param(a)
        i = argsort(x, axis=1, stable=True)
        assert type(i) is np.ndarray
        assert i.tolist() == [[1, 2, 0], [0, 2, 1]]
        np.testing.assert_array_equal(argsort(x, axis=None), np.argsort(a, axis=None))
        np.testing.assert_array_equal(argsort(x, 0, "stable"), np.argsort(a, 0, "stable"))
        with pytest.raises(ShapeError, match="argsort: axis 2 is out of bounds"):
            argsort(x, axis=2)


# ---------------------------------------------------------------------------------- topk
def test_topk_matches_pytorch_example() -> None:
    """PyTorch's doc example: topk(arange(1., 6.), 3) = ([5, 4, 3], [4, 3, 2])."""
    with lampy.Scope():
        x = lampy.param(np.arange(1.0, 6.0))
        result = topk(x, 3)
        assert isinstance(result, TopK)
        values, indices = result
        assert values.value.tolist() == [5.0, 4.0, 3.0]
        assert indices.tolist() == [4, 3, 2]
        assert indices.dtype == np.int64
        assert type(indices) is np.ndarray
        values.backward(np.array([1.0, 2.0, 3.0]))
        assert x.grad.tolist() == [0.0, 0.0, 3.0, 2.0, 1.0]


def test_topk_ties_go_to_the_lowest_index() -> None:
    """Among equal values the earliest positions are selected and listed first."""
    with lampy.Scope():
        x = lampy.param([1.0, 3.0, 3.0, 2.0, 3.0])
        values, indices = topk(x, 2)
        assert indices.tolist() == [1, 2]
        values.backward(np.array([10.0, 20.0]))
        assert x.grad.tolist() == [0.0, 10.0, 20.0, 0.0, 0.0]
        assert topk(x, 4).indices.tolist() == [1, 2, 4, 3]
        small = topk(lampy.param([2.0, 1.0, 1.0, 3.0, 1.0]), 2, largest=False)
        assert small.indices.tolist() == [1, 2]
        rows = topk(lampy.param([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]), 1, axis=1)
        assert rows.indices.tolist() == [[1], [0]]


def test_topk_unsorted_keeps_position_order() -> None:
    """With sorted=False the selected values come in the order of their positions."""
    with lampy.Scope():
        x = lampy.param([[1.0, 5.0, 3.0, 4.0]])
        values, indices = topk(x, 3, axis=-1, sorted=False)
        assert indices.tolist() == [[1, 2, 3]]
        assert values.value.tolist() == [[5.0, 3.0, 4.0]]
        values, indices = topk(x, 2, largest=False, sorted=True)
        assert values.value.tolist() == [[1.0, 3.0]]


def test_topk_nan_counts_as_largest() -> None:
    """nan is larger than every number, as in PyTorch."""
    with lampy.Scope():
        x = lampy.param([1.0, np.nan, 3.0, 2.0])
        values, indices = topk(x, 2)
        assert indices.tolist() == [1, 2]
        assert np.isnan(values.value[0])
        assert topk(x, 4, largest=False).indices.tolist() == [0, 3, 2, 1]
        assert topk(x, 1, largest=False).indices.tolist() == [0]


def test_topk_axis_and_shapes() -> None:
    """topk along axis 0 of a 3-d array keeps the other axes; k=0 and k=n work."""
    a = np.arange(24.0).reshape(2, 3, 4)[:, ::-1]
    with lampy.Scope():
        x = lampy.param(a)
        values, indices = topk(x, 2, axis=1)
        assert values.shape == (2, 2, 4)
        np.testing.assert_array_equal(values.value, a[:, :2])
        assert indices[0, :, 0].tolist() == [0, 1]
        assert topk(x, 0, axis=0).values.shape == (0, 3, 4)
        np.testing.assert_array_equal(topk(x, 3, axis=1, largest=False).values.value, a[:, ::-1])
        s = topk(lampy.param(4.0), 1)
        assert s.values.shape == ()
        assert s.indices.shape == ()
    check_grad(lambda v: topk(v, 2, axis=0).values, np.array([[3.0, 1.0], [0.0, 2.0], [1.5, -1.0]]))


def test_topk_errors() -> None:
    """k outside 0..n is a ShapeError naming topk; k must be an int."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0, 3.0])
        with pytest.raises(ShapeError, match="topk: k=4 is out of range"):
            topk(x, 4)
        with pytest.raises(ShapeError, match="topk: k=-1 is out of range"):
            topk(x, -1)
        with pytest.raises(ShapeError, match="1 for a 0-d array"):
            topk(lampy.param(1.0), 0)
        with pytest.raises(TypeError, match="topk: k must be an int"):
            topk(x, 1.0)  # type: ignore[arg-type]
        with pytest.raises(ShapeError, match="topk: axis 1 is out of bounds"):
            topk(x, 1, axis=1)


@given(data=st.data(), largest=st.booleans(), sorted_=st.booleans())
def test_generated_ties_match_stable_argsort(
    data: st.DataObject, largest: bool, sorted_: bool
) -> None:
    """On arrays full of ties, topk selects what a stable argsort (by value, then
    position) puts first, and its gradient lands exactly there."""
    shape = data.draw(ls.shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    a = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([-1.0, 0.0, 2.0])))
    order = np.argsort(-a if largest else a, axis=axis, kind="stable")
    expected = np.take(order, np.arange(k), axis=axis)
    if not sorted_:
        expected = np.sort(expected, axis=axis)
    with lampy.Scope():
        x = lampy.param(a)
        values, indices = topk(x, k, axis=axis, largest=largest, sorted=sorted_)
        np.testing.assert_array_equal(indices, expected)
        np.testing.assert_array_equal(values.value, np.take_along_axis(a, expected, axis))
        g = np.arange(1.0, values.size + 1).reshape(values.shape)
        values.backward(g)
        dx = np.zeros(shape)
        np.put_along_axis(dx, expected, g, axis)
        np.testing.assert_array_equal(x.grad, dx)


# ----------------------------------------------------------------------------- partition
@given(
    a=hnp.arrays(
        np.float64,
        ls.shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
        elements=st.sampled_from([0.0, 1.0, 2.0, -1.0, np.nan, 0.5]),
    ),
    data=st.data(),
)
def test_partition_is_numpys_and_routes_g_to_equal_values(
    a: np.ndarray, data: st.DataObject
) -> None:
    """With ties and nan, partition's value is numpy's element for element (numpy's
    partition and argpartition may order the parts differently), and each output
    position's gradient lands on an input element of the same value (or nan)."""
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1), label="axis")
    n = a.size if axis is None else a.shape[axis]
    kth = data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3), label="kth")
    expected = np.partition(a, kth, axis=axis)
    with lampy.Scope():
        x = lampy.param(a)
        y = partition(x, kth, axis=axis)
        np.testing.assert_array_equal(y.value, expected)
        y.backward(np.arange(y.size, dtype=float).reshape(y.shape))
        landed = x.grad.reshape(-1).astype(int)  # the output position each element took
    assert sorted(landed.tolist()) == list(range(a.size))  # a permutation
    np.testing.assert_array_equal(expected.reshape(-1)[landed], a.reshape(-1))


def test_partition_kth_and_errors() -> None:
    """The element at kth is the one a full sort puts there; out-of-range kth and
    order= raise; without a gradient the result is a constant."""
    a = np.array([5.0, 1.0, 4.0, 2.0, 3.0])
    with lampy.Scope():
        x = lampy.param(a)
        assert partition(x, 2).value[2] == 3.0
        assert partition(x, -1).value[-1] == 5.0
        with pytest.raises(ShapeError, match="partition: kth=5 does not fit axis 0 of length 5"):
            partition(x, 5)
        with pytest.raises(LampyValueError, match="partition: order="):
            partition(x, 1, order="f")  # type: ignore[arg-type]
        c = partition(a, 1)
        assert not c.needs_grad
        check_grad(lambda v: partition(v, [1, 3]), a.astype(np.float32))
