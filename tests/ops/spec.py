"""What an op-table entry is, and input strategies shared by the family tables.

An :class:`OpSpec` draws, with hypothesis, the inputs of one call (arrays and keyword
arguments). ``test_op_table.py`` feeds every entry of every family table to the same
forward test (against numpy) and gradient test (against float64 central differences).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
from hypothesis import strategies as st

from lampy.testing import strategies as ls

Inputs = tuple[list[np.ndarray], dict[str, Any]]


@attrs.frozen
class OpSpec:
    """One op: how to call it, its numpy reference, and how to draw valid inputs.

    Attributes:
        name: Test id.
        fn: The lampy function, called as ``fn(*variables, **kwargs)``.
        ref: The numpy reference, called as ``ref(*arrays, **kwargs)``.
        inputs: ``inputs(dtype)`` is a strategy of ``(arrays, kwargs)``; every array
            becomes a param (so every array must be float and differentiable there).
        grad_rtol, grad_atol: Tolerances for check_grad (None: by dtype).
        forward_rtol: Relative tolerance of the forward check for float32 (None: 1e-5).
        dtypes: The dtypes the op is tested in.
    """

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., Any]
    inputs: Callable[[np.dtype[Any]], st.SearchStrategy[Inputs]]
    grad_rtol: float | None = None
    grad_atol: float | None = None
    forward_rtol: float | None = None
    dtypes: tuple[str, ...] = ("float64", "float32")

    def __repr__(self) -> str:
        return self.name


def unary(
    lo: float = -5.0, hi: float = 5.0, avoid: tuple[float, ...] = (), margin: float = 1e-3
) -> Callable[[np.dtype[Any]], st.SearchStrategy[Inputs]]:
    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        return ls.arrays(
            ls.shapes(max_dims=3), dtype, min_value=lo, max_value=hi, avoid=avoid, margin=margin
        ).map(lambda a: ([a], {}))

    return draw


def binary(
    lo1: float = -5.0,
    hi1: float = 5.0,
    lo2: float = -5.0,
    hi2: float = 5.0,
    avoid2: tuple[float, ...] = (),
    margin: float = 1e-3,
) -> Callable[[np.dtype[Any]], st.SearchStrategy[Inputs]]:
    """Two arrays of mutually broadcastable shapes (either may broadcast to the other)."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            s1, s2 = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
            a = d(ls.arrays(s1, dtype, min_value=lo1, max_value=hi1))
            b = d(ls.arrays(s2, dtype, min_value=lo2, max_value=hi2, avoid=avoid2, margin=margin))
            return [a, b], {}

        return build()

    return draw


def reduction(lo: float = -5.0, hi: float = 5.0, nonempty: bool = False) -> Callable[..., Any]:
    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shape = d(ls.shapes(max_dims=4, min_side=1 if nonempty else 0, max_side=3))
            a = d(ls.arrays(shape, dtype, min_value=lo, max_value=hi))
            axis = d(ls.axes(len(shape)))
            if nonempty and axis == ():
                axis = None
            return [a], {"axis": axis, "keepdims": d(st.booleans())}

        return build()

    return draw
