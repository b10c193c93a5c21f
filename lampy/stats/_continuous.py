"""Univariate continuous distributions: norm, t, beta, gamma, chi2. Each is written
with lampy ops and ``lampy.special``, so it is differentiable in the point and in every
parameter; values match ``scipy.stats`` (which computes in float64: here float32
points stay float32). Points outside the support give ``-inf`` (a CDF 0 or 1) with
gradient 0; invalid parameters (``scale <= 0``, ``df <= 0``...) give nan, as scipy's."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lampy.opkit import Operand, Variable, contrib_of, graph_value, node_of, op, value_of
from lampy.ops import exp, log, log1p, square
from lampy.special import betainc, betaln, gammainc, gammaln, log_ndtr, ndtr, stdtr, xlog1py, xlogy
from lampy.stats._common import finish, floats, kept, log_probability, plain, positive, refuse

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)
_LOG_2 = math.log(2.0)
_NO_SHAPE_GRADIENT = "the CDF's derivative in its shape parameter has no closed form"


def _standard(x: Variable, loc: Variable, scale: Variable) -> tuple[Variable, Variable]:
    """``(x - loc) / scale`` and the scale, with 1 where the scale is invalid."""
    scale = kept(positive(scale), scale, 1.0)
    return (x - loc) / scale, scale


def norm_logpdf(x: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log-density of the normal distribution (``scipy.stats.norm.logpdf``):
    ``-z**2 / 2 - log(scale) - log(2 pi) / 2`` with ``z = (x - loc) / scale``. One op
    (the workhorse of Gaussian likelihoods), not a chain of them.

    Gradient:
        ``dx = -g z / scale``, ``dloc = g z / scale``, ``dscale = g (z**2 - 1) / scale``.
    """
    x, loc, scale = floats("norm.logpdf", x, loc, scale)
    valid = positive(scale)
    s = kept(valid, scale, 1.0)
    xv, mv, sv = (
        value_of(x, name="norm.logpdf"),
        value_of(loc, name="norm.logpdf"),
        value_of(s, name="norm.logpdf"),
    )
    z = (xv - mv) / sv
    value = -0.5 * (z * z) - np.log(sv) - _HALF_LOG_2PI
    nx, nm, ns = node_of(x), node_of(loc), node_of(s)

    def z_over_scale(g: Any, out: Any) -> Any:  # g * z / scale, with lampy ops
        scale = graph_value(ns, sv)
        return g * ((graph_value(nx, xv) - graph_value(nm, mv)) / (scale * scale))

    def d_scale(g: Any, out: Any) -> Any:
        scale = graph_value(ns, sv)
        zs = (graph_value(nx, xv) - graph_value(nm, mv)) / scale
        return g * ((zs * zs - 1.0) / scale)

    logp = op(
        "norm.logpdf",
        value,
        contrib_of(x, lambda g: g * (z / sv) * -1.0, vjp=lambda g, out: -z_over_scale(g, out)),
        contrib_of(loc, lambda g: g * (z / sv), vjp=z_over_scale),
        contrib_of(s, lambda g: g * ((z * z - 1.0) / sv), vjp=d_scale),
    )
    return finish(logp, valid)


