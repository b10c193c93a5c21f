"""Op table.

Shape ops: ravel, permute_dims, matrix_transpose, swapaxes, moveaxis, rollaxis, squeeze,
expand_dims, broadcast_to, broadcast_arrays, concatenate, append, stack, hstack, vstack,
column_stack (also of one array, numpy's sequence of its rows), split, array_split,
hsplit, vsplit, dsplit, tile, repeat, flip, fliplr, flipud, rot90, roll, pad and
atleast_1d/2d/3d (reshape and transpose are in ``table_core``).

Ops taking a sequence of arrays are called with the drawn arrays as that sequence; ops
returning several arrays (split, array_split, broadcast_arrays, atleast_* of several)
are checked through the concatenation of their raveled results, so every piece's value
and gradient is compared. Their exact pieces, shapes and errors are tested in
``test_shape_ops.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

from lampy.ops._join import (
    append,
    array_split,
    broadcast_arrays,
    column_stack,
    concatenate,
    dsplit,
    hsplit,
    hstack,
    split,
    stack,
    vsplit,
    vstack,
)
from lampy.ops._pad import flip, fliplr, flipud, pad, repeat, roll, rot90, tile
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
    rollaxis,
    squeeze,
    swapaxes,
)
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec

Shape = tuple[int, ...]
Draw = Callable[[np.dtype[Any]], st.SearchStrategy[Inputs]]


def _one(make_kwargs: Callable[[st.DrawFn, Shape], dict[str, Any]], **shape_kw: int) -> Draw:
    """One array of a drawn shape, and keyword arguments drawn for that shape."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shape = d(ls.shapes(**{"max_dims": 4, "max_side": 3, **shape_kw}))
            return [d(ls.arrays(shape, dtype))], make_kwargs(d, shape)

        return build()

    return draw


def _many(make_shapes: Callable[[st.DrawFn], tuple[list[Shape], dict[str, Any]]]) -> Draw:
    """Several arrays of drawn shapes, with keyword arguments."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shapes, kwargs = make_shapes(d)
            return [d(ls.arrays(s, dtype)) for s in shapes], kwargs

        return build()

    return draw


def _an_axis(d: st.DrawFn, ndim: int) -> int:
    return d(st.integers(-ndim, ndim - 1))


def _axes_in_order(d: st.DrawFn, ndim: int, count: int) -> tuple[int, ...]:
    """``count`` distinct axes in a drawn order, some spelled negative."""
    picked = d(st.permutations(range(ndim)))[:count]
    return tuple(ax - ndim if d(st.booleans()) else ax for ax in picked)


def _joined(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` returning several arrays, as one: their raveled concatenation."""

    def call(*args: Any, **kwargs: Any) -> Any:
        parts = fn(*args, **kwargs)
        if isinstance(parts, np.ndarray) or not isinstance(parts, (list, tuple)):
            parts = [parts]
        if isinstance(parts[0], np.ndarray):
            return np.concatenate([np.ravel(p) for p in parts])
        return concatenate([ravel(p) for p in parts])

    return call


# ----------------------------------------------------------------- rearrangements
def _ravel_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    return {"order": d(st.sampled_from("CFAK"))}


def _permute_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    return {"axes": d(st.none() | st.just(_axes_in_order(d, len(shape), len(shape))))}


def _swapaxes_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    return {"axis1": _an_axis(d, len(shape)), "axis2": _an_axis(d, len(shape))}


def _moveaxis_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    n = d(st.integers(0, len(shape)))
    src, dst = _axes_in_order(d, len(shape), n), _axes_in_order(d, len(shape), n)
    if n == 1 and d(st.booleans()):
        return {"source": src[0], "destination": dst[0]}
    return {"source": src, "destination": dst}


def squeeze_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(st.lists(st.sampled_from([0, 1, 1, 2, 3]), max_size=4).map(tuple))
        ones = [i for i, n in enumerate(shape) if n == 1]
        axis: Any = None
        if ones and d(st.booleans()):
            picked = d(st.lists(st.sampled_from(ones), min_size=1, unique=True))
            axis = tuple(ax - len(shape) if d(st.booleans()) else ax for ax in picked)
            if len(axis) == 1 and d(st.booleans()):
                axis = axis[0]
        return [d(ls.arrays(shape, dtype))], {"axis": axis}

    return build()


def _expand_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    n = d(st.integers(1, 3))
    axes = _axes_in_order(d, len(shape) + n, n)
    return {"axis": axes[0] if n == 1 and d(st.booleans()) else axes}


