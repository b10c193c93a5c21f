"""Exponentials and logarithms: exp, exp2, expm1, log, log2, log10, log1p."""

from __future__ import annotations

import math

import numpy as np

from lampy.opkit import (
    Operand,
    Variable,
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

_add, _multiply, _divide = np.add, np.multiply, np.divide

# Python floats, so that float32 gradients stay float32 (numpy scalars would promote).
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def exp(x: Operand) -> Variable:
    """Elementwise ``e**x``.

    Gradient:
        ``dx = g * exp(x)`` (reuses the forward value).
    """
    value = apply_unary(np.exp, value_of(x, False, "exp"))
    return op("exp", value, contrib_with(x, times, value))


def exp2(x: Operand) -> Variable:
    """Elementwise ``2**x``.

    Gradient:
        ``dx = g * 2**x * ln(2)`` (reuses the forward value).
    """
    value = apply_unary(np.exp2, value_of(x, name="exp2"))
    return op(
        "exp2",
        value,
        contrib_of(
            x, lambda g: g * (value * _LN2), vjp=lambda g, out: g * (lifted(out, value) * _LN2)
        ),
    )


def expm1(x: Operand) -> Variable:
    """Elementwise ``exp(x) - 1``, accurate for small ``x``.

    Gradient:
        ``dx = g * exp(x) = g * (expm1(x) + 1)`` (reuses the forward value).
    """
    value = apply_unary(np.expm1, value_of(x, name="expm1"))
    return op(
        "expm1",
        value,
        contrib_of(x, lambda g: g * (value + 1), vjp=lambda g, out: g * (lifted(out, value) + 1)),
    )


def log(x: Operand) -> Variable:
    """Elementwise natural logarithm. ``log(0) = -inf`` and ``log(-1) = nan`` as in numpy.

    Gradient:
        ``dx = g / x``.
    """
    a = value_of(x, name="log")
    value = apply_unary(np.log, a)
    return op("log", value, contrib_with(x, over, a))


def log2(x: Operand) -> Variable:
    """Elementwise base-2 logarithm. ``log2(0) = -inf`` and ``log2(-1) = nan`` as in numpy.

    Gradient:
        ``dx = g / (x * ln(2))``; infinite at ``x = 0``.
    """
    a = value_of(x, name="log2")
    value = apply_unary(np.log2, a)
    n = node_of(x)
    return op(
        "log2",
        value,
        contrib_of(x, lambda g: g / (a * _LN2), vjp=lambda g, out: g / (graph_value(n, a) * _LN2)),
    )


def log10(x: Operand) -> Variable:
    """Elementwise base-10 logarithm. ``log10(0) = -inf`` and ``log10(-1) = nan`` as in numpy.

    Gradient:
        ``dx = g / (x * ln(10))``; infinite at ``x = 0``.
    """
    a = value_of(x, name="log10")
    value = apply_unary(np.log10, a)
    n = node_of(x)
    return op(
        "log10",
        value,
        contrib_of(
            x, lambda g: g / (a * _LN10), vjp=lambda g, out: g / (graph_value(n, a) * _LN10)
        ),
    )


def log1p(x: Operand) -> Variable:
    """Elementwise ``log(1 + x)``, accurate for small ``x``. ``log1p(-1) = -inf``.

    Gradient:
        ``dx = g / (1 + x)``; infinite at ``x = -1``.
    """
    a = value_of(x, name="log1p")
    value = apply_unary(np.log1p, a)
    n = node_of(x)
    return op(
        "log1p",
        value,
        contrib_of(x, lambda g: g / (a + 1), vjp=lambda g, out: g / (graph_value(n, a) + 1)),
    )


saved_vjp("exp", times, "output")
saved_vjp("log", over, "input")

__all__ = ["exp", "exp2", "expm1", "log", "log10", "log1p", "log2"]
