"""Hyperbolic functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.autograd._variable import Variable, op
from lampy.ops._operands import param_of, value_of

_add, _multiply, _subtract = np.add, np.multiply, np.subtract


def tanh(x: Any) -> Variable:
    """Elementwise hyperbolic tangent.

    Gradient:
        ``dx = g * (1 - tanh(x)**2)`` (reuses the forward value).
    """
    value = np.tanh(value_of(x))

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        t = g * value
        _multiply(t, value, out=t)
        _subtract(g, t, out=t)
        _add(out, t, out=out)

    return op("tanh", value, param_of(x, d_x))


__all__ = ["tanh"]
