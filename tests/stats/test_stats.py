"""lampy.stats beyond the op table: scipy's answers for invalid parameters (nan) and
points outside the support (-inf, or a CDF of 0), with gradient 0 there; refused
gradients in counts and CDF shapes; bad input; 0-d, empty and Python-number
arguments. (Values and gradients inside the domains: tests/ops/table_stats.py.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.stats as ss

import lampy
from lampy import stats
from lampy.testing import check_grad


def _scipy(fn: Callable[..., Any], *args: Any) -> np.ndarray:
    with np.errstate(all="ignore"):  # scipy itself warns dividing by a zero scale
        return np.asarray(fn(*args))


# (name, arguments): points outside the support, at its ends, and invalid parameters.
EDGES: list[tuple[str, tuple[Any, ...]]] = [
    ("norm.logpdf", ([-1.0, 0.0, 1.0], 0.0, [1.0, 0.0, -1.0])),
    ("norm.cdf", ([-1.0, np.inf, -np.inf], 0.0, [np.nan, 1.0, 1.0])),
    ("norm.logcdf", ([-50.0, 0.0, 1.0], 0.0, [1.0, -2.0, 1.0])),
    ("norm.sf", ([50.0, 0.0], 0.0, [1.0, 0.0])),
    ("norm.logsf", ([50.0, 0.0], 0.0, [1.0, 0.0])),
    ("t.logpdf", ([-1.0, 0.0, 1.0], [1.0, 0.0, -2.0])),
    ("t.pdf", ([-1.0, 0.0, 1.0], [1.0, np.nan, 3.0], 0.0, [1.0, 1.0, 0.0])),
    ("t.cdf", ([-np.inf, np.inf, 0.0, 1.0], [3.0, 3.0, -1.0, 2.0])),
    ("t.logcdf", ([-np.inf, 0.0, 1.0], [3.0, 3.0, 0.0])),
    ("beta.cdf", ([-0.5, 0.0, 1.0, 1.5, 0.5], [2.0, 2.0, 2.0, 2.0, -1.0], 3.0)),
    ("beta.logcdf", ([-0.5, 0.0, 1.0, 1.5, 0.5], [2.0, 2.0, 2.0, 2.0, -1.0], 3.0)),
    ("beta.logpdf", ([-0.5, 0.0, 1.0, 1.5, 0.5, 0.5], [0.5, 0.5, 2.0, 2.0, 0.0, 2.0], 2.0)),
    ("beta.pdf", ([0.0, 1.0, 0.5], [1.0, 2.0, 2.0], [2.0, 1.0, -1.0])),
    ("gamma.logpdf", ([-1.0, 0.0, 0.0, 0.0, 1.0], [2.0, 0.5, 1.0, 2.0, 0.0])),
    ("gamma.pdf", ([-1.0, 0.0, 1.0], [2.0, 1.0, -1.0])),
    ("gamma.cdf", ([-1.0, 0.0, np.inf, 1.0], [2.0, 2.0, 2.0, 0.0])),
    ("gamma.logcdf", ([-1.0, 0.0, 1.0], [2.0, 2.0, -1.0])),
    ("chi2.logpdf", ([-1.0, 0.0, 0.0, 1.0], [3.0, 2.0, 1.0, 0.0])),
    ("chi2.cdf", ([-1.0, 0.0, 1.0], [3.0, 3.0, -1.0])),
    ("chi2.logcdf", ([-1.0, 0.0, 1.0], [3.0, 3.0, 0.0])),
    ("poisson.logpmf", ([-1.0, 0.0, 2.5, 3.0, 0.0, 3.0], [2.0, 0.0, 2.0, 0.0, -1.0, 1.0])),
    ("poisson.pmf", ([-1.0, 0.0, 3.0], [2.0, 0.0, 0.0])),
    ("poisson.cdf", ([-1.0, 0.0, 2.5, 3.0], [2.0, 0.0, 2.0, -1.0])),
    ("poisson.logcdf", ([-1.0, 0.0, 2.5, 3.0], [2.0, 0.0, 2.0, -1.0])),
]


def _fn(module: Any, name: str) -> Callable[..., Any]:
    dist, fn = name.split(".")
    return getattr(getattr(module, dist), fn)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("name", "args"), EDGES, ids=[e[0] for e in EDGES])
def test_edges_match_scipy(name: str, args: tuple[Any, ...]) -> None:
    """Outside the support, at its ends and for invalid parameters, the value is
    scipy's (-inf, 0, inf or nan), without a warning, and backward runs."""
    arrays = [np.asarray(a, dtype=np.float64) for a in args]
    expected = _scipy(_fn(ss, name), *arrays)
    no_grad = {0} if name.startswith("poisson") else set()  # the count
    if name in ("gamma.cdf", "gamma.logcdf", "chi2.cdf", "chi2.logcdf", "t.cdf", "t.logcdf"):
        no_grad = {1}  # the shape, in a CDF
    if name in ("beta.cdf", "beta.logcdf"):
        no_grad = {1, 2}
    with lampy.Scope():
        variables = [lampy.const(a) if i in no_grad else lampy.param(a)
                     for i, a in enumerate(arrays)]  # fmt: skip
        out = _fn(stats, name)(*variables)
        np.testing.assert_array_equal(out.value, expected)
        assert out.dtype == np.float64
        out.backward(np.ones(out.shape))


