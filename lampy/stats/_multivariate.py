"""Multivariate distributions: dirichlet and multivariate_normal, differentiable in the
point and every parameter; values and argument layouts as ``scipy.stats``."""

from __future__ import annotations

import math

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.linalg import slogdet, solve
from lampy.opkit import Operand, Variable, const
from lampy.ops import concatenate, diag, exp, expand_dims, reshape, squeeze, transpose
from lampy.ops import sum as lsum
from lampy.special import gammaln, xlogy
from lampy.stats._common import floats, plain

_LOG_2PI = math.log(2.0 * math.pi)


def _simplex(x: Variable, alpha: Variable) -> Variable:
    """``x`` with its components along axis 0, completed with ``1 - sum`` when it has one
    fewer than ``alpha``; checked to lie on the simplex, as scipy checks it."""
    a, xv = plain(alpha), plain(x)
    if a.ndim != 1 or a.shape[0] < 2 or np.any(a <= 0):
        raise LampyValueError(
            "lampy.stats.dirichlet: alpha must be a 1-d array of at least 2 positive "
            f"values, got shape {a.shape} (min {a.min() if a.size else None})."
        )
    if xv.ndim == 0 or xv.shape[0] not in (a.shape[0], a.shape[0] - 1):
        raise ShapeError(
            f"lampy.stats.dirichlet: x of shape {xv.shape} must hold {a.shape[0]} (or "
            f"{a.shape[0] - 1}) components along its first axis, as alpha has."
        )
    if xv.shape[0] == a.shape[0] - 1:
        x = concatenate([x, expand_dims(1 - lsum(x, axis=0), 0)], axis=0)
        xv = plain(x)
    tol = 10 * math.sqrt(np.finfo(xv.dtype).eps) if xv.dtype.kind == "f" else 1e-9
    if np.any(xv < 0) or np.any(xv > 1) or np.any(np.abs(xv.sum(0) - 1) > tol):
        raise LampyValueError(
            "lampy.stats.dirichlet: each point x must lie on the simplex: components in "
            "[0, 1] that sum to 1 along the first axis (normalise x, or give K - 1 "
            "components and let the last be 1 - sum)."
        )
    return x


def dirichlet_logpdf(x: Operand, alpha: Operand) -> Variable:
    """Log-density of the Dirichlet distribution (``scipy.stats.dirichlet.logpdf``):
    ``sum_k xlogy(alpha_k - 1, x_k) - sum_k gammaln(alpha_k) + gammaln(sum_k alpha_k)``.

    ``x`` holds the components along its first axis (``K`` of them, or ``K - 1``, the
    last then ``1 - sum``), ``alpha`` is 1-d of length ``K``; the result has ``x``'s
    other axes, squeezed as scipy's is.

    Raises:
        LampyValueError: if ``alpha`` is not positive or a point is off the simplex.
        ShapeError: if ``x`` has the wrong number of components.

    Gradient:
        ``dx_k = g (alpha_k - 1) / x_k``; ``dalpha_k = g (log x_k - digamma(alpha_k) +
        digamma(sum alpha))``, through ``lampy.special``.
    """
    x, alpha = floats("dirichlet.logpdf", x, alpha)
    x = _simplex(x, alpha)
    a = reshape(alpha, (-1,) + (1,) * (x.ndim - 1))
    log_b = lsum(gammaln(alpha)) - gammaln(lsum(alpha))
    return squeeze(lsum(xlogy(a - 1, x), axis=0) - log_b)


def dirichlet_pdf(x: Operand, alpha: Operand) -> Variable:
    """Density of the Dirichlet distribution (``scipy.stats.dirichlet.pdf``).

    Gradient:
        ``pdf * d logpdf``.
    """
    return exp(dirichlet_logpdf(x, alpha))


