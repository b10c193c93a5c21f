"""Shape ops beyond what the op table draws: errors, several outputs, mixed operands,
memory layouts, padding and repetition details."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.autograd._variable import op
from lampy.ops._join import (
    array_split,
    broadcast_arrays,
    concatenate,
    hstack,
    split,
    stack,
    vstack,
)
from lampy.ops._pad import flip, pad, repeat, roll, tile
from lampy.ops._shape import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_to,
    expand_dims,
    matrix_transpose,
    moveaxis,
    permute_dims,
    ravel,
    squeeze,
    swapaxes,
    transpose,
)
from lampy.testing import check_grad

RNG = np.random.default_rng(7)
A = RNG.standard_normal((2, 3, 4))


def _grad_of(fn: Callable[[lampy.Variable], Any], a: np.ndarray, g: Any = None) -> np.ndarray:
    """The gradient of ``sum(fn(x) * g)`` with respect to ``x = param(a)``."""
    with lampy.Scope():
        x = lampy.param(a)
        out = fn(x)
        out.backward(np.ones(out.shape, out.dtype) if g is None else g)
        assert x.grad is not None
        return x.grad.copy()


# ------------------------------------------------------------------------- errors
ERRORS: list[tuple[str, Callable[[Any], Any], type[Exception], str]] = [
    ("squeeze", lambda x: squeeze(x, 1), ShapeError, r"squeeze: .*axis 1 .*\(2, 3, 4\).*not 1"),
    ("squeeze range", lambda x: squeeze(x, 3), ShapeError, r"squeeze: axis 3 is out of bounds"),
    ("swapaxes", lambda x: swapaxes(x, 0, 3), ShapeError, r"swapaxes: axis2 3 is out of bounds"),
    ("moveaxis count", lambda x: moveaxis(x, (0, 1), 2), ShapeError, r"moveaxis: source"),
    ("moveaxis repeat", lambda x: moveaxis(x, (0, 0), (1, 2)), ShapeError, r"repeats an axis"),
    ("expand_dims", lambda x: expand_dims(x, (0, 0)), ShapeError, r"expand_dims: .*repeats"),
    ("expand_dims range", lambda x: expand_dims(x, 5), ShapeError, r"expand_dims: axis 5"),
    ("permute_dims", lambda x: permute_dims(x, (0, 1)), ShapeError, r"permute_dims: axes \(0, 1\)"),
    (
        "matrix_transpose",
        lambda x: matrix_transpose(A[0, 0]),
        ShapeError,
        r"matrix_transpose: .*\(4,\)",
    ),
    (
        "broadcast_to",
        lambda x: broadcast_to(x, (3, 4)),
        ShapeError,
        r"broadcast_to: .*\(2, 3, 4\).*\(3, 4\)",
    ),
    (
        "broadcast_arrays",
        lambda x: broadcast_arrays(x, np.ones(3)),
        ShapeError,
        r"broadcast_arrays: shapes \(2, 3, 4\), \(3,\)",
    ),
    (
        "concatenate shapes",
        lambda x: concatenate([x, np.ones((2, 4, 4))]),
        ShapeError,
        r"concatenate: shapes \(2, 3, 4\), \(2, 4, 4\) .*axis 0",
    ),
    (
        "concatenate ndim",
        lambda x: concatenate([x, np.ones(4)]),
        ShapeError,
        r"concatenate: .*same number of dimensions",
    ),
    (
        "concatenate 0-d",
        lambda x: concatenate([A[0, 0, 0], x]),
        ShapeError,
        r"concatenate: cannot join 0-d",
    ),
    (
        "concatenate axis",
        lambda x: concatenate([x, x], axis=3),
        ShapeError,
        r"concatenate: axis 3 is out of bounds",
    ),
    (
        "concatenate empty",
        lambda x: concatenate([]),
        LampyValueError,
        r"concatenate: needs at least one",
    ),
    (
        "concatenate a number",
        lambda x: concatenate(3.0),
        LampyTypeError,
        r"concatenate: takes a sequence",
    ),
    (
        "stack",
        lambda x: stack([x, A[0]]),
        ShapeError,
        r"stack: .*same shape.*\(2, 3, 4\), \(3, 4\)",
    ),
    ("stack axis", lambda x: stack([x, x], axis=4), ShapeError, r"stack: axis 4"),
    ("hstack", lambda x: hstack([x, A[:, :1, :2]]), ShapeError, r"hstack: shapes"),
    (
        "vstack",
        lambda x: vstack([A[0, 0], A[0, :, 0]]),
        ShapeError,
        r"vstack: shapes \(1, 4\), \(1, 3\)",
    ),
    (
        "split unequal",
        lambda x: split(x, 2, axis=1),
        ShapeError,
        r"split: axis 1 .*\(2, 3, 4\) has length 3.*array_split",
    ),
    ("split 0-d", lambda x: split(A[0, 0, 0], 1), ShapeError, r"split: cannot split a 0-d"),
    (
        "array_split 0",
        lambda x: array_split(x, 0),
        LampyValueError,
        r"array_split: the number of sections",
    ),
    ("tile", lambda x: tile(x, (2, -1)), LampyValueError, r"tile: reps must be >= 0"),
    ("repeat negative", lambda x: repeat(x, -1), LampyValueError, r"repeat: repeats must be >= 0"),
    (
        "repeat length",
        lambda x: repeat(x, [1, 2], axis=1),
        ShapeError,
        r"repeat: repeats of shape \(2,\) .*length 3",
    ),
    ("repeat float", lambda x: repeat(x, 1.5), DTypeError, r"repeat: repeats must be integers"),
    ("roll pairs", lambda x: roll(x, (1, 2, 3), (0, 1)), ShapeError, r"roll: 3 shifts"),
    ("roll axis", lambda x: roll(x, 1, 3), ShapeError, r"roll: axis 3 is out of bounds"),
    ("flip", lambda x: flip(x, 3), ShapeError, r"flip: axis 3 is out of bounds"),
    ("pad mode", lambda x: pad(x, 1, "mean"), LampyValueError, r"pad: mode must be one of"),
    ("pad negative", lambda x: pad(x, -1), LampyValueError, r"pad: pad_width must be >= 0"),
    ("pad float", lambda x: pad(x, 1.5), DTypeError, r"pad: pad_width must hold integers"),
    (
        "pad pairs",
        lambda x: pad(x, ((1, 1), (2, 2))),
        ShapeError,
        r"pad: pad_width of shape \(2, 2\)",
    ),
    (
        "pad values",
        lambda x: pad(x, 1, "edge", constant_values=3),
        LampyValueError,
        r"constant_values is only used",
    ),
    (
        "pad empty",
        lambda x: pad(A[:0], 1, "wrap"),
        ShapeError,
        r"pad: mode 'wrap' cannot pad axis 0 .*\(0, 3, 4\)",
    ),
    ("ravel order", lambda x: ravel(x, "X"), LampyValueError, r"ravel: order must be"),
]


@pytest.mark.parametrize(("case", "fn", "error", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_arguments_raise_before_recording(
    case: str, fn: Callable[[Any], Any], error: type[Exception], message: str
) -> None:
    """Bad axes, shapes and arguments raise an error naming the op (and the shapes),
    and no Variable is recorded."""
    with lampy.Scope() as scope:
        x = lampy.param(A)
        with pytest.raises(error, match=message):
            fn(x)
        assert len(scope) == 1


# --------------------------------------------------------- several results
def test_split_returns_a_list_of_pieces_with_their_own_gradients() -> None:
    """split gives numpy's pieces as a list of Variables; each piece's gradient lands in
    the slice it came from, and pieces left out contribute zeros."""
    a = np.arange(12.0).reshape(3, 4)
    with lampy.Scope():
        x = lampy.param(a)
        pieces = split(x, [1, 3], axis=1)
        assert isinstance(pieces, list)
        expected = np.split(a, [1, 3], axis=1)
        assert [p.shape for p in pieces] == [e.shape for e in expected]
        for p, e in zip(pieces, expected, strict=True):
            np.testing.assert_array_equal(p.value, e)
        (pieces[1] * 2.0).sum().backward()
        grad = np.zeros_like(a)
        grad[:, 1:3] = 2.0
        np.testing.assert_array_equal(x.grad, grad)


def test_split_with_overlapping_indices_accumulates() -> None:
    """Out-of-order split indices give numpy's overlapping pieces; their gradients add."""
    a = np.arange(6.0)
    expected = np.split(a, [4, 2])
    with lampy.Scope():
        x = lampy.param(a)
        pieces = split(x, [4, 2])
        assert [p.shape for p in pieces] == [e.shape for e in expected]
        concatenate(pieces).sum().backward()
        np.testing.assert_array_equal(x.grad, [1, 1, 2, 2, 1, 1])


