"""Indexing: ``x[index]`` (basic and advanced), ``take`` and ``compress``, and the index
helpers the scatter and sorting families share.

The helpers turn index arrays into in-range ``intp`` arrays (negatives counted from the
end, out-of-range values a ``lampy.BadIndexError`` naming the op)
and add gradients back at those positions. Accumulation goes through a flat (1-d)
``numpy.add.at``, which numpy runs on a fast path, instead of a multi-dimensional one,
which it runs element by element; an index without repeats uses plain fancy ``+=``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import BadIndexError, LampyValueError, ShapeError
from lampy.autograd import _ledger
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    contribution,
    op,
    param_of,
    reserve_output,
    single_axis,
    value_of,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


_add, _add_at, _intp = np.add, np.add.at, np.intp

_ROWS = 16
"""Rows at least this long (elements after the indexed axis) are added with fancy ``+=``
when the index has no repeats; shorter ones go through a flat ``add.at``."""


# ----------------------------------------------------------------------------- helpers
def int_indices(name: str, indices: Any) -> np.ndarray:
    """``indices`` (array-like or Variable) as an integer array; an empty list is fine."""
    idx = np.asarray(value_of(indices, name=name))
    if idx.dtype.kind in "iu":
        return idx
    if idx.size == 0 and idx.dtype.kind == "f":
        return idx.astype(_intp)
    raise BadIndexError(
        f"{name}: indices must hold integers, got dtype {idx.dtype}; cast them with "
        "`.astype(int)` (a boolean mask selects with `compress`, `masked_fill` or `x[mask]`)."
    )


def in_bounds(name: str, idx: np.ndarray, n: int, axis: int | None, shape: Any) -> np.ndarray:
    """``idx`` as ``intp`` values in ``[0, n)``; negatives count from the end as in numpy.

    Raises:
        BadIndexError: naming the op, the first bad index, the axis and its size.
    """
    idx = idx.astype(_intp, copy=False)
    if idx.size == 0:
        return idx
    lo, hi = int(idx.min()), int(idx.max())
    if lo < -n or hi >= n:
        bad = hi if hi >= n else lo
        where = "the flattened array" if axis is None else f"axis {axis}"
        raise BadIndexError(
            f"{name}: index {bad} is out of bounds for {where} with size {n} (array of "
            f"shape {tuple(shape)}); valid indices are {-n} to {n - 1}. Check the indices, "
            "or clip them with numpy.clip first."
        )
    if lo < 0:
        idx = np.where(idx < 0, idx + n, idx)
    return idx


def _has_repeats(idx: np.ndarray, n: int) -> bool:
    """Whether the flat in-range index ``idx`` names some position twice."""
    if idx.size < 2:
        return False
    if n <= 8 * idx.size:
        return bool(np.bincount(idx).max() > 1)
    s = np.sort(idx)
    return bool(np.any(s[1:] == s[:-1]))


def add_flat(out: np.ndarray, lin: np.ndarray, g: Any, *, unique: bool = False) -> None:
    """``out.flat[lin] += g``, repeated positions accumulating (``g`` broadcasts to ``lin``).

    ``unique=True`` promises ``lin`` has no repeats, which allows a plain fancy ``+=``.
    """
    if lin.size == 0:
        return
    contiguous = out.flags.c_contiguous
    target = out if contiguous else np.zeros(out.shape, out.dtype)
    flat = target.reshape(-1)
    if unique:
        flat[lin] += g
    else:
        g = np.broadcast_to(g, lin.shape) if np.shape(g) != lin.shape else g
        _add_at(flat, lin.reshape(-1), np.reshape(g, -1))
    if not contiguous:
        _add(out, target, out=out)


def add_along(
    out: np.ndarray,
    idx: np.ndarray,
    g: np.ndarray,
    axis: int,
    *,
    shape: tuple[int, ...] | None = None,
    unique: bool = False,
) -> None:
    """Add ``g`` into ``out`` at positions ``idx`` (in-range ``intp``) along ``axis``.

    ``out`` is seen with ``shape`` (default its own; same size, C order). ``g`` has
    shape ``shape[:axis] + idx.shape + shape[axis + 1:]``, as ``numpy.take`` gives;
    repeated indices accumulate. ``unique=True`` promises ``idx`` has no repeats.
    """
    shape = out.shape if shape is None else shape
    flat_idx = idx.reshape(-1)
    k = flat_idx.size
    if k == 0 or out.size == 0:
        return
    n = shape[axis]
    pre, post = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    contiguous = out.flags.c_contiguous
    target = out if contiguous else np.zeros(out.shape, out.dtype)
    t3 = target.reshape(pre, n, post)
    g3 = g.reshape(pre, k, post)
    if post >= _ROWS and (unique or not _has_repeats(flat_idx, n)):
        t3[:, flat_idx, :] += g3
    elif pre == 1 and post == 1:
        _add_at(t3.reshape(-1), flat_idx, g3.reshape(-1))
    else:
        lin = (np.arange(0, pre * n, n)[:, None] + flat_idx)[:, :, None] * post
        lin = lin + np.arange(post)
        _add_at(t3.reshape(-1), lin.reshape(-1), g3.reshape(-1))
    if not contiguous:
        _add(out, target, out=out)


def linear_index(shape: tuple[int, ...], idx: np.ndarray, axis: int, sizes: Any) -> np.ndarray:
    """Flat positions in a C-ordered array of ``shape`` of ``idx`` along ``axis``, with
    every other axis ``d`` running over ``range(sizes[d])`` (numpy broadcasting of the
    aranges against ``idx``, as ``take_along_axis`` builds its fancy index).

    Raises:
        ValueError: if ``idx`` does not broadcast against the aranges.
    """
    ndim = len(shape)
    strides = [math.prod(shape[d + 1 :]) for d in range(ndim)]
    ranges = []
    for d in range(ndim):
        if d != axis:
            r = np.arange(sizes[d], dtype=_intp) * strides[d]
            ranges.append(r.reshape((1,) * d + (-1,) + (1,) * (ndim - d - 1)))
    out_shape = np.broadcast_shapes(idx.shape, *(r.shape for r in ranges))
    lin = np.empty(out_shape, _intp)
    np.multiply(idx, strides[axis], out=lin)
    for r in ranges:
        lin += r
    return lin


# ------------------------------------------------------------------------------ getitem
def _plain_index(index: Any) -> tuple[Any, bool, bool]:
    """The index with Variables replaced by their values, whether it is advanced, and
    whether it holds an integer array (only those can repeat a position)."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    advanced = integer = False
    for item in index:
        if type(item) is Variable:
            item = item.value
        if isinstance(item, (list, tuple, np.ndarray)):  # numpy takes sequences as arrays
            item = np.asarray(item)
            if item.size == 0 and item.dtype.kind == "f":  # `x[[]]`: an empty selection
                item = item.astype(_intp)
            if item.dtype.kind not in "iub":
                raise BadIndexError(
                    f"getitem: index arrays must hold integers or booleans, got dtype "
                    f"{item.dtype}; cast with `.astype(int)`."
                )
            advanced = True
            integer = integer or item.dtype.kind != "b"
        elif isinstance(item, (bool, np.bool_)):
            advanced = True  # a scalar boolean is an advanced index in numpy
        items.append(item)
    return tuple(items), advanced, integer


