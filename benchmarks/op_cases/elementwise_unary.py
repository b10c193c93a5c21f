"""Benchmark cases of the unary elementwise ops (forward + backward, 200,000 elements).

Each baseline is the plain numpy forward followed by the hand-written gradient, written
the way one would by hand (temporaries allowed, no in-place tricks). torch and mygrad
are imported lazily inside the lambdas so this module imports without them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.ops._exp_log import exp2, expm1, log1p, log2, log10
from lampy.ops._hyperbolic import arccosh, arcsinh, arctanh, cosh, sinh
from lampy.ops._magnitude import abs, clip, fabs, positive
from lampy.ops._powers_roots import cbrt, reciprocal, sqrt, square
from lampy.ops._rounding import ceil, floor, round, sign, trunc
from lampy.ops._trig import arccos, arcsin, arctan, cos, deg2rad, rad2deg, sin, sinc, tan

from ._case import Case

SHAPE = (400, 500)
_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _sinc_derivative(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(cos(pi x) - sinc(x)) / x``, the closed form (inputs drawn away from 0)."""
    return (np.cos(np.pi * x) - y) / x


def _torch(name: str, *args: Any) -> Callable[..., Any]:
    """``torch.<name>(*tensors, *args)``, torch imported at the call."""

    def call(*ts: Any) -> Any:
        import torch

        return getattr(torch, name)(*ts, *args)

    return call


def _mygrad(name: str, *args: Any) -> Callable[..., Any]:
    """``mygrad.<name>(*tensors, *args)``, mygrad imported at the call."""

    def call(*ts: Any) -> Any:
        import mygrad

        return getattr(mygrad, name)(*ts, *args)

    return call


def _unary(
    name: str,
    lampy_fn: Callable[..., Any],
    forward: Callable[[np.ndarray], np.ndarray],
    derivative: Callable[[np.ndarray, np.ndarray], np.ndarray],
    lo: float = -3.0,
    hi: float = 3.0,
    torch_name: str | None = "",
    mygrad_name: str | None = "",
) -> Case:
    """A case of ``lampy_fn`` on uniform inputs in ``[lo, hi]``; ``derivative(x, y)``
    gives ``dy/dx`` from the input and the forward value (the baseline's gradient is
    ``g * derivative``). Peer names default to ``name``; None means no peer op."""

    def baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
        x = inputs[0]
        y = forward(x)
        return [g * derivative(x, y)]

    t = name if torch_name == "" else torch_name
    m = name if mygrad_name == "" else mygrad_name
    return Case(
        name=name,
        family="elementwise",
        make_inputs=lambda rng: [rng.uniform(lo, hi, SHAPE)],
        lampy_fn=lampy_fn,
        numpy_fwd_bwd=baseline,
        torch_fn=None if t is None else _torch(t),
        mygrad_fn=None if m is None else _mygrad(m),
    )


def _piecewise_constant(name: str, lampy_fn: Callable[..., Any], mygrad_name: str | None) -> Case:
    """Baseline: the forward value, and a zero gradient (as PyTorch allocates one)."""

    def baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
        getattr(np, name)(inputs[0])
        return [np.zeros_like(inputs[0])]

    return Case(
        name=name,
        family="elementwise",
        make_inputs=lambda rng: [rng.uniform(-3, 3, SHAPE)],
        lampy_fn=lampy_fn,
        numpy_fwd_bwd=baseline,
        torch_fn=_torch(name),
        mygrad_fn=None if mygrad_name is None else _mygrad(mygrad_name),
    )


def _clip_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    x = inputs[0]
    np.clip(x, -1.0, 1.0)
    return [g * ((x >= -1.0) & (x <= 1.0))]


def _clip_bounds_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    x, lo, hi = inputs
    np.clip(x, lo, hi)
    gx = g * ((x >= lo) & (x <= hi))
    glo = g * ((x < lo) & (lo <= hi))
    ghi = g * (hi < np.maximum(x, lo))
    return [gx, glo, ghi]


