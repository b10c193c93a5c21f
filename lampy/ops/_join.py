"""Joining and splitting: concatenate, append, stack, hstack, vstack, column_stack, split,
array_split, hsplit, vsplit, dsplit and broadcast_arrays, with numpy's names, signatures
and dtype promotion.

Operands may mix Variables, numpy arrays and array-likes (lists holding Variables
included); only Variables that need a gradient get one. A joined result hands each
operand the slice of ``g`` it occupies; a split hands each piece's ``g`` back into the
slice the piece came from. As in numpy, one array (or Variable) given where a sequence
of arrays is expected is the sequence of its sub-arrays along its first axis.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.autograd import _ledger
from lampy.opkit import (
    Operand,
    Variable,
    array_of,
    contribution,
    needs_grad,
    one_axis,
    op,
    param_of,
    real_result,
    reserve_output,
    value_of,
)
from lampy.ops._pad import pad
from lampy.ops._torch_names import axis_or_dim

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


_add = np.add


def _operands(name: str, arrays: Any) -> list[Any]:
    """The arrays of a sequence, a list holding Variables packed into one Variable."""
    try:
        items = list(arrays)
    except TypeError:
        raise LampyTypeError(
            f"{name}: takes a sequence of arrays, got {type(arrays).__name__}; pass a list "
            f"or tuple, e.g. `{name}([a, b])`."
        ) from None
    if not items:
        raise LampyValueError(f"{name}: needs at least one array, got an empty sequence.")
    return [array_of(name, x) for x in items]


def _single(
    name: str, x: Variable, join: Callable[[list[np.ndarray], Any], np.ndarray], dtype: Any = None
) -> Variable:
    """``join`` of one Variable taken as the sequence of its sub-arrays along axis 0, as
    numpy joins an array passed where a sequence is expected.

    Every element of ``x`` lands in exactly one place of the result, so the gradient
    puts each element of ``g`` back where it came from; where that is, numpy tells by
    joining the elements' flat positions the same way.
    """
    v = x.value
    if v.ndim == 0:
        raise LampyTypeError(
            f"{name}: takes a sequence of arrays, got a 0-d Variable (numpy iterates over an "
            f"array's first axis, so it needs at least 1 dimension); pass a list: `{name}([x])`."
        )
    try:
        value = join(list(v), dtype)
    except ValueError as e:
        raise ShapeError(f"{name}: the sub-arrays of a Variable of shape {v.shape}: {e}") from None
    except TypeError as e:
        raise DTypeError(f"{name}: {e}") from None
    real_result(name, value, x)
    where = join(list(np.arange(v.size).reshape(v.shape)), None).reshape(-1)
    shape = v.shape

    def back(g: np.ndarray) -> np.ndarray:
        d = np.empty(where.size, g.dtype)
        d[where] = g.reshape(-1)
        return d.reshape(shape)

    def vjp(g: Any, out: Any) -> Any:  # the inverse permutation, as a gather of g
        return g.reshape(-1)[np.argsort(where)].reshape(shape)

    return op(name, value, param_of(x, contribution(back), vjp=vjp))


def _shapes(shapes: list[tuple[int, ...]]) -> str:
    return ", ".join(str(s) for s in shapes)


def _check_join(name: str, shapes: list[tuple[int, ...]], axis: int | None) -> int | None:
    """Validate shapes joined along ``axis`` (None: flattened); the axis, normalized."""
    if axis is None:
        return None
    nd = len(shapes[0])
    if nd == 0:
        raise ShapeError(
            f"{name}: cannot join 0-d arrays along an axis (shapes {_shapes(shapes)}); use "
            "stack to make a new axis, or axis=None."
        )
    if any(len(s) != nd for s in shapes):
        raise ShapeError(
            f"{name}: all arrays must have the same number of dimensions, got shapes "
            f"{_shapes(shapes)}."
        )
    ax = one_axis(name, axis, nd)
    rest = [s[:ax] + s[ax + 1 :] for s in shapes]
    if any(r != rest[0] for r in rest):
        raise ShapeError(
            f"{name}: shapes {_shapes(shapes)} do not fit together along axis {ax}: every "
            "other dimension must be equal."
        )
    return ax


def _reserve(name: str, vals: list[Any], shape: tuple[int, ...], dtype: Any) -> None:
    """Check the joined result of ``shape`` against the scope's budgets before numpy
    allocates it (``reserve_output``), its dtype numpy's promotion of the values."""
    if _ledger.open_budgets:
        try:
            dt = np.dtype(dtype) if dtype is not None else np.result_type(*vals)
        except TypeError:  # numpy's own join raises the error the caller reports
            return
        reserve_output(name, shape, dt)


