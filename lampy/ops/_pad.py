"""Reordering and replicating elements: flip (fliplr, flipud), rot90, roll, tile, repeat
and pad, with numpy's names and signatures.

Every output element is a copy of one input element (or, for ``pad``'s constant mode, of
the constant), so each gradient gathers ``g`` back onto the element it was copied from,
summing where an element was copied several times.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.opkit import (
    Axis,
    Operand,
    Variable,
    contribution,
    needs_grad,
    no_complex_into_real,
    normalize_axis,
    op,
    param_of,
    value_of,
)
from lampy.ops._indexing import scattered_along

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

from collections.abc import Sequence

_add = np.add
_FEW = 16
"""Up to this many copies, repeat's gradient adds the copies' views instead of summing."""


def _ints(name: str, what: str, x: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints."""
    try:
        return (operator.index(x),) if np.ndim(x) == 0 else tuple(operator.index(i) for i in x)
    except TypeError:
        raise LampyTypeError(
            f"{name}: {what} must be an int or a sequence of ints, got {x!r}"
        ) from None


def flip(m: Operand, axis: Axis = None) -> Variable:
    """Reverse the order of elements along ``axis`` (None: every axis; an int or a tuple),
    as ``numpy.flip`` (a view, no copy).

    Gradient:
        ``dm = flip(g, axis)``.
    """
    x = np.asarray(value_of(m, name="flip"))
    return _flipped("flip", m, x, normalize_axis("flip", axis, x.ndim))


def _flipped(name: str, m: Any, x: np.ndarray, axes: tuple[int, ...]) -> Variable:
    value = np.flip(x, axes)
    return op(
        name,
        value,
        param_of(
            m,
            contribution(lambda g: np.flip(g, axes), fresh=False),
            vjp=lambda g, out: flip(g, axes),
        ),
    )


def fliplr(m: Operand) -> Variable:
    """Reverse the order of the columns (axis 1) of an array of at least 2 dimensions, as
    ``numpy.fliplr`` (a view).

    Raises:
        ShapeError: if ``m`` has fewer than 2 dimensions.

    Gradient:
        ``dm = fliplr(g)``.
    """
    x = np.asarray(value_of(m, name="fliplr"))
    if x.ndim < 2:
        raise ShapeError(
            f"fliplr: needs an array of at least 2 dimensions, got shape {x.shape}; use "
            "flip (or flipud) for a 1-d array."
        )
    return _flipped("fliplr", m, x, (1,))


def flipud(m: Operand) -> Variable:
    """Reverse the order of the rows (axis 0) of an array of at least 1 dimension, as
    ``numpy.flipud`` (a view).

    Raises:
        ShapeError: if ``m`` is 0-d.

    Gradient:
        ``dm = flipud(g)``.
    """
    x = np.asarray(value_of(m, name="flipud"))
    if x.ndim < 1:
        raise ShapeError("flipud: needs an array of at least 1 dimension, got a 0-d array.")
    return _flipped("flipud", m, x, (0,))


def rot90(m: Operand, k: int = 1, axes: Sequence[int] = (0, 1)) -> Variable:
    """Rotate ``m`` by ``k`` quarter turns in the plane of ``axes``, from the first axis
    towards the second, as ``numpy.rot90`` (a view).

    Args:
        m: An array of at least 2 dimensions.
        k: The number of quarter turns (negative turns the other way).
        axes: The two distinct axes of the plane of rotation.

    Raises:
        ShapeError: if ``m`` has fewer than 2 dimensions or ``axes`` is not two distinct
            axes of ``m``.

    Gradient:
        ``dm = rot90(g, -k, axes)`` (the inverse rotation).
    """
    x = np.asarray(value_of(m, name="rot90"))
    turns = operator.index(k)
    pair = _ints("rot90", "axes", axes)
    if len(pair) != 2:
        raise ShapeError(f"rot90: axes must name exactly 2 axes, got {axes!r}.")
    if x.ndim < 2:
        raise ShapeError(f"rot90: needs an array of at least 2 dimensions, got shape {x.shape}.")
    normalize_axis("rot90", pair, x.ndim)  # raises unless in range and distinct
    value = np.rot90(x, turns, pair)
    return op(
        "rot90",
        value,
        param_of(
            m,
            contribution(lambda g: np.rot90(g, -turns, pair), fresh=False),
            vjp=lambda g, out: rot90(g, -turns, pair),
        ),
    )


