"""Op table of the reductions: var, std, prod, amax/max, amin/min, argmax, argmin,
logsumexp, cumsum, cumprod, average.

Input domains keep finite differences honest: the extremes and argmax/argmin draw
distinct, well separated values (no ties to straddle), std draws slices with a clear
spread (its kink is at a constant slice), prod and cumprod draw exact zeros among values
of magnitude at least 1/4 (they are multilinear, so central differences stay exact at
zeros, and no subnormal products hide the gradient).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lampy
from lampy.ops._cumulative import cumprod, cumsum
from lampy.ops._extreme_reductions import amax, amin, argmax, argmin, logsumexp
from lampy.ops._extreme_reductions import max as lmax
from lampy.ops._extreme_reductions import min as lmin
from lampy.ops._reductions import average, prod, std, var
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec, reduction


def _width(dtype: np.dtype[Any]) -> int:
    return 32 if dtype == np.float32 else 64


def zero_or_moderate(shape: tuple[int, ...], dtype: np.dtype[Any]) -> st.SearchStrategy[Any]:
    """Arrays whose entries are exact zeros or have magnitude in [1/4, 2]."""
    w = _width(dtype)
    magnitude = st.floats(0.25, 2.0, width=w)
    elements = st.just(0.0) | magnitude | magnitude.map(lambda v: -v)
    return hnp.arrays(dtype, shape, elements=elements)


def distinct(shape: tuple[int, ...], dtype: np.dtype[Any], step: float = 1.0) -> Any:
    """Arrays of distinct values: a permutation of ``step * k`` (k integer, centred on 0)
    plus jitter in [0, step/4], so values sit within step/4 above whole multiples of step."""
    size = math.prod(shape)

    @st.composite
    def build(d: st.DrawFn) -> np.ndarray:
        order = np.array(d(st.permutations(range(size))), dtype=np.float64)
        jitter = d(hnp.arrays(np.float64, size, elements=st.floats(0, step / 4)))
        centre = step * ((size - 1) // 2)  # keeps values at whole multiples of step
        return ((order * step + jitter - centre).reshape(shape)).astype(dtype)

    return build()


def _axis_kwargs(d: st.DrawFn, shape: tuple[int, ...]) -> dict[str, Any]:
    return {"axis": d(ls.axes(len(shape))), "keepdims": d(st.booleans())}


def _reduced_count(shape: tuple[int, ...], axis: Any) -> int:
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[ax] for ax in axes)


def moments_inputs(spread: bool) -> Any:
    """var/std inputs: non-empty, ``ddof`` 0 or 1 below the slice length; with
    ``spread``, values at least about 1 apart within every slice."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shape = d(ls.shapes(max_dims=4, min_side=1, max_side=3))
            a = d(distinct(shape, dtype, step=1.5)) if spread else d(ls.arrays(shape, dtype))
            kwargs = _axis_kwargs(d, shape)
            kwargs["ddof"] = (
                d(st.sampled_from([0, 1])) if _reduced_count(shape, kwargs["axis"]) > 1 else 0
            )
            return [a], kwargs

        return build()

    return draw


def extreme_inputs() -> Any:
    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shape = d(ls.shapes(max_dims=4, min_side=1, max_side=3))
            return [d(distinct(shape, dtype))], _axis_kwargs(d, shape)

        return build()

    return draw


def masked_extreme_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """amax/amin with ``initial`` between the values and a ``where`` mask (any shape)."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=3, max_side=3))
        a = d(distinct(shape, dtype))
        kwargs = _axis_kwargs(d, shape)
        kwargs["initial"] = d(st.integers(-6, 6)) + 0.5  # half-way between values
        kwargs["where"] = d(hnp.arrays(np.bool_, shape))
        return [a], kwargs

    return build()


def arg_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=4, min_side=1, max_side=3))
        axis = d(st.none() | st.integers(-max(len(shape), 1), max(len(shape), 1) - 1))
        return [d(distinct(shape, dtype))], {"axis": axis, "keepdims": d(st.booleans())}

    return build()


def cumulative_inputs(with_zeros: bool) -> Any:
    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shape = d(ls.shapes(max_dims=3, max_side=4))
            a = d(zero_or_moderate(shape, dtype)) if with_zeros else d(ls.arrays(shape, dtype))
            ndim = max(len(shape), 1)
            return [a], {"axis": d(st.none() | st.integers(-ndim, ndim - 1))}

        return build()

    return draw


def prod_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=4, max_side=3))
        return [d(zero_or_moderate(shape, dtype))], _axis_kwargs(d, shape)

    return build()


def average_inputs(weighted: bool) -> Any:
    """average inputs: weights of a's shape or along ``axis`` (in ``axis``'s order)."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shape = d(ls.shapes(max_dims=4, min_side=1, max_side=3))
            a = d(ls.arrays(shape, dtype, min_value=-5, max_value=5))
            kwargs = _axis_kwargs(d, shape)
            if not weighted:
                return [a], kwargs
            axis = kwargs["axis"]
            wshape = shape
            if axis is not None and d(st.booleans()):
                axes = (axis,) if isinstance(axis, int) else axis
                wshape = tuple(shape[ax] for ax in axes)
            w = d(ls.arrays(wshape, dtype, min_value=0.5, max_value=2.0))
            return [a, w], kwargs

        return build()

    return draw


def _logsumexp_ref(a: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    with np.errstate(divide="ignore"):  # log(0) = -inf for empty slices
        return np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims))


def _as_const(fn: Any) -> Any:
    """An integer-valued op as a constant Variable, so the table can compare it."""
    return lambda a, **kw: lampy.const(fn(a, **kw))


def _average(a: Any, w: Any = None, **kw: Any) -> Any:
    return average(a, weights=w, **kw)


def _np_average(a: Any, w: Any = None, **kw: Any) -> Any:
    return np.average(a, weights=w, **kw)


OPS: list[OpSpec] = [
    OpSpec("var", var, np.var, moments_inputs(spread=False)),
    OpSpec("std", std, np.std, moments_inputs(spread=True)),
    OpSpec("prod", prod, np.prod, prod_inputs),
    OpSpec("amax", amax, np.amax, extreme_inputs()),
    OpSpec("amin", amin, np.amin, extreme_inputs()),
    OpSpec("max", lmax, np.max, extreme_inputs()),
    OpSpec("min", lmin, np.min, extreme_inputs()),
    OpSpec("amax_initial_where", amax, np.amax, masked_extreme_inputs),
    OpSpec("amin_initial_where", amin, np.amin, masked_extreme_inputs),
    OpSpec("argmax", _as_const(argmax), np.argmax, arg_inputs),
    OpSpec("argmin", _as_const(argmin), np.argmin, arg_inputs),
    OpSpec("logsumexp", logsumexp, _logsumexp_ref, reduction(-5.0, 5.0)),
    OpSpec("cumsum", cumsum, np.cumsum, cumulative_inputs(with_zeros=False)),
    OpSpec("cumprod", cumprod, np.cumprod, cumulative_inputs(with_zeros=True)),
    OpSpec("average", _average, _np_average, average_inputs(weighted=False)),
    OpSpec("average_weighted", _average, _np_average, average_inputs(weighted=True)),
    OpSpec(
        "average_returned_weight_sum",
        lambda a, w, **kw: average(a, weights=w, returned=True, **kw)[1],
        lambda a, w, **kw: np.average(a, weights=w, returned=True, **kw)[1],
        average_inputs(weighted=True),
    ),
]
