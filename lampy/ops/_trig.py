"""Trigonometric functions and their inverses (sin, cos, tan, arcsin, arccos, arctan),
the normalised sinc, and conversions between degrees and radians (deg2rad / radians,
rad2deg / degrees)."""

from __future__ import annotations

import math
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
from lampy.ops._where import where

_add, _subtract, _sqrt = np.add, np.subtract, np.sqrt
_PI = math.pi  # Python floats keep float32 float32
_TO_RADIANS = math.pi / 180
_TO_DEGREES = 180 / math.pi
_SINC_SERIES = {8: 0.1, 4: 0.5, 2: 0.5}
"""Below this ``|pi x|`` (by itemsize) sinc's derivative is taken from its Taylor series:
there the closed form loses ``~3 eps / (pi x)**2`` to cancellation, the series less than
``1e-14`` (float64) or ``4e-9`` (float32)."""


def sin(x: Operand) -> Variable:
    """Elementwise sine (radians).

    Gradient:
        ``dx = g * cos(x)``.
    """
    a = value_of(x, name="sin")
    value = apply_unary(np.sin, a)
    n = node_of(x)
    return op(
        "sin",
        value,
        contrib_of(x, lambda g: g * np.cos(a), vjp=lambda g, out: g * cos(graph_value(n, a))),
    )


def cos(x: Operand) -> Variable:
    """Elementwise cosine (radians).

    Gradient:
        ``dx = -g * sin(x)``.
    """
    a = value_of(x, name="cos")
    value = apply_unary(np.cos, a)
    n = node_of(x)
    return op(
        "cos",
        value,
        param_of(
            x,
            lambda g, out: _subtract(out, g * np.sin(a), out=out),
            vjp=lambda g, out: -g * sin(graph_value(n, a)),
        ),
    )


def tan(x: Operand) -> Variable:
    """Elementwise tangent (radians).

    Gradient:
        ``dx = g * (1 + tan(x)**2)`` (reuses the forward value).
    """
    value = apply_unary(np.tan, value_of(x, name="tan"))

    def d_x(g: np.ndarray) -> Any:
        return g * (value * value + 1)

    def vjp(g: Any, out: Any) -> Any:
        y = lifted(out, value)
        return g * (y * y + 1)

    return op("tan", value, contrib_of(x, d_x, vjp=vjp))


def arcsin(x: Operand) -> Variable:
    """Elementwise inverse sine, defined on ``[-1, 1]`` (nan outside, as numpy).

    Gradient:
        ``dx = g / sqrt((1 - x) * (1 + x))`` (``1 - x**2`` factored for accuracy near
        ±1); infinite at ``x = ±1``, nan outside the domain.
    """
    a = value_of(x, name="arcsin")
    value = apply_unary(np.arcsin, a)

    def d_x(g: np.ndarray) -> Any:
        return g / _sqrt((1 - a) * (1 + a))

    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * ((1 - xv) * (1 + xv)) ** -0.5

    return op("arcsin", value, contrib_of(x, d_x, vjp=vjp))


def arccos(x: Operand) -> Variable:
    """Elementwise inverse cosine, defined on ``[-1, 1]`` (nan outside, as numpy).

    Gradient:
        ``dx = -g / sqrt((1 - x) * (1 + x))``; infinite at ``x = ±1``, nan outside the
        domain.
    """
    a = value_of(x, name="arccos")
    value = apply_unary(np.arccos, a)

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        _subtract(out, g / _sqrt((1 - a) * (1 + a)), out=out)

    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return -g * ((1 - xv) * (1 + xv)) ** -0.5

    return op("arccos", value, param_of(x, d_x, vjp=vjp))


def arctan(x: Operand) -> Variable:
    """Elementwise inverse tangent.

    Gradient:
        ``dx = g / (1 + x**2)``.
    """
    a = value_of(x, name="arctan")
    value = apply_unary(np.arctan, a)
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g / (xv * xv + 1)

    return op("arctan", value, contrib_of(x, lambda g: g / (a * a + 1), vjp=vjp))


def sinc(x: Operand) -> Variable:
    """Elementwise normalised sinc, ``sin(pi x) / (pi x)`` and 1 at ``x = 0``, as
    ``numpy.sinc``.

    Gradient:
        ``dx = g * pi * (y cos y - sin y) / y**2`` with ``y = pi x``; 0 at ``x = 0``. For
        ``|y| < 0.1`` (float64; 0.5 in float32) the Taylor series
        ``pi * (-y/3 + y**3/30 - y**5/840 + y**7/45360)`` is used instead, which avoids
        the cancellation of the closed form near 0.
    """
    a = value_of(x, name="sinc")
    value = apply_unary(np.sinc, a)

    def d_x(g: np.ndarray) -> Any:
        y = a * _PI
        y2 = y * y
        closed = (y * np.cos(y) - np.sin(y)) / y2
        series = y * (y2 * (1 / 30 + y2 * (y2 / 45360 - 1 / 840)) - 1 / 3)
        near = np.abs(y) < _SINC_SERIES.get(y.dtype.itemsize, 0.1)
        return g * (np.where(near, series, closed) * _PI)

    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        y = graph_value(n, a) * _PI
        y_np = np.asarray(a) * _PI
        near = np.abs(y_np) < _SINC_SERIES.get(np.result_type(y_np).itemsize, 0.1)
        far = where(near, 1.0, y)  # the closed form away from 0 only: no 0/0 to mask
        y2, far2 = y * y, far * far
        closed = (far * cos(far) - sin(far)) / far2
        series = y * (y2 * (1 / 30 + y2 * (y2 / 45360 - 1 / 840)) - 1 / 3)
        return g * (where(near, series, closed) * _PI)

    return op("sinc", value, contrib_of(x, d_x, vjp=vjp))


def deg2rad(x: Operand) -> Variable:
    """Elementwise conversion from degrees to radians, ``x * pi / 180``, as
    ``numpy.deg2rad``.

    Gradient:
        ``dx = g * pi / 180``.
    """
    value = apply_unary(np.deg2rad, value_of(x, name="deg2rad"))
    return op(
        "deg2rad",
        value,
        contrib_of(x, lambda g: g * _TO_RADIANS, vjp=lambda g, out: g * _TO_RADIANS),
    )


radians = deg2rad
"""Alias of :func:`deg2rad`, as :func:`numpy.radians`."""


def rad2deg(x: Operand) -> Variable:
    """Elementwise conversion from radians to degrees, ``x * 180 / pi``, as
    ``numpy.rad2deg``.

    Gradient:
        ``dx = g * 180 / pi``.
    """
    value = apply_unary(np.rad2deg, value_of(x, name="rad2deg"))
    return op(
        "rad2deg",
        value,
        contrib_of(x, lambda g: g * _TO_DEGREES, vjp=lambda g, out: g * _TO_DEGREES),
    )


degrees = rad2deg
"""Alias of :func:`rad2deg`, as :func:`numpy.degrees`."""


__all__ = [
    "arccos",
    "arcsin",
    "arctan",
    "cos",
    "sin",
    "tan",
    "sinc",
    "deg2rad",
    "radians",
    "rad2deg",
    "degrees",
]
