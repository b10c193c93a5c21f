"""Op table of the 1-d signal ops and polynomials: interp, convolve, correlate, polyval;
and scipy's N-d ``lampy.signal.convolve`` (1 to 3 dimensions, sides 1 to 4, every mode
and method; for ``"valid"`` one operand at least as large as the other on every axis,
as scipy needs).

convolve and correlate are bilinear (central differences are exact up to rounding); the
draws cover every pair of lengths from 1 to 6 (either operand the longer, where
numpy's windows differ) and the three modes. polyval draws up to 5 coefficients (none
too: zeros, as numpy) and x in [-2, 2], where the powers stay moderate.

interp is piecewise linear with kinks where ``x`` meets a sample point: the sample
points are drawn distinct and well separated (sorted, as numpy needs them) and ``x``
keeps 0.05 away from every one of them, so finite differences in ``x`` and ``xp`` do
not straddle a kink. ``x`` ranges past both ends (the clamped regions); ``left`` and
``right`` are drawn as params too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.signal
from hypothesis import strategies as st

import lampy.signal
from lampy.ops._convolve import convolve, correlate
from lampy.ops._interp import interp
from lampy.ops._polynomials import polyval
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec
from .table_reductions import distinct


def interp_inputs(bounds: bool) -> Any:
    """``x`` of any shape, ``xp`` sorted and distinct (1 to 5 points), ``fp``; with
    ``bounds`` also ``left`` and ``right`` as 0-d arrays."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            n = d(st.integers(1, 5))
            xp = np.sort(d(distinct((n,), dtype, step=1.0)))
            fp = d(ls.arrays((n,), dtype, min_value=-3, max_value=3))
            lo, hi = float(xp[0]) - 1.5, float(xp[-1]) + 1.5
            avoid = tuple(float(v) for v in xp)
            x = d(ls.arrays(ls.shapes(max_dims=2, max_side=4), dtype, min_value=lo,
                            max_value=hi, avoid=avoid, margin=0.05))  # fmt: skip
            arrays = [x, xp, fp]
            if bounds:
                arrays += [d(ls.arrays((), dtype, min_value=-3, max_value=3)) for _ in "lr"]
            return arrays, {}

        return build()

    return draw


def pair_1d(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Two 1-d operands of lengths 1 to 6 and a mode (numpy's names)."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        a = d(ls.arrays((d(st.integers(1, 6)),), dtype, min_value=-3, max_value=3))
        v = d(ls.arrays((d(st.integers(1, 6)),), dtype, min_value=-3, max_value=3))
        return [a, v], {"mode": d(st.sampled_from(["full", "same", "valid"]))}

    return build()


def polyval_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """0 to 5 coefficients and x of any shape."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        p = d(ls.arrays((d(st.integers(0, 5)),), dtype, min_value=-3, max_value=3))
        x = d(ls.arrays(ls.shapes(max_dims=3, max_side=3), dtype, min_value=-2, max_value=2))
        return [p, x], {}

    return build()


def pair_nd(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Two operands of 1 to 3 dimensions (the same number), a mode and a method."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        ndim = d(st.integers(1, 3))
        mode = d(st.sampled_from(["full", "same", "valid"]))
        s1 = d(st.tuples(*[st.integers(1, 4)] * ndim))
        s2 = d(st.tuples(*[st.integers(1, 4)] * ndim))
        if mode == "valid":  # one operand at least as large along every axis
            big = tuple(max(p, q) for p, q in zip(s1, s2, strict=True))
            s1, s2 = (big, s2) if d(st.booleans()) else (s1, big)
        a = d(ls.arrays(s1, dtype, min_value=-3, max_value=3))
        v = d(ls.arrays(s2, dtype, min_value=-3, max_value=3))
        return [a, v], {"mode": mode, "method": d(st.sampled_from(["auto", "direct", "fft"]))}

    return build()


OPS: list[OpSpec] = [
    OpSpec("interp", interp, np.interp, interp_inputs(bounds=False)),
    OpSpec("interp_left_right", interp, np.interp, interp_inputs(bounds=True)),
    OpSpec("convolve", convolve, np.convolve, pair_1d),
    OpSpec("correlate", correlate, np.correlate, pair_1d),
    OpSpec("polyval", polyval, np.polyval, polyval_inputs),
    OpSpec("signal.convolve", lampy.signal.convolve, scipy.signal.convolve, pair_nd),
]
