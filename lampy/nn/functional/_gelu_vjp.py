"""The differentiable backward rule (vjp) of ``gelu`` (in ``_activations``): its slope
recomputed from the input with lampy ops, ``Phi`` as an op of its own
(``_normal_cdf_op``: lampy's ops have no erf) whose derivative is recorded; and the
numpy pieces gelu's forward shares with it (``_normal_cdf``), and ``_c``, the scalar of an
array's dtype that every activation uses.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lampy.nn.functional._erf import erf, normal_cdf_float32
from lampy.opkit import Operand, contrib_of, graph_value, node_of, op
from lampy.ops import exp as exp_op
from lampy.ops import tanh as tanh_op

__all__ = ["_INV_SQRT_2PI", "_SQRT_2_OVER_PI", "_c", "_gelu_vjp", "_normal_cdf"]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


def _c(a: Any, v: float) -> Any:
    """The Python float ``v`` as a scalar of ``a``'s dtype (keeps float32 float32)."""
    return np.asarray(a).dtype.type(v)


def _normal_cdf(a: Any) -> Any:
    """``Phi(a) = (1 + erf(a / sqrt(2))) / 2`` in ``a``'s dtype, in place on erf's result."""
    cdf = erf(np.multiply(a, _c(a, _INV_SQRT_2)))
    if np.ndim(cdf) == 0:
        return (1 + cdf) * _c(a, 0.5)
    np.add(cdf, 1, out=cdf)
    return np.multiply(cdf, _c(a, 0.5), out=cdf)


def _normal_cdf_op(x: Any, a: np.ndarray) -> Any:
    """``Phi(x)`` as an op (``x`` a Variable or a constant of value ``a``), whose
    derivative ``phi(x) = exp(-x**2 / 2) / sqrt(2 pi)`` is recorded with lampy ops: the
    piece of gelu's slope that lampy's ops do not have (they have no erf)."""
    if a.dtype.itemsize <= 4:  # float32 and float16, as gelu computes them
        cdf = normal_cdf_float32(a.astype(np.float32, copy=False), False)[0].astype(a.dtype)
    else:
        cdf = np.asarray(_normal_cdf(a))
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * (exp_op(xv * xv * _c(a, -0.5)) * _c(a, _INV_SQRT_2PI))

    pdf = lambda g: g * (np.exp(a * a * _c(a, -0.5)) * _c(a, _INV_SQRT_2PI))
    return op("normal_cdf", cdf, contrib_of(x, pdf, vjp=vjp))


def _gelu_vjp(input: Operand, a: np.ndarray, approximate: str) -> Any:
    """gelu's ``dx = g * slope(x)`` with the slope recomputed from the input's value ``a``
    with lampy ops (``_normal_cdf_op`` for ``Phi``), for a differentiable pass."""
    n = node_of(input)

    def vjp(g: Any, out: Any) -> Any:
        x = graph_value(n, a)
        if approximate == "none":
            pdf = exp_op(x * x * _c(a, -0.5)) * _c(a, _INV_SQRT_2PI)
            return g * (_normal_cdf_op(x, a) + x * pdf)
        k, c = _c(a, _SQRT_2_OVER_PI), _c(a, 0.044715)
        t = tanh_op((x + x * x * x * c) * k)
        slope = (1 + t) * _c(a, 0.5) + x * (1 - t * t) * (1 + x * x * (3 * c)) * (k * _c(a, 0.5))
        return g * slope

    return vjp
