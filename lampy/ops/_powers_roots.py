"""Powers and roots of one argument: sqrt, cbrt, square, reciprocal."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import (
    Operand,
    Variable,
    apply_unary,
    contrib_of,
    graph_value,
    lifted,
    node_of,
    op,
    param_of,
    value_of,
)

_add, _subtract, _divide = np.add, np.subtract, np.divide


def sqrt(x: Operand) -> Variable:
    """Elementwise non-negative square root; ``sqrt(-1) = nan`` as in numpy.

    Gradient:
        ``dx = g / (2 * sqrt(x))`` (reuses the forward value); ``inf`` at ``x = 0``
        (for ``g > 0``), as numpy's ``1 / 0``; nan for ``x < 0``.
    """
    value = apply_unary(np.sqrt, value_of(x, name="sqrt"))
    return op(
        "sqrt",
        value,
        contrib_of(x, lambda g: g / (value * 2), vjp=lambda g, out: g / (lifted(out, value) * 2)),
    )


def cbrt(x: Operand) -> Variable:
    """Elementwise real cube root (negative for negative ``x``).

    Gradient:
        ``dx = g / (3 * cbrt(x)**2)`` (reuses the forward value); infinite at ``x = 0``.
    """
    value = apply_unary(np.cbrt, value_of(x, name="cbrt"))

    def d_x(g: np.ndarray) -> Any:
        return g / (value * value * 3)

    def vjp(g: Any, out: Any) -> Any:
        y = lifted(out, value)
        return g / (y * y * 3)

    return op("cbrt", value, contrib_of(x, d_x, vjp=vjp))


def square(x: Operand) -> Variable:
    """Elementwise ``x * x``.

    Gradient:
        ``dx = 2 * g * x``.
    """
    a = value_of(x, name="square")
    value = apply_unary(np.square, a)
    n = node_of(x)
    return op(
        "square",
        value,
        contrib_of(x, lambda g: g * (a * 2), vjp=lambda g, out: g * (graph_value(n, a) * 2)),
    )


def reciprocal(x: Operand) -> Variable:
    """Elementwise ``1 / x`` (numpy's: integer inputs give integer results).

    Gradient:
        ``dx = -g / x**2 = -g * reciprocal(x)**2`` (reuses the forward value); infinite
        at ``x = 0``.
    """
    value = apply_unary(np.reciprocal, value_of(x, name="reciprocal"))

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        _subtract(out, g * (value * value), out=out)

    def vjp(g: Any, out: Any) -> Any:
        y = lifted(out, value)
        return -g * (y * y)

    return op("reciprocal", value, param_of(x, d_x, vjp=vjp))


__all__ = ["cbrt", "reciprocal", "sqrt", "square"]
