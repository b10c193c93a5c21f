"""The one axis checker: ``axis`` arguments as non-negative ints, or a lampy error naming
the op.

Every op that takes an ``axis`` (or PyTorch's ``dim``) reads it through these, so the
same argument is accepted, and the same mistake refused with the same message,
everywhere: a float, a string, a bool or an array is a ``LampyTypeError``, an axis out of
bounds or given twice a ``ShapeError``.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np

from lampy._errors import LampyTypeError, ShapeError

Axis: TypeAlias = "int | tuple[int, ...] | None"
"""What an ``axis`` argument may be: None (every axis), an int, or a tuple of ints
(negatives count from the end, as in numpy)."""

_INTS = (int, np.integer)


def _out_of_bounds(name: str, what: str, ax: Any, ndim: int) -> ShapeError:
    return ShapeError(
        f"{name}: {what} {ax} is out of bounds for an array of {ndim} dimensions "
        f"(valid axes are {-ndim} to {ndim - 1})."
    )


def normalize_axis(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints, negatives allowed) as a sorted tuple of
    distinct non-negative axes below ``ndim``; None is every axis.

    Raises:
        LampyTypeError: ``axis`` is not None, an int or a tuple (or list) of ints.
        ShapeError: an axis is out of bounds, or repeated.
    """
    if axis is None:
        return tuple(range(ndim))
    bad = LampyTypeError(f"{name}: axis must be None, an int or a tuple of ints, got {axis!r}")
    if isinstance(axis, _INTS):
        axes: tuple[Any, ...] = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise bad
    result = []
    for ax in axes:
        if not isinstance(ax, _INTS) or isinstance(ax, bool):
            raise bad
        if not -ndim <= ax < ndim:
            raise _out_of_bounds(name, "axis", ax, ndim)
        result.append(int(ax) % ndim)
    if len(set(result)) != len(result):
        raise ShapeError(f"{name}: axis {axis!r} repeats an axis.")
    return tuple(sorted(result))


def one_axis(name: str, axis: Any, ndim: int, what: str = "axis") -> int:
    """``axis`` (one int, negatives allowed) as a non-negative int below ``ndim``.

    ``what`` names the argument in messages (``"axis1"``, ``"dim"``...).

    Raises:
        LampyTypeError: ``axis`` is not an int.
        ShapeError: ``axis`` is out of bounds.
    """
    if isinstance(axis, bool) or not isinstance(axis, _INTS):
        raise LampyTypeError(f"{name}: {what} must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise _out_of_bounds(name, what, axis, ndim)
    return int(axis) % ndim


def single_axis(name: str, axis: Any, ndim: int) -> int | None:
    """``axis`` (None or one int, negatives allowed) as None or a non-negative int.

    As in numpy, a 0-d array accepts axis 0 and -1 (it is treated as 1-d).

    Raises:
        LampyTypeError: ``axis`` is neither None nor an int.
        ShapeError: ``axis`` is out of bounds.
    """
    if axis is None:
        return None
    if not isinstance(axis, _INTS) or isinstance(axis, bool):
        raise LampyTypeError(
            f"{name}: axis must be None or an int (this op works along one axis), got {axis!r}"
        )
    return one_axis(name, axis, max(ndim, 1))


def expand_reduced(g: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """Put the reduced axes back into ``g`` as length-1 axes, so it broadcasts to the input."""
    if keepdims or not axes:
        return g
    return np.expand_dims(g, axes)
