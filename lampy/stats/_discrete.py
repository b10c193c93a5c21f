"""The Poisson distribution: logpmf, pmf, cdf, logcdf, differentiable in ``mu`` (the
count ``k`` and the shift ``loc`` are integers and take no gradient). Values match
``scipy.stats.poisson``; a float32 ``mu`` stays float32."""

from __future__ import annotations

import numpy as np

from lampy.opkit import Operand, Variable
from lampy.ops import exp
from lampy.special import gammaincc, gammaln, xlogy
from lampy.stats._common import count, finish, floats, kept, log_probability, plain


def _counts(
    name: str, k: Operand, mu: Operand, loc: Operand
) -> tuple[np.ndarray, Variable, np.ndarray]:
    """``k - loc`` as a constant array in ``mu``'s float dtype, ``mu``, and where ``mu``
    is valid (``mu >= 0``, scipy's check)."""
    (m,) = floats(f"poisson.{name}", mu)
    kk = count(f"poisson.{name}", "k", k) - count(f"poisson.{name}", "loc", loc)
    return np.asarray(kk, dtype=m.dtype), m, plain(m) >= 0


def poisson_logpmf(k: Operand, mu: Operand, loc: Operand = 0) -> Variable:
    """Log of the Poisson probability mass ``mu**k exp(-mu) / k!``
    (``scipy.stats.poisson.logpmf``); ``-inf`` where ``k - loc`` is not a non-negative
    integer, nan where ``mu < 0``.

    Raises:
        LampyValueError: if ``k`` or ``loc`` needs a gradient (they are counts).

    Gradient:
        ``dmu = g * (k / mu - 1)`` (``-g`` at ``k = 0``, also for ``mu = 0``); none in
        ``k`` or ``loc``.
    """
    kk, mu, valid = _counts("logpmf", k, mu, loc)
    outside = ~((kk >= 0) & (kk == np.floor(kk)))
    kk = np.where(outside, 0, kk)
    m = kept(valid, mu, 1.0)
    return finish(xlogy(kk, m) - gammaln(kk + 1) - m, valid, outside)


def poisson_pmf(k: Operand, mu: Operand, loc: Operand = 0) -> Variable:
    """Poisson probability mass (``scipy.stats.poisson.pmf``).

    Raises:
        LampyValueError: if ``k`` or ``loc`` needs a gradient (they are counts).

    Gradient:
        ``dmu = g * pmf * (k / mu - 1)``.
    """
    return exp(poisson_logpmf(k, mu, loc))


def poisson_cdf(k: Operand, mu: Operand, loc: Operand = 0) -> Variable:
    """Poisson CDF ``P(K <= k) = gammaincc(floor(k - loc) + 1, mu)``
    (``scipy.stats.poisson.cdf``); 0 for ``k - loc < 0``, nan where ``mu < 0``.

    Raises:
        LampyValueError: if ``k`` or ``loc`` needs a gradient (they are counts).

    Gradient:
        ``dmu = -g * pmf(floor(k - loc), mu)`` (through ``lampy.special.gammaincc``).
    """
    kk, mu, valid = _counts("cdf", k, mu, loc)
    kk = np.floor(kk)
    outside = kk < 0
    cdf = gammaincc(np.where(outside, 0, kk) + 1, kept(valid, mu, 1.0))
    return finish(cdf, valid, outside, 0.0)


def poisson_logcdf(k: Operand, mu: Operand, loc: Operand = 0) -> Variable:
    """Log of the Poisson CDF (``scipy.stats.poisson.logcdf``); ``-inf`` for
    ``k - loc < 0``.

    Raises:
        LampyValueError: if ``k`` or ``loc`` needs a gradient (they are counts).

    Gradient:
        ``dmu = -g * pmf(floor(k - loc), mu) / cdf``.
    """
    return log_probability(poisson_cdf(k, mu, loc))


__all__ = ["poisson_cdf", "poisson_logcdf", "poisson_logpmf", "poisson_pmf"]