def test_array_split_sizes_follow_numpy() -> None:
    """array_split of length 7 into 3 gives numpy's sections (3, 2, 2), also on empty axes."""
    for n, k in [(7, 3), (2, 4), (0, 2)]:
        a = np.arange(float(n))
        with lampy.Scope():
            pieces = array_split(lampy.param(a), k)
            assert [p.shape for p in pieces] == [e.shape for e in np.array_split(a, k)]
    check_grad(
        lambda v: concatenate([p * (i + 1.0) for i, p in enumerate(array_split(v, 3))]), A[0, 0]
    )


def test_broadcast_arrays_returns_a_tuple_and_unbroadcasts() -> None:
    """broadcast_arrays gives a tuple of Variables of the common shape; each input's
    gradient is summed back to its own shape."""
    a, b = RNG.standard_normal((3, 1)), RNG.standard_normal((4,))
    with lampy.Scope():
        x, y = lampy.param(a), lampy.param(b)
        out = broadcast_arrays(x, y, 2.0)
        assert isinstance(out, tuple) and len(out) == 3
        assert all(o.shape == (3, 4) for o in out)
        (out[0] * out[1]).sum().backward()
        np.testing.assert_allclose(x.grad, np.full((3, 1), b.sum()))
        np.testing.assert_allclose(y.grad, np.full(4, a.sum()))
    with lampy.Scope():
        assert broadcast_arrays() == ()


