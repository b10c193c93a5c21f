"""Op table.

Binary elementwise ops: maximum, minimum, fmax, fmin, arctan2, hypot, logaddexp, logaddexp2,
remainder (mod), where and select.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lampy.ops._arithmetic import mod, remainder
from lampy.ops._binary_math import arctan2, hypot, logaddexp, logaddexp2
from lampy.ops._extrema import fmax, fmin, maximum, minimum
from lampy.ops._where import select, where
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec, binary


def _lattice(x: np.ndarray, offset: float) -> np.ndarray:
    """``x`` squeezed into ``[k + offset, k + offset + 0.4]`` within its unit cell ``k``."""
    k = np.floor(x.astype(np.float64))
    return np.asarray(k + offset + 0.4 * (x - k), dtype=x.dtype)


def separated(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Two broadcastable arrays whose values are at least 0.1 apart from each other.

    Values of ``x1`` have fractional parts in [0, 0.4], those of ``x2`` in [0.5, 0.9],
    so there is no tie (where max/min are not differentiable) between any element of one
    and any element of the other, while either may still be the larger.
    """

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2 = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
        a = d(ls.arrays(s1, dtype, min_value=-4, max_value=4))
        b = d(ls.arrays(s2, dtype, min_value=-4, max_value=4))
        return [_lattice(a, 0.0), _lattice(b, 0.5)], {}

    return build()


def off_axis(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """``x1`` kept 0.1 away from 0: away from the origin, where arctan2 and hypot are not
    differentiable, and from arctan2's branch cut ``x1 = 0, x2 < 0``."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2 = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
        a = d(ls.arrays(s1, dtype, min_value=-5, max_value=5, avoid=(0.0,), margin=0.1))
        b = d(ls.arrays(s2, dtype, min_value=-5, max_value=5))
        return [a, b], {}

    return build()


def off_jumps(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Divisors in {±0.5, ±1, ±2} and dividends at least 0.05 away from every multiple of
    0.5, so ``x1 / x2`` stays at least 0.025 away from the integers where remainder
    jumps (and the divisor away from 0)."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2 = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
        a = d(ls.arrays(s1, dtype, min_value=-5, max_value=5))
        halves = np.floor(2 * a.astype(np.float64))
        a = np.asarray((halves + 0.1 + 0.8 * (2 * a - halves)) / 2, dtype=dtype)
        b = d(hnp.arrays(dtype, s2, elements=st.sampled_from([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])))
        return [a, b], {}

    return build()


def select_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """One to three conditions, as many choices and a default, all mutually
    broadcastable; the conditions are drawn, the choices and the default are params."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        k = d(st.integers(1, 3))
        shapes = d(ls.broadcastable_shapes(2 * k + 1, max_dims=3, max_side=3))
        conds = [d(hnp.arrays(np.bool_, s)) for s in shapes[:k]]
        values = [d(ls.arrays(s, dtype)) for s in shapes[k:]]
        return values, {"condlist": conds}

    return build()


def _select(*values: Any, condlist: list[np.ndarray]) -> Any:
    return select(condlist, list(values[:-1]), values[-1])


def _ref_select(*values: np.ndarray, condlist: list[np.ndarray]) -> np.ndarray:
    return np.select(condlist, list(values[:-1]), values[-1])


def where_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """A boolean condition, x and y of three mutually broadcastable shapes."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        sc, sx, sy = d(ls.broadcastable_shapes(3, max_dims=3, max_side=3))
        x = d(ls.arrays(sx, dtype))
        y = d(ls.arrays(sy, dtype))
        return [x, y], {"condition": d(hnp.arrays(np.bool_, sc))}

    return build()


def _where_xy(x: Any, y: Any, *, condition: np.ndarray) -> Any:
    return where(condition, x, y)


def _ref_where(x: np.ndarray, y: np.ndarray, *, condition: np.ndarray) -> np.ndarray:
    return np.where(condition, x, y)


BINARY_ELEMENTWISE: list[OpSpec] = [
    OpSpec("maximum", maximum, np.maximum, separated),
    OpSpec("minimum", minimum, np.minimum, separated),
    OpSpec("fmax", fmax, np.fmax, separated),
    OpSpec("fmin", fmin, np.fmin, separated),
    OpSpec("arctan2", arctan2, np.arctan2, off_axis),
    OpSpec("hypot", hypot, np.hypot, off_axis),
    OpSpec("logaddexp", logaddexp, np.logaddexp, binary(-20, 20, -20, 20)),
    OpSpec("logaddexp2", logaddexp2, np.logaddexp2, binary(-20, 20, -20, 20)),
    OpSpec("remainder", remainder, np.remainder, off_jumps),
    OpSpec("mod", mod, np.mod, off_jumps),
]
"""The differentiable binary ops, also run with a constant (array or Python number) operand."""

OPS: list[OpSpec] = [
    *BINARY_ELEMENTWISE,
    OpSpec("where", _where_xy, _ref_where, where_inputs),
    OpSpec("select", _select, _ref_select, select_inputs),
]
