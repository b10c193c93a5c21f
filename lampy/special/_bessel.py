"""Bessel functions: i0, i1, iv, ive (modified, first kind), j0, j1, jn (first kind),
y0, y1, yn (second kind), values by ``scipy.special``. Gradients are in the argument
``x``; the order ``v``/``n`` takes no gradient (no closed form)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import Operand, Variable, contrib_of, graph_value, lifted, node_of, op
from lampy.ops import exp
from lampy.special._common import like, ordered, refuse_gradient, sp, unary

_ORDER = "the derivative of a Bessel function in its order has no closed form"


def i0(x: Operand) -> Variable:
    """Elementwise modified Bessel function of the first kind of order 0
    (``scipy.special.i0``).

    Gradient:
        ``dx = g * i1(x)``.
    """
    a, value = unary("i0", x)
    n = node_of(x)
    return op(
        "i0",
        value,
        contrib_of(x, lambda g: g * sp("i0").i1(a), vjp=lambda g, out: g * i1(graph_value(n, a))),
    )


def i1(x: Operand) -> Variable:
    """Elementwise modified Bessel function of the first kind of order 1
    (``scipy.special.i1``).

    Gradient:
        ``dx = g * (i0(x) + iv(2, x)) / 2``, computed as ``(i0e(x) + ive(2, x)) / 2 *
        exp(|x|)`` (scipy's ``iv(2, x)`` is nan for ``x`` near the smallest normal float).
    """
    a, value = unary("i1", x)
    s = sp("i1")
    d = lambda g: g * ((s.i0e(a) + s.ive(2, a)) * 0.5 * np.exp(np.abs(a)))
    n = node_of(x)
    return op("i1", value, contrib_of(x, d, vjp=lambda g, out: g * _iv_slope(1, graph_value(n, a))))


def iv(v: Any, x: Operand) -> Variable:
    """Elementwise modified Bessel function of the first kind of real order ``v``
    (``scipy.special.iv``), ``v`` and ``x`` broadcast together.

    Raises:
        LampyValueError: if ``v`` needs a gradient.

    Gradient:
        ``dx = g * (iv(v - 1, x) + iv(v + 1, x)) / 2``, computed as ``(ive(v - 1, x) +
        ive(v + 1, x)) / 2 * exp(|x|)`` (scipy's ``iv`` is nan for ``x`` near the
        smallest normal float); none in ``v``.
    """
    refuse_gradient("iv", "v", v, _ORDER)
    k, a, value = ordered("iv", v, x)
    s = sp("iv")
    n = node_of(x)
    return op(
        "iv",
        value,
        contrib_of(
            x,
            lambda g: g * like((s.ive(k - 1, a) + s.ive(k + 1, a)) * 0.5 * np.exp(np.abs(a)), a),
            vjp=lambda g, out: g * _iv_slope(k, graph_value(n, a)),
        ),
    )


def ive(v: Any, x: Operand) -> Variable:
    """Elementwise exponentially scaled ``iv(v, x) * exp(-|x|)`` (``scipy.special.ive``).

    Raises:
        LampyValueError: if ``v`` needs a gradient.

    Gradient:
        ``dx = g * ((ive(v - 1, x) + ive(v + 1, x)) / 2 - sign(x) ive(v, x))``; none in ``v``.
    """
    refuse_gradient("ive", "v", v, _ORDER)
    k, a, value = ordered("ive", v, x)
    s = sp("ive")
    d = lambda g: g * like((s.ive(k - 1, a) + s.ive(k + 1, a)) * 0.5 - np.sign(a) * value, a)
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * ((ive(k - 1, xv) + ive(k + 1, xv)) * 0.5 - np.sign(a) * lifted(out, value))

    return op("ive", value, contrib_of(x, d, vjp=vjp))


def _iv_slope(k: Any, x: Any) -> Any:
    """``(iv(k - 1, x) + iv(k + 1, x)) / 2``, the derivative of ``iv(k, x)`` in ``x``,
    with lampy ops (for vjps): ``(ive(k - 1, x) + ive(k + 1, x)) / 2 * exp(|x|)``, as the
    first-order closures compute it. ``exp(|x|)``'s kink at 0 cancels that of ``ive``."""
    return (ive(k - 1, x) + ive(k + 1, x)) * 0.5 * exp(abs(x))


def j0(x: Operand) -> Variable:
    """Elementwise Bessel function of the first kind of order 0 (``scipy.special.j0``).

    Gradient:
        ``dx = -g * j1(x)``.
    """
    a, value = unary("j0", x)
    n = node_of(x)
    return op(
        "j0",
        value,
        contrib_of(x, lambda g: -g * sp("j0").j1(a), vjp=lambda g, out: -g * j1(graph_value(n, a))),
    )


def j1(x: Operand) -> Variable:
    """Elementwise Bessel function of the first kind of order 1 (``scipy.special.j1``).

    Gradient:
        ``dx = g * (j0(x) - jv(2, x)) / 2``.
    """
    a, value = unary("j1", x)
    s = sp("j1")
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * ((j0(xv) - jn(2, xv)) * 0.5)

    return op("j1", value, contrib_of(x, lambda g: g * ((s.j0(a) - s.jv(2, a)) * 0.5), vjp=vjp))


def jn(n: Any, x: Operand) -> Variable:
    """Elementwise Bessel function of the first kind of order ``n`` (``scipy.special.jn``,
    real orders accepted as by scipy's ``jv``).

    Raises:
        LampyValueError: if ``n`` needs a gradient.

    Gradient:
        ``dx = g * (jv(n - 1, x) - jv(n + 1, x)) / 2``; none in ``n``.
    """
    refuse_gradient("jn", "n", n, _ORDER)
    k, a, value = ordered("jn", n, x)
    s = sp("jn")
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * ((jn(k - 1, xv) - jn(k + 1, xv)) * 0.5)

    d = lambda g: g * like((s.jv(k - 1, a) - s.jv(k + 1, a)) * 0.5, a)
    return op("jn", value, contrib_of(x, d, vjp=vjp))


def y0(x: Operand) -> Variable:
    """Elementwise Bessel function of the second kind of order 0 (``scipy.special.y0``;
    ``-inf`` at 0, nan for ``x < 0``).

    Gradient:
        ``dx = -g * y1(x)``.
    """
    a, value = unary("y0", x)
    n = node_of(x)
    return op(
        "y0",
        value,
        contrib_of(x, lambda g: -g * sp("y0").y1(a), vjp=lambda g, out: -g * y1(graph_value(n, a))),
    )


def y1(x: Operand) -> Variable:
    """Elementwise Bessel function of the second kind of order 1 (``scipy.special.y1``).

    Gradient:
        ``dx = g * (y0(x) - yv(2, x)) / 2``.
    """
    a, value = unary("y1", x)
    s = sp("y1")
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * ((y0(xv) - yn(2, xv)) * 0.5)

    return op("y1", value, contrib_of(x, lambda g: g * ((s.y0(a) - s.yv(2, a)) * 0.5), vjp=vjp))


def yn(n: Any, x: Operand) -> Variable:
    """Elementwise Bessel function of the second kind of integer order ``n``
    (``scipy.special.yn``). A float32 ``x`` gives float32 (scipy's integer loop gives
    float64).

    Raises:
        LampyValueError: if ``n`` needs a gradient.

    Gradient:
        ``dx = g * (yv(n - 1, x) - yv(n + 1, x)) / 2``; none in ``n``.
    """
    refuse_gradient("yn", "n", n, _ORDER)
    k, a, value = ordered("yn", n, x)
    s = sp("yn")
    d = lambda g: g * like((s.yv(k - 1, a) - s.yv(k + 1, a)) * 0.5, a)
    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, a)
        return g * ((yn(k - 1, xv) - yn(k + 1, xv)) * 0.5)

    return op("yn", value, contrib_of(x, d, vjp=vjp))


__all__ = ["i0", "i1", "iv", "ive", "j0", "j1", "jn", "y0", "y1", "yn"]