def _numpy(name: str, fn: Callable[[], np.ndarray]) -> np.ndarray:
    try:
        return fn()
    except TypeError as e:
        raise DTypeError(f"{name}: {e}") from None


def _joined(
    name: str,
    items: list[Any],
    value: np.ndarray,
    axis: int,
    sizes: list[int],
    shapes: list[tuple[int, ...]],
) -> Variable:
    """Record ``value``: the items (of ``shapes``) laid side by side along ``axis``, item
    ``i`` taking ``sizes[i]`` positions."""
    if value.dtype.kind in "cO":  # complex or object: refused if a gradient is needed
        real_result(name, value, items)
    params = []
    lo = 0
    for x, n, shape in zip(items, sizes, shapes, strict=True):
        if needs_grad(x):
            idx = (slice(None),) * axis + (slice(lo, lo + n),)
            # g[idx].reshape(shape) on a Variable g is its own vjp
            back = lambda g, idx=idx, shape=shape: g[idx].reshape(shape)
            params.append(param_of(x, contribution(back, fresh=False), vjp=_as_vjp(back)))
        lo += n
    return op(name, value, *params)


def concatenate(
    arrays: Sequence[Operand] | Variable,
    axis: int | None = 0,
    *,
    dtype: DTypeLike | None = None,
    dim: int | None = None,
) -> Variable:
    """Join arrays along an existing axis, as ``numpy.concatenate``.

    Also named ``lampy.cat``, as PyTorch's ``torch.cat(tensors, dim=0)``; ``dim`` is
    accepted for ``axis``.

    Args:
        arrays: A sequence of Variables, arrays or array-likes, with equal shapes except
            along ``axis``.
        axis: The axis to join along; None flattens every array first.
        dtype: The result's dtype (numpy's promotion of the inputs if None).

    Raises:
        ShapeError: if the shapes do not fit together or ``axis`` is out of bounds.

    Gradient:
        ``da_i`` is the slice of ``g`` that ``a_i`` occupies (reshaped back if flattened).
    """
    axis = axis_or_dim("concatenate", axis, dim, default=0)
    if type(arrays) is Variable:
        return _single(
            "concatenate", arrays, lambda v, dt: np.concatenate(v, axis=axis, dtype=dt), dtype
        )
    return _concatenate("concatenate", _operands("concatenate", arrays), axis, dtype)


def _concatenate(name: str, items: list[Any], axis: int | None, dtype: Any) -> Variable:
    vals = [value_of(x, name=name) for x in items]
    shapes = [np.shape(v) for v in vals]
    ax = _check_join(name, shapes, axis)
    if ax is None:
        out = (sum(int(np.prod(s)) for s in shapes),)
    else:
        out = (*shapes[0][:ax], sum(s[ax] for s in shapes), *shapes[0][ax + 1 :])
    _reserve(name, vals, out, dtype)
    value = _numpy(name, lambda: np.concatenate(vals, axis=ax, dtype=dtype))
    if ax is None:
        return _joined(name, items, value, 0, [int(np.prod(s)) for s in shapes], shapes)
    return _joined(name, items, value, ax, [s[ax] for s in shapes], shapes)


