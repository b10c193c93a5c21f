"""Reductions: sum, mean."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import ShapeError
from lampy.autograd._variable import Variable, op
from lampy.ops._operands import param_of, value_of

_add = np.add


def normalize_axis(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple, negatives allowed) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    result = []
    for ax in axes:
        if not isinstance(ax, (int, np.integer)) or isinstance(ax, bool):
            raise TypeError(f"{name}: axis must be None, an int or a tuple of ints, got {axis!r}")
        if not -ndim <= ax < ndim:
            raise ShapeError(
                f"{name}: axis {ax} is out of bounds for an array of {ndim} dimensions "
                f"(valid axes are {-ndim} to {ndim - 1})."
            )
        result.append(int(ax) % ndim)
    if len(set(result)) != len(result):
        raise ShapeError(f"{name}: axis {axis!r} repeats an axis.")
    return tuple(sorted(result))


def _expand(g: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """Put the reduced axes back into ``g`` as length-1 axes, so it broadcasts to the input."""
    if keepdims or not axes:
        return g
    return np.expand_dims(g, axes)


def _check_dtype(name: str, dtype: Any) -> None:
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError(
            f"{name}: dtype={np.dtype(dtype)} would truncate; lampy reductions take a float "
            "dtype (or None)."
        )


def sum(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Variable:
    """Sum of elements over ``axis`` (None: all; an int or a tuple; negatives allowed).

    Gradient:
        ``dx = g`` broadcast back over the summed axes.
    """
    a = value_of(x)
    _check_dtype("sum", dtype)
    axes = normalize_axis("sum", axis, np.ndim(a))
    value = np.sum(a, axis=axes, dtype=dtype, keepdims=keepdims)

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        _add(out, _expand(g, axes, keepdims), out=out)

    return op("sum", value, param_of(x, d_x))


def mean(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Variable:
    """Arithmetic mean over ``axis``. The mean of an empty selection is nan, as in numpy.

    Gradient:
        ``dx = g / n`` broadcast back over the reduced axes, ``n`` the number of
        elements averaged.
    """
    a = value_of(x)
    _check_dtype("mean", dtype)
    shape = np.shape(a)
    axes = normalize_axis("mean", axis, len(shape))
    value = np.mean(a, axis=axes, dtype=dtype, keepdims=keepdims)
    n = 1
    for ax in axes:
        n *= shape[ax]

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        _add(out, _expand(g, axes, keepdims) / n, out=out)

    return op("mean", value, param_of(x, d_x))


__all__ = ["mean", "normalize_axis", "sum"]