def roll(a: Operand, shift: int | Sequence[int] | np.ndarray, axis: Axis = None) -> Variable:
    """Shift elements cyclically by ``shift`` along ``axis``, as ``numpy.roll``.

    Args:
        a: The array.
        shift: An int, or a tuple of ints paired with the axes of ``axis`` (one int is
            used for every axis; shifts of a repeated axis add up).
        axis: None (the flattened array is rolled and the shape restored), an int or a
            tuple of ints.

    Gradient:
        ``da = roll(g, -shift, axis)``.
    """
    x = np.asarray(value_of(a, name="roll"))
    shifts = _ints("roll", "shift", shift)
    if axis is not None:
        axes = _ints("roll", "axis", axis)
        for ax in axes:
            normalize_axis("roll", ax, x.ndim)
        if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
            raise ShapeError(
                f"roll: {len(shifts)} shifts {shift!r} do not pair with {len(axes)} axes "
                f"{axis!r}; give one shift, or one per axis."
            )
    elif len(shifts) != 1:
        raise ShapeError(f"roll: with axis=None, shift must be one int, got {shift!r}.")
    value = np.roll(x, shift, axis)
    back = np.negative(shift)
    return op(
        "roll",
        value,
        param_of(
            a,
            contribution(lambda g: np.roll(g, back, axis)),
            vjp=lambda g, out: roll(g, back, axis),
        ),
    )


def tile(A: Operand, reps: int | Sequence[int]) -> Variable:
    """``A`` repeated ``reps[i]`` times along each axis ``i``, as ``numpy.tile``.

    If ``reps`` is longer than ``A.ndim``, ``A`` gets leading length-1 axes; if shorter,
    ``reps`` gets leading 1s.

    Gradient:
        ``dA`` sums the ``prod(reps)`` tiles of ``g``:
        ``g.reshape(r0, n0, r1, n1, ...).sum(axis=(0, 2, ...))``.
    """
    x = np.asarray(value_of(A, name="tile"))
    tup = _ints("tile", "reps", reps)
    if any(r < 0 for r in tup):
        raise LampyValueError(f"tile: reps must be >= 0, got {reps!r}.")
    value = np.tile(x, tup)
    shape = x.shape
    full = (1,) * (x.ndim - len(tup)) + tup
    sides = (1,) * (len(tup) - x.ndim) + shape
    split = tuple(n for pair in zip(full, sides, strict=True) for n in pair)
    summed = tuple(range(0, 2 * len(full), 2))

    def back(g: np.ndarray) -> Any:  # Variable methods only: its own vjp
        return g.reshape(split).sum(axis=summed).reshape(shape)

    return op("tile", value, param_of(A, contribution(back), vjp=lambda g, out: back(g)))


def repeat(a: Operand, repeats: int | Sequence[int], axis: int | None = None) -> Variable:
    """Repeat each element of ``a`` ``repeats`` times, as ``numpy.repeat``.

    Args:
        a: The array.
        repeats: An int (for every element), or one int per element along ``axis``.
        axis: The axis to repeat along; None repeats the flattened array (a 1-d result).

    Gradient:
        ``da_i`` is the sum of ``g`` over the ``repeats[i]`` copies of ``a_i``;
        elements repeated 0 times get 0. The copies' views of ``g`` are added one by one
        for up to 16 copies (or few distinct counts), else summed (``numpy.sum``, or
        ``numpy.add.reduceat`` over the runs for many distinct counts).
    """
    x = np.asarray(value_of(a, name="repeat"))
    r = np.asarray(value_of(repeats, name="repeat"))
    if r.dtype.kind not in "iub":
        raise DTypeError(f"repeat: repeats must be integers, got dtype {r.dtype}.")
    if r.size and r.min() < 0:
        raise LampyValueError(f"repeat: repeats must be >= 0, got {repeats!r}.")
    flat = x.reshape(-1) if axis is None else x.reshape(1) if x.ndim == 0 else x
    ax = 0 if axis is None else normalize_axis("repeat", operator.index(axis), flat.ndim)[0]
    n = flat.shape[ax]
    if r.ndim > 1 or r.size not in (1, n):
        raise ShapeError(
            f"repeat: repeats of shape {r.shape} do not fit axis {axis} of length {n} (array "
            f"of shape {x.shape}); give one int, or one per element along the axis."
        )
    value = np.repeat(flat, r, axis=ax)
    shape, inner = x.shape, flat.shape

    if r.size == 1:
        k = int(r.reshape(()))
        back = lambda g: _sum_copies(g, inner, ax, k).reshape(shape)
    else:
        back = lambda g: _sum_runs(g, inner, ax, r).reshape(shape)

    dtype = value.dtype

    def vjp(g: Any, out: Any) -> Any:  # the transpose of take(flat, source, ax)
        source = np.repeat(np.arange(n, dtype=np.intp), r)
        return scattered_along(g, inner, dtype, source, ax).reshape(shape)

    return op("repeat", value, param_of(a, contribution(back), vjp=vjp))


