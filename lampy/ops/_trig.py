"""Trigonometric functions and their inverses: sin, cos, tan, arcsin, arccos, arctan."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.autograd._variable import Variable, op
from lampy.ops._operands import contrib_of, param_of, value_of

_add, _subtract, _sqrt = np.add, np.subtract, np.sqrt


def sin(x: Any) -> Variable:
    """Elementwise sine (radians).

    Gradient:
        ``dx = g * cos(x)``.
    """
    a = value_of(x)
    value = np.sin(a)
    return op("sin", value, contrib_of(x, lambda g: g * np.cos(a)))


def cos(x: Any) -> Variable:
    """Elementwise cosine (radians).

    Gradient:
        ``dx = -g * sin(x)``.
    """
    a = value_of(x)
    value = np.cos(a)
    return op("cos", value, param_of(x, lambda g, out: _subtract(out, g * np.sin(a), out=out)))


def tan(x: Any) -> Variable:
    """Elementwise tangent (radians).

    Gradient:
        ``dx = g * (1 + tan(x)**2)`` (reuses the forward value).
    """
    value = np.tan(value_of(x))

    def d_x(g: np.ndarray) -> Any:
        return g * (value * value + 1)

    return op("tan", value, contrib_of(x, d_x))


def arcsin(x: Any) -> Variable:
    """Elementwise inverse sine, defined on ``[-1, 1]`` (nan outside, as numpy).

    Gradient:
        ``dx = g / sqrt((1 - x) * (1 + x))`` (``1 - x**2`` factored for accuracy near
        ±1); infinite at ``x = ±1``, nan outside the domain.
    """
    a = value_of(x)
    value = np.arcsin(a)

    def d_x(g: np.ndarray) -> Any:
        return g / _sqrt((1 - a) * (1 + a))

    return op("arcsin", value, contrib_of(x, d_x))


def arccos(x: Any) -> Variable:
    """Elementwise inverse cosine, defined on ``[-1, 1]`` (nan outside, as numpy).

    Gradient:
        ``dx = -g / sqrt((1 - x) * (1 + x))``; infinite at ``x = ±1``, nan outside the
        domain.
    """
    a = value_of(x)
    value = np.arccos(a)

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        _subtract(out, g / _sqrt((1 - a) * (1 + a)), out=out)

    return op("arccos", value, param_of(x, d_x))


def arctan(x: Any) -> Variable:
    """Elementwise inverse tangent.

    Gradient:
        ``dx = g / (1 + x**2)``.
    """
    a = value_of(x)
    value = np.arctan(a)
    return op("arctan", value, contrib_of(x, lambda g: g / (a * a + 1)))


__all__ = ["arccos", "arcsin", "arctan", "cos", "sin", "tan"]
