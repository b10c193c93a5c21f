"""Piecewise-constant ops: sign, floor, ceil, round (around), trunc.

Their derivative is 0 wherever it exists and undefined at the jumps. As in PyTorch, the
gradient is taken as exactly 0 everywhere: the result of a float input still needs a
gradient (so the graph stays connected and ``backward`` works through it), and its
closure adds nothing, so an input reached only through these ops gets a zero gradient.
Their differentiable rule (for ``create_graph`` passes) is a constant zero of the input's
shape: exactly 0 like the closure, even where ``g`` is inf or nan (``g * 0`` would be
nan there), and nothing for a later pass to differentiate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import Operand, Variable, op, param_of, value_of


def _zero(g: np.ndarray, out: np.ndarray) -> None:
    """The gradient of a piecewise-constant op: 0, so nothing is added to ``out``."""


def _zero_vjp(g: Any, out: Any) -> np.ndarray:
    """The differentiable gradient of a piecewise-constant (elementwise) op: a constant 0
    of ``g``'s shape (a broadcast view of one zero; the pass casts it to the input's
    dtype)."""
    return np.broadcast_to(np.zeros((), g.dtype), g.shape)


def sign(x: Operand) -> Variable:
    """Elementwise sign: -1, 0 or 1 (0 for ``±0``, nan for nan), as numpy.

    Gradient:
        ``dx = 0`` everywhere, at ``x = 0`` too.
    """
    return op("sign", np.sign(value_of(x, name="sign")), param_of(x, _zero, vjp=_zero_vjp))


def floor(x: Operand) -> Variable:
    """Elementwise floor: the largest integer not above ``x``.

    Gradient:
        ``dx = 0`` everywhere, at integers too.
    """
    return op("floor", np.floor(value_of(x, name="floor")), param_of(x, _zero, vjp=_zero_vjp))


def ceil(x: Operand) -> Variable:
    """Elementwise ceiling: the smallest integer not below ``x``.

    Gradient:
        ``dx = 0`` everywhere, at integers too.
    """
    return op("ceil", np.ceil(value_of(x, name="ceil")), param_of(x, _zero, vjp=_zero_vjp))


def trunc(x: Operand) -> Variable:
    """Elementwise truncation towards zero.

    Gradient:
        ``dx = 0`` everywhere, at integers too.
    """
    return op("trunc", np.trunc(value_of(x, name="trunc")), param_of(x, _zero, vjp=_zero_vjp))


def round(a: Operand, decimals: int = 0) -> Variable:
    """Round to ``decimals`` decimal places, halves to even, as :func:`numpy.round`.

    Args:
        a: The input.
        decimals: Number of decimal places; negative values round to tens, hundreds...

    Gradient:
        ``da = 0`` everywhere, at the rounding jumps (halves) too.
    """
    return op(
        "round", np.round(value_of(a, name="round"), decimals), param_of(a, _zero, vjp=_zero_vjp)
    )


around = round
"""Alias of :func:`round`, as :func:`numpy.around`."""


__all__ = ["around", "ceil", "floor", "round", "sign", "trunc"]
