"""fliplr, flipud, rot90, rollaxis, hsplit/vsplit/dsplit, column_stack, append, and one
array (or Variable) passed where a sequence of arrays is expected: numpy's values,
exact gradients (each is a rearrangement, so its gradient is the inverse one) and
errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import LampyTypeError, ShapeError
from lampy.ops._join import (
    append,
    column_stack,
    concatenate,
    dsplit,
    hsplit,
    hstack,
    stack,
    vsplit,
    vstack,
)
from lampy.ops._pad import fliplr, flipud, rot90
from lampy.ops._shape import rollaxis

A = np.arange(24.0).reshape(2, 3, 4)


def _inverse_gradient(fn: Callable[[Any], Any], ref: Callable[[np.ndarray], np.ndarray]) -> None:
    """fn has numpy's value ref(A), and since every element of A lands once in the
    result, x.grad holds, at each element, the weight of the position it landed on."""
    expected = ref(A)
    with lampy.Scope():
        x = lampy.param(A)
        y = fn(x)
        np.testing.assert_array_equal(y.value, expected)
        w = np.arange(y.size, dtype=float).reshape(y.shape) * 10
        y.backward(w)
        grad = x.grad
    # The element of A at each result position went there: its gradient is that weight.
    landed = {float(v): float(wi) for v, wi in zip(expected.ravel(), w.ravel(), strict=True)}
    np.testing.assert_array_equal(grad, np.vectorize(landed.get)(A))


@pytest.mark.parametrize("k", range(-5, 6))
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (2, 0), (-1, 1), (0, -1)])
def test_rot90(k: int, axes: tuple[int, int]) -> None:
    """rot90(m, k, axes) is numpy's rotation, for every k and plane; the gradient
    rotates back."""
    _inverse_gradient(lambda x: rot90(x, k, axes), lambda a: np.rot90(a, k, axes))


def test_fliplr_flipud() -> None:
    """fliplr reverses axis 1 and flipud axis 0, as numpy; the gradients flip back."""
    _inverse_gradient(fliplr, np.fliplr)
    _inverse_gradient(flipud, np.flipud)


@pytest.mark.parametrize("axis", range(-3, 3))
@pytest.mark.parametrize("start", range(-3, 4))
def test_rollaxis(axis: int, start: int) -> None:
    """rollaxis(a, axis, start) gives numpy's axis order for every axis and start."""
    _inverse_gradient(lambda x: rollaxis(x, axis, start), lambda a: np.rollaxis(a, axis, start))


def test_flip_rotate_roll_errors() -> None:
    """Too few dimensions, a bad plane and an out-of-range start raise ShapeError naming
    the op, before anything is recorded."""
    with lampy.Scope() as scope:
        x, v, s = lampy.param(A), lampy.param([1.0, 2.0]), lampy.param(1.0)
        cases = [
            (lambda: fliplr(v), "fliplr: needs an array of at least 2"),
            (lambda: flipud(s), "flipud: needs an array of at least 1"),
            (lambda: rot90(v), "rot90: needs an array of at least 2"),
            (lambda: rot90(x, 1, (0, 0)), "rot90: axis .* repeats an axis"),
            (lambda: rot90(x, 1, (0, 1, 2)), "rot90: axes must name exactly 2 axes"),
            (lambda: rot90(x, 1, (0, 3)), "rot90: axis 3 is out of bounds"),
            (lambda: rollaxis(x, 0, 4), "rollaxis: start 4 is out of range"),
            (lambda: rollaxis(x, 3), "rollaxis: axis 3 is out of bounds"),
        ]
        before = len(scope)
        for call, message in cases:
            with pytest.raises(ShapeError, match=message):
                call()
        assert len(scope) == before