def _sum_copies(g: np.ndarray, shape: tuple[int, ...], ax: int, k: int) -> Any:
    """The gradient of ``repeat(x, k, ax)`` (``x`` of ``shape``): the sum of each run of
    ``k`` copies in ``g``."""
    runs: Any = g.reshape((*shape[:ax], shape[ax], k, *shape[ax + 1 :]))
    if not 0 < k <= _FEW:
        return runs.sum(axis=ax + 1)
    # numpy sums a short trailing axis slowly (~20x a copy): add the copies' views instead
    at = (slice(None),) * (ax + 1)
    copies = [(*at, j) for j in range(k)]
    d = runs[copies[0]].copy()
    for j in range(1, k):
        _add(d, runs[copies[j]], out=d)
    return d


def _sum_runs(g: np.ndarray, shape: tuple[int, ...], ax: int, r: np.ndarray) -> Any:
    """The gradient of ``repeat(x, r, ax)`` (``x`` of ``shape``, ``r`` one count per
    element along ``ax``): the sum of each element's run of copies in ``g``."""
    starts = np.cumsum(r) - r
    counts = np.unique(r[r > 0])
    d = np.zeros(shape, g.dtype)
    at = (slice(None),) * ax
    if counts.sum() <= 4 * _FEW:
        # Few distinct counts: gather the j-th copy of every element with count c.
        for c in counts.tolist():
            which = np.flatnonzero(r == c)
            acc = np.take(g, starts[which], axis=ax)
            for j in range(1, c):
                _add(acc, np.take(g, starts[which] + j, axis=ax), out=acc)
            into: Any = (*at, which)
            d[into] = acc
        return d
    hit = np.flatnonzero(r)
    into = (*at, hit)
    d[into] = np.add.reduceat(g, starts[hit], axis=ax)
    return d


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_pairs(pad_width: Any, ndim: int) -> tuple[tuple[int, int], ...]:
    """``pad_width`` as one ``(before, after)`` pair per axis, by numpy's rules."""
    w = np.asarray(pad_width)
    if w.dtype.kind not in "iu":
        raise DTypeError(f"pad: pad_width must hold integers, got {pad_width!r}.")
    if w.size and w.min() < 0:
        raise LampyValueError(f"pad: pad_width must be >= 0, got {pad_width!r}.")
    if w.ndim < 3 and (w.size == 1 or (w.size == 2 and w.shape != (2, 1))):
        w = w.reshape(1, -1)  # (n,) or (before, after): the same for every axis
    try:
        pairs = np.broadcast_to(w, (ndim, 2))
    except ValueError:
        raise ShapeError(
            f"pad: pad_width of shape {w.shape} does not give a (before, after) pair for "
            f"each of {ndim} axes; pass an int, a pair, or one pair per axis."
        ) from None
    return tuple((int(b), int(e)) for b, e in pairs)