def append(arr: Operand, values: Operand, axis: int | None = None) -> Variable:
    """``values`` appended to the end of ``arr``, as ``numpy.append``.

    Args:
        arr: The array appended to.
        values: The values appended; with ``axis`` they must have ``arr``'s shape except
            along ``axis``.
        axis: The axis to append along; None flattens both first (a 1-d result).

    Raises:
        ShapeError: if the shapes do not fit together along ``axis``.

    Gradient:
        ``darr`` and ``dvalues`` are the slices of ``g`` they occupy (reshaped back if
        flattened).
    """
    items = [array_of("append", arr), array_of("append", values)]
    return _concatenate("append", items, axis, None)


def _stacked(
    name: str, items: list[Any], promote: Callable[[Any], np.ndarray], axis: int, dtype: Any
) -> Variable:
    """Join the items' values, each given dimensions by ``promote``, along ``axis``."""
    raw = [value_of(x, name=name) for x in items]
    vals = [promote(v) for v in raw]
    shapes = [v.shape for v in vals]
    ax = _check_join(name, shapes, axis if vals[0].ndim > 1 else 0)
    assert ax is not None
    _reserve(name, vals, (*shapes[0][:ax], sum(s[ax] for s in shapes), *shapes[0][ax + 1 :]), dtype)
    value = _numpy(name, lambda: np.concatenate(vals, axis=ax, dtype=dtype))
    return _joined(name, items, value, ax, [s[ax] for s in shapes], [np.shape(v) for v in raw])


def hstack(tup: Sequence[Operand] | Variable, *, dtype: DTypeLike | None = None) -> Variable:
    """Join arrays horizontally: along axis 1, or axis 0 for 1-d arrays (0-d arrays count
    as 1-d), as ``numpy.hstack``.

    Gradient:
        ``da_i`` is the slice of ``g`` that ``a_i`` occupies.
    """
    if type(tup) is Variable:
        return _single("hstack", tup, lambda v, dt: np.hstack(v, dtype=dt), dtype)
    return _stacked("hstack", _operands("hstack", tup), np.atleast_1d, 1, dtype)


def vstack(tup: Sequence[Operand] | Variable, *, dtype: DTypeLike | None = None) -> Variable:
    """Join arrays vertically, along axis 0, after making 0-d and 1-d arrays rows
    (``(n,)`` -> ``(1, n)``), as ``numpy.vstack``.

    Gradient:
        ``da_i`` is the slice of ``g`` that ``a_i`` occupies, reshaped back.
    """
    if type(tup) is Variable:
        return _single("vstack", tup, lambda v, dt: np.vstack(v, dtype=dt), dtype)
    return _stacked("vstack", _operands("vstack", tup), np.atleast_2d, 0, dtype)


def _as_column(v: Any) -> Any:
    """A 0-d or 1-d value as a column ``(n, 1)``; others as they are."""
    return np.reshape(v, (-1, 1)) if np.ndim(v) < 2 else v


def column_stack(tup: Sequence[Operand] | Variable) -> Variable:
    """Join 1-d arrays as the columns of a 2-d array, as ``numpy.column_stack``: 0-d and
    1-d arrays become columns ``(n, 1)``, arrays of 2 or more dimensions are joined as
    they are, along axis 1.

    Gradient:
        ``da_i`` is the slice of ``g`` that ``a_i`` occupies, reshaped back.
    """
    if type(tup) is Variable:
        return _single("column_stack", tup, lambda v, dt: np.column_stack(v))
    return _stacked("column_stack", _operands("column_stack", tup), _as_column, 1, None)