@pytest.mark.parametrize("fn", [atleast_1d, atleast_2d, atleast_3d])
def test_atleast_returns_one_or_a_tuple(fn: Callable[..., Any]) -> None:
    """atleast_nd: one input gives one Variable (the input itself when it already has
    enough dimensions), several give a tuple, as numpy 2; arrays become constants."""
    ref = getattr(np, fn.__name__)
    with lampy.Scope():
        big = lampy.param(np.ones((2, 2, 2)))
        assert fn(big) is big
        one = fn(lampy.param(np.ones(3)))
        assert one.shape == ref(np.ones(3)).shape
        several = fn(np.array(1.0), [1.0, 2.0], big)
        assert isinstance(several, tuple)
        assert [v.shape for v in several] == [
            r.shape for r in ref(np.array(1.0), [1.0, 2.0], big.value)
        ]
        assert not several[0].needs_grad and several[2] is big


# ------------------------------------------------------- mixed operands, dtypes
def test_concatenate_mixes_variables_arrays_and_lists() -> None:
    """concatenate takes Variables, arrays and lists together, promotes dtypes as numpy
    (float32 with float64 gives float64) and hands each float32 param a float32
    gradient."""
    a32 = np.ones((2, 2), np.float32)
    b64 = np.full((1, 2), 2.0)
    with lampy.Scope():
        x = lampy.param(a32)
        out = concatenate([x, b64, [[3.0, 4.0]]])
        expected = np.concatenate([a32, b64, [[3.0, 4.0]]])
        assert out.dtype == expected.dtype == np.float64
        np.testing.assert_array_equal(out.value, expected)
        (out * np.arange(8.0).reshape(4, 2)).sum().backward()
        assert x.grad is not None and x.grad.dtype == np.float32
        np.testing.assert_array_equal(x.grad, [[0, 1], [2, 3]])


