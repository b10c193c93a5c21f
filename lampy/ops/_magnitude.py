"""Sign-preserving and magnitude ops: positive, abs (absolute), fabs, clip."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import DTypeError, shape_mismatch
from lampy.opkit import (
    NO_VALUE,
    Operand,
    Variable,
    accumulate,
    apply_unary,
    contrib_of,
    graph_value,
    node_of,
    op,
    param_of,
    real_result,
    sign_or_zero,
    value_of,
)
from lampy.ops._where import where

_add, _where, _sign, _isfinite, _isnan = np.add, np.where, np.sign, np.isfinite, np.isnan


def positive(x: Operand) -> Variable:
    """Elementwise ``+x``: a copy of the value.

    Gradient:
        ``dx = g``.
    """
    value = apply_unary(np.positive, value_of(x, name="positive"))
    return op("positive", value, contrib_of(x, lambda g: g, fresh=False, vjp=lambda g, out: g))


def _times(s: Any, g: np.ndarray) -> Any:
    """``s * g``, in place in ``s`` when it is an array of ``g``'s shape and dtype."""
    if isinstance(s, np.ndarray) and s.shape == g.shape and s.dtype == g.dtype:
        return np.multiply(s, g, out=s)
    return s * g


def abs(x: Operand) -> Variable:
    """Elementwise absolute value.

    Gradient:
        ``dx = g * sign(x)``; 0 at ``x = 0`` (the subgradient PyTorch and JAX pick) and 0
        at ``x = nan`` (PyTorch's ``sgn(nan) = 0``; see "NaN inputs" in docs/ops.md).
    """
    a = value_of(x, name="abs")
    value = apply_unary(np.absolute, a, "abs")
    if np.iscomplexobj(a):
        return _complex_abs(x, a, value)
    return op(
        "abs",
        value,
        contrib_of(x, lambda g: _times(sign_or_zero(a), g), vjp=lambda g, out: g * sign_or_zero(a)),
    )


def _complex_abs(x: Operand, a: Any, value: Any) -> Variable:
    """``|z|`` of a complex ``z``, whose gradient is ``g * z / |z|`` (0 at ``z = 0``, as
    PyTorch's ``sgn``)."""
    n = node_of(x)

    def unit(z: Any) -> Any:
        m = np.absolute(z)
        return np.where(m == 0, 0, z / np.where(m == 0, 1, m))

    def vjp(g: Any, out: Any) -> Any:
        zero = np.absolute(a) == 0
        zv = graph_value(n, a)
        return where(zero, 0j, g * zv / where(zero, 1.0, abs(zv)))

    return op("abs", value, contrib_of(x, lambda g: g * unit(a), vjp=vjp))


absolute = abs
"""Alias of :func:`abs`, as :func:`numpy.absolute`."""


def fabs(x: Operand) -> Variable:
    """Elementwise absolute value as a float, as ``numpy.fabs`` (integer inputs give
    float64 constants; complex inputs are refused).

    Raises:
        DTypeError: for a complex input (numpy's fabs has no complex loop; use ``abs``).

    Gradient:
        ``dx = g * sign(x)``; 0 at ``x = 0``, as :func:`abs`.
    """
    a = value_of(x, name="fabs")
    try:
        value = apply_unary(np.fabs, a)
    except TypeError:
        raise DTypeError(
            f"fabs: takes real numbers, got dtype {np.result_type(a)}; numpy's fabs has no "
            "complex version (use lampy.abs for magnitudes)."
        ) from None
    return op("fabs", value, contrib_of(x, lambda g: g * _sign(a), vjp=lambda g, out: g * _sign(a)))


def _masked_add(out: np.ndarray, g: np.ndarray, mask: Any) -> None:
    """``out += unbroadcast(where(mask, g, 0), out.shape)``, in place.

    ``g * mask`` is several times faster than ``where`` (or a ``where=`` ufunc) on an
    irregular mask; ``where`` is kept for an inf or nan ``g``, whose product with a False
    would give nan instead of the 0 the convention promises.
    """
    masked = g * mask if _isfinite(g).all() else _where(mask, g, 0)
    accumulate(out, masked)