def stack(
    arrays: Sequence[Operand] | Variable,
    axis: int = 0,
    *,
    dtype: DTypeLike | None = None,
    dim: int | None = None,
) -> Variable:
    """Join arrays of one shape along a new axis, at position ``axis`` of the result, as
    ``numpy.stack``.

    PyTorch's ``dim`` is accepted for ``axis``.

    Raises:
        ShapeError: if the shapes differ or ``axis`` is out of bounds.

    Gradient:
        ``da_i = take(g, i, axis)``.
    """
    axis = axis_or_dim("stack", axis, dim, default=0)
    if type(arrays) is Variable:
        return _single("stack", arrays, lambda v, dt: np.stack(v, axis=axis, dtype=dt), dtype)
    items = _operands("stack", arrays)
    vals = [np.asarray(value_of(x, name="stack")) for x in items]
    shapes = [v.shape for v in vals]
    if any(s != shapes[0] for s in shapes):
        raise ShapeError(
            f"stack: all arrays must have the same shape, got shapes {_shapes(shapes)}."
        )
    ax = one_axis("stack", axis, len(shapes[0]) + 1)
    _reserve("stack", vals, (*shapes[0][:ax], len(vals), *shapes[0][ax:]), dtype)
    value = _numpy("stack", lambda: np.stack(vals, axis=ax, dtype=dtype))
    if value.dtype.kind in "cO":  # complex or object: refused if a gradient is needed
        real_result("stack", value, items)
    params = []
    for i, x in enumerate(items):
        if needs_grad(x):
            idx = (slice(None),) * ax + (i,)
            take = _taker(idx)
            params.append(param_of(x, contribution(take, fresh=False), vjp=_as_vjp(take)))
    return op("stack", value, *params)


def _taker(idx: Any) -> Callable[[np.ndarray], np.ndarray]:
    return lambda g: g[idx]