def test_concatenate_axis_none_flattens_with_weak_scalars() -> None:
    """axis=None flattens every operand; Python numbers join float32 arrays as numpy
    joins them (the result stays float32)."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    with lampy.Scope():
        x = lampy.param(a)
        out = concatenate([x, 7.0, x.T], axis=None)
        expected = np.concatenate([a, 7.0, a.T], axis=None)  # type: ignore[call-overload]
        assert out.dtype == expected.dtype == np.float32
        np.testing.assert_array_equal(out.value, expected)
    check_grad(lambda v: concatenate([v, v.T], axis=None) * np.arange(12.0), A[0, :2, :3])


def test_same_variable_joined_twice_gets_both_gradients() -> None:
    """A Variable appearing twice in concatenate or stack receives both slices of g."""
    a = RNG.standard_normal((2, 3))
    g = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(_grad_of(lambda x: concatenate([x, x]), a, g), g[:2] + g[2:])
    gs = RNG.standard_normal((2, 2, 3))
    np.testing.assert_allclose(_grad_of(lambda x: stack([x, x], axis=-3), a, gs), gs[0] + gs[1])


def test_integer_operands_give_constants() -> None:
    """Joining integer arrays gives an integer constant Variable, as numpy's dtype."""
    with lampy.Scope():
        out = concatenate([np.arange(3), lampy.const(np.arange(2))])
        assert out.dtype == np.arange(3).dtype and not out.needs_grad
        stacked = stack([np.arange(3), np.arange(3.0)])
        assert stacked.dtype == np.float64 and not stacked.needs_grad


def test_dtype_argument_of_joins() -> None:
    """dtype= sets the joined result's dtype; the gradient comes back in the input's."""
    with lampy.Scope():
        x = lampy.param(np.ones(3))
        for out in (
            concatenate([x, x], dtype=np.float32),
            stack([x, x], dtype=np.float32),
            hstack([x, x], dtype=np.float32),
            vstack([x, x], dtype=np.float32),
        ):
            assert out.dtype == np.float32
            out.sum().backward()
        assert x.grad is not None and x.grad.dtype == np.float64
        np.testing.assert_array_equal(x.grad, np.full(3, 8.0))
        with pytest.raises(DTypeError, match="concatenate"):
            concatenate([x, x], dtype=np.int64)


def test_hstack_vstack_of_0d_and_1d() -> None:
    """hstack joins 0-d and 1-d operands along axis 0, vstack makes them rows."""
    with lampy.Scope():
        s, v = lampy.param(1.0), lampy.param(np.array([2.0, 3.0]))
        np.testing.assert_array_equal(hstack([s, v, 4.0]).value, [1, 2, 3, 4])
        assert vstack([v, v]).shape == (2, 2)
        (hstack([s, v]) * np.array([5.0, 6.0, 7.0])).sum().backward()
        assert s.grad == 5.0
        np.testing.assert_array_equal(v.grad, [6.0, 7.0])


# ---------------------------------------------------------------- layouts, views
LAYOUTS: list[Callable[[np.ndarray], np.ndarray]] = [
    lambda x: x,
    lambda x: x.T,
    lambda x: x[:, ::-1, ::2],
    lambda x: x.transpose(1, 0, 2)[::-1],
    lambda x: x[::2, :, ::-3].transpose(2, 0, 1),
    lambda x: np.broadcast_to(x[:, :1], (2, 3, 4)).transpose(2, 0, 1),
    lambda x: np.asfortranarray(x),
]


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_ravel_orders_follow_the_memory_layout(order: str, layout: int) -> None:
    """ravel in every order matches numpy on values laid out in any way (transposed,
    reversed, strided, broadcast), and puts each gradient element back where it was read."""
    view = LAYOUTS[layout]
    with lampy.Scope():
        v = lampy.param(A)
        w = op("view", view(v.value), v.zip_backward(lambda g, out: None))
        out = ravel(w, order)
        np.testing.assert_array_equal(out.value, np.ravel(view(A), order))  # type: ignore[arg-type]
        out.backward(out.value.copy(), retain=[w])  # the gradient of sum(out**2) / 2
        np.testing.assert_array_equal(w.grad, view(A))