def test_gradient_is_zero_outside_the_support_and_for_invalid_parameters() -> None:
    """Where scipy's answer is a constant (-inf outside the support, nan for an invalid
    parameter), every gradient is 0; elsewhere it is the formula's."""
    with lampy.Scope():
        x, scale = lampy.param([2.0, 2.0]), lampy.param([-1.0, 1.0])
        stats.norm.logpdf(x, 0.0, scale).backward(np.ones(2))
        assert x.grad.tolist() == [0.0, -2.0]
        assert scale.grad.tolist() == [0.0, 3.0]
    with lampy.Scope():
        x, a = lampy.param([-1.0, 2.0]), lampy.param([2.0, 2.0])
        stats.gamma.logpdf(x, a).backward(np.ones(2))
        assert x.grad.tolist() == [0.0, -0.5]
        np.testing.assert_allclose(a.grad, [0.0, np.log(2.0) - (1 - np.euler_gamma)])
    with lampy.Scope():
        mu = lampy.param([2.0, 4.0, -1.0])
        stats.poisson.logpmf(np.array([-1.0, 2.0, 2.0]), mu).backward(np.ones(3))
        assert mu.grad.tolist() == [0.0, -0.5, 0.0]


# ------------------------------------------------------------------ refused gradients


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda p: stats.poisson.logpmf(p, 2.0),
            r"poisson\.logpmf: no gradient in k: it is a count",
        ),
        (lambda p: stats.poisson.cdf(1.0, 2.0, loc=p), r"poisson\.cdf: no gradient in loc"),
        (lambda p: stats.gamma.cdf(1.0, p), r"gamma\.cdf: no gradient in a"),
        (lambda p: stats.gamma.logcdf(1.0, p), r"gamma\.logcdf: no gradient in a"),
        (lambda p: stats.chi2.cdf(1.0, p), r"chi2\.cdf: no gradient in df"),
        (lambda p: stats.t.cdf(1.0, p), r"t\.cdf: no gradient in df"),
        (lambda p: stats.t.logcdf(1.0, p), r"t\.logcdf: no gradient in df"),
        (lambda p: stats.beta.cdf(0.5, p, 2.0), r"beta\.cdf: no gradient in a"),
        (lambda p: stats.beta.cdf(0.5, 2.0, p), r"beta\.cdf: no gradient in b"),
        (lambda p: stats.beta.logcdf(0.5, 2.0, p), r"beta\.logcdf: no gradient in b"),
        (lambda p: stats.chi2.logcdf(1.0, p), r"chi2\.logcdf: no gradient in df"),
    ],
)
def test_refused_gradients_name_the_function_and_the_fix(
    call: Callable[[lampy.Variable], Any], message: str
) -> None:
    """A count, or the shape parameter of a CDF (no closed-form derivative), that needs a
    gradient raises an error naming the function and saying to pass a constant."""
    with lampy.Scope():
        with pytest.raises(lampy.LampyValueError, match=message + ".*constant"):
            call(lampy.param(3.0))
        call(lampy.const(3.0))  # as a constant it works


