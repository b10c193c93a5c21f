"""The gamma function family: gamma, gammaln, rgamma, digamma (psi), polygamma,
multigammaln, beta, betaln, gammainc, gammaincc, and the CDFs built on them, betainc
and stdtr (values by ``scipy.special``)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.opkit import Operand, Variable, contrib_of, graph_value, lifted, node_of, op, value_of
from lampy.ops import exp, log1p
from lampy.special._common import binary, like, ordered, refuse_gradient, sp, unary
from lampy.special._logistic import xlog1py, xlogy


def gamma(x: Operand) -> Variable:
    """Elementwise gamma function (``scipy.special.gamma``: ``inf`` at 0, nan at the
    negative integers).

    Gradient:
        ``dx = g * gamma(x) * digamma(x)`` (reuses the value).
    """
    a, value = unary("gamma", x)
    n = node_of(x)
    return op(
        "gamma",
        value,
        contrib_of(
            x,
            lambda g: g * (value * sp("gamma").digamma(a)),
            vjp=lambda g, out: g * (lifted(out, value) * digamma(graph_value(n, a))),
        ),
    )


def gammaln(x: Operand) -> Variable:
    """Elementwise ``log|gamma(x)|`` (``scipy.special.gammaln``).

    Gradient:
        ``dx = g * digamma(x)`` (the derivative of ``log|gamma|`` on both signs of gamma).
    """
    a, value = unary("gammaln", x)
    n = node_of(x)
    return op(
        "gammaln",
        value,
        contrib_of(
            x,
            lambda g: g * sp("gammaln").digamma(a),
            vjp=lambda g, out: g * digamma(graph_value(n, a)),
        ),
    )


def rgamma(x: Operand) -> Variable:
    """Elementwise ``1 / gamma(x)``, 0 at the poles of gamma (``scipy.special.rgamma``).

    Gradient:
        ``dx = -g * rgamma(x) * digamma(x)``; nan at 0 and the negative integers.
    """
    a, value = unary("rgamma", x)
    n = node_of(x)
    return op(
        "rgamma",
        value,
        contrib_of(
            x,
            lambda g: g * (-value * sp("rgamma").digamma(a)),
            vjp=lambda g, out: g * (-lifted(out, value) * digamma(graph_value(n, a))),
        ),
    )


def digamma(x: Operand) -> Variable:
    """Elementwise ``d/dx log gamma(x)`` (``scipy.special.digamma``, also ``psi``).

    Gradient:
        ``dx = g * polygamma(1, x)`` (the trigamma function).
    """
    a, value = unary("digamma", x)
    n = node_of(x)
    return op(
        "digamma",
        value,
        contrib_of(
            x,
            lambda g: g * like(sp("digamma").polygamma(1, a), a),
            vjp=lambda g, out: g * polygamma(1, graph_value(n, a)),
        ),
    )


psi = digamma


def polygamma(n: Any, x: Operand) -> Variable:
    """Elementwise ``n``-th derivative of ``digamma`` (``scipy.special.polygamma``);
    ``n`` holds non-negative integers, broadcast against ``x``. A float32 ``x`` gives
    float32 (scipy computes it in float64).

    Raises:
        LampyValueError: if ``n`` needs a gradient (it is an integer order).

    Gradient:
        ``dx = g * polygamma(n + 1, x)``; none in ``n``.
    """
    refuse_gradient("polygamma", "n", n, "it is an integer order")
    k, a, value = ordered("polygamma", n, x)
    node = node_of(x)
    return op(
        "polygamma",
        value,
        contrib_of(
            x,
            lambda g: g * like(sp("polygamma").polygamma(k + 1, a), a),
            vjp=lambda g, out: g * polygamma(k + 1, graph_value(node, a)),
        ),
    )


def multigammaln(a: Operand, d: int) -> Variable:
    """Elementwise log of the multivariate gamma function of dimension ``d``,
    ``d(d-1)/4 log(pi) + sum_j gammaln(a - j/2)`` for ``j < d``
    (``scipy.special.multigammaln``, which needs ``a > (d - 1) / 2``). A float32 ``a``
    gives float32.

    Raises:
        LampyValueError: if ``d < 1`` or an ``a`` is not above ``(d - 1) / 2``.

    Gradient:
        ``da = g * sum_j digamma(a - j/2)``, ``j = 0 .. d-1``.
    """
    dim = operator.index(d)
    s = sp("multigammaln")
    x = value_of(a, name="multigammaln")
    if dim < 1 or np.any(np.asarray(x) <= 0.5 * (dim - 1)):
        raise LampyValueError(
            f"lampy.special.multigammaln: needs d >= 1 and every a > (d - 1) / 2 = "
            f"{0.5 * (dim - 1)} (scipy's domain), got d = {dim} and min(a) = "
            f"{np.min(x) if np.size(x) else None}. Keep a above (d - 1) / 2."
        )
    value = like(s.multigammaln(x, dim), x)

    def d_a(g: Any) -> Any:
        return g * like(sum(s.digamma(x - 0.5 * j) for j in range(dim)), x)

    n = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, x)
        total = digamma(xv)
        for j in range(1, dim):
            total = total + digamma(xv - 0.5 * j)
        return g * total

    return op("multigammaln", value, contrib_of(a, d_a, vjp=vjp))


def beta(a: Operand, b: Operand) -> Variable:
    """Elementwise beta function ``gamma(a) gamma(b) / gamma(a + b)``
    (``scipy.special.beta``), with numpy broadcasting.

    Gradient:
        ``da = g * beta(a, b) * (digamma(a) - digamma(a + b))``, and ``db`` likewise.
    """
    x, y, value = binary("beta", a, b)
    s = sp("beta")
    na, nb = node_of(a), node_of(b)

    def vjp(first: bool) -> Any:
        def rule(g: Any, out: Any) -> Any:
            u, v = graph_value(na, x), graph_value(nb, y)
            return g * (lifted(out, value) * (digamma(u if first else v) - digamma(u + v)))

        return rule

    return op(
        "beta",
        value,
        contrib_of(a, lambda g: g * (value * (s.digamma(x) - s.digamma(x + y))), vjp=vjp(True)),
        contrib_of(b, lambda g: g * (value * (s.digamma(y) - s.digamma(x + y))), vjp=vjp(False)),
    )


def betaln(a: Operand, b: Operand) -> Variable:
    """Elementwise ``log|beta(a, b)|`` (``scipy.special.betaln``), with numpy broadcasting.

    Gradient:
        ``da = g * (digamma(a) - digamma(a + b))``, and ``db`` likewise.
    """
    x, y, value = binary("betaln", a, b)
    s = sp("betaln")
    na, nb = node_of(a), node_of(b)

    def vjp(first: bool) -> Any:
        def rule(g: Any, out: Any) -> Any:
            u, v = graph_value(na, x), graph_value(nb, y)
            return g * (digamma(u if first else v) - digamma(u + v))

        return rule

    return op(
        "betaln",
        value,
        contrib_of(a, lambda g: g * (s.digamma(x) - s.digamma(x + y)), vjp=vjp(True)),
        contrib_of(b, lambda g: g * (s.digamma(y) - s.digamma(x + y)), vjp=vjp(False)),
    )


def _incomplete_density(a: Any, x: Any) -> Any:
    """``x**(a-1) exp(-x) / gamma(a)``: the derivative of ``gammainc(a, x)`` in ``x``."""
    s = sp("gammainc")
    return np.exp(s.xlogy(a - 1, x) - x - s.gammaln(a))


def _incomplete_density_graph(a: Any, x: Any) -> Any:
    """:func:`_incomplete_density` with lampy ops, for vjps: ``a`` a constant, ``x`` a
    Variable of the graph."""
    return exp(xlogy(a - 1, x) - x - sp("gammainc").gammaln(a))


def gammainc(a: Any, x: Operand) -> Variable:
    """Elementwise regularized lower incomplete gamma function
    ``P(a, x) = 1/gamma(a) * integral_0^x t**(a-1) exp(-t) dt`` (``scipy.special.gammainc``).

    Raises:
        LampyValueError: if ``a`` needs a gradient (its derivative in ``a`` has no closed
            form).

    Gradient:
        ``dx = g * x**(a-1) exp(-x) / gamma(a)``; none in ``a``.
    """
    refuse_gradient("gammainc", "a", a, "its derivative in a has no closed form")
    s, y, value = ordered("gammainc", a, x)
    n = node_of(x)
    return op(
        "gammainc",
        value,
        contrib_of(
            x,
            lambda g: g * like(_incomplete_density(s, y), y),
            vjp=lambda g, out: g * _incomplete_density_graph(s, graph_value(n, y)),
        ),
    )


def gammaincc(a: Any, x: Operand) -> Variable:
    """Elementwise regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``
    (``scipy.special.gammaincc``).

    Raises:
        LampyValueError: if ``a`` needs a gradient (no closed form).

    Gradient:
        ``dx = -g * x**(a-1) exp(-x) / gamma(a)``; none in ``a``.
    """
    refuse_gradient("gammaincc", "a", a, "its derivative in a has no closed form")
    s, y, value = ordered("gammaincc", a, x)
    n = node_of(x)
    return op(
        "gammaincc",
        value,
        contrib_of(
            x,
            lambda g: -g * like(_incomplete_density(s, y), y),
            vjp=lambda g, out: -g * _incomplete_density_graph(s, graph_value(n, y)),
        ),
    )


def betainc(a: Any, b: Any, x: Operand) -> Variable:
    """Elementwise regularized incomplete beta function
    ``I_x(a, b) = 1/beta(a, b) * integral_0^x t**(a-1) (1-t)**(b-1) dt``
    (``scipy.special.betainc``); the result has ``x``'s float dtype.

    Raises:
        LampyValueError: if ``a`` or ``b`` needs a gradient (no closed form).

    Gradient:
        ``dx = g * x**(a-1) (1-x)**(b-1) / beta(a, b)`` (the beta density); none in ``a``
        or ``b``.
    """
    refuse_gradient("betainc", "a", a, "its derivative in a has no closed form")
    refuse_gradient("betainc", "b", b, "its derivative in b has no closed form")
    s = sp("betainc")
    p, q, y = value_of(a, name="betainc"), value_of(b, name="betainc"), value_of(x, name="betainc")
    try:
        value = like(s.betainc(p, q, y), y)
    except ValueError:
        shapes = ", ".join(str(np.shape(v)) for v in (p, q, y))
        raise ShapeError(
            f"lampy.special.betainc: the shapes of a, b and x ({shapes}) do not broadcast together."
        ) from None

    def d_x(g: Any) -> Any:
        log_density = s.xlogy(p - 1, y) + s.xlog1py(q - 1, -y) - s.betaln(p, q)
        return g * like(np.exp(log_density), y)

    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        xv = graph_value(n, y)
        return g * exp(xlogy(p - 1, xv) + xlog1py(q - 1, -xv) - s.betaln(p, q))

    return op("betainc", value, contrib_of(x, d_x, vjp=vjp))


def stdtr(df: Any, t: Operand) -> Variable:
    """Elementwise CDF of Student's t distribution with ``df`` degrees of freedom
    (``scipy.special.stdtr``); the result has ``t``'s float dtype.

    Raises:
        LampyValueError: if ``df`` needs a gradient (no closed form).

    Gradient:
        ``dt = g * (1 + t**2/df)**(-(df+1)/2) / (sqrt(df) beta(df/2, 1/2))`` (the t
        density); none in ``df``.
    """
    refuse_gradient("stdtr", "df", df, "its derivative in df has no closed form")
    n, z, value = ordered("stdtr", df, t)
    s = sp("stdtr")

    def d_t(g: Any) -> Any:
        log_pdf = -0.5 * (n + 1) * np.log1p(z * z / n) - 0.5 * np.log(n) - s.betaln(0.5 * n, 0.5)
        return g * like(np.exp(log_pdf), z)

    node = node_of(t)

    def vjp(g: Any, out: Any) -> Any:
        tv = graph_value(node, z)
        shift = -0.5 * np.log(n) - s.betaln(0.5 * n, 0.5)
        return g * exp(log1p(tv * tv / n) * (-0.5 * (n + 1)) + shift)

    return op("stdtr", value, contrib_of(t, d_t, vjp=vjp))


__all__ = [
    "beta",
    "betainc",
    "betaln",
    "digamma",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "multigammaln",
    "polygamma",
    "psi",
    "rgamma",
    "stdtr",
]
