"""Op table: unary elementwise ops.

positive, abs, sign, sqrt, cbrt, square, reciprocal, exp2, expm1, log2, log10, log1p, the
trigonometric and hyperbolic functions and their inverses, sinc, fabs, the degree/radian
conversions, nan_to_num, floor, ceil, round, trunc and clip (with constant and with
Variable bounds). Inputs stay inside each op's domain and
away from its kinks and jumps, so finite differences are valid there; the conventions
at those points are checked exactly in ``test_unary.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lampy.ops._exp_log import exp2, expm1, log1p, log2, log10
from lampy.ops._hyperbolic import arccosh, arcsinh, arctanh, cosh, sinh
from lampy.ops._magnitude import abs, clip, fabs, positive
from lampy.ops._masking import nan_to_num
from lampy.ops._powers_roots import cbrt, reciprocal, sqrt, square
from lampy.ops._rounding import ceil, floor, round, sign, trunc
from lampy.ops._trig import (
    arccos,
    arcsin,
    arctan,
    cos,
    deg2rad,
    degrees,
    rad2deg,
    radians,
    sin,
    sinc,
    tan,
)
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec, unary

_PI = math.pi
_INTEGERS = tuple(float(k) for k in range(-5, 6))
_HALVES = tuple(k + 0.5 for k in range(-5, 5))
_TAN_POLES = (-1.5 * _PI, -0.5 * _PI, 0.5 * _PI, 1.5 * _PI)


def _decimals_inputs(decimals: int, lo: float, hi: float) -> Any:
    """Inputs of ``round(a, decimals)`` away from its jumps (the rounding halves)."""
    step = 10.0**-decimals
    jumps = tuple((k + 0.5) * step for k in range(math.floor(lo / step) - 1, math.ceil(hi / step)))

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        return ls.arrays(ls.shapes(max_dims=2), dtype, min_value=lo, max_value=hi, avoid=jumps).map(
            lambda a: ([a], {"decimals": decimals})
        )

    return draw


def _grid(shape: tuple[int, ...], dtype: np.dtype[Any], offset: float) -> Any:
    """Arrays of values ``k / 10 + offset`` (``|k| <= 25``). Arrays drawn with different
    offsets in (0, 0.1) never come within ``min(|offset difference|)`` of each other, so
    ``clip`` never ties between them."""
    elements = st.integers(-25, 25).map(lambda k: float(dtype.type(k / 10 + offset)))
    return hnp.arrays(dtype, shape, elements=elements)


_X, _LO, _HI = 0.033, 0.0, 0.067  # grid offsets of the clipped values and the two bounds


def clip_constant_bounds(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """A param clipped to Python-number or None bounds (either order), as a_min/a_max."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        bound = st.none() | st.floats(-3, 3, width=32)
        lo, hi = d(bound), d(bound)
        avoid = tuple(b for b in (lo, hi) if b is not None)
        a = d(ls.arrays(ls.shapes(max_dims=3), dtype, min_value=-4, max_value=4, avoid=avoid))
        return [a], {"a_min": lo, "a_max": hi}

    return build()


