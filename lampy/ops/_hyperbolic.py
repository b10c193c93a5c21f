"""Hyperbolic functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.autograd._variable import Variable, op
from lampy.ops._operands import param_of, value_of

_add = np.add


def tanh(x: Any) -> Variable:
    """Elementwise hyperbolic tangent.

    Gradient:
        ``dx = g * (1 - tanh(x)**2)`` (reuses the forward value).
    """
    value = np.tanh(value_of(x))

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        _add(out, g * (1 - value * value), out=out)

    return op("tanh", value, param_of(x, d_x))


__all__ = ["tanh"]
