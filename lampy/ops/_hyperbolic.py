"""Hyperbolic functions and their inverses: sinh, cosh, tanh, arcsinh, arccosh, arctanh."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import (
    Operand,
    Variable,
    apply_unary,
    contrib_of,
    contrib_with,
    graph_value,
    node_of,
    op,
    saved_vjp,
    value_of,
)

_add, _multiply, _subtract, _sqrt = np.add, np.multiply, np.subtract, np.sqrt


def sinh(x: Operand) -> Variable:
    """Elementwise hyperbolic sine.

    Gradient:
        ``dx = g * cosh(x)``.
    """
    a = value_of(x, name="sinh")
    value = apply_unary(np.sinh, a)
    n = node_of(x)
    return op(
        "sinh",
        value,
        contrib_of(x, lambda g: g * np.cosh(a), vjp=lambda g, out: g * cosh(graph_value(n, a))),
    )


def cosh(x: Operand) -> Variable:
    """Elementwise hyperbolic cosine.

    Gradient:
        ``dx = g * sinh(x)``.
    """
    a = value_of(x, name="cosh")
    value = apply_unary(np.cosh, a)
    n = node_of(x)
    return op(
        "cosh",
        value,
        contrib_of(x, lambda g: g * np.sinh(a), vjp=lambda g, out: g * sinh(graph_value(n, a))),
    )


def tanh(x: Operand) -> Variable:
    """Elementwise hyperbolic tangent.

    Gradient:
        ``dx = g * (1 - tanh(x)**2)`` (reuses the forward value).
    """
    value = apply_unary(np.tanh, value_of(x, False, "tanh"))  # backward keeps only the output
    return op("tanh", value, contrib_with(x, _d_tanh, value))


def _d_tanh(g: Any, y: Any) -> Any:
    """tanh's contribution ``g * (1 - y**2)`` given its value ``y``."""
    if y.size < 256:  # temporaries cost less than numpy's in-place loops here (and a
        return g * (1 - y * y)  # third of them on one element, where out= aliases)
    d = _multiply(y, y)  # one temporary, updated in place
    _subtract(1, d, out=d)
    d *= g
    return d


def arcsinh(x: Operand) -> Variable:
    """Elementwise inverse hyperbolic sine.

    Gradient:
        ``dx = g / sqrt(x**2 + 1)``.
    """
    a = value_of(x, name="arcsinh")
    value = apply_unary(np.arcsinh, a)
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * (xv * xv + 1) ** -0.5

    return op("arcsinh", value, contrib_of(x, lambda g: g / _sqrt(a * a + 1), vjp=vjp))


def arccosh(x: Operand) -> Variable:
    """Elementwise inverse hyperbolic cosine, defined for ``x >= 1`` (nan below, as numpy).

    Gradient:
        ``dx = g / sqrt((x - 1) * (x + 1))`` (factored for accuracy near 1); infinite at
        ``x = 1``, nan for ``x < 1``. For complex ``z``, ``g / (sqrt(z - 1) sqrt(z + 1))``
        (conjugated), whose branch cuts are those of numpy's ``arccosh``.
    """
    a = value_of(x, name="arccosh")
    value = apply_unary(np.arccosh, a)

    if np.iscomplexobj(a):  # sqrt(z - 1) sqrt(z + 1): sqrt(z**2 - 1) has other branch cuts

        def d_x(g: np.ndarray) -> Any:
            return g / (_sqrt(a - 1) * _sqrt(a + 1))
    else:

        def d_x(g: np.ndarray) -> Any:
            return g / _sqrt((a - 1) * (a + 1))

    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * (xv - 1) ** -0.5 * (xv + 1) ** -0.5

    return op("arccosh", value, contrib_of(x, d_x, vjp=vjp))


def arctanh(x: Operand) -> Variable:
    """Elementwise inverse hyperbolic tangent, defined on ``[-1, 1]`` (``±inf`` at ``±1``).

    Gradient:
        ``dx = g / ((1 - x) * (1 + x))`` (``1 - x**2`` factored for accuracy near ±1);
        infinite at ``x = ±1``.
    """
    a = value_of(x, name="arctanh")
    value = apply_unary(np.arctanh, a)

    def d_x(g: np.ndarray) -> Any:
        return g / ((1 - a) * (1 + a))

    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g / ((1 - xv) * (1 + xv))

    return op("arctanh", value, contrib_of(x, d_x, vjp=vjp))


saved_vjp("tanh", _d_tanh, "output", lambda g, y: g * (1 - y * y))

__all__ = ["arccosh", "arcsinh", "arctanh", "cosh", "sinh", "tanh"]
