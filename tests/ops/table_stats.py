"""Op table of ``lampy.stats`` against ``scipy.stats``.

Every argument that takes a gradient is a param of a mutually broadcast shape: the point
inside the support (away from its ends, where the log-density has a pole), the
parameters inside their domains. Counts (Poisson's ``k``) and the shape parameters of a
CDF (no closed-form derivative) are keyword constants. scipy computes in float64, so
the reference is cast to the arguments' dtype; float32 values are compared to 1e-4 as
lampy computes them in float32 through several ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.stats as ss
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lampy import stats
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec

Bounds = tuple[float, float]


def _as(x: np.ndarray, value: Any) -> np.ndarray:
    """scipy's float64 ``value`` in ``x``'s dtype."""
    return np.asarray(value).astype(x.dtype)


def params(*bounds: Bounds, consts: dict[str, Bounds] | None = None) -> Any:
    """One param per ``(lo, hi)`` in ``bounds``, of mutually broadcastable shapes, and
    keyword constants drawn in their ``(lo, hi)``."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shapes = d(ls.broadcastable_shapes(len(bounds), max_dims=3, max_side=3))
            arrays = [
                d(ls.arrays(s, dtype, min_value=lo, max_value=hi))
                for s, (lo, hi) in zip(shapes, bounds, strict=True)
            ]
            kwargs = {
                k: d(ls.arrays(ls.shapes(max_dims=1, min_side=1, max_side=1), dtype,
                               min_value=lo, max_value=hi))
                for k, (lo, hi) in (consts or {}).items()
            }  # fmt: skip
            return arrays, kwargs

        return build()

    return draw


def located(*bounds: Bounds, z: Bounds = (0.05, 0.95)) -> Any:
    """``x = loc + z * scale`` with the standardised ``z`` in ``z``'s bounds (inside a
    bounded support), then ``loc``, ``scale`` and the shape parameters in ``bounds``."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shapes = d(ls.broadcastable_shapes(3 + len(bounds), max_dims=3, max_side=3))
            zs = d(ls.arrays(shapes[0], dtype, min_value=z[0], max_value=z[1]))
            loc = d(ls.arrays(shapes[1], dtype, min_value=-2, max_value=2))
            scale = d(ls.arrays(shapes[2], dtype, min_value=0.5, max_value=3))
            shape_params = [
                d(ls.arrays(s, dtype, min_value=lo, max_value=hi))
                for s, (lo, hi) in zip(shapes[3:], bounds, strict=True)
            ]
            x = (loc + zs * scale).astype(dtype)
            return [x, *shape_params, loc, scale], {}

        return build()

    return draw


def _beta_cdf_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """``x = loc + z * scale`` inside the support, ``loc``, ``scale`` params; the shapes
    ``a``, ``b`` constants (no gradient in a CDF)."""
    located_inputs = located((0.5, 5), (0.5, 5))(dtype)
    return located_inputs.map(
        lambda inp: ([inp[0][0], *inp[0][3:]], {"a": inp[0][1], "b": inp[0][2]})
    )


def poisson_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """``mu`` a param in [0.1, 10]; counts ``k`` (0 to 12) a constant of a broadcastable
    shape (counts outside the support, where the log is ``-inf``, are in
    ``tests/stats``)."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2 = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
        mu = d(ls.arrays(s1, dtype, min_value=0.1, max_value=10))
        counts = st.integers(0, 12).map(float)
        return [mu], {"k": d(hnp.arrays(np.float64, s2, elements=counts))}

    return build()


def dirichlet_inputs(full: bool) -> Any:
    """``alpha`` (2 to 4 components in [0.5, 5]) and points on the simplex along the
    first axis: all ``K`` components as a constant (``full``; a perturbed point would
    leave the simplex) or the first ``K - 1`` as a param (the last is ``1 - sum``)."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            k = d(st.integers(2, 4))
            alpha = d(ls.arrays((k,), dtype, min_value=0.5, max_value=5))
            rest = d(ls.shapes(max_dims=1, max_side=3))  # scipy's layouts: (K,), (K, N)
            w = d(ls.arrays((k, *rest), np.float64, min_value=0.2, max_value=1))
            x = (w / w.sum(axis=0)).astype(dtype)
            if full:
                return [alpha], {"x": x}
            return [x[:-1], alpha], {}

        return build()

    return draw


def mvn_inputs(cov_kind: str) -> Any:
    """Points of dimension 1 to 3 (one point, or a batch of them), a mean and a
    covariance: a positive definite matrix ``L L^T + I/2``, a positive diagonal, or a
    positive scalar (``cov_kind``)."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            dim = d(st.integers(1, 3))
            batch = d(st.sampled_from([(), (2,), (2, 3)]))
            x = d(ls.arrays((*batch, dim), dtype, min_value=-3, max_value=3))
            mean = d(ls.arrays((dim,), dtype, min_value=-1, max_value=1))
            if cov_kind == "matrix":
                m = d(ls.arrays((dim, dim), np.float64, min_value=-1, max_value=1))
                cov = (m @ m.T + 0.5 * np.eye(dim)).astype(dtype)
            elif cov_kind == "diagonal":
                cov = d(ls.arrays((dim,), dtype, min_value=0.3, max_value=3))
            else:
                cov = d(ls.arrays((), dtype, min_value=0.3, max_value=3))
            return [x, mean, cov], {}

        return build()

    return draw


