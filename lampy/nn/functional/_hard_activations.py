"""``hardsigmoid``, ``hardswish`` and ``softsign`` of ``lampy.nn.functional``
(re-exported by ``_activations``, whose conventions they follow), with their
differentiable backward rules (vjps)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.nn.functional._gelu_vjp import _c
from lampy.nn.functional._shared import float_value, zero_tangent
from lampy.opkit import Operand, Variable, contrib_of, graph_value, node_of, op

__all__ = ["hardsigmoid", "hardswish", "softsign"]


def hardsigmoid(input: Operand, inplace: bool = False) -> Variable:
    """Elementwise ``relu6(x + 3) / 6``.

    Gradient:
        ``dx = g / 6`` for ``-3 < x < 3``, else 0; 0 at ``x = -3`` and ``x = 3``
        (PyTorch's convention). In float64 the factor is the exact ``1/6``; PyTorch
        multiplies by the float32 ``1/6``, so its float64 gradient differs by ~2e-8.
    """
    a = float_value(input, "hardsigmoid")
    value = np.minimum(np.maximum(a + 3, 0), 6) / 6
    sixth = _c(a, 1 / 6)

    def d_x(g: Any) -> Any:  # piecewise constant: the vjp is the same product
        return g * np.where((a > -3) & (a < 3), sixth, 0)

    return op("hardsigmoid", value, contrib_of(input, d_x, vjp=lambda g, out: d_x(g)))


def hardswish(input: Operand, inplace: bool = False) -> Variable:
    """Elementwise ``x * relu6(x + 3) / 6``.

    Gradient:
        ``dx = g * (0 if x <= -3 else 1 if x >= 3 else x / 3 + 0.5)``; 0 at ``x = -3``
        and 1 at ``x = 3`` (PyTorch's convention), 1 at ``x = nan`` (PyTorch's).
    """
    a = float_value(input, "hardswish")
    value = a * np.minimum(np.maximum(a + 3, 0), 6) / 6

    def d_x(g: np.ndarray) -> Any:
        d = a / 3 + _c(a, 0.5)
        if np.ndim(d) == 0:
            return g * (0 if a <= -3 else d if a < 3 else 1)
        np.copyto(d, 0, where=a <= -3)
        np.copyto(d, 1, where=~(a < 3))  # x >= 3, and nan
        return np.multiply(d, g, out=d) if d.shape == np.shape(g) else d * g

    n = node_of(input)

    def vjp(g: Any, out: Any) -> Any:  # x / 3 + 1/2 in (-3, 3), the constants 0 and 1 out
        mid = (a > -3) & (a < 3)
        off = np.where(mid, _c(a, 0.5), np.where(a <= -3, _c(a, 0), _c(a, 1)))
        return g * (graph_value(n, a) * np.where(mid, _c(a, 1 / 3), _c(a, 0)) + off)

    return op("hardswish", value, contrib_of(input, d_x, vjp=vjp))


def softsign(input: Operand) -> Variable:
    """Elementwise ``x / (1 + |x|)``.

    Gradient:
        ``dx = g / (1 + |x|)**2``.
    """
    a = float_value(input, "softsign")
    d = 1 + np.abs(a)
    value = a / d
    n = node_of(input)

    def vjp(g: Any, out: Any) -> Any:  # d = 1 + |x| brought into the graph: slope sign(x)
        dv = d + np.sign(a) * zero_tangent(n)
        return g / (dv * dv)

    return op("softsign", value, contrib_of(input, lambda g: g / (d * d), vjp=vjp))