def norm_pdf(x: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Density of the normal distribution (``scipy.stats.norm.pdf``).

    Gradient:
        ``pdf * d logpdf``.
    """
    return exp(norm_logpdf(x, loc, scale))


def norm_cdf(x: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Cumulative distribution function of the normal (``scipy.stats.norm.cdf``).

    Gradient:
        ``dz = g * pdf(z)`` with ``z = (x - loc) / scale``, through ``lampy.special.ndtr``.
    """
    x, loc, scale = floats("norm.cdf", x, loc, scale)
    z, _ = _standard(x, loc, scale)
    return finish(ndtr(z), positive(scale))


def norm_logcdf(x: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log of the normal CDF, accurate far in the left tail (``scipy.stats.norm.logcdf``).

    Gradient:
        ``dz = g * pdf(z) / cdf(z)``, through ``lampy.special.log_ndtr``.
    """
    x, loc, scale = floats("norm.logcdf", x, loc, scale)
    z, _ = _standard(x, loc, scale)
    return finish(log_ndtr(z), positive(scale))


def norm_sf(x: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Survival function ``1 - cdf`` of the normal (``scipy.stats.norm.sf``).

    Gradient:
        ``dz = -g * pdf(z)``.
    """
    x, loc, scale = floats("norm.sf", x, loc, scale)
    z, _ = _standard(x, loc, scale)
    return finish(ndtr(-z), positive(scale))


def norm_logsf(x: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log of the normal survival function (``scipy.stats.norm.logsf``).

    Gradient:
        ``dz = -g * pdf(z) / sf(z)``.
    """
    x, loc, scale = floats("norm.logsf", x, loc, scale)
    z, _ = _standard(x, loc, scale)
    return finish(log_ndtr(-z), positive(scale))


def t_logpdf(x: Operand, df: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log-density of Student's t distribution (``scipy.stats.t.logpdf``):
    ``gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2 - log(scale)
    - (df+1)/2 log1p(z**2 / df)``, for finite ``df > 0``.

    Gradient:
        In ``x``, ``df``, ``loc`` and ``scale``, through lampy's ops and
        ``lampy.special.gammaln`` (whose derivative is digamma).
    """
    x, df, loc, scale = floats("t.logpdf", x, df, loc, scale)
    z, s = _standard(x, loc, scale)
    n = kept(positive(df), df, 1.0)
    half = (n + 1) * 0.5
    norm = gammaln(half) - gammaln(n * 0.5) - 0.5 * (log(n) + _LOG_PI) - log(s)
    return finish(norm - half * log1p(square(z) / n), positive(df, scale))


def t_pdf(x: Operand, df: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Density of Student's t distribution (``scipy.stats.t.pdf``).

    Gradient:
        ``pdf * d logpdf``.
    """
    return exp(t_logpdf(x, df, loc, scale))


def t_cdf(x: Operand, df: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """CDF of Student's t distribution, ``stdtr(df, z)`` (``scipy.stats.t.cdf``).

    Raises:
        LampyValueError: if ``df`` needs a gradient (no closed form).

    Gradient:
        In ``x``, ``loc`` and ``scale`` (``dz = g * pdf(z)``, through
        ``lampy.special.stdtr``); none in ``df``.
    """
    refuse("t.cdf", "df", df, _NO_SHAPE_GRADIENT)
    x, df, loc, scale = floats("t.cdf", x, df, loc, scale)
    z, _ = _standard(x, loc, scale)
    valid = positive(df, scale)
    return finish(stdtr(plain(kept(valid, df, 1.0)), z), valid)


def t_logcdf(x: Operand, df: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log of the t CDF (``scipy.stats.t.logcdf``, which is also ``log(cdf)``).

    Raises:
        LampyValueError: if ``df`` needs a gradient (no closed form).

    Gradient:
        ``g * pdf / cdf`` in ``x``, ``loc`` and ``scale``; none in ``df``.
    """
    refuse("t.logcdf", "df", df, _NO_SHAPE_GRADIENT)
    return log_probability(t_cdf(x, df, loc, scale))


def beta_logpdf(
    x: Operand, a: Operand, b: Operand, loc: Operand = 0, scale: Operand = 1
) -> Variable:
    """Log-density of the beta distribution on ``[loc, loc + scale]``
    (``scipy.stats.beta.logpdf``): ``xlogy(a-1, z) + xlog1py(b-1, -z) - betaln(a, b)
    - log(scale)``, ``-inf`` outside ``[0, 1]``.

    Gradient:
        In ``x``, ``a``, ``b``, ``loc`` and ``scale``, through ``lampy.special``'s
        ``xlogy``, ``xlog1py`` and ``betaln``; 0 outside the support.
    """
    x, a, b, loc, scale = floats("beta.logpdf", x, a, b, loc, scale)
    z, s = _standard(x, loc, scale)
    outside = (plain(z) < 0) | (plain(z) > 1)
    z = kept(~outside, z, 0.5)
    valid = positive(a, b, scale)
    a, b = kept(valid, a, 1.0), kept(valid, b, 1.0)
    logp = xlogy(a - 1, z) + xlog1py(b - 1, -z) - betaln(a, b) - log(s)
    return finish(logp, valid, outside)


def beta_pdf(x: Operand, a: Operand, b: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Density of the beta distribution (``scipy.stats.beta.pdf``).

    Gradient:
        ``pdf * d logpdf``.
    """
    return exp(beta_logpdf(x, a, b, loc, scale))


def beta_cdf(x: Operand, a: Operand, b: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """CDF of the beta distribution, ``betainc(a, b, z)`` (``scipy.stats.beta.cdf``); 0
    below the support, 1 above it.

    Raises:
        LampyValueError: if ``a`` or ``b`` needs a gradient (no closed form).

    Gradient:
        In ``x``, ``loc`` and ``scale`` (``dz = g * pdf(z)``, through
        ``lampy.special.betainc``); none in ``a`` or ``b``; 0 outside the support.
    """
    refuse("beta.cdf", "a", a, _NO_SHAPE_GRADIENT)
    refuse("beta.cdf", "b", b, _NO_SHAPE_GRADIENT)
    x, a, b, loc, scale = floats("beta.cdf", x, a, b, loc, scale)
    z, _ = _standard(x, loc, scale)
    below, above = plain(z) < 0, plain(z) > 1
    valid = positive(a, b, scale)
    shapes = plain(kept(valid, a, 1.0)), plain(kept(valid, b, 1.0))
    cdf = betainc(*shapes, kept(~(below | above), z, 0.5))
    return finish(finish(cdf, np.asarray(True), above, 1.0), valid, below, 0.0)


def beta_logcdf(
    x: Operand, a: Operand, b: Operand, loc: Operand = 0, scale: Operand = 1
) -> Variable:
    """Log of the beta CDF (``scipy.stats.beta.logcdf``); ``-inf`` for ``z <= 0``.

    Raises:
        LampyValueError: if ``a`` or ``b`` needs a gradient (no closed form).

    Gradient:
        ``g * pdf / cdf`` in ``x``, ``loc`` and ``scale``; none in ``a`` or ``b``.
    """
    refuse("beta.logcdf", "a", a, _NO_SHAPE_GRADIENT)
    refuse("beta.logcdf", "b", b, _NO_SHAPE_GRADIENT)
    return log_probability(beta_cdf(x, a, b, loc, scale))


def gamma_logpdf(x: Operand, a: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log-density of the gamma distribution of shape ``a`` (``scipy.stats.gamma.logpdf``):
    ``xlogy(a-1, z) - z - gammaln(a) - log(scale)``, ``-inf`` for ``z < 0``.

    Gradient:
        In ``x``, ``a``, ``loc`` and ``scale``, through lampy's ops and ``lampy.special``;
        0 outside the support.
    """
    x, a, loc, scale = floats("gamma.logpdf", x, a, loc, scale)
    z, s = _standard(x, loc, scale)
    outside = plain(z) < 0
    z = kept(~outside, z, 1.0)
    valid = positive(a, scale)
    a = kept(valid, a, 1.0)
    return finish(xlogy(a - 1, z) - z - gammaln(a) - log(s), valid, outside)


def gamma_pdf(x: Operand, a: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Density of the gamma distribution (``scipy.stats.gamma.pdf``).

    Gradient:
        ``pdf * d logpdf``.
    """
    return exp(gamma_logpdf(x, a, loc, scale))


def gamma_cdf(x: Operand, a: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """CDF of the gamma distribution, ``gammainc(a, z)`` (``scipy.stats.gamma.cdf``); 0
    for ``z < 0``.

    Raises:
        LampyValueError: if ``a`` needs a gradient (no closed form).

    Gradient:
        In ``x``, ``loc`` and ``scale`` (``dz = g * pdf(z)``, through
        ``lampy.special.gammainc``); none in ``a``.
    """
    refuse("gamma.cdf", "a", a, _NO_SHAPE_GRADIENT)
    x, a, loc, scale = floats("gamma.cdf", x, a, loc, scale)
    z, _ = _standard(x, loc, scale)
    outside = plain(z) < 0
    valid = positive(a, scale)
    shape = plain(kept(valid, a, 1.0))
    return finish(gammainc(shape, kept(~outside, z, 0.0)), valid, outside, 0.0)


def gamma_logcdf(x: Operand, a: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log of the gamma CDF (``scipy.stats.gamma.logcdf``); ``-inf`` for ``z <= 0``.

    Raises:
        LampyValueError: if ``a`` needs a gradient (no closed form).

    Gradient:
        ``g * pdf / cdf`` in ``x``, ``loc`` and ``scale``; none in ``a``.
    """
    refuse("gamma.logcdf", "a", a, _NO_SHAPE_GRADIENT)
    return log_probability(gamma_cdf(x, a, loc, scale))


def chi2_logpdf(x: Operand, df: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log-density of the chi-squared distribution (``scipy.stats.chi2.logpdf``): the
    gamma distribution of shape ``df / 2`` and scale ``2 * scale``.

    Gradient:
        In ``x``, ``df``, ``loc`` and ``scale``; 0 outside the support.
    """
    x, df, loc, scale = floats("chi2.logpdf", x, df, loc, scale)
    z, s = _standard(x, loc, scale)
    outside = plain(z) < 0
    z = kept(~outside, z, 1.0)
    valid = positive(df, scale)
    k = kept(valid, df, 1.0) * 0.5
    logp = xlogy(k - 1, z) - z * 0.5 - gammaln(k) - k * _LOG_2 - log(s)
    return finish(logp, valid, outside)


def chi2_pdf(x: Operand, df: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Density of the chi-squared distribution (``scipy.stats.chi2.pdf``).

    Gradient:
        ``pdf * d logpdf``.
    """
    return exp(chi2_logpdf(x, df, loc, scale))


def chi2_cdf(x: Operand, df: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """CDF of the chi-squared distribution, ``gammainc(df / 2, z / 2)``
    (``scipy.stats.chi2.cdf``); 0 for ``z < 0``.

    Raises:
        LampyValueError: if ``df`` needs a gradient (no closed form).

    Gradient:
        In ``x``, ``loc`` and ``scale``; none in ``df``.
    """
    refuse("chi2.cdf", "df", df, _NO_SHAPE_GRADIENT)
    x, df, loc, scale = floats("chi2.cdf", x, df, loc, scale)
    z, _ = _standard(x, loc, scale)
    outside = plain(z) < 0
    valid = positive(df, scale)
    half_df = plain(kept(valid, df, 1.0)) * 0.5
    return finish(gammainc(half_df, kept(~outside, z, 0.0) * 0.5), valid, outside, 0.0)


def chi2_logcdf(x: Operand, df: Operand, loc: Operand = 0, scale: Operand = 1) -> Variable:
    """Log of the chi-squared CDF (``scipy.stats.chi2.logcdf``); ``-inf`` for ``z <= 0``.

    Raises:
        LampyValueError: if ``df`` needs a gradient (no closed form).

    Gradient:
        ``g * pdf / cdf`` in ``x``, ``loc`` and ``scale``; none in ``df``.
    """
    refuse("chi2.logcdf", "df", df, _NO_SHAPE_GRADIENT)
    return log_probability(chi2_cdf(x, df, loc, scale))


__all__ = [
    "beta_cdf",
    "beta_logcdf",
    "beta_logpdf",
    "beta_pdf",
    "chi2_cdf",
    "chi2_logcdf",
    "chi2_logpdf",
    "chi2_pdf",
    "gamma_cdf",
    "gamma_logcdf",
    "gamma_logpdf",
    "gamma_pdf",
    "norm_cdf",
    "norm_logcdf",
    "norm_logpdf",
    "norm_logsf",
    "norm_pdf",
    "norm_sf",
    "t_cdf",
    "t_logcdf",
    "t_logpdf",
    "t_pdf",
]