# -------------------------------------------------------------------------- splits
@pytest.mark.parametrize(
    ("fn", "ref", "shape", "sections"),
    [
        (hsplit, np.hsplit, (6,), 3),
        (hsplit, np.hsplit, (2, 6), [1, 4]),
        (vsplit, np.vsplit, (4, 3), 2),
        (vsplit, np.vsplit, (4, 3), [3, 10]),
        (dsplit, np.dsplit, (1, 2, 4), 4),
        (dsplit, np.dsplit, (1, 2, 4), [-1]),
    ],
)
def test_direction_splits(fn: Any, ref: Any, shape: tuple[int, ...], sections: Any) -> None:
    """hsplit (axis 1, or 0 for 1-d), vsplit (axis 0) and dsplit (axis 2) give numpy's
    pieces; each piece's gradient goes back into its slice."""
    a = np.arange(float(np.prod(shape))).reshape(shape)
    with lampy.Scope():
        x = lampy.param(a)
        pieces = fn(x, sections)
        expected = ref(a, sections)
        assert len(pieces) == len(expected)
        for i, (p, e) in enumerate(zip(pieces, expected, strict=True)):
            np.testing.assert_array_equal(p.value, e)
            (p * float(i + 1)).sum().backward()
        np.testing.assert_array_equal(x.grad, _marked(ref, shape, sections))


def _marked(ref: Any, shape: tuple[int, ...], sections: Any) -> np.ndarray:
    """An array of ``shape`` holding, at each element, 1 + the index of its piece."""
    out = np.zeros(shape)
    for i, piece in enumerate(ref(out, sections)):
        piece += i + 1  # the pieces are views into out
    return out


@pytest.mark.parametrize(
    ("fn", "shape", "message"),
    [
        (hsplit, (), "hsplit: needs an array of at least 1 dimension"),
        (vsplit, (4,), "vsplit: needs an array of at least 2 dimensions"),
        (dsplit, (2, 2), "dsplit: needs an array of at least 3 dimensions"),
        (hsplit, (2, 5), "hsplit: axis 1 .* length 5, which does not split into 2"),
    ],
)
def test_direction_split_errors(fn: Any, shape: tuple[int, ...], message: str) -> None:
    """Too few dimensions or unequal sections raise ShapeError naming the op."""
    with lampy.Scope(), pytest.raises(ShapeError, match=message):
        fn(lampy.param(np.zeros(shape)), 2)


# ------------------------------------------------------------- column_stack, append
def test_column_stack() -> None:
    """0-d and 1-d arrays become columns, 2-d arrays join as they are, along axis 1;
    each gets its own slice of g back in its own shape."""
    with lampy.Scope():
        a, b, c = lampy.param([1.0, 2.0]), lampy.param([[3.0, 4.0], [5.0, 6.0]]), 7.0
        y = column_stack([a, b, np.array([c, c])])
        np.testing.assert_array_equal(y.value, np.column_stack([a.value, b.value, [c, c]]))
        y.backward(np.arange(8.0).reshape(2, 4))
        np.testing.assert_array_equal(a.grad, [0.0, 4.0])
        np.testing.assert_array_equal(b.grad, [[1.0, 2.0], [5.0, 6.0]])
        s = lampy.param(2.0)
        z = column_stack([s])
        assert z.shape == (1, 1)
        z.backward(np.ones((1, 1)))
        assert s.grad == 1.0