def _single_array_axis(idx: tuple[Any, ...]) -> int | None:
    """The axis of ``idx`` if it is ``(:, ..., :, int_array)`` maybe followed by ``...``."""
    items = idx[:-1] if len(idx) > 1 and idx[-1] is Ellipsis else idx
    *lead, last = items if items else (None,)
    full = slice(None)
    if (
        isinstance(last, np.ndarray)
        and last.dtype.kind in "iu"
        and all(type(s) is slice and s == full for s in lead)
    ):
        return len(lead)
    return None


_NO_BYTES = np.dtype([])  # a structured dtype with no fields: items of 0 bytes


def _indexed_shape(shape: tuple[int, ...], idx: Any) -> tuple[int, ...]:
    """The shape ``a[idx]`` has for an array of ``shape``, worked out by numpy on an
    array of 0-byte items (nothing allocated; an index that does not fit raises as it
    would on ``a``)."""
    probe: tuple[int, ...] = np.empty(shape, _NO_BYTES)[idx].shape
    return probe


def getitem(x: Operand, index: Any) -> Variable:
    """``x[index]`` as numpy does it: ints, slices (with steps), ``...``, ``None``, boolean
    masks and integer arrays, in any combination numpy allows.

    Gradient:
        ``dx[index] += g``; repeated integer indices accumulate (``numpy.add.at``).
    """
    a = value_of(x, name="getitem")
    idx, advanced, integer = _plain_index(index)
    try:
        if advanced and _ledger.open_budgets:  # a copy: its size checked first
            reserve_output("getitem", _indexed_shape(np.shape(a), idx), np.result_type(a))
        value = a[idx]
    except (IndexError, TypeError, ValueError) as e:
        raise BadIndexError(
            f"getitem: index {index!r} does not fit an array of shape {np.shape(a)}: {e}. "
            "Valid indices are ints, slices, ..., None, boolean masks and integer arrays, "
            "within the bounds of each axis."
        ) from None
    if not advanced:
        value = value.copy() if value.base is not None and value.size * 4 < np.size(a) else value

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        if not integer:  # basic indices and boolean masks never repeat a position
            out[idx] += g
            return
        axis = _single_array_axis(idx)
        if axis is None:
            _add_at(out, idx, g)
        else:
            n = out.shape[axis]
            i = idx[axis].astype(_intp, copy=False)
            add_along(out, np.where(i < 0, i + n, i) if i.size and i.min() < 0 else i, g, axis)

    shape, dtype = np.shape(a), np.result_type(a)
    return op(
        "getitem",
        value,
        param_of(x, d_x, vjp=lambda g, out: _scattered(g, shape, dtype, idx, d_x)),
    )


