"""Elementwise arithmetic: add, subtract, multiply, divide, negative, power, remainder
(mod)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lampy.opkit import (
    Operand,
    Variable,
    apply_binary,
    apply_unary,
    contrib_of,
    contrib_with,
    graph_value,
    lifted,
    node_of,
    op,
    over,
    saved_vjp,
    times,
    value_of,
)
from lampy.ops._exp_log import log
from lampy.ops._where import where

_add, _subtract, _multiply, _divide = np.add, np.subtract, np.multiply, np.divide


def _same(g: Any, _: None) -> Any:
    return g


def _negated(g: Any, _: None) -> Any:
    return -g


def add(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``x1 + x2`` with numpy broadcasting.

    Gradient:
        ``dx1 = g``, ``dx2 = g`` (each summed over its broadcast axes).
    """
    _, _, value = apply_binary("add", _add, x1, x2, operator.add, False, False)
    return op(
        "add",
        value,
        contrib_with(x1, _same, None, False),  # fresh=False (positional: a cheaper call)
        contrib_with(x2, _same, None, False),
    )


def subtract(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``x1 - x2`` with numpy broadcasting.

    Gradient:
        ``dx1 = g``, ``dx2 = -g``.
    """
    _, _, value = apply_binary("subtract", _subtract, x1, x2, operator.sub, False, False)
    return op(
        "subtract",
        value,
        contrib_with(x1, _same, None, False),  # fresh=False (positional: a cheaper call)
        contrib_with(x2, _negated, None),
    )


def multiply(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``x1 * x2`` with numpy broadcasting.

    Gradient:
        ``dx1 = g * x2``, ``dx2 = g * x1``.
    """
    # each operand's value is kept by the other's param, if the other needs a gradient
    # (needs_grad(x2), needs_grad(x1), read here)
    keep1 = type(x2) is Variable and x2.node.needs_grad
    keep2 = type(x1) is Variable and x1.node.needs_grad
    a, b, value = apply_binary("multiply", _multiply, x1, x2, operator.mul, keep1, keep2)
    return op("multiply", value, contrib_with(x1, times, b), contrib_with(x2, times, a))


def divide(x1: Operand, x2: Operand) -> Variable:
    """Elementwise true division ``x1 / x2`` with numpy broadcasting.

    Gradient:
        ``dx1 = g / x2``, ``dx2 = -g * x1 / x2**2 = -g * (x1 / x2) / x2``.
    """
    _, b, value = apply_binary("divide", _divide, x1, x2, operator.truediv, False)
    n2 = node_of(x2)
    return op(
        "divide",
        value,
        contrib_with(x1, over, b),
        contrib_of(
            x2,
            lambda g: -g * value / b,
            vjp=lambda g, out: -g * lifted(out, value) / graph_value(n2, b),
        ),
    )


def negative(x: Operand) -> Variable:
    """Elementwise ``-x``.

    Gradient:
        ``dx = -g``.
    """
    a = value_of(x, name="negative")
    return op(
        "negative",
        apply_unary(np.negative, a),
        contrib_of(x, lambda g: -g, vjp=lambda g, out: -g),
    )


def power(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``x1 ** x2`` with numpy broadcasting (numpy's ``power`` rules).

    Gradient:
        ``dx1 = g * x2 * x1**(x2 - 1)``, taken as 0 where ``x2 == 0``;
        ``dx2 = g * x1**x2 * log(x1)``, taken as 0 where ``x1 == 0`` and ``x2 >= 0``
        (PyTorch's convention). A negative base gives nan for ``dx2``, as the real
        logarithm is undefined there.
    """
    a, b, value = apply_binary("power", np.power, x1, x2)

    def d_base(g: np.ndarray) -> Any:
        if type(b) is not np.ndarray and b == 2:
            return g * (2 * a)
        d = b * np.power(a, b - 1)
        if np.any(np.equal(b, 0)):
            d = np.where(b == 0, 0, d)
        return g * d

    def d_exponent(g: np.ndarray) -> Any:
        # log in the value's dtype: numpy's log of a small int or bool base is float16
        d = value * np.log(a, dtype=value.dtype)
        zero_base = np.equal(a, 0)
        if np.any(zero_base):
            d = np.where(zero_base & (np.asarray(b) >= 0), 0, d)
        return g * d

    n1, n2 = node_of(x1), node_of(x2)

    def vjp_base(g: Any, out: Any) -> Any:
        base, exponent = graph_value(n1, a), graph_value(n2, b)
        if n2 is None and type(b) is not np.ndarray and b == 2:
            return g * (base * 2)
        d = exponent * base ** (exponent - 1)
        if np.any(np.equal(b, 0)):
            d = _where_zero(np.equal(b, 0), d)
        return g * d

    def vjp_exponent(g: Any, out: Any) -> Any:
        d = lifted(out, value) * log(graph_value(n1, a))
        zero_base = np.equal(a, 0)
        if np.any(zero_base):
            d = _where_zero(zero_base & (np.asarray(b) >= 0), d)
        return g * d

    return op(
        "power",
        value,
        contrib_of(x1, d_base, vjp=vjp_base),
        contrib_of(x2, d_exponent, vjp=vjp_exponent),
    )


def remainder(x1: Operand, x2: Operand) -> Variable:
    """Elementwise remainder of the floor division, ``x1 - floor(x1 / x2) * x2``, with
    the sign of ``x2`` and numpy broadcasting, as ``numpy.remainder`` (Python's ``%``).

    ``x2 = 0`` gives nan, with numpy's RuntimeWarning.

    Gradient:
        ``dx1 = g``, ``dx2 = -g * q`` with ``q = floor_divide(x1, x2)``, numpy's quotient
        (the one that makes ``x1 = q * x2 + remainder``; PyTorch's formula). At the
        jumps, where ``x1 / x2`` is an integer, that quotient is the integer itself (the
        value is 0 there), so ``dx2`` is the derivative from the side where the
        remainder grows from 0.
    """
    a, b, value = apply_binary("remainder", np.remainder, x1, x2)
    return op(
        "remainder",
        value,
        contrib_of(x1, lambda g: g, fresh=False, vjp=lambda g, out: g),
        contrib_of(
            x2,
            lambda g: -(g * np.floor_divide(a, b)),
            vjp=lambda g, out: g * -np.floor_divide(a, b),  # a constant factor
        ),
    )


mod = remainder
"""Alias of :func:`remainder`, as :func:`numpy.mod`."""


def _where_zero(mask: Any, d: Any) -> Any:
    """``d`` with 0 where ``mask`` (a constant) holds: ``d * (1 - mask)`` would give nan
    for an infinite ``d``."""
    return where(mask, 0.0, d)


saved_vjp("add", _same, "none")
saved_vjp("subtract", _same, "none")
saved_vjp("subtract", _negated, "none")
saved_vjp("multiply", times, "other")
saved_vjp("divide", over, "other")

__all__ = ["add", "divide", "mod", "multiply", "negative", "power", "remainder", "subtract"]
