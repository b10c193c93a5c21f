"""The error function family: erf, erfc, erfinv, erfcinv, and the normal CDF ndtr,
log_ndtr (values by ``scipy.special``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lampy.opkit import Operand, Variable, contrib_of, graph_value, lifted, node_of, op
from lampy.ops import exp
from lampy.special._common import unary

# Python floats, so that float32 gradients stay float32.
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gauss(x: Any, c: float) -> Any:
    """``exp(c * x**2)`` with lampy ops, for vjps."""
    return exp(x * x * c)


def erf(x: Operand) -> Variable:
    """Elementwise error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``
    (``scipy.special.erf``).

    Gradient:
        ``dx = g * 2/sqrt(pi) * exp(-x**2)``.
    """
    a, value = unary("erf", x)
    n = node_of(x)
    return op(
        "erf",
        value,
        contrib_of(
            x,
            lambda g: g * (_TWO_OVER_SQRT_PI * np.exp(-a * a)),
            vjp=lambda g, out: g * (_TWO_OVER_SQRT_PI * _gauss(graph_value(n, a), -1.0)),
        ),
    )


def erfc(x: Operand) -> Variable:
    """Elementwise complementary error function ``1 - erf(x)``, accurate for large ``x``
    (``scipy.special.erfc``).

    Gradient:
        ``dx = -g * 2/sqrt(pi) * exp(-x**2)``.
    """
    a, value = unary("erfc", x)
    n = node_of(x)
    return op(
        "erfc",
        value,
        contrib_of(
            x,
            lambda g: g * (-_TWO_OVER_SQRT_PI * np.exp(-a * a)),
            vjp=lambda g, out: g * (-_TWO_OVER_SQRT_PI * _gauss(graph_value(n, a), -1.0)),
        ),
    )


def erfinv(y: Operand) -> Variable:
    """Elementwise inverse of ``erf`` on ``[-1, 1]`` (``scipy.special.erfinv``: ``±inf``
    at ``±1``, nan outside).

    Gradient:
        ``dy = g * sqrt(pi)/2 * exp(erfinv(y)**2)`` (reuses the value; ``inf`` at ``±1``).
    """
    _, value = unary("erfinv", y)
    return op(
        "erfinv",
        value,
        contrib_of(
            y,
            lambda g: g * (_SQRT_PI_OVER_TWO * np.exp(value**2)),
            vjp=lambda g, out: g * (_SQRT_PI_OVER_TWO * _gauss(lifted(out, value), 1.0)),
        ),
    )


def erfcinv(y: Operand) -> Variable:
    """Elementwise inverse of ``erfc`` on ``[0, 2]`` (``scipy.special.erfcinv``).

    Gradient:
        ``dy = -g * sqrt(pi)/2 * exp(erfcinv(y)**2)`` (reuses the value).
    """
    _, value = unary("erfcinv", y)
    d = -_SQRT_PI_OVER_TWO
    return op(
        "erfcinv",
        value,
        contrib_of(
            y,
            lambda g: g * (d * np.exp(value**2)),
            vjp=lambda g, out: g * (d * _gauss(lifted(out, value), 1.0)),
        ),
    )


def ndtr(x: Operand) -> Variable:
    """Elementwise standard normal CDF ``(1 + erf(x / sqrt(2))) / 2`` (``scipy.special.ndtr``).

    Gradient:
        ``dx = g * exp(-x**2 / 2) / sqrt(2 pi)``.
    """
    a, value = unary("ndtr", x)
    n = node_of(x)
    return op(
        "ndtr",
        value,
        contrib_of(
            x,
            lambda g: g * (_INV_SQRT_2PI * np.exp(a * a * -0.5)),
            vjp=lambda g, out: g * (_INV_SQRT_2PI * _gauss(graph_value(n, a), -0.5)),
        ),
    )


def log_ndtr(x: Operand) -> Variable:
    """Elementwise log of the standard normal CDF, accurate far in the left tail
    (``scipy.special.log_ndtr``).

    Gradient:
        ``dx = g * exp(-x**2 / 2 - log_ndtr(x)) / sqrt(2 pi)`` (the normal's hazard
        ratio, computed in logs so it stays finite far in the left tail).
    """
    a, value = unary("log_ndtr", x)
    d = lambda g: g * (_INV_SQRT_2PI * np.exp(a * a * -0.5 - value))
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * (_INV_SQRT_2PI * exp(xv * xv * -0.5 - lifted(out, value)))

    return op("log_ndtr", value, contrib_of(x, d, vjp=vjp))


__all__ = ["erf", "erfc", "erfcinv", "erfinv", "log_ndtr", "ndtr"]
