"""Exponentials and logarithms."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.autograd._variable import Variable, op
from lampy.ops._operands import param_of, value_of

_add, _multiply, _divide = np.add, np.multiply, np.divide


def exp(x: Any) -> Variable:
    """Elementwise ``e**x``.

    Gradient:
        ``dx = g * exp(x)`` (reuses the forward value).
    """
    value = np.exp(value_of(x))
    return op("exp", value, param_of(x, lambda g, out: _add(out, g * value, out=out)))


def log(x: Any) -> Variable:
    """Elementwise natural logarithm. ``log(0) = -inf`` and ``log(-1) = nan`` as in numpy.

    Gradient:
        ``dx = g / x``.
    """
    a = value_of(x)
    value = np.log(a)
    return op("log", value, param_of(x, lambda g, out: _add(out, _divide(g, a), out=out)))


__all__ = ["exp", "log"]
