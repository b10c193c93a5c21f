"""Second derivatives through lampy.special and lampy.stats: each special function's
backward rule is recorded with lampy ops and special functions (``create_graph=True``),
checked with ``check_grad(..., order=2)`` against central differences of the first-order
gradients (float64)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy import special, stats
from lampy.testing import check_grad

seeds = st.integers(0, 2**16)

# name -> (function of one Variable, low, high)
UNARY: dict[str, tuple[Callable[[Any], Any], float, float]] = {
    "erf": (special.erf, -2, 2),
    "erfc": (special.erfc, -2, 2),
    "erfinv": (special.erfinv, -0.9, 0.9),
    "erfcinv": (special.erfcinv, 0.1, 1.9),
    "ndtr": (special.ndtr, -3, 3),
    "log_ndtr": (special.log_ndtr, -30, 3),
    "gamma": (special.gamma, 0.5, 4),
    "gammaln": (special.gammaln, 0.5, 6),
    "rgamma": (special.rgamma, 0.5, 4),
    "digamma": (special.digamma, 0.5, 6),
    "polygamma2": (lambda x: special.polygamma(2, x), 0.5, 4),
    "multigammaln": (lambda x: special.multigammaln(x, 3), 1.5, 5),
    "gammainc": (lambda x: special.gammainc(2.5, x), 0.2, 5),
    "gammaincc": (lambda x: special.gammaincc(1.5, x), 0.2, 5),
    "betainc": (lambda x: special.betainc(2.0, 3.5, x), 0.05, 0.95),
    "stdtr": (lambda x: special.stdtr(3.0, x), -4, 4),
    "logit": (special.logit, 0.05, 0.95),
    "expit": (special.expit, -5, 5),
    "i0": (special.i0, -4, 4),
    "i1": (special.i1, -4, 4),
    "iv": (lambda x: special.iv(1.5, x), 0.2, 4),
    "ive": (lambda x: special.ive(np.array([0.0, 2.0, 3.5]), x), 0.2, 4),
    "j0": (special.j0, -6, 6),
    "j1": (special.j1, -6, 6),
    "jn": (lambda x: special.jn(3, x), -6, 6),
    "y0": (special.y0, 0.5, 6),
    "y1": (special.y1, 0.5, 6),
    "yn": (lambda x: special.yn(2, x), 0.5, 6),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=5, deadline=None)
@given(seed=seeds)
def test_unary_second_order(name: str, seed: int) -> None:
    fn, lo, hi = UNARY[name]
    x = np.random.default_rng(seed).uniform(lo, hi, 3)
    check_grad(fn, x, order=2)


def test_gammaln_hessian_is_trigamma() -> None:
    x = np.array([0.7, 1.5, 4.0])
    h = lampy.hessian(lambda v: special.gammaln(v).sum())(x)
    trigamma = scipy.special.polygamma(1, x)
    np.testing.assert_allclose(np.asarray(getattr(h, "value", h)), np.diag(trigamma), rtol=1e-12)


@settings(max_examples=5, deadline=None)
@given(seed=seeds)
def test_binary_second_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.5, 4, (2, 3))
    check_grad(special.beta, a, b, order=2)
    check_grad(special.betaln, a, b, order=2)
    check_grad(special.xlogy, rng.uniform(-2, 2, 3), b, order=2)
    check_grad(special.xlog1py, rng.uniform(-2, 2, 3), rng.uniform(-0.5, 3, 3), order=2)
    x = rng.uniform(-2, 2, (2, 3))
    check_grad(lambda v: special.logsumexp(v, axis=1), x, order=2)
    w = rng.uniform(0.2, 2, (1, 3))
    check_grad(lambda v, u: special.logsumexp(v, axis=0, b=u, keepdims=True), x, w, order=2)


def test_xlogy_zero_x_mixed_derivative() -> None:
    """At ``x = 0`` the first-order ``dy`` is 0 but its derivative in ``x`` is ``1/y``."""
    check_grad(special.xlogy, np.array([0.0, 1.0]), np.array([2.0, 3.0]), order=2)


@settings(max_examples=5, deadline=None)
@given(seed=seeds)
def test_distributions_second_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, loc = rng.uniform(-2, 2, (2, 3))
    scale = rng.uniform(0.5, 2, 3)
    check_grad(stats.norm.logpdf, x, loc, scale, order=2)
    check_grad(stats.norm.logcdf, x, loc, scale, order=2)
    p, q = rng.uniform(0.8, 3, (2, 3))
    check_grad(lambda u, v, w: stats.beta.logpdf(u, v, w), rng.uniform(0.1, 0.9, 3), p, q, order=2)
    check_grad(lambda u, v: stats.gamma.logpdf(u, v), rng.uniform(0.2, 3, 3), p, order=2)
    check_grad(lambda u, v: stats.t.logpdf(u, v), x, p, order=2)
    check_grad(lambda u: stats.gamma.cdf(u, 2.0), rng.uniform(0.2, 3, 3), order=2)