def clip(
    a: Operand,
    a_min: Operand | None = NO_VALUE,
    a_max: Operand | None = NO_VALUE,
    *,
    min: Operand | None = NO_VALUE,
    max: Operand | None = NO_VALUE,
) -> Variable:
    """Limit the values of ``a`` to ``[a_min, a_max]``, as :func:`numpy.clip`.

    Equivalent to ``minimum(maximum(a, a_min), a_max)``: where ``a_min > a_max`` the
    result is ``a_max``. Bounds broadcast with ``a`` and may be None (no bound), numbers,
    arrays or Variables (which then get gradients too).

    Args:
        a: The values to clip.
        a_min: The lower bound, or None for none. With ``a_max``, numpy's positional
            spelling: pass both or neither.
        a_max: The upper bound, or None for none.
        min: The lower bound as numpy 2's keyword, when neither ``a_min`` nor ``a_max``
            is given; missing means None.
        max: The upper bound as numpy 2's keyword, likewise.

    Returns:
        The clipped values, of numpy's result shape and dtype.

    Raises:
        ShapeError: if ``a`` and the bounds do not broadcast together.
        TypeError: if only one of ``a_min`` and ``a_max`` is given positionally.
        ValueError: if ``min`` or ``max`` is given along with ``a_min`` and ``a_max``.

    Gradient:
        Each output element takes its gradient from the one operand it is equal to, ties
        going first to ``a``, then to the bound that ``a`` crossed:

        * ``da = g`` where ``a_min <= a <= a_max`` (the closed interval, as PyTorch);
        * ``da_min = g`` where ``a < a_min <= a_max``;
        * ``da_max = g`` where ``a_max < maximum(a, a_min)`` (``a`` above ``a_max``, or
          an empty interval ``a_min > a_max``).

        So at ``a == a_min`` or ``a == a_max`` the gradient goes to ``a``. The one place
        this differs from PyTorch: below a degenerate interval (``a < a_min == a_max``),
        PyTorch gives no operand a gradient and lampy gives it to ``a_min``. A nan in
        ``a`` or a bound gives that element no gradient at all. An operand that takes
        no gradient at an element gets exactly 0 there, even where ``g`` is inf or nan.
    """
    if a_min is NO_VALUE and a_max is NO_VALUE:
        a_min = None if min is NO_VALUE else min
        a_max = None if max is NO_VALUE else max
    elif a_min is NO_VALUE or a_max is NO_VALUE:
        missing = "a_min" if a_min is NO_VALUE else "a_max"
        raise TypeError(
            f"clip: missing the positional argument '{missing}'. Pass both bounds "
            "positionally (None for no bound), or use the keywords min= and/or max=."
        )
    elif min is not NO_VALUE or max is not NO_VALUE:
        raise ValueError(
            "clip: min= or max= was given along with the positional bounds a_min and "
            "a_max. Pass each bound once, either positionally or as a keyword."
        )
    x = value_of(a, name="clip")
    lo = None if a_min is None else value_of(a_min, name="clip")
    hi = None if a_max is None else value_of(a_max, name="clip")
    if lo is None and hi is None:  # numpy >= 2.1 copies; older numpy refuses
        value = np.array(x, copy=True)
    else:
        try:
            value = np.clip(x, lo, hi)
        except ValueError:
            given = [v for v in (x, lo, hi) if v is not None]
            raise shape_mismatch(
                "clip",
                *[np.asarray(v) for v in given],
                detail="The bounds must broadcast with the input: numpy broadcasting needs "
                "each set of trailing dimensions to be equal or 1.",
            ) from None
    if value.dtype.kind in "cO":  # complex or object: refused if a gradient is needed
        real_result("clip", value, a, a_min, a_max)

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        if lo is None and hi is None:
            accumulate(out, g)
        elif hi is None:
            _masked_add(out, g, x >= lo)
        elif lo is None:
            _masked_add(out, g, x <= hi)
        else:
            _masked_add(out, g, (x >= lo) & (x <= hi))

    def d_min(g: np.ndarray, out: np.ndarray) -> None:
        mask = x < lo
        _masked_add(out, g, mask if hi is None else mask & (lo <= hi))

    def d_max(g: np.ndarray, out: np.ndarray) -> None:
        _masked_add(out, g, hi < (x if lo is None else np.maximum(x, lo)))

    # The vjps: g times the same masks, as constants (the pass sums over broadcast axes).
    def vjp_a(g: Any, out: Any) -> Any:
        if lo is None and hi is None:
            return g
        if hi is None:
            return g * (x >= lo)
        if lo is None:
            return g * (x <= hi)
        return g * ((x >= lo) & (x <= hi))

    def vjp_min(g: Any, out: Any) -> Any:
        mask = x < lo
        return g * (mask if hi is None else mask & (lo <= hi))

    def vjp_max(g: Any, out: Any) -> Any:
        return g * (hi < (x if lo is None else np.maximum(x, lo)))

    return op(
        "clip",
        value,
        param_of(a, d_a, vjp=vjp_a),
        None if lo is None else param_of(a_min, d_min, vjp=vjp_min),
        None if hi is None else param_of(a_max, d_max, vjp=vjp_max),
    )


__all__ = ["abs", "absolute", "clip", "fabs", "positive"]