def _as_array(pairs: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The pairs as numpy.pad takes them (an integer array, also when there are none)."""
    return np.array(pairs, dtype=np.intp).reshape(-1, 2)


def _fold(g: np.ndarray, shape: tuple[int, ...], pairs: Any, mode: str) -> np.ndarray:
    """The gradient of a non-constant pad: per axis, keep the middle of ``g`` and add each
    padded position into the element it copies (numpy pads axis by axis, and each axis's
    copy pattern is independent of the others)."""
    for ax, (b, e) in enumerate(pairs):
        if not (b or e):
            continue
        n = shape[ax]
        source = np.pad(np.arange(n), (b, e), mode)  # type: ignore[call-overload]
        pre = (slice(None),) * ax
        middle = (*pre, slice(b, b + n))
        d = g[middle].copy()
        for where, to in ((slice(0, b), source[:b]), (slice(b + n, b + n + e), source[b + n :])):
            if not to.size:
                continue
            src, dst = (*pre, where), (*pre, to)
            part = g[src]
            if to.min() == to.max():  # edge mode: every copy of one element
                i = int(to[0])
                one = (*pre, slice(i, i + 1))
                target = d[one]
                _add(target, part.sum(axis=ax, keepdims=True), out=target)
            elif np.unique(to).size == to.size:
                d[dst] += part
            else:  # pads longer than the axis copy elements more than once
                np.add.at(d, dst, part)
        g = d
    return g


def _fold_vjp(g: Any, shape: tuple[int, ...], pairs: Any, mode: str, dtype: Any) -> Any:
    """``_fold`` with lampy ops, for a vjp: per axis, the middle of ``g`` plus each padded
    part scattered onto the elements it copies."""
    for ax, (b, e) in enumerate(pairs):
        if not (b or e):
            continue
        n = shape[ax]
        source = np.pad(np.arange(n), (b, e), mode)  # type: ignore[call-overload]
        pre = (slice(None),) * ax
        middle = (*pre, slice(b, b + n))
        d = g[middle]
        for where, to in ((slice(0, b), source[:b]), (slice(b + n, b + n + e), source[b + n :])):
            if to.size:
                src = (*pre, where)
                part = g[src]
                d = d + scattered_along(part, d.shape, dtype, to.astype(np.intp), ax)
        g = d
    return g


def pad(
    array: Operand, pad_width: Any, mode: str = "constant", constant_values: ArrayLike = 0
) -> Variable:
    """Pad ``array`` with ``pad_width[i] = (before, after)`` elements on each axis ``i``,
    as ``numpy.pad``.

    Args:
        array: The array.
        pad_width: An int (everywhere), a pair ``(before, after)`` (every axis), or one
            pair per axis.
        mode: ``'constant'`` (fill with ``constant_values``), ``'edge'`` (copy the edge
            element), ``'reflect'`` (mirror without repeating the edge), ``'symmetric'``
            (mirror repeating the edge) or ``'wrap'`` (continue periodically).
        constant_values: The fill value(s) of ``'constant'`` mode, as numpy takes them.
            A scalar Variable gets a gradient too.

    Raises:
        ShapeError: if ``pad_width`` does not fit, or a non-constant mode pads an empty
            axis (there is nothing to copy).

    Gradient:
        ``'constant'``: ``darray = g[interior]``, ``dconstant_values = sum(g) -
        sum(g[interior])``. Other modes: ``g[interior]`` plus each padded cell of ``g``
        added to the element it copies.
    """
    x = np.asarray(value_of(array, name="pad"))
    if mode not in _PAD_MODES:
        raise LampyValueError(f"pad: mode must be one of {_PAD_MODES}, got {mode!r}.")
    pairs = _pad_pairs(pad_width, x.ndim)
    shape = x.shape
    if mode != "constant":
        if needs_grad(constant_values) or not (
            np.ndim(constant_values) == 0 and constant_values == 0
        ):
            raise LampyValueError(
                f"pad: constant_values is only used by mode='constant', not {mode!r}."
            )
        empty = [ax for ax, (b, e) in enumerate(pairs) if shape[ax] == 0 and (b or e)]
        if empty:
            raise ShapeError(
                f"pad: mode {mode!r} cannot pad axis {empty[0]} of an array of shape {shape}: "
                "it is empty, so there is nothing to copy; use mode='constant'."
            )
    if mode != "constant" and any(b or e for b, e in pairs):
        value = np.pad(x, _as_array(pairs), mode)  # type: ignore[call-overload]
        dtype = value.dtype
        return op(
            "pad",
            value,
            param_of(
                array,
                contribution(lambda g: _fold(g, shape, pairs, mode)),
                vjp=lambda g, out: _fold_vjp(g, shape, pairs, mode, dtype),
            ),
        )
    cv = value_of(constant_values, name="pad")
    no_complex_into_real("pad", "constant_values", x, cv)
    if needs_grad(constant_values) and np.size(cv) != 1:
        raise LampyValueError(
            f"pad: constant_values of shape {np.shape(cv)} can carry a gradient only as a "
            "single value; pass a scalar Variable, or constant numpy values."
        )
    try:  # numpy.pad cannot take a 0-d array (nothing to pad: a copy)
        value = np.pad(x, _as_array(pairs), "constant", constant_values=cv) if shape else x.copy()
    except ValueError as e:
        raise ShapeError(
            f"pad: constant_values do not fit an array of shape {shape}: {e}"
        ) from None
    interior = tuple(slice(b, b + n) for (b, _), n in zip(pairs, shape, strict=True))

    def d_cv(g: np.ndarray, out: np.ndarray) -> None:
        _add(out, (g.sum() - g[interior].sum()).reshape(out.shape), out=out)

    cv_shape = np.shape(cv)
    return op(
        "pad",
        value,
        param_of(
            array,
            contribution(lambda g: g[interior], fresh=False),
            vjp=lambda g, out: g[interior],
        ),
        param_of(
            constant_values,
            d_cv,
            vjp=lambda g, out: (g.sum() - g[interior].sum()).reshape(cv_shape),
        ),
    )


__all__ = ["flip", "fliplr", "flipud", "rot90", "roll", "tile", "repeat", "pad"]
