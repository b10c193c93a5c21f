"""``lampy.array`` and ``lampy.asarray`` (issue 27, "Building arrays from Variables"): numpy's
values, shapes and dtypes; nested sequences of Variables and numbers stacked into one
Variable whose gradient reaches each Variable at every place it stands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy.testing import check_grad


@settings(max_examples=25)
@given(
    layout=st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=3), min_size=1, max_size=3),
    values=st.lists(st.floats(-3, 3), min_size=3, max_size=3),
)
def test_nested_lists_of_variables_and_numbers(
    layout: list[list[int]], values: list[float]
) -> None:
    """A rectangular nest that mixes two Variables (repeated) and a number: the value is
    numpy's ``array`` of the values, and each Variable's gradient is the sum of ``g`` over
    its places, to first and second order."""
    width = min(len(row) for row in layout)
    layout = [row[:width] for row in layout]
    a, b, c = values

    def build(x: lampy.Variable, y: lampy.Variable) -> lampy.Variable:
        items = {0: x, 1: y, 2: c}
        return lampy.array([[items[k] for k in row] for row in layout])

    with lampy.Scope():
        x, y = lampy.param(a), lampy.param(b)
        out = build(x, y)
        expected = np.array([[[a, b, c][k] for k in row] for row in layout])
        np.testing.assert_array_equal(out.value, expected)
        assert out.dtype == expected.dtype
        w = np.arange(1.0, 1.0 + out.size).reshape(out.shape)
        if not out.needs_grad:  # only numbers: a constant
            assert all(k == 2 for row in layout for k in row)
            return
        (out * w).sum().backward()
        flat = np.array(layout)
        assert (x.grad if x.grad is not None else 0.0) == pytest.approx(w[flat == 0].sum())
        assert (y.grad if y.grad is not None else 0.0) == pytest.approx(w[flat == 1].sum())
    check_grad(lambda x, y: build(x, y) ** 2, np.array(a), np.array(b), order=2)


def test_arrays_of_variables_stack_and_broadcast_nothing() -> None:
    """Variables of one shape stack along a new first axis; a ragged nest is a ShapeError
    naming the op."""
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    check_grad(lambda p, q: lampy.array([p, q, p]) * 2.0, u, v, order=2)
    with lampy.Scope():
        p, q = lampy.param(u), lampy.param(np.ones(2))
        assert lampy.array((p, p)).shape == (2, 2, 3)
        with pytest.raises(lampy.ShapeError, match="array"):
            lampy.array([p, q])


def test_copy_dtype_ndmin_and_asarray() -> None:
    """array copies a Variable (the gradient flows through the copy), asarray returns it;
    dtype casts (float keeps the gradient, int gives a constant); ndmin adds leading axes;
    plain data becomes a constant."""
    with lampy.Scope():
        v = lampy.param(np.array([1.0, 2.0]))
        c = lampy.array(v)
        assert c is not v and c.needs_grad
        assert lampy.asarray(v) is v and lampy.asarray(v, np.float64) is v
        f32 = lampy.array([v, v], dtype=np.float32)
        assert f32.dtype == np.float32 and f32.needs_grad
        assert not lampy.array(v, dtype=np.int64).needs_grad
        assert lampy.array(v, ndmin=3).shape == (1, 1, 2)
        plain = lampy.array([[1, 2], [3, 4]])
        assert plain.dtype == np.int64 and not plain.needs_grad
        assert lampy.asarray(np.zeros(2, np.float32)).dtype == np.float32
        (c * c + f32.astype(np.float64).sum()).sum().backward()
        np.testing.assert_array_equal(v.grad, 2 * v.value + 4.0)
        with pytest.raises(lampy.LampyValueError, match="ndmin"):
            lampy.array(v, ndmin=-1)