def test_rearrangements_are_views() -> None:
    """transpose, swapaxes, moveaxis, squeeze, expand_dims, flip and broadcast_to share
    their input's memory (no copy)."""
    with lampy.Scope():
        x = lampy.param(A[None])
        for out in (
            transpose(x),
            swapaxes(x, 0, 3),
            moveaxis(x, 0, -1),
            squeeze(x),
            expand_dims(x, 2),
            flip(x, 1),
            broadcast_to(x, (5, 1, 2, 3, 4)),
            matrix_transpose(x),
        ):
            assert np.shares_memory(out.value, x.value)


def test_squeeze_and_expand_dims_spellings() -> None:
    """squeeze takes None, an int or a tuple (0-d accepts axis 0); expand_dims takes an
    int or a tuple of result axes, negatives included."""
    b = np.ones((1, 3, 1))
    with lampy.Scope():
        x = lampy.param(b)
        assert squeeze(x).shape == (3,)
        assert squeeze(x, -1).shape == (1, 3)
        assert squeeze(x, (0, 2)).shape == (3,)
        assert squeeze(lampy.param(2.0), 0).shape == ()
        assert expand_dims(x, (-1, 0)).shape == np.expand_dims(b, (-1, 0)).shape
    check_grad(lambda v: squeeze(v, 0) * np.arange(3.0)[:, None], b)


def test_moveaxis_and_swapaxes_match_numpy() -> None:
    """moveaxis with several axes and negative spellings, swapaxes of an axis with
    itself, as numpy."""
    with lampy.Scope():
        x = lampy.param(A)
        for src, dst in [(0, -1), ((0, 1), (-1, 0)), ((), ()), ((2, 0), (0, 1))]:
            np.testing.assert_array_equal(moveaxis(x, src, dst).value, np.moveaxis(A, src, dst))
        np.testing.assert_array_equal(swapaxes(x, 1, 1).value, A)
    check_grad(lambda v: moveaxis(v, (0, 2), (2, 1)) * np.arange(24.0).reshape(3, 4, 2), A)


def test_broadcast_to_gradient_sums_added_and_stretched_axes() -> None:
    """broadcast_to's gradient sums over leading axes added and length-1 axes stretched."""
    b = RNG.standard_normal((3, 1))
    g = RNG.standard_normal((2, 3, 4))
    np.testing.assert_allclose(
        _grad_of(lambda x: broadcast_to(x, (2, 3, 4)), b, g), g.sum(axis=(0, 2))[:, None]
    )
    with lampy.Scope():
        assert broadcast_to(lampy.param(2.0), 3).shape == (3,)


# ------------------------------------------------------------- replication, padding
@pytest.mark.parametrize(
    ("repeats", "axis"),
    [(2, 1), (20, None), (0, 0), ([0, 2, 1], 1), (np.arange(20) % 17, None), ([3, 0], 0)],
)
def test_repeat_gradient_sums_each_run(repeats: Any, axis: int | None) -> None:
    """repeat's gradient sums the copies of each element (few or many copies, few or many
    distinct counts); elements repeated 0 times get exactly 0."""
    a = RNG.standard_normal((2, 3)) if np.size(repeats) != 20 else RNG.standard_normal((4, 5))
    if axis is None and np.size(repeats) == 20:
        repeats = np.asarray(repeats)
    value = np.repeat(a, repeats, axis=axis)
    g = RNG.standard_normal(value.shape)
    owner = np.repeat(np.arange(a.size).reshape(a.shape), repeats, axis=axis)
    expected = np.bincount(owner.ravel(), g.ravel(), a.size).reshape(a.shape)
    np.testing.assert_allclose(_grad_of(lambda x: repeat(x, repeats, axis), a, g), expected)


def test_repeat_of_0d_and_float32() -> None:
    """repeat of a 0-d value along axis 0 gives numpy's 1-d result; float32 stays float32."""
    with lampy.Scope():
        x = lampy.param(np.float32(2.0))
        out = repeat(x, 3, axis=0)
        assert out.shape == (3,) and out.dtype == np.float32
        out.sum().backward()
        assert x.grad is not None and x.grad.dtype == np.float32 and x.grad == 3.0


