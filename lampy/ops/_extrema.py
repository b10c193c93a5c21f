"""Elementwise extrema of two operands: maximum, minimum, fmax, fmin.

All four route the gradient to the input whose value the output took. Where both
inputs are equal (a tie) each gets half of the gradient, PyTorch's convention for
``maximum``/``minimum``, so ``maximum(x, x)`` differentiates to 1. Nan inputs follow
numpy's forward rules: ``maximum``/``minimum`` propagate nan (the gradient goes to the
nan input, to ``x1`` if both are nan), ``fmax``/``fmin`` ignore it (the gradient goes to
the other input, to ``x1`` if both are nan).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.opkit import (
    Operand,
    Variable,
    accumulate,
    broadcast_error,
    needs_grad,
    op,
    param_of,
    real_result,
    values_of,
)
from lampy.ops._where import where

_isnan, _copyto, _where = np.isnan, np.copyto, np.where


def _has_nan(v: Any) -> bool:
    """Whether ``v`` (an array or a number) holds a nan; integers and bools never do."""
    kind = v.dtype.kind if hasattr(v, "dtype") else ("f" if isinstance(v, float) else "i")
    return kind in "fc" and bool(_isnan(v).any())


def _extremum(
    name: str,
    fn: Callable[..., Any],
    wins: Callable[..., Any],
    nan_to_x1: int,
    x1: Any,
    x2: Any,
) -> Variable:
    """``fn(x1, x2)`` with the gradient split by which input the output took.

    ``wins(a, b)`` is where ``x1`` strictly wins. ``nan_to_x1`` names the input (0: ``x1``,
    1: ``x2``) whose nan sends the whole gradient to ``x1``.
    """
    a, b = values_of(x1, x2, name=name)
    try:
        value = fn(a, b)
    except ValueError:
        raise broadcast_error(name, a, b) from None
    if value.dtype.kind in "cO":  # complex or object: refused if a gradient is needed
        real_result(name, value, x1, x2)
    cache: list[Any] = []

    def weights() -> list[Any]:
        """The weights of ``x1`` and ``x2`` in the gradient, computed once, on demand.

        Without ties or nans these are the boolean masks ``wins`` and ``~wins``;
        otherwise float weights ``w`` and ``1 - w``, with 1/2 at ties.
        """
        if not cache:
            w1 = np.asarray(wins(a, b))
            tie = np.equal(a, b)
            nans = (a, b)[nan_to_x1]
            has_tie, has_nan = bool(tie.any()), _has_nan(nans)
            if has_tie or has_nan:
                w1 = w1.astype(value.dtype)
                if has_tie:
                    _copyto(w1, 0.5, where=tie)
                if has_nan:
                    _copyto(w1, 1.0, where=_isnan(nans))
                cache.extend((w1, 1 - w1))
            else:
                cache.extend((w1, ~w1 if needs_grad(x2) else None))
        return cache

    def d_x1(g: np.ndarray, out: np.ndarray) -> None:
        w1 = weights()[0]
        accumulate(out, _where(w1, g, 0) if w1.dtype == bool else g * w1)

    def d_x2(g: np.ndarray, out: np.ndarray) -> None:
        w2 = weights()[1]
        accumulate(out, _where(w2, g, 0) if w2.dtype == bool else g * w2)

    def vjp(i: int) -> Any:
        def d(g: Any, out: Any) -> Any:
            w = weights()[i]
            return where(w, g, 0.0) if w.dtype == bool else g * w

        return d

    return op(name, value, param_of(x1, d_x1, vjp=vjp(0)), param_of(x2, d_x2, vjp=vjp(1)))


def maximum(x1: Operand, x2: Operand) -> Variable:
    """Elementwise maximum with numpy broadcasting; a nan in either input gives nan.

    Gradient:
        ``dx1 = g`` where ``x1 > x2``, ``dx2 = g`` where ``x2 > x1``, and ``g / 2`` to
        each where ``x1 == x2`` (PyTorch's tie convention). At a nan the gradient goes to
        the nan input (to ``x1`` if both are nan), whose value the output carries.
    """
    return _extremum("maximum", np.maximum, np.greater, 0, x1, x2)


def minimum(x1: Operand, x2: Operand) -> Variable:
    """Elementwise minimum with numpy broadcasting; a nan in either input gives nan.

    Gradient:
        ``dx1 = g`` where ``x1 < x2``, ``dx2 = g`` where ``x2 < x1``, and ``g / 2`` to
        each where ``x1 == x2`` (PyTorch's tie convention). At a nan the gradient goes to
        the nan input (to ``x1`` if both are nan), whose value the output carries.
    """
    return _extremum("minimum", np.minimum, np.less, 0, x1, x2)


def fmax(x1: Operand, x2: Operand) -> Variable:
    """Elementwise maximum ignoring nans (numpy's ``fmax``): nan only if both are nan.

    Gradient:
        As :func:`maximum` (``g / 2`` to each at ties), except at a nan: the gradient
        goes to the other, non-nan input, whose value the output carries (to ``x1`` if
        both are nan).
    """
    return _extremum("fmax", np.fmax, np.greater, 1, x1, x2)


def fmin(x1: Operand, x2: Operand) -> Variable:
    """Elementwise minimum ignoring nans (numpy's ``fmin``): nan only if both are nan.

    Gradient:
        As :func:`minimum` (``g / 2`` to each at ties), except at a nan: the gradient
        goes to the other, non-nan input, whose value the output carries (to ``x1`` if
        both are nan).
    """
    return _extremum("fmin", np.fmin, np.less, 1, x1, x2)


__all__ = ["fmax", "fmin", "maximum", "minimum"]
