"""Op table of ``lampy.special`` against ``scipy.special``.

Each entry draws its arguments inside the function's domain, away from poles (gamma,
digamma and rgamma at 0 and the negative integers) and from where the value leaves
float range; orders and shape parameters (``n``, ``v``, ``a`` of gammainc) are keyword
constants, since they take no gradient. Where scipy computes a float32 argument in
float64 (an integer order, polygamma, multigammaln), the reference is cast back to the
argument's dtype, as lampy keeps it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sc
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lampy import special
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec, binary, reduction, unary

_NONPOSITIVE_INTEGERS = tuple(float(-k) for k in range(6))


def _as(x: np.ndarray, value: Any) -> np.ndarray:
    """scipy's ``value`` in ``x``'s dtype."""
    return np.asarray(value).astype(x.dtype)


def with_order(
    lo: float, hi: float, orders: st.SearchStrategy[float], avoid: tuple[float, ...] = ()
) -> Any:
    """``x`` in ``[lo, hi]`` and a constant ``order`` array (drawn from ``orders``) of a
    shape broadcastable with it."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            s1, s2 = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
            x = d(ls.arrays(s1, dtype, min_value=lo, max_value=hi, avoid=avoid, margin=0.1))
            order = d(hnp.arrays(np.float64, s2, elements=orders))
            return [x], {"order": order}

        return build()

    return draw