def _covariance(mean: Variable | None, cov: Variable) -> tuple[Variable, Variable, int]:
    """``mean`` and ``cov`` as scipy reads them: ``cov`` a scalar (times the identity),
    a 1-d diagonal or a matrix; the dimension from ``mean`` or else from ``cov``."""
    cv = plain(cov)
    dim = 1 if cv.ndim < 2 else cv.shape[0]  # scipy's reading when mean is None
    if mean is not None:
        dim = int(np.size(plain(mean)))
    if cv.ndim == 0:
        cov = cov * np.eye(dim, dtype=cv.dtype)
    elif cv.ndim == 1:
        cov = diag(cov)
    if np.shape(plain(cov)) != (dim, dim):
        raise ShapeError(
            f"lampy.stats.multivariate_normal: cov of shape {cv.shape} does not fit a mean "
            f"of dimension {dim}: give a scalar, a diagonal of length {dim} or a ({dim}, "
            f"{dim}) matrix."
        )
    try:
        np.linalg.cholesky(plain(cov))
    except np.linalg.LinAlgError:
        raise LampyValueError(
            "lampy.stats.multivariate_normal: cov is not positive definite (allow_singular "
            "is not supported): check it, or add a small multiple of the identity."
        ) from None
    if mean is None:
        mean = const(np.zeros(dim, dtype=cv.dtype))
    return reshape(mean, (dim,)), cov, dim


def multivariate_normal_logpdf(
    x: Operand, mean: Operand | None = None, cov: Operand = 1, allow_singular: bool = False
) -> Variable:
    """Log-density of the multivariate normal (``scipy.stats.multivariate_normal.logpdf``):
    ``-(d log(2 pi) + log det(cov) + (x - mean)^T cov^{-1} (x - mean)) / 2``.

    ``x``'s last axis holds the ``d`` coordinates (a 1-d ``x`` is one point, or ``d``
    points when ``d == 1``); the result is squeezed as scipy's is.

    Raises:
        LampyValueError: if ``cov`` is not positive definite, or ``allow_singular``.
        ShapeError: if ``mean``, ``cov`` and ``x`` do not fit together.

    Gradient:
        With ``r = x - mean`` and ``s = cov^{-1} r``: ``dx = -g s``, ``dmean = g s``,
        ``dcov = g (s s^T - cov^{-1}) / 2`` (through ``lampy.linalg.solve`` and
        ``slogdet``; for a non-symmetric perturbation, as scipy's value reads all of
        ``cov``).
    """
    if allow_singular:
        raise LampyValueError(
            "lampy.stats.multivariate_normal: allow_singular=True is not supported (its "
            "pseudo-inverse has no stable gradient); add a small multiple of the identity "
            "to cov instead."
        )
    x, cov, *rest = floats("multivariate_normal.logpdf", x, cov, *(() if mean is None else (mean,)))
    m, cov, dim = _covariance(rest[0] if rest else None, cov)
    xv = plain(x)
    if xv.ndim == 0 or (xv.ndim == 1 and dim == 1):
        x = reshape(x, (-1, 1))
    elif xv.ndim == 1:
        x = reshape(x, (1, -1))
    shape = np.shape(plain(x))[:-1]
    if np.shape(plain(x))[-1] != dim:
        raise ShapeError(
            f"lampy.stats.multivariate_normal: points of shape {xv.shape} do not have the "
            f"dimension {dim} of the mean and cov along their last axis."
        )
    r = transpose(reshape(x - m, (-1, dim)))
    maha = lsum(r * solve(cov, r), axis=0)
    out = (maha + (slogdet(cov).logabsdet + dim * _LOG_2PI)) * -0.5
    return squeeze(reshape(out, shape))


def multivariate_normal_pdf(
    x: Operand, mean: Operand | None = None, cov: Operand = 1, allow_singular: bool = False
) -> Variable:
    """Density of the multivariate normal (``scipy.stats.multivariate_normal.pdf``).

    Gradient:
        ``pdf * d logpdf``.
    """
    return exp(multivariate_normal_logpdf(x, mean, cov, allow_singular))