def test_tile_reps_longer_and_shorter_than_ndim() -> None:
    """tile prepends axes to A or 1s to reps as numpy does; the gradient sums the tiles."""
    a = RNG.standard_normal((2, 3))
    for reps in [(2,), (2, 1, 3), (0, 2), ()]:
        with lampy.Scope():
            out = tile(lampy.param(a), reps)
            assert out.shape == np.tile(a, reps).shape
        check_grad(lambda v, reps=reps: tile(v, reps) * 1.5, a)
    g = np.ones((4, 6))
    np.testing.assert_array_equal(_grad_of(lambda x: tile(x, (2, 2)), a, g), np.full((2, 3), 4.0))


def test_roll_with_repeated_axes_adds_shifts() -> None:
    """roll shifts a repeated axis by the sum of its shifts, and axis=None rolls the
    flattened array, as numpy."""
    with lampy.Scope():
        x = lampy.param(A)
        np.testing.assert_array_equal(roll(x, (1, 2), (1, 1)).value, np.roll(A, 3, 1))
        np.testing.assert_array_equal(roll(x, -5).value, np.roll(A, -5))
    check_grad(lambda v: roll(v, (1, -2), (0, 2)) * np.arange(24.0).reshape(2, 3, 4), A)


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
def test_pad_gradient_folds_copies_back(mode: str) -> None:
    """Padding with a copying mode, with pads longer than the axes (elements copied many
    times), gives the gradient of numpy's index map: every copy's g added to its source."""
    a = RNG.standard_normal((2, 3))
    width = ((5, 1), (0, 7))
    value = np.pad(a, width, mode)  # type: ignore[call-overload]
    g = RNG.standard_normal(value.shape)
    source = np.pad(np.arange(a.size).reshape(a.shape), width, mode)  # type: ignore[call-overload]
    expected = np.bincount(source.ravel(), g.ravel(), a.size).reshape(a.shape)
    np.testing.assert_allclose(_grad_of(lambda x: pad(x, width, mode), a, g), expected)


def test_pad_constant_values_gets_a_gradient() -> None:
    """A scalar Variable as constant_values receives the sum of g over the padded cells;
    per-axis constant arrays are used as numpy uses them."""
    a = RNG.standard_normal((2, 3))
    with lampy.Scope():
        x, c = lampy.param(a), lampy.param(1.5)
        out = pad(x, ((1, 0), (2, 1)), constant_values=c)
        np.testing.assert_array_equal(out.value, np.pad(a, ((1, 0), (2, 1)), constant_values=1.5))
        out.sum().backward()
        assert c.grad == out.size - a.size
        np.testing.assert_array_equal(x.grad, np.ones_like(a))
        per_axis = ((1.0, 2.0), (3.0, 4.0))
        np.testing.assert_array_equal(
            pad(x, 1, constant_values=per_axis).value, np.pad(a, 1, constant_values=per_axis)
        )
        with pytest.raises(LampyValueError, match="only as a single value"):
            pad(x, 1, constant_values=lampy.param(np.ones(2)))


def test_pad_empty_and_0d() -> None:
    """Constant padding of an empty axis works as numpy; a 0-d array is returned as is."""
    with lampy.Scope():
        out = pad(lampy.param(np.ones((0, 2))), 1)
        np.testing.assert_array_equal(out.value, np.pad(np.ones((0, 2)), 1))
        out.sum().backward()
        zero_d = pad(lampy.param(3.0), 2, "reflect")
        assert zero_d.shape == () and zero_d.item() == 3.0


def test_flip_all_axes_and_empty() -> None:
    """flip with axis=None reverses every axis; empty arrays flip to empty arrays."""
    with lampy.Scope():
        np.testing.assert_array_equal(flip(lampy.param(A)).value, np.flip(A))
        assert flip(lampy.param(np.ones((0, 3))), 1).shape == (0, 3)