def _scattered(g: Any, shape: tuple[int, ...], dtype: Any, idx: Any, d_x: Any) -> Any:
    """The transpose of ``getitem(x, idx)`` (``idx`` a plain index) for a vjp: zeros of
    ``x``'s ``shape`` with ``g`` added at ``idx`` (``d_x`` does the adding), as an op whose
    gradient is ``getitem`` again."""
    value = np.zeros(shape, dtype)
    d_x(np.asarray(value_of(g, name="scatter_add")), value)
    if type(g) is not Variable:
        return value
    return op(
        "scatter_add",
        value,
        contrib_of(g, lambda h: h[idx], vjp=lambda h, out: getitem(h, idx)),
    )


def scattered_along(g: Any, shape: tuple[int, ...], dtype: Any, idx: np.ndarray, axis: int) -> Any:
    """The transpose of ``take(x, idx, axis)`` (``x`` of ``shape``, ``idx`` in-range
    ``intp``) for a vjp: zeros with ``g`` added at ``idx`` along ``axis``, repeats
    accumulating, as an op whose gradient is the take again."""
    index = (slice(None),) * axis + (idx,)
    return _scattered(g, shape, dtype, index, lambda h, out: add_along(out, idx, h, axis))


def scattered_flat(g: Any, shape: tuple[int, ...], dtype: Any, lin: np.ndarray) -> Any:
    """The transpose of ``x.reshape(-1)[lin]`` (``x`` of ``shape``, ``lin`` in-range flat
    positions) for a vjp: zeros with ``g`` (of ``lin``'s shape) added at ``lin``."""
    size = math.prod(shape)
    flat = _scattered(g, (size,), dtype, (lin,), lambda h, out: add_flat(out, lin, h))
    return flat.reshape(shape) if type(flat) is Variable else np.reshape(flat, shape)


# ------------------------------------------------------------------------ take, compress
def _source(name: str, x: Any, axis: Any) -> tuple[np.ndarray, int]:
    """The array to index (flattened for ``axis=None``, 0-d as 1-d) and the axis."""
    if axis is None:
        return np.reshape(x, -1), 0
    ax = single_axis(name, axis, np.ndim(x))
    assert ax is not None
    return (np.reshape(x, 1) if np.ndim(x) == 0 else np.asarray(x)), ax


