"""N-d convolution, ``scipy.signal.convolve``, differentiable in both operands."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy._scipy import scipy_module
from lampy.opkit import (
    OWN,
    Operand,
    SharedInBackward,
    Variable,
    complex_rule,
    contrib_of,
    graph_value,
    needs_grad,
    node_of,
    op,
    real_part,
    real_result,
    values_of,
)
from lampy.ops import conj, flip, pad

_MODES = ("full", "same", "valid")


def _window(mode: str, s1: tuple[int, ...], s2: tuple[int, ...]) -> tuple[slice, ...]:
    """Where the result of ``mode`` lies in the ``"full"`` result (scipy's centring)."""
    if mode == "full":
        return tuple(slice(None) for _ in s1)
    if mode == "same":
        return tuple(
            slice((n2 - 1) // 2, (n2 - 1) // 2 + n1) for n1, n2 in zip(s1, s2, strict=True)
        )
    return tuple(
        slice(min(n1, n2) - 1, max(n1, n2)) for n1, n2 in zip(s1, s2, strict=True)
    )  # "valid": |n1 - n2| + 1 long


def convolve(in1: Operand, in2: Operand, mode: str = "full", method: str = "auto") -> Variable:
    """N-dimensional convolution of ``in1`` and ``in2`` (``scipy.signal.convolve``), of
    the same number of dimensions, with scipy's modes (``"full"``, ``"same"`` centred on
    ``in1``, ``"valid"``, which needs one operand at least as large as the other along
    every axis) and ``method`` (``"auto"``, ``"direct"``, ``"fft"``; the gradients use
    the same method).

    Raises:
        ShapeError: operands of different dimensions, empty operands, or shapes that
            ``"valid"`` cannot take.
        LampyValueError: an unknown ``mode`` or ``method``.

    Gradient:
        With ``G`` the gradient placed at the result's window of the ``"full"`` result
        (zeros elsewhere): ``din1 = correlate(G, in2, "valid")``, ``din2 = correlate(G,
        in1, "valid")`` (``scipy.signal.correlate``, which conjugates its second operand:
        the rule for complex values too, PyTorch's convention).
    """
    if mode not in _MODES or method not in ("auto", "direct", "fft"):
        raise LampyValueError(
            f"lampy.signal.convolve: mode must be one of {_MODES} and method 'auto', "
            f"'direct' or 'fft', got mode={mode!r}, method={method!r}."
        )
    a, b = values_of(in1, in2, name="convolve")
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != b.ndim or (a.ndim and (a.size == 0 or b.size == 0)):
        raise ShapeError(
            f"lampy.signal.convolve: in1 {a.shape} and in2 {b.shape} must have the same "
            "number of dimensions and no axis of length 0."
        )
    signal = scipy_module("scipy.signal", "lampy.signal.convolve")
    try:
        value = signal.convolve(a, b, mode=mode, method=method)
    except ValueError as err:
        raise ShapeError(f"lampy.signal.convolve: in1 {a.shape}, in2 {b.shape}: {err}") from None
    real_result("signal.convolve", value, in1, in2)
    window = _window(mode, a.shape, b.shape)
    full = tuple(n1 + n2 - 1 for n1, n2 in zip(a.shape, b.shape, strict=True))

    def placed(g: Any) -> Any:
        if mode == "full":
            return np.asarray(g)
        out = np.zeros(full, np.result_type(g))
        out[window] = g
        return out

    shared = SharedInBackward(placed, needs_grad(in1) + needs_grad(in2))

    # scipy's correlate conjugates its second operand: the holomorphic rule for complex
    # values; the real part (in the input's dtype) for a real input of a complex result
    def d_in1(g: Any) -> Any:
        return real_part(signal.correlate(shared(g), b, mode="valid", method=method), a.dtype)

    def d_in2(g: Any) -> Any:
        return real_part(signal.correlate(shared(g), a, mode="valid", method=method), b.dtype)

    n1, n2 = node_of(in1), node_of(in2)
    pads = tuple(
        (w.start or 0, n - (n if w.stop is None else w.stop))
        for w, n in zip(window, full, strict=True)
    )

    def vjp(other: Any, node: Any) -> Any:
        """``correlate(G, other, "valid")`` with lampy ops: a convolution with ``other``
        reversed along every axis (and conjugated), ``G`` being ``g`` padded to its place
        in the full result (a product for 0-d operands)."""

        def d(g: Any, out: Any) -> Any:
            o = graph_value(node, other)
            if np.iscomplexobj(other):
                o = conj(o)
            if not a.ndim:
                return g * o
            big = g if mode == "full" else pad(g, pads)
            return convolve(big, flip(o), "valid", method)

        return d

    return op(
        "signal.convolve",
        value,
        contrib_of(in1, d_in1, vjp=vjp(b, n2)),
        contrib_of(in2, d_in2, vjp=vjp(a, n1)),
    )


# Closures written for complex values (scipy's correlate conjugates its second operand).
complex_rule(OWN, "signal.convolve")

__all__ = ["convolve"]