def _dirichlet(fn: Any) -> Any:
    """scipy's ``fn`` at ``x`` completed to ``K`` components and summing to 1 in float64
    (scipy checks the sum to 1e-9, which float32 points miss), and empty for an empty
    batch (where scipy's check fails)."""

    def ref(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        full = np.concatenate([x, 1 - x.sum(axis=0, keepdims=True)]) if len(x) < len(alpha) else x
        full = full.astype(np.float64)
        if full.size == 0:
            return np.empty(full.shape[1:], alpha.dtype).squeeze()
        return _as(alpha, fn(full / full.sum(axis=0), alpha))

    return ref


def _mvn(fn: Any) -> Any:
    return lambda x, mean, cov: _as(x, fn(x, mean, np.diag(cov) if cov.ndim == 1 else cov))


_X, _LOC, _SCALE = (-5.0, 5.0), (-2.0, 2.0), (0.3, 3.0)
_RTOL32 = 1e-4

OPS: list[OpSpec] = [
    *[
        OpSpec(
            f"stats.norm.{f}",
            getattr(stats.norm, f),
            lambda x, loc, scale, f=f: _as(x, getattr(ss.norm, f)(x, loc, scale)),
            params(_X, _LOC, _SCALE),
            forward_rtol=_RTOL32,
        )
        for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
    ],
    *[
        OpSpec(
            f"stats.t.{f}",
            getattr(stats.t, f),
            lambda x, df, loc, scale, f=f: _as(x, getattr(ss.t, f)(x, df, loc, scale)),
            params(_X, (0.5, 30), _LOC, _SCALE),
            forward_rtol=_RTOL32,
        )
        for f in ("logpdf", "pdf")
    ],
    *[
        OpSpec(
            f"stats.t.{f}",
            lambda x, loc, scale, df, f=f: getattr(stats.t, f)(x, df, loc, scale),
            lambda x, loc, scale, df, f=f: _as(x, getattr(ss.t, f)(x, df, loc, scale)),
            params(_X, _LOC, _SCALE, consts={"df": (0.5, 30)}),
            forward_rtol=_RTOL32,
            # scipy's stdtr is accurate to about 1e-11 absolute, so central differences
            # with a 1e-6 step are good to about 1e-5 (seen: 1.6e-5 at x = loc)
            grad_atol=1e-4,
        )
        for f in ("cdf", "logcdf")
    ],
    *[
        OpSpec(
            f"stats.beta.{f}",
            lambda x, loc, scale, a, b, f=f: getattr(stats.beta, f)(x, a, b, loc, scale),
            lambda x, loc, scale, a, b, f=f: _as(x, getattr(ss.beta, f)(x, a, b, loc, scale)),
            _beta_cdf_inputs,
            forward_rtol=_RTOL32,
        )
        for f in ("cdf", "logcdf")
    ],
    *[
        OpSpec(
            f"stats.beta.{f}",
            getattr(stats.beta, f),
            lambda x, a, b, loc, scale, f=f: _as(x, getattr(ss.beta, f)(x, a, b, loc, scale)),
            located((0.3, 5), (0.3, 5)),
            forward_rtol=_RTOL32,
        )
        for f in ("logpdf", "pdf")
    ],
    *[
        OpSpec(
            f"stats.{dist}.{f}",
            getattr(getattr(stats, dist), f),
            lambda x, a, loc, scale, dist=dist, f=f: _as(
                x, getattr(getattr(ss, dist), f)(x, a, loc, scale)
            ),
            located((0.3, 6), z=(0.05, 8)),
            forward_rtol=_RTOL32,
        )
        for dist in ("gamma", "chi2")
        for f in ("logpdf", "pdf")
    ],
    *[
        OpSpec(
            f"stats.{dist}.{f}",
            lambda x, loc, scale, a, dist=dist, f=f: getattr(getattr(stats, dist), f)(
                x, a, loc, scale
            ),
            lambda x, loc, scale, a, dist=dist, f=f: _as(
                x, getattr(getattr(ss, dist), f)(x, a, loc, scale)
            ),
            params((0.5, 8), (-0.4, 0.4), (0.5, 2), consts={"a": (0.5, 5)}),
            forward_rtol=_RTOL32,
        )
        for dist in ("gamma", "chi2")
        for f in ("cdf", "logcdf")
    ],
    *[
        OpSpec(
            f"stats.poisson.{f}",
            lambda mu, k, f=f: getattr(stats.poisson, f)(k, mu),
            lambda mu, k, f=f: _as(mu, getattr(ss.poisson, f)(k, mu)),
            poisson_inputs,
            forward_rtol=_RTOL32,
        )
        for f in ("logpmf", "pmf", "cdf", "logcdf")
    ],
    OpSpec(
        "stats.dirichlet.logpdf",
        lambda alpha, x: stats.dirichlet.logpdf(x, alpha),
        lambda alpha, x: _dirichlet(ss.dirichlet.logpdf)(x, alpha),
        dirichlet_inputs(full=True),
        forward_rtol=_RTOL32,
    ),
    OpSpec(
        "stats.dirichlet.logpdf_last_implied",
        stats.dirichlet.logpdf,
        _dirichlet(ss.dirichlet.logpdf),
        dirichlet_inputs(full=False),
        forward_rtol=_RTOL32,
    ),
    OpSpec(
        "stats.dirichlet.pdf",
        stats.dirichlet.pdf,
        _dirichlet(ss.dirichlet.pdf),
        dirichlet_inputs(full=False),
        forward_rtol=_RTOL32,
    ),
    *[
        OpSpec(
            f"stats.multivariate_normal.{f}_{kind}",
            getattr(stats.multivariate_normal, f),
            _mvn(getattr(ss.multivariate_normal, f)),
            mvn_inputs(kind),
            forward_rtol=_RTOL32,
        )
        for f in ("logpdf", "pdf")
        for kind in ("matrix", "diagonal", "scalar")
    ],
]