def take(
    a: Operand, indices: ArrayLike, axis: int | None = None, *, mode: str = "raise"
) -> Variable:
    """Elements of ``a`` at ``indices`` along ``axis`` (numpy's ``take``; ``axis=None``
    takes from the flattened array). The result has shape
    ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``.

    Args:
        a: The array to take from.
        indices: Integer array-like (or integer Variable); repeats allowed.
        axis: The axis to take along; None flattens ``a`` first.
        mode: ``"raise"`` (default): indices must lie in ``[-n, n)``, negatives counting
            from the end; ``"wrap"``: indices are taken modulo ``n``; ``"clip"``: indices
            are clipped to ``[0, n - 1]`` (negatives become 0, as in numpy).
            Keyword-only (numpy's ``out`` comes before it).

    Raises:
        BadIndexError: an index out of range with ``mode="raise"``, a non-integer index,
            or a non-empty take from an empty axis.

    Gradient:
        ``da`` gets ``g`` added at the positions taken (after wrapping or clipping);
        repeated indices accumulate.
    """
    x = value_of(a, name="take")
    idx = int_indices("take", indices)
    src, ax = _source("take", x, axis)
    n = src.shape[ax]
    if mode == "raise":
        idx = in_bounds("take", idx, n, axis, np.shape(x))
    elif mode in ("wrap", "clip"):
        if n == 0 and idx.size:
            raise BadIndexError(
                f"take: cannot take {idx.size} elements from an empty axis (array of shape "
                f"{np.shape(x)}, axis {axis}), whatever the mode."
            )
        idx = idx % n if mode == "wrap" and n else np.clip(idx, 0, max(n - 1, 0))
        idx = idx.astype(_intp, copy=False)
    else:
        raise LampyValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    value = np.take(src, idx, axis=ax)
    in_shape = src.shape

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        add_along(out, idx, g, ax, shape=in_shape)

    shape, dtype = np.shape(x), np.result_type(x)

    def vjp(g: Any, out: Any) -> Any:
        return scattered_along(g, in_shape, dtype, idx, ax).reshape(shape)

    return op("take", value, param_of(a, d_a, vjp=vjp))


def compress(condition: Operand, a: Operand, axis: int | None = None) -> Variable:
    """The slices of ``a`` along ``axis`` where ``condition`` is true (numpy's
    ``compress``; ``axis=None`` works on the flattened array).

    Args:
        condition: A 1-d array-like taken by truth value. It may be shorter than the
            axis (the rest is dropped); it may be longer only with False beyond it.
        a: The array to select from.
        axis: The axis to select along; None flattens ``a`` first.

    Raises:
        ShapeError: if ``condition`` is not 1-d.
        BadIndexError: if ``condition`` is true past the end of the axis.

    Gradient:
        ``da`` gets ``g`` at the selected slices, 0 elsewhere.
    """
    x = value_of(a, name="compress")
    c = np.asarray(value_of(condition, name="compress"))
    if c.ndim != 1:
        raise ShapeError(
            f"compress: condition must be 1-d, got shape {c.shape}; flatten it, or use "
            "`x[mask]` for an n-d boolean mask."
        )
    src, ax = _source("compress", x, axis)
    n = src.shape[ax]
    idx = np.flatnonzero(c)
    if idx.size and idx[-1] >= n:
        raise BadIndexError(
            f"compress: condition is true at position {int(idx[-1])}, past the end of "
            f"{'the flattened array' if axis is None else f'axis {axis}'} of length {n} "
            f"(array of shape {np.shape(x)}); shorten the condition."
        )
    value = np.take(src, idx, axis=ax)
    in_shape, shape = src.shape, np.shape(x)

    def d_a(g: np.ndarray) -> Any:
        d = np.zeros(in_shape, g.dtype)
        pre, post = math.prod(in_shape[:ax]), math.prod(in_shape[ax + 1 :])
        d.reshape(pre, n, post)[:, idx, :] = g.reshape(pre, idx.size, post)
        return d.reshape(shape)

    dtype = np.result_type(x)

    def vjp(g: Any, out: Any) -> Any:
        return scattered_along(g, in_shape, dtype, idx, ax).reshape(shape)

    return op("compress", value, param_of(a, contribution(d_a), vjp=vjp))


__all__ = ["getitem", "take", "compress"]