def _as_vjp(back: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    """``back``, written with indexing and methods Variables share with arrays, as a
    vjp (it records itself on a Variable ``g``)."""
    return lambda g, out: back(g)


def _split(
    name: str, ary: Any, x: np.ndarray, indices_or_sections: Any, axis: int, equal: bool
) -> list[Any]:
    """Split ``ary`` (of value ``x``) along ``axis``."""
    if x.ndim == 0:
        raise ShapeError(f"{name}: cannot split a 0-d array (shape ()); it has no axis.")
    ax = one_axis(name, axis, x.ndim)
    n = x.shape[ax]
    if np.ndim(indices_or_sections) == 0:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise LampyValueError(f"{name}: the number of sections must be > 0, got {sections}.")
        each, extra = divmod(n, sections)
        if equal and extra:
            raise ShapeError(
                f"{name}: axis {ax} of an array of shape {x.shape} has length {n}, which "
                f"does not split into {sections} equal sections; use array_split for "
                "sections of unequal length, or pass the split indices."
            )
        bounds = np.cumsum([0] + [each + 1] * extra + [each] * (sections - extra)).tolist()
    else:
        bounds = [0, *(operator.index(i) for i in indices_or_sections), n]
    pieces = []
    for lo, hi in itertools.pairwise(bounds):
        idx = (slice(None),) * ax + (slice(lo, hi),)

        def back(g: np.ndarray, out: np.ndarray, idx: Any = idx) -> None:
            view = out[idx]
            _add(view, g, out=view)

        def vjp(g: Any, out: Any, lo: int = lo, hi: int = hi) -> Any:  # g padded into place
            start, stop, _ = slice(lo, hi).indices(n)
            widths = [(0, 0)] * x.ndim
            widths[ax] = (start, n - start - max(stop - start, 0))
            return pad(g, widths)

        pieces.append(op(name, x[idx], param_of(ary, back, vjp=vjp)))
    return pieces


def split(ary: Operand, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Variable]:
    """Split ``ary`` along ``axis`` into equal sections or at the given indices, as
    ``numpy.split``.

    Args:
        ary: The array.
        indices_or_sections: An int ``N`` (``N`` equal sections; the axis length must
            divide) or a sequence of indices where the pieces start (sliced as Python
            slices ``ary[i:j]``, so indices past the end give empty pieces).
        axis: The axis to split along.

    Returns:
        A list of Variables.

    Gradient:
        Each piece's ``g`` is added into the slice of ``dary`` it came from.
    """
    x = np.asarray(value_of(ary, name="split"))
    return _split("split", ary, x, indices_or_sections, axis, equal=True)


def array_split(
    ary: Operand, indices_or_sections: int | Sequence[int], axis: int = 0
) -> list[Variable]:
    """As ``lampy.split``, but ``N`` sections need not be equal: an axis of length
    ``l`` gives ``l % N`` sections of ``l // N + 1`` then sections of ``l // N``.

    Gradient:
        Each piece's ``g`` is added into the slice of ``dary`` it came from.
    """
    x = np.asarray(value_of(ary, name="array_split"))
    return _split("array_split", ary, x, indices_or_sections, axis, equal=False)


def _split_at_least(name: str, ary: Any, ndim: int) -> np.ndarray:
    x = np.asarray(value_of(ary, name=name))
    if x.ndim < ndim:
        raise ShapeError(
            f"{name}: needs an array of at least {ndim} dimension{'s' if ndim > 1 else ''}, "
            f"got shape {x.shape}."
        )
    return x


def hsplit(ary: Operand, indices_or_sections: int | Sequence[int]) -> list[Variable]:
    """Split ``ary`` horizontally: along axis 1, or axis 0 for a 1-d array, as
    ``numpy.hsplit`` (equal sections, or at the given indices, as :func:`split`).

    Raises:
        ShapeError: if ``ary`` is 0-d or the sections are not equal.

    Gradient:
        Each piece's ``g`` is added into the slice of ``dary`` it came from.
    """
    x = _split_at_least("hsplit", ary, 1)
    return _split("hsplit", ary, x, indices_or_sections, 1 if x.ndim > 1 else 0, equal=True)


def vsplit(ary: Operand, indices_or_sections: int | Sequence[int]) -> list[Variable]:
    """Split ``ary`` vertically, along axis 0, as ``numpy.vsplit`` (at least 2-d).

    Raises:
        ShapeError: if ``ary`` has fewer than 2 dimensions or the sections are not equal.

    Gradient:
        Each piece's ``g`` is added into the slice of ``dary`` it came from.
    """
    x = _split_at_least("vsplit", ary, 2)
    return _split("vsplit", ary, x, indices_or_sections, 0, equal=True)


def dsplit(ary: Operand, indices_or_sections: int | Sequence[int]) -> list[Variable]:
    """Split ``ary`` along the depth, axis 2, as ``numpy.dsplit`` (at least 3-d).

    Raises:
        ShapeError: if ``ary`` has fewer than 3 dimensions or the sections are not equal.

    Gradient:
        Each piece's ``g`` is added into the slice of ``dary`` it came from.
    """
    x = _split_at_least("dsplit", ary, 3)
    return _split("dsplit", ary, x, indices_or_sections, 2, equal=True)


def broadcast_arrays(*args: Operand) -> tuple[Variable, ...]:
    """The inputs broadcast against each other to one shape (read-only views), as
    ``numpy.broadcast_arrays``.

    Returns:
        A tuple of Variables, one per input.

    Raises:
        ShapeError: if the shapes do not broadcast together.

    Gradient:
        ``da_i = unbroadcast(g_i, a_i.shape)``.
    """
    vals = [value_of(a, name="broadcast_arrays") for a in args]
    shapes = [np.shape(v) for v in vals]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(
            f"broadcast_arrays: shapes {_shapes(shapes)} do not broadcast together: each "
            "trailing dimension must be equal or 1 across the arrays."
        ) from None
    return tuple(
        op(
            "broadcast_arrays",
            np.broadcast_to(v, shape),
            param_of(a, contribution(lambda g: g, fresh=False), vjp=_as_vjp(lambda g: g)),
        )
        for a, v in zip(args, vals, strict=True)
    )


__all__ = [
    "concatenate",
    "append",
    "cat",
    "stack",
    "hstack",
    "vstack",
    "column_stack",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "broadcast_arrays",
]


cat = concatenate
"""PyTorch's name of ``lampy.concatenate``: ``cat(arrays, dim=0)``."""
