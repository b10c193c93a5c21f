"""Logistic and log-sum functions: logit, expit, xlogy, xlog1py, logsumexp (values by
``scipy.special``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import (
    Operand,
    Variable,
    broadcast_error,
    contrib_of,
    expand_reduced,
    normalize_axis,
    op,
    value_of,
)
from lampy.special._common import binary, sp, unary


def logit(p: Operand) -> Variable:
    """Elementwise ``log(p / (1 - p))`` (``scipy.special.logit``: ``±inf`` at 1 and 0,
    nan outside ``[0, 1]``).

    Gradient:
        ``dp = g / (p (1 - p))``.
    """
    a, value = unary("logit", p)
    return op("logit", value, contrib_of(p, lambda g: g / (a * (1 - a))))


def expit(x: Operand) -> Variable:
    """Elementwise logistic sigmoid ``1 / (1 + exp(-x))`` (``scipy.special.expit``).

    Gradient:
        ``dx = g * expit(x) * (1 - expit(x))`` (reuses the value).
    """
    _, value = unary("expit", x)
    return op("expit", value, contrib_of(x, lambda g: g * (value * (1 - value))))


def xlogy(x: Operand, y: Operand) -> Variable:
    """Elementwise ``x * log(y)``, 0 where ``x == 0`` whatever ``y``
    (``scipy.special.xlogy``), with numpy broadcasting.

    Gradient:
        ``dx = g * log(y)``; ``dy = g * x / y``, 0 where ``x == 0`` (the value is 0 on
        that whole line, as JAX's ``xlogy``).
    """
    a, b, value = binary("xlogy", x, y)
    return op(
        "xlogy",
        value,
        contrib_of(x, lambda g: g * np.log(b)),
        contrib_of(y, lambda g: g * np.where(a == 0, 0, a / b)),
    )


def xlog1py(x: Operand, y: Operand) -> Variable:
    """Elementwise ``x * log1p(y)``, 0 where ``x == 0`` (``scipy.special.xlog1py``), with
    numpy broadcasting.

    Gradient:
        ``dx = g * log1p(y)``; ``dy = g * x / (1 + y)``, 0 where ``x == 0``.
    """
    a, b, value = binary("xlog1py", x, y)
    return op(
        "xlog1py",
        value,
        contrib_of(x, lambda g: g * np.log1p(b)),
        contrib_of(y, lambda g: g * np.where(a == 0, 0, a / (1 + b))),
    )


def logsumexp(
    a: Operand,
    axis: Any = None,
    b: Operand | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably, with scipy's signature
    (``scipy.special.logsumexp``): ``b`` weights broadcast against ``a``.

    Args:
        a: The exponents.
        axis: An int, a tuple of ints, or None for all axes.
        b: Weights (may be negative), broadcast against ``a``; None for ones.
        keepdims: Keep the reduced axes with length 1.
        return_sign: Return ``(log|sum|, sign)`` (the sign a constant numpy array), so a
            negative weighted sum has a value; without it, a negative sum gives nan.

    Gradient:
        With ``s`` the sign of the sum and ``w = b * exp(a - value)``: ``da = g * s * w``,
        ``db = g * s * exp(a - value)`` (the softmax of the slice, weighted). A slice
        whose sum is 0 gets nan, as ``lampy.logsumexp``.
    """
    x = value_of(a)
    w = None if b is None else value_of(b)
    try:
        ndim = np.ndim(x) if w is None else len(np.broadcast_shapes(np.shape(x), np.shape(w)))
    except ValueError:
        raise broadcast_error("logsumexp", x, w) from None
    axes = normalize_axis("logsumexp", axis, ndim) if axis is not None else None
    value, sign = sp("logsumexp").logsumexp(x, axis=axes, b=w, keepdims=keepdims, return_sign=True)
    if not return_sign:
        value = np.where(sign < 0, np.nan, value)[()]
    reduced = tuple(range(ndim)) if axes is None else axes

    def weights(g: Any) -> Any:  # g * s * exp(a - value), spread over the slice
        return np.exp(x - expand_reduced(value, reduced, keepdims)) * expand_reduced(
            g * sign, reduced, keepdims
        )

    result = op(
        "logsumexp",
        value,
        contrib_of(a, lambda g: weights(g) * (1 if w is None else w)),
        None if b is None else contrib_of(b, weights),
    )
    return (result, np.asarray(sign)) if return_sign else result


__all__ = ["expit", "logit", "logsumexp", "xlog1py", "xlogy"]
