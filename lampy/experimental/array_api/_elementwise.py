"""Elementwise ops over any array namespace: add, subtract, multiply, divide, negative,
exp, log, sqrt, tanh.

Each op reads its operands with ``operands`` (one namespace, one device), computes its
value with that namespace's functions or the standard's operators, and pairs each input
with a contribution returning its gradient in its own shape (``sum_to`` undoes
broadcasting). A module-level rule with one saved value (``contrib_with``) where it
fits, a closure (``contrib_of``) where it needs two.
"""

from __future__ import annotations

from typing import Any

from lampy.experimental.array_api._operands import operands, shape_of, sum_to
from lampy.opkit import Variable, contrib_of, contrib_with, namespace_op

Operand = Any
"""A Variable, an array of an array API namespace, or a Python number."""


def add(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``x1 + x2`` with broadcasting.

    Gradient:
        ``dx1 = g``, ``dx2 = g``, each summed over its broadcast axes.
    """
    _, (a, b) = operands("add", x1, x2, keep=False)
    value = a + b
    return namespace_op(
        "add",
        value,
        contrib_with(x1, sum_to, shape_of(a), False),  # may be g itself: not fresh
        contrib_with(x2, sum_to, shape_of(b), False),
    )


def subtract(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``x1 - x2`` with broadcasting.

    Gradient:
        ``dx1 = g``, ``dx2 = -g``, each summed over its broadcast axes.
    """
    _, (a, b) = operands("subtract", x1, x2, keep=False)
    value = a - b
    return namespace_op(
        "subtract",
        value,
        contrib_with(x1, sum_to, shape_of(a), False),
        contrib_with(x2, _negated_sum_to, shape_of(b)),
    )


def _negated_sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    return -sum_to(g, shape)


def multiply(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``x1 * x2`` with broadcasting.

    Gradient:
        ``dx1 = g * x2``, ``dx2 = g * x1``, each summed over its broadcast axes.
    """
    _, (a, b) = operands("multiply", x1, x2)
    value = a * b
    sa, sb = shape_of(a), shape_of(b)
    return namespace_op(
        "multiply",
        value,
        contrib_of(x1, lambda g: sum_to(g * b, sa)),
        contrib_of(x2, lambda g: sum_to(g * a, sb)),
    )


def divide(x1: Operand, x2: Operand) -> Variable:
    """Elementwise true division ``x1 / x2`` with broadcasting.

    Gradient:
        ``dx1 = g / x2``, ``dx2 = -g * (x1 / x2) / x2``, each summed over its broadcast
        axes.
    """
    _, (a, b) = operands("divide", x1, x2)
    value = a / b
    sa, sb = shape_of(a), shape_of(b)
    return namespace_op(
        "divide",
        value,
        contrib_of(x1, lambda g: sum_to(g / b, sa)),
        contrib_of(x2, lambda g: sum_to(-g * value / b, sb)),
    )


def negative(x: Operand) -> Variable:
    """Elementwise ``-x``.

    Gradient:
        ``dx = -g``.
    """
    _, (a,) = operands("negative", x, keep=False)
    return namespace_op("negative", -a, contrib_with(x, _negated, None))


def _negated(g: Any, _: None) -> Any:
    return -g


def exp(x: Operand) -> Variable:
    """Elementwise ``e**x``.

    Gradient:
        ``dx = g * exp(x)`` (the forward value, saved).
    """
    xp, (a,) = operands("exp", x, keep=False)
    value = xp.exp(a)
    return namespace_op("exp", value, contrib_with(x, _times, value))


def log(x: Operand) -> Variable:
    """Elementwise natural logarithm.

    Gradient:
        ``dx = g / x``.
    """
    xp, (a,) = operands("log", x)
    return namespace_op("log", xp.log(a), contrib_with(x, _over, a))


def sqrt(x: Operand) -> Variable:
    """Elementwise square root.

    Gradient:
        ``dx = g / (2 * sqrt(x))`` (the forward value, saved).
    """
    xp, (a,) = operands("sqrt", x, keep=False)
    value = xp.sqrt(a)
    return namespace_op("sqrt", value, contrib_with(x, _d_sqrt, value))


def tanh(x: Operand) -> Variable:
    """Elementwise hyperbolic tangent.

    Gradient:
        ``dx = g * (1 - tanh(x)**2)`` (the forward value, saved).
    """
    xp, (a,) = operands("tanh", x, keep=False)
    value = xp.tanh(a)
    return namespace_op("tanh", value, contrib_with(x, _d_tanh, value))


def _times(g: Any, c: Any) -> Any:
    return g * c


def _over(g: Any, c: Any) -> Any:
    return g / c


def _d_sqrt(g: Any, s: Any) -> Any:
    return g / (2 * s)


def _d_tanh(g: Any, t: Any) -> Any:
    return g * (1 - t * t)


__all__ = [
    "Operand",
    "add",
    "divide",
    "exp",
    "log",
    "multiply",
    "negative",
    "sqrt",
    "subtract",
    "tanh",
]
