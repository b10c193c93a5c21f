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
    graph_value,
    lifted,
    node_of,
    normalize_axis,
    op,
    real_operands,
    value_of,
)
from lampy.ops import broadcast_to, exp, log, log1p, where
from lampy.special._common import binary, sp, unary


def logit(p: Operand) -> Variable:
    """Elementwise ``log(p / (1 - p))`` (``scipy.special.logit``: ``±inf`` at 1 and 0,
    nan outside ``[0, 1]``).

    Gradient:
        ``dp = g / (p (1 - p))``.
    """
    a, value = unary("logit", p)
    n = node_of(p)

    def vjp(g: Any, out: Any) -> Any:
        pv = graph_value(n, a)
        return g / (pv * (1 - pv))

    return op("logit", value, contrib_of(p, lambda g: g / (a * (1 - a)), vjp=vjp))


def expit(x: Operand) -> Variable:
    """Elementwise logistic sigmoid ``1 / (1 + exp(-x))`` (``scipy.special.expit``).

    Gradient:
        ``dx = g * expit(x) * (1 - expit(x))`` (reuses the value).
    """
    _, value = unary("expit", x)

    def vjp(g: Any, out: Any) -> Any:
        y = lifted(out, value)
        return g * (y * (1 - y))

    return op("expit", value, contrib_of(x, lambda g: g * (value * (1 - value)), vjp=vjp))


def _ratio(nx: Any, a: Any, ny: Any, b: Any, shift: int) -> Any:
    """``x / (shift + y)`` with lampy ops, ``x`` and ``y`` the graph values of saved ``a``
    and ``b``: the derivative of ``xlogy`` (``shift`` 0) or ``xlog1py`` (1) in ``y``,
    for vjps. Where ``x == 0`` it is 0 as the first-order closure's; a zero denominator
    there is replaced by 1, so that its derivative in ``x`` stays ``1 / (shift + y)``
    (the mixed second derivative) wherever that is finite."""
    den = graph_value(ny, b) + shift
    bad = (np.asarray(a) == 0) & (np.asarray(b) + shift == 0)
    if bad.any():
        den = where(bad, 1, den)
    return graph_value(nx, a) / den


def xlogy(x: Operand, y: Operand) -> Variable:
    """Elementwise ``x * log(y)``, 0 where ``x == 0`` whatever ``y``
    (``scipy.special.xlogy``), with numpy broadcasting.

    Gradient:
        ``dx = g * log(y)``; ``dy = g * x / y``, 0 where ``x == 0`` (the value is 0 on
        that whole line, as JAX's ``xlogy``).
    """
    a, b, value = binary("xlogy", x, y)
    nx, ny = node_of(x), node_of(y)
    return op(
        "xlogy",
        value,
        contrib_of(x, lambda g: g * np.log(b), vjp=lambda g, out: g * log(graph_value(ny, b))),
        contrib_of(
            y,
            lambda g: g * np.where(a == 0, 0, a / b),
            vjp=lambda g, out: g * _ratio(nx, a, ny, b, 0),
        ),
    )


def xlog1py(x: Operand, y: Operand) -> Variable:
    """Elementwise ``x * log1p(y)``, 0 where ``x == 0`` (``scipy.special.xlog1py``), with
    numpy broadcasting.

    Gradient:
        ``dx = g * log1p(y)``; ``dy = g * x / (1 + y)``, 0 where ``x == 0``.
    """
    a, b, value = binary("xlog1py", x, y)
    nx, ny = node_of(x), node_of(y)
    return op(
        "xlog1py",
        value,
        contrib_of(x, lambda g: g * np.log1p(b), vjp=lambda g, out: g * log1p(graph_value(ny, b))),
        contrib_of(
            y,
            lambda g: g * np.where(a == 0, 0, a / (1 + b)),
            vjp=lambda g, out: g * _ratio(nx, a, ny, b, 1),
        ),
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
    real_operands("special.logsumexp", a, b)
    x = value_of(a, name="logsumexp")
    w = None if b is None else value_of(b, name="logsumexp")
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

    na, nb = node_of(a), node_of(b)

    def graph_weights(g: Any, out: Any) -> Any:  # weights(g) with lampy ops
        kept_shape = np.shape(expand_reduced(value, reduced, keepdims))
        spread = (g * sign).reshape(kept_shape)
        xv = graph_value(na, x)
        if w is not None and np.shape(x) != np.shape(w):  # b's share has the full shape
            xv = broadcast_to(xv, np.broadcast_shapes(np.shape(x), np.shape(w)))
        return exp(xv - lifted(out, value).reshape(kept_shape)) * spread

    def vjp_a(g: Any, out: Any) -> Any:
        return graph_weights(g, out) * (1 if w is None else graph_value(nb, w))

    result = op(
        "logsumexp",
        value,
        contrib_of(a, lambda g: weights(g) * (1 if w is None else w), vjp=vjp_a),
        None if b is None else contrib_of(b, weights, vjp=graph_weights),
    )
    return (result, np.asarray(sign)) if return_sign else result


__all__ = ["expit", "logit", "logsumexp", "xlog1py", "xlogy"]
