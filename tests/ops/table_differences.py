"""Op table of the finite differences: diff and gradient.

Both are linear in the differenced array, so central differences are exact up to
rounding on any input; the draws cover the awkward arguments instead: every axis,
``n`` up to past the axis length (empty results), scalar and array ``prepend`` /
``append`` (params too), uniform spacings, coordinate arrays and both edge orders.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from lampy.ops._differences import diff, gradient
from lampy.ops._join import stack
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec


def diff_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """An array of at least 1 dimension, an order ``n`` (0 to past the axis length), an
    axis, and ``prepend`` / ``append`` drawn as absent, a number, or a param of the
    array's shape with its own length along the axis."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, max_side=4))
        axis = d(st.integers(-len(shape), len(shape) - 1))
        arrays = [d(ls.arrays(shape, dtype))]
        kwargs: dict[str, Any] = {"n": d(st.integers(0, shape[axis] + 2)), "axis": axis}
        names = []
        for side in ("prepend", "append"):
            kind = d(st.sampled_from(["absent", "number", "param"]))
            if kind == "number":
                kwargs[side] = d(st.floats(-3, 3, width=32))
            elif kind == "param":
                s = list(shape)
                s[axis] = d(st.integers(0, 2))
                arrays.append(d(ls.arrays(tuple(s), dtype)))
                names.append(side)
        kwargs["params"] = tuple(names)
        return arrays, kwargs

    return build()


def _diff(fn: Any) -> Any:
    """``fn`` (diff or numpy's) called with the extra params as prepend / append."""

    def call(a: Any, *extra: Any, params: tuple[str, ...], **kwargs: Any) -> Any:
        return fn(a, **kwargs, **dict(zip(params, extra, strict=True)))

    return call


def gradient_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """An array whose differentiated axes have at least ``edge_order + 1`` samples, the
    axes (None, an int or a tuple), and spacings: none, one number, or one number or
    increasing coordinates per axis."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        edge_order = d(st.sampled_from([1, 2]))
        shape = d(ls.shapes(min_dims=1, max_dims=3, min_side=edge_order + 1, max_side=4))
        nd = len(shape)
        axis: Any = d(
            st.none()
            | st.integers(-nd, nd - 1)
            | st.permutations(range(nd)).flatmap(
                lambda p: st.integers(1, nd).map(lambda k: tuple(p[:k]))
            )
        )
        axes = range(nd) if axis is None else [axis] if isinstance(axis, int) else axis
        spacing = d(st.sampled_from(["none", "one", "each"]))
        varargs: list[Any] = []
        if spacing == "one":
            varargs = [d(st.floats(0.25, 3))]
        elif spacing == "each":
            for ax in axes:
                if d(st.booleans()):
                    varargs.append(d(st.floats(0.25, 3)))
                else:
                    steps = d(ls.arrays((shape[ax] - 1,), np.float64, min_value=0.2, max_value=2))
                    varargs.append(np.concatenate([[0.0], np.cumsum(steps)]))
        return [d(ls.arrays(shape, dtype))], {
            "varargs": tuple(varargs),
            "axis": axis,
            "edge_order": edge_order,
        }

    return build()


def _gradient(fn: Any) -> Any:
    """``fn`` (gradient or numpy's) with its results joined into one array."""

    def call(f: Any, *, varargs: tuple[Any, ...], **kwargs: Any) -> Any:
        out = fn(f, *varargs, **kwargs)
        if not isinstance(out, tuple):
            return out
        if isinstance(out[0], np.ndarray):
            return np.stack(out)
        return stack(list(out))

    return call


OPS: list[OpSpec] = [
    OpSpec("diff", _diff(diff), _diff(np.diff), diff_inputs),
    OpSpec("gradient", _gradient(gradient), _gradient(np.gradient), gradient_inputs),
]
