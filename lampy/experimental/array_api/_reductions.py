"""Reductions over any array namespace: sum, mean, max, logsumexp.

Each takes numpy's ``axis`` (None, an int or a tuple of ints; checked by
``lampy.opkit.normalize_axis``) and ``keepdims``, and gives its gradient back over the
input's shape in the input's namespace.
"""

from __future__ import annotations

from typing import Any

from lampy.experimental.array_api._operands import (
    count,
    operands,
    reduced_shape,
    shape_of,
    spread,
)
from lampy.opkit import Axis, Variable, contrib_of, contrib_with, namespace_op, normalize_axis

Operand = Any


def _axes(name: str, axis: Axis, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(range(len(shape))) if axis is None else normalize_axis(name, axis, len(shape))


def _without(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def sum(x: Operand, axis: Axis = None, *, keepdims: bool = False) -> Variable:
    """Sum of elements over ``axis``.

    Gradient:
        ``dx = g`` broadcast back over the reduced axes.
    """
    xp, (a,) = operands("sum", x, keep=False)
    shape = shape_of(a)
    axes = _axes("sum", axis, shape)
    value = xp.sum(a, axis=axes, keepdims=keepdims)
    return namespace_op(
        "sum", value, contrib_with(x, spread, (reduced_shape(shape, axes), shape), False)
    )


def mean(x: Operand, axis: Axis = None, *, keepdims: bool = False) -> Variable:
    """Arithmetic mean of elements over ``axis``.

    Gradient:
        ``dx = g / n`` broadcast back over the reduced axes, ``n`` the count averaged.
    """
    xp, (a,) = operands("mean", x, keep=False)
    shape = shape_of(a)
    axes = _axes("mean", axis, shape)
    value = xp.mean(a, axis=axes, keepdims=keepdims)
    kept, n = reduced_shape(shape, axes), count(shape, axes)
    return namespace_op("mean", value, contrib_of(x, lambda g: spread(g, (kept, shape)) / n))


def max(x: Operand, axis: Axis = None, *, keepdims: bool = False) -> Variable:
    """Maximum of elements over ``axis``.

    Gradient:
        ``dx = g / k`` at the ``k`` elements equal to the maximum of their slice (ties
        share it, as ``lampy.max`` and PyTorch's ``amax``), 0 elsewhere; a slice holding a
        nan (its maximum) shares ``g`` among its nan entries.
    """
    xp, (a,) = operands("max", x)
    shape = shape_of(a)
    axes = _axes("max", axis, shape)
    top = xp.max(a, axis=axes, keepdims=True)
    value = top if keepdims else xp.reshape(top, _without(shape, axes))
    kept = reduced_shape(shape, axes)

    def d_x(g: Any) -> Any:
        hit = xp.astype((a == top) | xp.isnan(a), a.dtype)
        ties = xp.sum(hit, axis=axes, keepdims=True)
        return hit * (xp.reshape(g, kept) / ties)

    return namespace_op("max", value, contrib_of(x, d_x))


def logsumexp(x: Operand, axis: Axis = None, *, keepdims: bool = False) -> Variable:
    """``log(sum(exp(x)))`` over ``axis``, with the slice's maximum subtracted before
    exponentiating (so large inputs do not overflow), as ``lampy.logsumexp``.

    Gradient:
        ``dx = g * exp(x - logsumexp(x))``, the softmax of the slice (reusing the forward
        exponentials).
    """
    xp, (a,) = operands("logsumexp", x, keep=False)
    shape = shape_of(a)
    axes = _axes("logsumexp", axis, shape)
    m = xp.max(a, axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0.0)
    e = xp.exp(a - m)
    s = xp.sum(e, axis=axes, keepdims=True)
    value_kd = xp.log(s) + m
    value = value_kd if keepdims else xp.reshape(value_kd, _without(shape, axes))
    kept = reduced_shape(shape, axes)
    return namespace_op("logsumexp", value, contrib_of(x, lambda g: e * (xp.reshape(g, kept) / s)))


__all__ = ["logsumexp", "max", "mean", "sum"]
