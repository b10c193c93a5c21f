"""Polynomials: ``polyval``, as numpy's (coefficients highest power first)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import ShapeError
from lampy.opkit import (
    Operand,
    Variable,
    array_of,
    contrib_of,
    graph_value,
    node_of,
    op,
    real_result,
    value_of,
)
from lampy.ops._join import stack


def polyval(p: Operand, x: Operand) -> Variable:
    """The polynomial with coefficients ``p`` evaluated at ``x``, as ``numpy.polyval``:
    ``p[0] * x**(N-1) + ... + p[N-2] * x + p[N-1]`` by Horner's scheme.

    Args:
        p: The ``N`` coefficients, highest power first (1-d; a list may hold
            Variables). ``N = 0`` gives zeros, as numpy.
        x: Where to evaluate (any shape).

    Returns:
        Values of ``x``'s shape, with numpy's dtype (``p`` and ``x`` promoted together).

    Raises:
        ShapeError: ``p`` is not 1-d (numpy's 2-d ``p`` evaluates several polynomials
            column-wise; evaluate them one by one).

    Gradient:
        ``dx = g * p'(x)`` (Horner's scheme on the derivative's coefficients
        ``p[i] * (N - 1 - i)``); ``dp[i] = sum(g * x**(N - 1 - i))`` over ``x``'s
        elements.
    """
    p, x = array_of("polyval", p), array_of("polyval", x)
    pv, xv = value_of(p, name="polyval"), value_of(x, name="polyval")
    if np.ndim(pv) != 1:
        raise ShapeError(
            f"polyval: p must be 1-d (the coefficients, highest power first), got shape "
            f"{np.shape(pv)}."
        )
    value = np.polyval(pv, xv)
    real_result("polyval", np.asarray(value), p, x)
    n = np.shape(pv)[0]

    def d_x(g: Any) -> Any:
        d = np.zeros(np.shape(xv), np.result_type(value))
        for i in range(n - 1):  # Horner on p'(x)
            d = d * xv + pv[i] * (n - 1 - i)
        return g * d

    def d_p(g: Any) -> Any:
        d = np.zeros(n, np.result_type(value))
        power = np.ones(np.shape(xv), np.result_type(value))
        for k in range(n):  # dp[n - 1 - k] = sum(g * x**k)
            d[n - 1 - k] = np.sum(g * power)
            power = power * xv
        return d

    node_p, node_x = node_of(p), node_of(x)
    dtype = np.result_type(value)

    def vjp_x(g: Any, out: Any) -> Any:
        pg, xg = graph_value(node_p, pv), graph_value(node_x, xv)
        d: Any = np.zeros(np.shape(xv), dtype)
        for i in range(n - 1):
            d = d * xg + pg[i] * (n - 1 - i)
        return g * d

    def vjp_p(g: Any, out: Any) -> Any:
        if n == 0:
            return np.zeros(0, dtype)
        xg = graph_value(node_x, xv)
        power: Any = np.ones(np.shape(xv), dtype)
        sums = []
        for _ in range(n):  # dp[n - 1 - k] = sum(g * x**k)
            sums.append((g * power).sum())
            power = power * xg
        return stack(sums[::-1])

    return op("polyval", value, contrib_of(p, d_p, vjp=vjp_p), contrib_of(x, d_x, vjp=vjp_x))


__all__ = ["polyval"]