CASES: list[Case] = [
    _unary("positive", positive, np.positive, lambda x, y: np.ones_like(x)),
    _unary("abs", abs, np.abs, lambda x, y: np.sign(x)),
    _unary("sqrt", sqrt, np.sqrt, lambda x, y: 0.5 / y, 0.1, 10.0),
    _unary("cbrt", cbrt, np.cbrt, lambda x, y: 1 / (3 * y**2), torch_name=None),
    _unary("square", square, np.square, lambda x, y: 2 * x),
    _unary("reciprocal", reciprocal, np.reciprocal, lambda x, y: -(y**2), 0.1, 10.0),
    _unary("exp2", exp2, np.exp2, lambda x, y: y * _LN2),
    _unary("expm1", expm1, np.expm1, lambda x, y: y + 1),
    _unary("log2", log2, np.log2, lambda x, y: 1 / (x * _LN2), 0.1, 10.0),
    _unary("log10", log10, np.log10, lambda x, y: 1 / (x * _LN10), 0.1, 10.0),
    _unary("log1p", log1p, np.log1p, lambda x, y: 1 / (1 + x), -0.9, 10.0),
    _unary("sin", sin, np.sin, lambda x, y: np.cos(x)),
    _unary("cos", cos, np.cos, lambda x, y: -np.sin(x)),
    _unary("tan", tan, np.tan, lambda x, y: 1 + y**2, -1.4, 1.4),
    _unary("arcsin", arcsin, np.arcsin, lambda x, y: 1 / np.sqrt(1 - x**2), -0.99, 0.99),
    _unary("arccos", arccos, np.arccos, lambda x, y: -1 / np.sqrt(1 - x**2), -0.99, 0.99),
    _unary("arctan", arctan, np.arctan, lambda x, y: 1 / (1 + x**2)),
    _unary("sinc", sinc, np.sinc, _sinc_derivative, 0.5, 3.0, mygrad_name=None),
    _unary(
        "deg2rad", deg2rad, np.deg2rad, lambda x, y: np.full_like(x, np.pi / 180), mygrad_name=None
    ),
    _unary(
        "rad2deg", rad2deg, np.rad2deg, lambda x, y: np.full_like(x, 180 / np.pi), mygrad_name=None
    ),
    _unary("fabs", fabs, np.fabs, lambda x, y: np.sign(x), torch_name=None, mygrad_name=None),
    _unary("sinh", sinh, np.sinh, lambda x, y: np.cosh(x)),
    _unary("cosh", cosh, np.cosh, lambda x, y: np.sinh(x)),
    _unary("arcsinh", arcsinh, np.arcsinh, lambda x, y: 1 / np.sqrt(x**2 + 1)),
    _unary("arccosh", arccosh, np.arccosh, lambda x, y: 1 / np.sqrt(x**2 - 1), 1.01, 10.0),
    _unary("arctanh", arctanh, np.arctanh, lambda x, y: 1 / (1 - x**2), -0.99, 0.99),
    _piecewise_constant("sign", sign, "sign"),
    _piecewise_constant("floor", floor, "floor"),
    _piecewise_constant("ceil", ceil, "ceil"),
    _piecewise_constant("round", round, None),
    _piecewise_constant("trunc", trunc, "trunc"),
    Case(
        name="clip (number bounds)",
        family="elementwise",
        make_inputs=lambda rng: [rng.uniform(-3, 3, SHAPE)],
        lampy_fn=lambda x: clip(x, -1.0, 1.0),
        numpy_fwd_bwd=_clip_baseline,
        torch_fn=_torch("clamp", -1.0, 1.0),
        mygrad_fn=_mygrad("clip", -1.0, 1.0),
    ),
    Case(
        name="clip (Variable bounds)",
        family="elementwise",
        make_inputs=lambda rng: [
            rng.uniform(-3, 3, SHAPE),
            rng.uniform(-2, 0, SHAPE),
            rng.uniform(0, 2, SHAPE),
        ],
        lampy_fn=clip,
        numpy_fwd_bwd=_clip_bounds_baseline,
        torch_fn=_torch("clamp"),
        mygrad_fn=None,  # mygrad.clip takes no tensor bounds
    ),
]