def broadcast_to_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """An array and a shape it broadcasts to (leading axes added, length-1 axes stretched)."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        target = d(ls.shapes(max_dims=4, max_side=3))
        kept = target[d(st.integers(0, len(target))) :]
        shape = tuple(1 if d(st.booleans()) else n for n in kept)
        return [d(ls.arrays(shape, dtype))], {"shape": target}

    return build()


def _broadcast_shapes(d: st.DrawFn) -> tuple[list[Shape], dict[str, Any]]:
    return list(d(ls.broadcastable_shapes(d(st.integers(1, 3)), max_dims=3, max_side=3))), {}


# --------------------------------------------------------------------------- joins
def _concat_shapes(d: st.DrawFn) -> tuple[list[Shape], dict[str, Any]]:
    count = d(st.integers(1, 3))
    if d(st.booleans()):  # axis=None: any shapes
        return [d(ls.shapes(max_dims=3, max_side=3)) for _ in range(count)], {"axis": None}
    base = d(ls.shapes(min_dims=1, max_dims=3, max_side=3))
    axis = _an_axis(d, len(base))
    shapes = []
    for _ in range(count):
        s = list(base)
        s[axis] = d(st.integers(0, 3))
        shapes.append(tuple(s))
    return shapes, {"axis": axis}


def _stack_shapes(d: st.DrawFn) -> tuple[list[Shape], dict[str, Any]]:
    shape = d(ls.shapes(max_dims=3, max_side=3))
    return [shape] * d(st.integers(1, 3)), {"axis": _an_axis(d, len(shape) + 1)}


def _hstack_shapes(d: st.DrawFn) -> tuple[list[Shape], dict[str, Any]]:
    count = d(st.integers(1, 3))
    nd = d(st.integers(0, 3))
    if nd <= 1:  # 0-d and 1-d arrays mix, joined as 1-d
        return [(d(st.integers(0, 3)),) if d(st.booleans()) else () for _ in range(count)], {}
    rest = d(ls.shapes(min_dims=nd - 1, max_dims=nd - 1, max_side=3))
    return [(rest[0], d(st.integers(0, 3)), *rest[1:]) for _ in range(count)], {}


def _vstack_shapes(d: st.DrawFn) -> tuple[list[Shape], dict[str, Any]]:
    count = d(st.integers(1, 3))
    nd = d(st.integers(0, 3))
    if nd == 0:  # each becomes a (1, 1) row
        return [()] * count, {}
    if nd == 1:  # each becomes a (1, n) row
        return [(d(st.integers(0, 3)),)] * count, {}
    rest = d(ls.shapes(min_dims=nd - 1, max_dims=nd - 1, max_side=3))
    return [(d(st.integers(0, 3)), *rest) for _ in range(count)], {}


def _split_kwargs(equal: bool) -> Callable[[st.DrawFn, Shape], dict[str, Any]]:
    def make(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
        axis = _an_axis(d, len(shape))
        n = shape[axis]
        if d(st.booleans()):
            options = [k for k in range(1, max(n, 1) + 2) if not equal or n % k == 0]
            return {"indices_or_sections": d(st.sampled_from(options)), "axis": axis}
        indices = d(st.lists(st.integers(-n - 1, n + 1), max_size=3))
        return {"indices_or_sections": indices, "axis": axis}

    return make


# ------------------------------------------------------------------- replication
def _tile_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    if d(st.booleans()):
        return {"reps": d(st.integers(0, 3))}
    return {"reps": tuple(d(st.lists(st.integers(0, 3), max_size=4)))}


def _repeat_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    axis = None if not shape or d(st.booleans()) else _an_axis(d, len(shape))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    if d(st.booleans()):
        return {"repeats": d(st.integers(0, 3)), "axis": axis}
    return {
        "repeats": np.array(d(st.lists(st.integers(0, 3), min_size=n, max_size=n)), int),
        "axis": axis,
    }


def _flip_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    return {"axis": d(ls.axes(len(shape)))}


def _roll_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    if not shape or d(st.booleans()):
        return {"shift": d(st.integers(-7, 7)), "axis": None}
    axes = d(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=3))
    shifts = d(st.lists(st.integers(-7, 7), min_size=len(axes), max_size=len(axes)))
    if len(axes) == 1 and d(st.booleans()):
        return {"shift": shifts[0], "axis": axes[0]}
    return {"shift": tuple(shifts), "axis": tuple(axes)}


def pad_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Any mode and pad_width spelling; pads up to 5 (longer than the axes, so reflect
    and wrap copy elements several times); non-constant modes on non-empty axes only."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        mode = d(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
        shape = d(ls.shapes(max_dims=3, min_side=0 if mode == "constant" else 1, max_side=3))
        width = st.integers(0, 5)
        spelling = d(st.sampled_from(["int", "pair", "pairs"] if shape else ["int", "pair"]))
        pad_width: Any
        if spelling == "int":
            pad_width = d(width)
        elif spelling == "pair":
            pad_width = (d(width), d(width))
        else:
            pad_width = tuple((d(width), d(width)) for _ in shape)
        kwargs: dict[str, Any] = {"pad_width": pad_width, "mode": mode}
        if mode == "constant" and d(st.booleans()):
            kwargs["constant_values"] = d(st.floats(-3, 3))
        return [d(ls.arrays(shape, dtype))], kwargs

    return build()


def _atleast_shapes(d: st.DrawFn) -> tuple[list[Shape], dict[str, Any]]:
    return [d(ls.shapes(max_dims=4, max_side=3)) for _ in range(d(st.integers(1, 3)))], {}


def _rollaxis_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    nd = len(shape)
    return {"axis": _an_axis(d, nd), "start": d(st.integers(-nd, nd))}


def _rot90_kwargs(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
    return {"k": d(st.integers(-5, 5)), "axes": _axes_in_order(d, len(shape), 2)}


def _sections(axis: Callable[[Shape], int]) -> Callable[[st.DrawFn, Shape], dict[str, Any]]:
    """Equal sections, or split indices, along the axis ``axis(shape)`` names."""

    def make(d: st.DrawFn, shape: Shape) -> dict[str, Any]:
        n = shape[axis(shape)]
        if d(st.booleans()):
            options = [k for k in range(1, max(n, 1) + 2) if n % k == 0]
            return {"indices_or_sections": d(st.sampled_from(options))}
        return {"indices_or_sections": d(st.lists(st.integers(-n - 1, n + 1), max_size=3))}

    return make


def _column_shapes(d: st.DrawFn) -> tuple[list[Shape], dict[str, Any]]:
    """0-d, 1-d (columns) and 2-d or 3-d arrays with one number of rows."""
    rows = d(st.integers(0, 3))
    shapes: list[Shape] = []
    for _ in range(d(st.integers(1, 3))):
        kind = d(st.sampled_from(["column", "matrix", "3d"] if rows != 1 else ["0d", "column"]))
        if kind == "0d":
            shapes.append(())
        elif kind == "column":
            shapes.append((rows,))
        elif kind == "matrix":
            shapes.append((rows, d(st.integers(0, 3))))
        else:
            shapes.append((rows, d(st.integers(0, 2)), 2))
    if any(len(s) == 3 for s in shapes):  # numpy joins 3-d arrays only with 3-d ones
        shapes = [s if len(s) == 3 else (rows, d(st.integers(0, 2)), 2) for s in shapes]
    return shapes, {}


def _append_shapes(d: st.DrawFn) -> tuple[list[Shape], dict[str, Any]]:
    if d(st.booleans()):  # axis=None: any shapes, flattened
        return [d(ls.shapes(max_dims=3, max_side=3)) for _ in range(2)], {"axis": None}
    base = d(ls.shapes(min_dims=1, max_dims=3, max_side=3))
    axis = _an_axis(d, len(base))
    shapes = []
    for _ in range(2):
        s = list(base)
        s[axis] = d(st.integers(0, 3))
        shapes.append(tuple(s))
    return shapes, {"axis": axis}


def _np_pad(a: np.ndarray, **kwargs: Any) -> np.ndarray:
    return np.pad(a, **kwargs)  # type: ignore[call-overload, no-any-return]


OPS: list[OpSpec] = [
    OpSpec("ravel", ravel, np.ravel, _one(_ravel_kwargs)),
    OpSpec("permute_dims", permute_dims, np.permute_dims, _one(_permute_kwargs)),
    OpSpec(
        "matrix_transpose", matrix_transpose, np.matrix_transpose, _one(lambda d, s: {}, min_dims=2)
    ),
    OpSpec("swapaxes", swapaxes, np.swapaxes, _one(_swapaxes_kwargs, min_dims=1)),
    OpSpec("moveaxis", moveaxis, np.moveaxis, _one(_moveaxis_kwargs)),
    OpSpec("rollaxis", rollaxis, np.rollaxis, _one(_rollaxis_kwargs, min_dims=1)),
    OpSpec("squeeze", squeeze, np.squeeze, squeeze_inputs),
    OpSpec("expand_dims", expand_dims, np.expand_dims, _one(_expand_kwargs, max_dims=3)),
    OpSpec("broadcast_to", broadcast_to, np.broadcast_to, broadcast_to_inputs),
    OpSpec(
        "broadcast_arrays",
        _joined(broadcast_arrays),
        _joined(np.broadcast_arrays),
        _many(_broadcast_shapes),
    ),
    OpSpec(
        "concatenate",
        lambda *xs, **kw: concatenate(list(xs), **kw),
        lambda *xs, **kw: np.concatenate(xs, **kw),
        _many(_concat_shapes),
    ),
    OpSpec(
        "stack",
        lambda *xs, **kw: stack(list(xs), **kw),
        lambda *xs, **kw: np.stack(xs, **kw),
        _many(_stack_shapes),
    ),
    OpSpec("hstack", lambda *xs: hstack(xs), lambda *xs: np.hstack(xs), _many(_hstack_shapes)),
    OpSpec("vstack", lambda *xs: vstack(xs), lambda *xs: np.vstack(xs), _many(_vstack_shapes)),
    OpSpec(
        "column_stack",
        lambda *xs: column_stack(xs),
        lambda *xs: np.column_stack(xs),
        _many(_column_shapes),
    ),
    OpSpec("append", append, np.append, _many(_append_shapes)),
    OpSpec("vstack_one_array", vstack, np.vstack, _one(lambda d, s: {}, min_dims=1, min_side=1)),
    OpSpec("hstack_one_array", hstack, np.hstack, _one(lambda d, s: {}, min_dims=1, min_side=1)),
    OpSpec(
        "column_stack_one_array",
        column_stack,
        np.column_stack,
        _one(lambda d, s: {}, min_dims=1, max_dims=2, min_side=1),
    ),
    OpSpec(
        "stack_one_array",
        stack,
        np.stack,
        _one(lambda d, s: {"axis": _an_axis(d, len(s))}, min_dims=1, min_side=1),
    ),
    OpSpec(
        "concatenate_one_array",
        concatenate,
        np.concatenate,
        _one(lambda d, s: {"axis": d(st.none() | st.just(0))}, min_dims=2, min_side=1),
    ),
    OpSpec(
        "split",
        _joined(split),
        _joined(np.split),
        _one(_split_kwargs(equal=True), min_dims=1),
    ),
    OpSpec(
        "array_split",
        _joined(array_split),
        _joined(np.array_split),
        _one(_split_kwargs(equal=False), min_dims=1),
    ),
    OpSpec(
        "hsplit",
        _joined(hsplit),
        _joined(np.hsplit),
        _one(_sections(lambda s: 1 if len(s) > 1 else 0), min_dims=1),
    ),
    OpSpec("vsplit", _joined(vsplit), _joined(np.vsplit), _one(_sections(lambda s: 0), min_dims=2)),
    OpSpec("dsplit", _joined(dsplit), _joined(np.dsplit), _one(_sections(lambda s: 2), min_dims=3)),
    OpSpec("tile", tile, np.tile, _one(_tile_kwargs, max_dims=3)),
    OpSpec("repeat", repeat, np.repeat, _one(_repeat_kwargs, max_dims=3)),
    OpSpec("flip", flip, np.flip, _one(_flip_kwargs)),
    OpSpec("fliplr", fliplr, np.fliplr, _one(lambda d, s: {}, min_dims=2)),
    OpSpec("flipud", flipud, np.flipud, _one(lambda d, s: {}, min_dims=1)),
    OpSpec("rot90", rot90, np.rot90, _one(_rot90_kwargs, min_dims=2)),
    OpSpec("roll", roll, np.roll, _one(_roll_kwargs, max_dims=3)),
    OpSpec("pad", pad, _np_pad, pad_inputs),
    OpSpec("atleast_1d", _joined(atleast_1d), _joined(np.atleast_1d), _many(_atleast_shapes)),
    OpSpec("atleast_2d", _joined(atleast_2d), _joined(np.atleast_2d), _many(_atleast_shapes)),
    OpSpec("atleast_3d", _joined(atleast_3d), _joined(np.atleast_3d), _many(_atleast_shapes)),
]
