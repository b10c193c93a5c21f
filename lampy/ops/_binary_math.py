"""Binary elementwise math: arctan2, hypot, logaddexp, logaddexp2.

All broadcast as numpy does; each gradient is summed over its input's broadcast axes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import Operand, Variable, accumulate, apply_binary, op, param_of, unbroadcast

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

    return op("arctan2", value, param_of(x1, d_x1), param_of(x2, d_x2))


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

    return op("hypot", value, param_of(x1, d_x1), param_of(x2, d_x2))


def _share(e: Any, a: Any, b: Any) -> Any:
    """Softmax weight ``e`` of ``x1`` with the nans of equal infinite inputs set to 1/2.

    ``logaddexp(inf, inf)`` and ``logaddexp(-inf, -inf)`` give ``inf - inf = nan`` in the
    weight; 1/2, the weight of every other tie, is its limit along ``x1 = x2``.
    """
    nan = np.isnan(e)
    if not nan.any():
        return e
    return np.where(nan & np.equal(a, b), e.dtype.type(0.5), e)


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

    return op("logaddexp", value, param_of(x1, d_x1), param_of(x2, d_x2))


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

    return op("logaddexp2", value, param_of(x1, d_x1), param_of(x2, d_x2))


__all__ = ["arctan2", "hypot", "logaddexp", "logaddexp2"]