def betainc_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """``x`` in [0.05, 0.95] and constant shapes ``a``, ``b`` in [0.5, 5], broadcastable."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2, s3 = d(ls.broadcastable_shapes(3, max_dims=3, max_side=3))
        x = d(ls.arrays(s1, dtype, min_value=0.05, max_value=0.95))
        shapes = st.floats(0.5, 5)
        a = d(hnp.arrays(np.float64, s2, elements=shapes))
        b = d(hnp.arrays(np.float64, s3, elements=shapes))
        return [x], {"a": a, "b": b}

    return build()


def multigammaln_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """A dimension ``d`` of 1 to 4 and ``a > (d - 1) / 2`` (scipy's domain)."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        dim = d(st.integers(1, 4))
        lo = (dim - 1) / 2 + 0.2
        return [d(ls.arrays(ls.shapes(max_dims=3), dtype, min_value=lo, max_value=lo + 6))], {
            "d": dim
        }

    return build()


def logsumexp_weighted(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """``a`` and positive weights ``b`` (both params) of broadcastable shapes, an axis."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2 = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
        a = d(ls.arrays(s1, dtype, min_value=-5, max_value=5))
        b = d(ls.arrays(s2, dtype, min_value=0.2, max_value=3))
        ndim = len(np.broadcast_shapes(s1, s2))
        return [a, b], {"axis": d(ls.axes(ndim)), "keepdims": d(st.booleans())}

    return build()


def _integers(lo: int, hi: int) -> st.SearchStrategy[float]:
    return st.integers(lo, hi).map(float)


_REAL_ORDERS = st.floats(-2.5, 3.5).filter(lambda v: abs(v - round(v)) > 0.05) | _integers(-3, 4)

OPS: list[OpSpec] = [
    OpSpec("special.erf", special.erf, sc.erf, unary(-3, 3)),
    OpSpec("special.erfc", special.erfc, sc.erfc, unary(-3, 3)),
    OpSpec("special.erfinv", special.erfinv, sc.erfinv, unary(-0.9, 0.9)),
    OpSpec("special.erfcinv", special.erfcinv, sc.erfcinv, unary(0.1, 1.9)),
    OpSpec("special.ndtr", special.ndtr, sc.ndtr, unary(-5, 5)),
    OpSpec("special.log_ndtr", special.log_ndtr, sc.log_ndtr, unary(-5, 5)),
    OpSpec("special.log_ndtr_left_tail", special.log_ndtr, sc.log_ndtr, unary(-30, -5)),
    OpSpec("special.gamma", special.gamma, sc.gamma, unary(0.2, 5)),
    OpSpec(
        "special.gamma_negative",
        special.gamma,
        sc.gamma,
        unary(-2.85, -0.15, avoid=_NONPOSITIVE_INTEGERS, margin=0.15),
    ),
    OpSpec("special.gammaln", special.gammaln, sc.gammaln, unary(0.1, 10)),
    OpSpec(
        "special.rgamma",
        special.rgamma,
        sc.rgamma,
        unary(-3, 5, avoid=_NONPOSITIVE_INTEGERS, margin=0.1),
    ),
    OpSpec("special.digamma", special.digamma, sc.digamma, unary(0.2, 10)),
    OpSpec(
        "special.psi_negative",
        special.psi,
        sc.psi,
        unary(-2.8, -0.2, avoid=_NONPOSITIVE_INTEGERS, margin=0.2),
    ),
    OpSpec(
        "special.polygamma",
        lambda x, order: special.polygamma(order, x),
        lambda x, order: _as(x, sc.polygamma(order, x)),
        with_order(0.3, 8, _integers(0, 3)),
    ),
    OpSpec(
        "special.multigammaln",
        special.multigammaln,
        lambda a, d: _as(a, sc.multigammaln(a, d)),
        multigammaln_inputs,
    ),
    OpSpec("special.beta", special.beta, sc.beta, binary(0.3, 4, 0.3, 4)),
    OpSpec("special.betaln", special.betaln, sc.betaln, binary(0.1, 20, 0.1, 20)),
    OpSpec(
        "special.gammainc",
        lambda x, order: special.gammainc(order, x),
        lambda x, order: _as(x, sc.gammainc(order, x)),
        with_order(0.05, 10, st.floats(0.3, 5)),
    ),
    OpSpec(
        "special.gammaincc",
        lambda x, order: special.gammaincc(order, x),
        lambda x, order: _as(x, sc.gammaincc(order, x)),
        with_order(0.05, 10, st.floats(0.3, 5)),
    ),
    OpSpec(
        "special.betainc",
        lambda x, a, b: special.betainc(a, b, x),
        lambda x, a, b: _as(x, sc.betainc(a, b, x)),
        betainc_inputs,
    ),
    OpSpec(
        "special.stdtr",
        lambda x, order: special.stdtr(order, x),
        lambda x, order: _as(x, sc.stdtr(order, x)),
        with_order(-6, 6, st.floats(0.5, 30)),
    ),
    OpSpec("special.logit", special.logit, sc.logit, unary(0.05, 0.95)),
    OpSpec("special.expit", special.expit, sc.expit, unary(-8, 8)),
    OpSpec("special.xlogy", special.xlogy, sc.xlogy, binary(-3, 3, 0.1, 5)),
    OpSpec("special.xlog1py", special.xlog1py, sc.xlog1py, binary(-3, 3, -0.9, 5)),
    OpSpec("special.logsumexp", special.logsumexp, sc.logsumexp, reduction(nonempty=True)),
    OpSpec(
        "special.logsumexp_weighted",
        lambda a, b, axis, keepdims: special.logsumexp(a, axis, b, keepdims),
        lambda a, b, axis, keepdims: sc.logsumexp(a, axis, b, keepdims),
        logsumexp_weighted,
    ),
    OpSpec("special.i0", special.i0, sc.i0, unary(-5, 5)),
    OpSpec("special.i1", special.i1, sc.i1, unary(-5, 5)),
    OpSpec(
        "special.iv",
        lambda x, order: special.iv(order, x),
        lambda x, order: _as(x, sc.iv(order, x)),
        with_order(0.1, 5, _REAL_ORDERS),
    ),
    OpSpec(
        "special.iv_integer_orders",
        lambda x, order: special.iv(order, x),
        lambda x, order: _as(x, sc.iv(order, x)),
        with_order(-5, 5, _integers(-3, 4), avoid=(0.0,)),  # scipy's iv: nan at subnormals
    ),
    OpSpec(
        "special.ive",
        lambda x, order: special.ive(order, x),
        lambda x, order: _as(x, sc.ive(order, x)),
        with_order(0.1, 5, _REAL_ORDERS),
    ),
    OpSpec(
        "special.ive_integer_orders",
        lambda x, order: special.ive(order, x),
        lambda x, order: _as(x, sc.ive(order, x)),
        with_order(-5, 5, _integers(-3, 4), avoid=(0.0,)),
    ),
    OpSpec("special.j0", special.j0, sc.j0, unary(-10, 10)),
    OpSpec("special.j1", special.j1, sc.j1, unary(-10, 10)),
    OpSpec(
        "special.jn",
        lambda x, order: special.jn(order, x),
        lambda x, order: _as(x, sc.jn(order, x)),
        with_order(-10, 10, _integers(-3, 4)),
    ),
    OpSpec("special.y0", special.y0, sc.y0, unary(0.2, 10)),
    OpSpec("special.y1", special.y1, sc.y1, unary(0.3, 10)),
    OpSpec(
        "special.yn",
        lambda x, order: special.yn(order, x),
        lambda x, order: _as(x, sc.yn(order.astype(int), x)),
        with_order(0.5, 10, _integers(0, 4)),
    ),
]