# ---------------------------------------------------------------------- bad input


def test_dirichlet_rejects_what_scipy_rejects() -> None:
    """dirichlet raises a ValueError (lampy's, naming the function) where scipy does:
    a point off the simplex, alpha not positive, the wrong number of components."""
    alpha = np.array([1.0, 2.0, 3.0])
    bad = [
        (np.array([0.5, 0.6, 0.1]), alpha, "simplex"),
        (np.array([0.2, 0.3, 0.5]), np.array([1.0, -2.0, 3.0]), "positive"),
        (np.array([0.2, 0.3, 0.4, 0.1]), alpha, "components"),
    ]
    for x, a, what in bad:
        with pytest.raises(ValueError):  # noqa: PT011  # scipy's is a bare ValueError
            ss.dirichlet.logpdf(x, a)
        with lampy.Scope(), pytest.raises(lampy.LampyValueError, match=f"dirichlet.*{what}"):
            stats.dirichlet.logpdf(x, a)


def test_multivariate_normal_errors() -> None:
    """multivariate_normal names the problem: a covariance that is not positive
    definite, allow_singular, shapes that do not fit."""
    with lampy.Scope():
        with pytest.raises(lampy.LampyValueError, match="not positive definite"):
            stats.multivariate_normal.logpdf([0.0, 0.0], [0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]])
        with pytest.raises(lampy.LampyValueError, match="allow_singular"):
            stats.multivariate_normal.logpdf([0.0, 0.0], allow_singular=True)
        with pytest.raises(lampy.ShapeError, match=r"cov of shape \(3, 3\)"):
            stats.multivariate_normal.logpdf([0.0, 0.0], [0.0, 0.0], np.eye(3))
        with pytest.raises(lampy.ShapeError, match="dimension 2"):
            stats.multivariate_normal.logpdf(np.zeros((4, 3)), [0.0, 0.0])


# ----------------------------------------------------- 0-d, empty, Python numbers


@pytest.mark.parametrize("shape", [(), (0,), (3, 0)])
def test_zero_d_and_empty_points(shape: tuple[int, ...]) -> None:
    """0-d and empty points give results of their shape, with gradients of their shape."""
    x = np.full(shape, 0.5)
    for fn in (stats.norm.logpdf, stats.norm.cdf):
        check_grad(lambda v, fn=fn: fn(v, 0.1, 2.0), x)
    for fn in (stats.gamma.logpdf, stats.t.logpdf, stats.chi2.logpdf):
        check_grad(lambda v, a, fn=fn: fn(v, a), x, np.array(1.5))
    check_grad(lambda v, a: stats.beta.logpdf(v, a, 2.0), x, np.array(1.5))
    with lampy.Scope():
        assert stats.poisson.logpmf(np.zeros(shape), lampy.param(2.0)).shape == shape
        assert stats.norm.logpdf(lampy.param(x)).shape == shape


def test_python_numbers_and_dtypes() -> None:
    """Python numbers are weak: a float32 point with number parameters gives float32;
    all-number arguments and integer arrays give float64, as scipy's values."""
    with lampy.Scope():
        x32 = lampy.param(np.array([0.5, 1.5], np.float32))
        assert stats.gamma.logpdf(x32, 2.0, 0, 1).dtype == np.float32
        out = stats.norm.logpdf(1, 0, 2)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.value, ss.norm.logpdf(1, 0, 2))
        out = stats.poisson.pmf(np.array([1, 2]), np.array([3, 3]))
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.value, ss.poisson.pmf([1, 2], [3, 3]))