@pytest.mark.parametrize(
    ("arr", "values", "axis"),
    [
        (np.ones((2, 3)), np.arange(4.0), None),
        (np.ones((2, 3)), np.zeros((2, 1)), 1),
        (np.ones((2, 3)), np.zeros((1, 3)), 0),
        (np.float64(1.0), np.zeros((2, 2)), None),
    ],
)
def test_append(arr: np.ndarray, values: np.ndarray, axis: Any) -> None:
    """append flattens both with axis=None and joins along axis otherwise, as numpy; both
    operands get their slices of g."""
    with lampy.Scope():
        x, v = lampy.param(arr), lampy.param(values)
        y = append(x, v, axis=axis)
        np.testing.assert_array_equal(y.value, np.append(arr, values, axis=axis))
        w = np.arange(y.size, dtype=float).reshape(y.shape)
        y.backward(w)
        if axis is None:  # arr's elements first, then values', flattened
            n = np.size(arr)
            np.testing.assert_array_equal(x.grad, np.arange(n, dtype=float).reshape(np.shape(arr)))
            np.testing.assert_array_equal(
                v.grad, np.arange(n, y.size, dtype=float).reshape(values.shape)
            )
        else:
            cut = np.shape(arr)[axis]
            np.testing.assert_array_equal(x.grad, np.split(w, [cut], axis=axis)[0])
            np.testing.assert_array_equal(v.grad, np.split(w, [cut], axis=axis)[1])
    with lampy.Scope(), pytest.raises(ShapeError, match="append: shapes"):
        append(lampy.param(np.ones((2, 3))), np.ones((2, 2)), axis=0)


# ------------------------------------------------------- one array as the sequence
@pytest.mark.parametrize(
    ("fn", "ref"),
    [
        (vstack, np.vstack),
        (hstack, np.hstack),
        (column_stack, np.column_stack),
        (concatenate, np.concatenate),
        (lambda v: concatenate(v, axis=None), lambda a: np.concatenate(a, axis=None)),
        (stack, np.stack),
        (lambda v: stack(v, axis=-1), lambda a: np.stack(a, axis=-1)),
    ],
    ids=["vstack", "hstack", "column_stack", "concatenate", "concatenate-None", "stack", "stack-1"],
)
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4)])
def test_one_variable_is_the_sequence_of_its_rows(
    fn: Any, ref: Any, shape: tuple[int, ...]
) -> None:
    """A single Variable where numpy takes a sequence of arrays is the sequence of its
    sub-arrays along axis 0, as numpy reads an array there; the gradient puts each
    element of g back where the element came from."""
    a = np.arange(float(np.prod(shape))).reshape(shape)
    try:
        expected = ref(a)
    except ValueError:  # numpy refuses this combination too (0-d rows to concatenate)
        with lampy.Scope(), pytest.raises(ShapeError):
            fn(lampy.param(a))
        return
    with lampy.Scope():
        x = lampy.param(a)
        y = fn(x)
        np.testing.assert_array_equal(y.value, expected)
        w = np.arange(y.size, dtype=float).reshape(y.shape) + 0.5
        y.backward(w)
        # a's elements are their own flat positions, so w lands where each came from
        landed = np.empty(a.size)
        landed[expected.ravel().astype(int)] = w.ravel()
        np.testing.assert_array_equal(x.grad, landed.reshape(shape))


def test_one_0d_variable_is_not_a_sequence() -> None:
    """A 0-d Variable cannot be iterated, as in numpy: a LampyTypeError saying so."""
    with lampy.Scope(), pytest.raises(LampyTypeError, match="vstack: takes a sequence"):
        vstack(lampy.param(1.0))


@pytest.mark.parametrize("order", ["A", "K"])
@pytest.mark.parametrize(
    "layout",
    [np.asfortranarray, lambda a: a.transpose(2, 0, 1), lambda a: a[:, ::-1, ::2]],
    ids=["fortran", "transposed", "strided"],
)
def test_ravel_of_a_constant_array_reads_the_callers_layout(order: str, layout: Any) -> None:
    """ravel(order='A'/'K') of a plain ndarray follows that array's memory layout, as
    numpy does (lampy's private copy of the constant must not reorder the result), and
    the result does not share the caller's memory."""
    arr = layout(A.copy())
    with lampy.Scope():
        v = lampy.ravel(arr, order=order)
        np.testing.assert_array_equal(v.value, np.ravel(arr, order=order))
        expected = v.value.copy()
        arr[...] = -1.0
        np.testing.assert_array_equal(v.value, expected)
