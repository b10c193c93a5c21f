"""Binary elementwise math: arctan2, hypot, logaddexp, logaddexp2.

All broadcast as numpy does; each gradient is summed over its input's broadcast axes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import (
    Operand,
    Variable,
    accumulate,
    apply_binary,
    graph_value,
    lifted,
    node_of,
    op,
    param_of,
    unbroadcast,
)
from lampy.ops._exp_log import exp, exp2
from lampy.ops._where import where

_subtract, _divide = np.subtract, np.divide


def _nonzero(d: Any) -> Any:
    """``d`` with its zeros replaced by 1, so that ``0 / d`` gives 0 there."""
    if np.all(d):
        return d
    return np.where(d == 0, 1, d)


def arctan2(x1: Operand, x2: Operand) -> Variable:
    """Elementwise angle of the point ``(x2, x1)``, ``arctan(x1 / x2)`` in the right
    quadrant, in ``[-pi, pi]`` (numpy's ``arctan2``; ``x1`` is the y-coordinate).

    Gradient:
        ``dx1 = g * x2 / (x1**2 + x2**2)``, ``dx2 = -g * x1 / (x1**2 + x2**2)``. At the
        origin, where the angle is undefined, both are 0 (as in PyTorch). Along the
        branch cut (``x1 = 0``, ``x2 < 0``) the one-sided formula is used.
    """
    a, b, value = apply_binary("arctan2", np.arctan2, x1, x2)
    cache: list[Any] = []

    def r2() -> Any:
        """``x1**2 + x2**2``, with 1 where it is 0 (both numerators are 0 there)."""
        if not cache:
            # in the value's dtype: an integer operand would square in its own, and wrap
            af, bf = np.asarray(a, value.dtype), np.asarray(b, value.dtype)
            cache.append(_nonzero(af * af + bf * bf))
        return cache[0]

    def d_x1(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, g * _divide(b, r2()))

    def d_x2(g: np.ndarray, out: np.ndarray) -> None:
        _subtract(out, unbroadcast(g * _divide(a, r2()), out.shape), out=out)

    n1, n2 = node_of(x1), node_of(x2)

    def vjp_r2() -> tuple[Any, Any, Any]:
        """Both operands in the graph and ``x1**2 + x2**2`` with 1 where it is 0."""
        av, bv = graph_value(n1, a), graph_value(n2, b)
        af, bf = np.asarray(a, value.dtype), np.asarray(b, value.dtype)
        return av, bv, av * av + bv * bv + (af * af + bf * bf == 0)

    def vjp_x1(g: Any, out: Any) -> Any:
        _, bv, r = vjp_r2()
        return g * bv / r

    def vjp_x2(g: Any, out: Any) -> Any:
        av, _, r = vjp_r2()
        return -(g * av) / r

    return op("arctan2", value, param_of(x1, d_x1, vjp=vjp_x1), param_of(x2, d_x2, vjp=vjp_x2))


def hypot(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``sqrt(x1**2 + x2**2)``, computed without overflow (numpy's ``hypot``).

    Gradient:
        ``dx1 = g * x1 / hypot(x1, x2)``, ``dx2 = g * x2 / hypot(x1, x2)`` (reuses the
        forward value). At the origin both are 0, the subgradient that matches
        ``abs'(0) = 0``; PyTorch gives nan there.
    """
    a, b, value = apply_binary("hypot", np.hypot, x1, x2)
    cache: list[Any] = []

    def denominator() -> Any:
        if not cache:
            cache.append(_nonzero(value))
        return cache[0]

    def d_x1(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, g * _divide(a, denominator()))

    def d_x2(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, g * _divide(b, denominator()))

    n1, n2 = node_of(x1), node_of(x2)

    def vjp(n: Any, v: Any) -> Any:
        def rule(g: Any, out: Any) -> Any:
            return g * graph_value(n, v) / (lifted(out, value) + (value == 0))

        return rule

    return op(
        "hypot",
        value,
        param_of(x1, d_x1, vjp=vjp(n1, a)),
        param_of(x2, d_x2, vjp=vjp(n2, b)),
    )


def _share(e: Any, a: Any, b: Any) -> Any:
    """Softmax weight ``e`` of ``x1`` with the nans of equal infinite inputs set to 1/2.

    ``logaddexp(inf, inf)`` and ``logaddexp(-inf, -inf)`` give ``inf - inf = nan`` in the
    weight; 1/2, the weight of every other tie, is its limit along ``x1 = x2``.
    """
    nan = np.isnan(e)
    if not nan.any():
        return e
    return np.where(nan & np.equal(a, b), e.dtype.type(0.5), e)


def _share_vjp(n: Any, a: Any, b: Any, value: Any, base: Any) -> Any:
    """The vjp of ``logaddexp`` (``base`` ``exp``) or ``logaddexp2`` (``exp2``) for the
    operand ``a`` (node ``n``): ``g * base(a - out)``, 1/2 where ``_share`` puts it."""

    def rule(g: Any, out: Any) -> Any:
        w = base(graph_value(n, a) - lifted(out, value))
        ties = np.isinf(value) & np.equal(a, b)
        return g * (where(ties, 0.5, w) if ties.any() else w)

    return rule


def logaddexp(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``log(exp(x1) + exp(x2))``, computed stably (numpy's ``logaddexp``).

    Gradient:
        ``dx1 = g * exp(x1 - out)``, ``dx2 = g * exp(x2 - out)`` (softmax weights of the
        two inputs, from the forward value, so they never overflow). Where both inputs
        are the same infinity each weight is 1/2, its limit along ``x1 = x2``.
    """
    a, b, value = apply_binary("logaddexp", np.logaddexp, x1, x2)

    def d_x1(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, g * _share(np.exp(a - value), a, b))

    def d_x2(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, g * _share(np.exp(b - value), b, a))

    n1, n2 = node_of(x1), node_of(x2)
    return op(
        "logaddexp",
        value,
        param_of(x1, d_x1, vjp=_share_vjp(n1, a, b, value, exp)),
        param_of(x2, d_x2, vjp=_share_vjp(n2, b, a, value, exp)),
    )


def logaddexp2(x1: Operand, x2: Operand) -> Variable:
    """Elementwise ``log2(2**x1 + 2**x2)``, computed stably (numpy's ``logaddexp2``).

    Gradient:
        ``dx1 = g * 2**(x1 - out)``, ``dx2 = g * 2**(x2 - out)`` (the base-2 softmax
        weights, from the forward value). Where both inputs are the same infinity each
        weight is 1/2, its limit along ``x1 = x2``.
    """
    a, b, value = apply_binary("logaddexp2", np.logaddexp2, x1, x2)

    def d_x1(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, g * _share(np.exp2(a - value), a, b))

    def d_x2(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, g * _share(np.exp2(b - value), b, a))

    n1, n2 = node_of(x1), node_of(x2)
    return op(
        "logaddexp2",
        value,
        param_of(x1, d_x1, vjp=_share_vjp(n1, a, b, value, exp2)),
        param_of(x2, d_x2, vjp=_share_vjp(n2, b, a, value, exp2)),
    )


__all__ = ["arctan2", "hypot", "logaddexp", "logaddexp2"]
