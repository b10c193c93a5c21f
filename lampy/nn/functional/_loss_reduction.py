"""What the losses share: the reduction of an elementwise loss into one op
(``reduced``), the checks of ``reduction`` and of pointwise operands, and the pieces of
their differentiable backward rules (vjps) that bring saved values back into the graph
without keeping more than the first-order closures keep."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lampy._errors import LampyValueError
from lampy.nn.functional._activations import log_softmax
from lampy.nn.functional._shared import zero_tangent
from lampy.opkit import Variable, broadcast_error, contrib_of, lifted, op, values_of
from lampy.ops import moveaxis, reshape

__all__ = [
    "REDUCTIONS",
    "Deriv",
    "check_reduction",
    "graph_log_probs",
    "pointwise_operands",
    "reduced",
    "times_deriv",
    "zero_tangent",
]

REDUCTIONS = ("mean", "sum", "none")
# The ufunc's reduction, without the Python layer of ndarray.sum.
_add_reduce = np.add.reduce
Deriv = Callable[[Any], Any]


def times_deriv(d: Callable[[], Any]) -> Deriv:
    """The Deriv ``c -> d() * c`` of a function giving an elementwise derivative."""
    return lambda c: d() * c


def check_reduction(name: str, reduction: str, allowed: tuple[str, ...] = REDUCTIONS) -> None:
    if reduction not in allowed:
        raise LampyValueError(
            f"{name}: reduction must be one of {', '.join(map(repr, allowed))}, got {reduction!r}."
        )


def reduced(
    name: str,
    loss: np.ndarray,
    reduction: str,
    n: Any,
    pairs: list[tuple[Any, Deriv]],
    classes_of: np.ndarray | None = None,
    vjps: Sequence[Deriv] | None = None,
    keeps: Sequence[np.ndarray | None] | None = None,
) -> Variable:
    """Reduce the elementwise ``loss`` and record the op.

    ``n`` is the divisor of ``"mean"``; each pair is an input and a function giving its
    elementwise derivative (``d loss / d input``, the shape of ``loss``), run in backward.
    With ``classes_of`` (the input of a class loss), derivatives are given with the class
    axis last, of shape ``loss.shape + (C,)``, and moved back to ``classes_of``'s layout.
    ``vjps``, one per pair, are the same functions written with lampy ops (the
    cotangent a Variable or a constant, saved operands brought into the graph): the
    differentiable backward rules. ``keeps``, if given, declares every array the
    derivative functions keep (``lampy.op``'s ``keeps``; ``classes_of`` is added here).
    """
    if keeps is not None:
        keeps = (*keeps, classes_of)
    dtype = loss.dtype
    if reduction == "none":
        value, scale = loss, None
    else:
        # numpy scalars of the loss's dtype: the arithmetic is numpy's, in that dtype.
        divisor = dtype.type(n if reduction == "mean" else 1)
        total = _add_reduce(loss, axis=None, dtype=dtype)
        if divisor != 0:
            scale = 1 / divisor
            value = np.asarray(total / divisor, dtype=dtype)
        else:
            # A mean over nothing (every target ignored) is nan, as in PyTorch, but its
            # gradient is 0, not 0 * inf: no element took part.
            scale = dtype.type(0)
            with np.errstate(divide="ignore", invalid="ignore"):
                value = np.asarray(total / divisor, dtype=dtype)

    def contribution(d: Deriv) -> Callable[[np.ndarray], Any]:
        def fn(g: np.ndarray) -> Any:
            if scale is not None:
                grad = d(g * scale)
            elif classes_of is None:
                grad = d(g)
            else:
                grad = d(g[..., None])
            if classes_of is not None and classes_of.ndim > 2:  # classes back on axis 1
                grad = np.moveaxis(grad, -1, 1)
            return grad

        return fn

    def recorded(dv: Deriv) -> Callable[[Any, Any], Any]:
        def vjp(g: Any, out: Any) -> Any:
            if scale is not None:
                c = g * scale
            elif classes_of is None:
                c = g
            else:
                c = reshape(g, (*np.shape(g), 1))
            grad = dv(c)
            if classes_of is not None and classes_of.ndim > 2:
                grad = moveaxis(grad, -1, 1)
            return grad

        return vjp

    if vjps is None:
        return op(name, value, *[contrib_of(x, contribution(d)) for x, d in pairs], keeps=keeps)
    return op(
        name,
        value,
        *[
            contrib_of(x, contribution(d), vjp=recorded(dv))
            for (x, d), dv in zip(pairs, vjps, strict=True)
        ],
        keeps=keeps,
    )


def pointwise_operands(name: str, input: Any, target: Any, reduction: str) -> tuple[Any, Any]:
    check_reduction(name, reduction)
    a, b = values_of(input, target, name=name)
    try:
        np.broadcast_shapes(np.shape(a), np.shape(b))
    except ValueError:
        raise broadcast_error(name, a, b) from None
    return np.asarray(a), np.asarray(b)


def graph_log_probs(node: Any, logp: np.ndarray, c_axis: int) -> Any:
    """``log_softmax(x)`` along the classes as a Variable of the graph of ``x`` (whose
    node is ``node``; ``logp``, the constant itself, when ``node`` is None), from the
    saved ``logp = log_softmax(x)`` with the classes on the last axis; the result has
    the classes last too.

    ``log_softmax`` is shift-invariant along the classes and its derivatives depend on
    ``x`` only through its value, so ``log_softmax(logp)`` (computed on ``logp``, which
    differs from ``x`` by a per-sample constant, lifted onto ``x``'s node) has ``logp``'s
    value and every derivative of ``log_softmax(x)``, without keeping ``x``.
    """
    if node is None:
        return logp
    z = lifted(node, np.moveaxis(logp, -1, c_axis))
    return moveaxis(log_softmax(z, c_axis), c_axis, -1)