def clip_variable_bounds(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Value, lower and upper bound all params, of mutually broadcastable shapes."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2, s3 = d(ls.broadcastable_shapes(3, max_dims=3, max_side=3))
        return [d(_grid(s1, dtype, _X)), d(_grid(s2, dtype, _LO)), d(_grid(s3, dtype, _HI))], {}

    return build()


def clip_variable_min(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Value and lower bound params; the upper bound a constant array or None, by keyword."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2, s3 = d(ls.broadcastable_shapes(3, max_dims=3, max_side=3))
        hi = d(st.none() | _grid(s3, dtype, _HI))
        return [d(_grid(s1, dtype, _X)), d(_grid(s2, dtype, _LO))], {"a_max": hi}

    return build()


def clip_keyword_bounds(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """numpy 2's ``min=``/``max=`` keywords with constant array bounds, either may be None."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2, s3 = d(ls.broadcastable_shapes(3, max_dims=3, max_side=3))
        lo = d(st.none() | _grid(s2, dtype, _LO))
        hi = d(st.none() | _grid(s3, dtype, _HI))
        return [d(_grid(s1, dtype, _X))], {"min": lo, "max": hi}

    return build()


def nan_to_num_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Finite values mixed with nan, and numbers for the three replacements. (Central
    differences cannot step from an infinity, so infinite inputs, and numpy's default
    replacements for them, are tested exactly in test_unary.py.)"""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=3, max_side=3))
        finite = st.floats(-5, 5, width=32 if dtype == np.float32 else 64)
        a = d(hnp.arrays(dtype, shape, elements=finite | st.just(np.nan)))
        fill = st.floats(-5, 5, width=32)
        return [a], {"nan": d(fill), "posinf": d(fill), "neginf": d(fill)}

    return build()


OPS: list[OpSpec] = [
    OpSpec("sinc", sinc, np.sinc, unary(-4, 4)),
    OpSpec("sinc_near_zero", sinc, np.sinc, unary(-0.05, 0.05)),
    OpSpec("fabs", fabs, np.fabs, unary(avoid=(0.0,))),
    OpSpec("deg2rad", deg2rad, np.deg2rad, unary(-400, 400)),
    OpSpec("radians", radians, np.radians, unary(-400, 400)),
    OpSpec("rad2deg", rad2deg, np.rad2deg, unary()),
    OpSpec("degrees", degrees, np.degrees, unary()),
    OpSpec("nan_to_num", nan_to_num, np.nan_to_num, nan_to_num_inputs),
    OpSpec("positive", positive, np.positive, unary()),
    OpSpec("abs", abs, np.abs, unary(avoid=(0.0,))),
    OpSpec("sign", sign, np.sign, unary(avoid=(0.0,))),
    OpSpec("sqrt", sqrt, np.sqrt, unary(0.05, 10)),
    OpSpec("cbrt", cbrt, np.cbrt, unary(avoid=(0.0,), margin=0.1)),
    OpSpec("square", square, np.square, unary()),
    OpSpec("reciprocal", reciprocal, np.reciprocal, unary(avoid=(0.0,), margin=0.2)),
    OpSpec("exp2", exp2, np.exp2, unary(-4, 4)),
    OpSpec("expm1", expm1, np.expm1, unary(-4, 4)),
    OpSpec("log2", log2, np.log2, unary(0.1, 10)),
    OpSpec("log10", log10, np.log10, unary(0.1, 10)),
    OpSpec("log1p", log1p, np.log1p, unary(-0.9, 10)),
    OpSpec("sin", sin, np.sin, unary()),
    OpSpec("cos", cos, np.cos, unary()),
    OpSpec("tan", tan, np.tan, unary(-4.5, 4.5, avoid=_TAN_POLES, margin=0.15)),
    OpSpec("arcsin", arcsin, np.arcsin, unary(-0.95, 0.95)),
    OpSpec("arccos", arccos, np.arccos, unary(-0.95, 0.95)),
    OpSpec("arctan", arctan, np.arctan, unary()),
    OpSpec("sinh", sinh, np.sinh, unary(-4, 4)),
    OpSpec("cosh", cosh, np.cosh, unary(-4, 4)),
    OpSpec("arcsinh", arcsinh, np.arcsinh, unary()),
    OpSpec("arccosh", arccosh, np.arccosh, unary(1.05, 10)),
    OpSpec("arctanh", arctanh, np.arctanh, unary(-0.95, 0.95)),
    OpSpec("floor", floor, np.floor, unary(avoid=_INTEGERS)),
    OpSpec("ceil", ceil, np.ceil, unary(avoid=_INTEGERS)),
    OpSpec("trunc", trunc, np.trunc, unary(avoid=_INTEGERS)),
    OpSpec("round", round, np.round, unary(avoid=_HALVES)),
    OpSpec("round_decimals_1", round, np.round, _decimals_inputs(1, -2, 2)),
    OpSpec("round_decimals_-1", round, np.round, _decimals_inputs(-1, -40, 40)),
    OpSpec("clip", clip, np.clip, clip_constant_bounds),
    OpSpec("clip_variable_bounds", clip, np.clip, clip_variable_bounds),
    OpSpec("clip_variable_min", clip, np.clip, clip_variable_min),
    OpSpec("clip_keyword_bounds", clip, np.clip, clip_keyword_bounds),
]
