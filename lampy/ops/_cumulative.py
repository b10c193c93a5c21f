"""Cumulative reductions along one axis: cumsum, cumprod.

``axis=None`` works on the flattened array (the result is 1-d), as numpy; a 0-d input
is treated as 1-d.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    graph_value,
    lifted,
    node_of,
    op,
    single_axis,
    value_of,
)
from lampy.ops._pad import flip
from lampy.ops._reductions import check_float_dtype
from lampy.ops._shape import reshape
from lampy.ops._torch_names import axis_or_dim
from lampy.ops._where import where

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


_add, _flip, _cumsum, _where = np.add, np.flip, np.cumsum, np.where


def reverse_cumsum(g: np.ndarray, axis: int) -> np.ndarray:
    """``out[i] = sum(g[i:])`` along ``axis``: the adjoint of ``cumsum``."""
    return _flip(_cumsum(_flip(g, axis), axis=axis), axis)


def cumsum(
    a: Operand, axis: int | None = None, dtype: DTypeLike | None = None, *, dim: int | None = None
) -> Variable:
    """Cumulative sum along ``axis`` (None: over the flattened array), as ``numpy.cumsum``.

    PyTorch's ``dim`` is accepted for ``axis``.

    Gradient:
        ``da_i = sum_{k >= i} g_k`` along the axis (a reversed cumulative sum).
    """
    axis = axis_or_dim("cumsum", axis, dim)
    x = value_of(a, name="cumsum")
    check_float_dtype("cumsum", dtype, a)
    shape = np.shape(x)
    ax = single_axis("cumsum", axis, len(shape))
    value = np.cumsum(x, axis=ax, dtype=dtype)
    flat = ax is None or not shape  # the value is 1-d, along axis 0

    def d_a(g: np.ndarray) -> Any:
        d = reverse_cumsum(g, 0 if flat or ax is None else ax)
        return d.reshape(shape) if flat else d

    def vjp(g: Any, out: Any) -> Any:
        d = _reverse_cumsum(g, 0 if flat or ax is None else ax)
        return reshape(d, shape) if flat else d

    return op("cumsum", value, contrib_of(a, d_a, vjp=vjp))


def _reverse_cumsum(g: Any, axis: int) -> Any:
    """``reverse_cumsum`` with lampy ops (for vjps)."""
    return flip(cumsum(flip(g, axis), axis=axis), axis)


def cumprod(
    a: Operand, axis: int | None = None, dtype: DTypeLike | None = None, *, dim: int | None = None
) -> Variable:
    """Cumulative product along ``axis`` (None: over the flattened array), as ``numpy.cumprod``.

    PyTorch's ``dim`` is accepted for ``axis``.

    Gradient:
        With ``y = cumprod(a)``: ``da_i = sum_{k >= i} g_k * prod_{j <= k, j != i} a_j``,
        exact with zeros present and with no division by zero. Before the first zero of
        a slice it is ``reverse_cumsum(g * y)_i / a_i``; at the first zero it is
        ``reverse_cumsum(g * cumprod(a'))_i``, ``a'`` being ``a`` with that zero replaced
        by 1; after it, 0 (every product contains the zero). Same approach as PyTorch's
        ``cumprod_backward``.
    """
    axis = axis_or_dim("cumprod", axis, dim)
    x = value_of(a, name="cumprod")
    check_float_dtype("cumprod", dtype, a)
    shape = np.shape(x)
    ax = single_axis("cumprod", axis, len(shape))
    value = np.cumprod(x, axis=ax, dtype=dtype)
    flat = ax is None or not shape
    k: int = 0 if flat or ax is None else ax

    def d_a(g: np.ndarray) -> Any:
        xv = np.asarray(x, dtype=value.dtype).reshape(value.shape)
        d = cumprod_grad(g, xv, value, k)
        return d.reshape(shape) if flat else d

    n = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        xv = reshape(graph_value(n, x), value.shape)
        d = _cumprod_vjp(g, xv, np.asarray(x).reshape(value.shape), lifted(out, value), k)
        return reshape(d, shape) if flat else d

    return op("cumprod", value, contrib_of(a, d_a, vjp=vjp))


def cumprod_grad(g: Any, xv: Any, value: Any, k: int) -> Any:
    """``cumprod``'s gradient along axis ``k`` at ``xv`` (of the value's shape), whose
    cumulative product is ``value``: exact with zeros, no division by zero."""
    after = reverse_cumsum(g * value, k)
    zeros = xv == 0
    if not zeros.any():
        return after / xv
    seen = _cumsum(zeros, axis=k)  # zeros up to and including each position
    first = zeros & (seen == 1)
    before = seen == 0
    at_first = reverse_cumsum(g * np.cumprod(_where(first, 1, xv), axis=k), k)
    return _where(before, after / _where(zeros, 1, xv), _where(first, at_first, 0))


def _cumprod_vjp(g: Any, xv: Any, x: np.ndarray, value: Any, k: int) -> Any:
    """``cumprod_grad`` with lampy ops (``xv`` and ``value`` in the graph, ``x`` the
    numpy value of ``xv``), for vjps; the masks of zeros are constants.

    Where ``cumprod_grad`` gives 0 after the first zero ``x_z`` of a slice, this gives 0
    written so that its derivative in ``x_z`` is kept: ``x_z * at_first_i / x_i`` at a
    non-zero ``x_i``, and at the second zero ``x_z`` times the gradient it would have
    with both zeros replaced by 1. So second derivatives are exact with any zeros."""
    after = _reverse_cumsum(g * value, k)
    zeros = x == 0
    if not zeros.any():
        return after / xv
    seen = _cumsum(zeros, axis=k)
    first = zeros & (seen == 1)
    before = seen == 0
    safe = where(zeros, 1.0, xv)
    at_first = _reverse_cumsum(g * cumprod(where(first, 1.0, xv), axis=k), k)
    x_first = (xv * first).sum(axis=k, keepdims=True)  # the first zero, in the graph
    at_zeros: Any = 0.0
    second = zeros & (seen == 2)
    if second.any():
        at_second = _reverse_cumsum(g * cumprod(where(first | second, 1.0, xv), axis=k), k)
        at_zeros = where(second, x_first * at_second, 0.0)
    later = where(zeros, at_zeros, x_first * at_first / safe)
    return where(before, after / safe, where(first, at_first, later))


__all__ = ["cumprod", "cumsum"]
