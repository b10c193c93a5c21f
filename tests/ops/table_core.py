"""Op table of the core ops: arithmetic, exp/log/tanh, sum/mean, matmul, reshape,
transpose and getitem."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lampy
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec, binary, reduction, unary


@st.composite
def _matmul_shapes(d: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n, k, m = d(st.integers(0, 3)), d(st.integers(0, 3)), d(st.integers(0, 3))
    kind = d(st.sampled_from(["mm", "vm", "mv", "vv", "batched"]))
    if kind == "vv":
        return (k,), (k,)
    if kind == "vm":
        batch = d(hnp.array_shapes(min_dims=0, max_dims=2, max_side=2))
        return (k,), (*batch, k, m)
    if kind == "mv":
        batch = d(hnp.array_shapes(min_dims=0, max_dims=2, max_side=2))
        return (*batch, n, k), (k,)
    if kind == "mm":
        return (n, k), (k, m)
    b1, b2 = d(ls.broadcastable_shapes(2, max_dims=2, max_side=2))
    return (*b1, n, k), (*b2, k, m)


def matmul_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2 = d(_matmul_shapes())
        return [
            d(ls.arrays(s1, dtype, min_value=-3, max_value=3)),
            d(ls.arrays(s2, dtype, min_value=-3, max_value=3)),
        ], {}

    return build()


def reshape_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=4, max_side=4))
        a = d(ls.arrays(shape, dtype))
        size = a.size
        options: list[Any] = [(size,), (-1,), shape[::-1]]
        if size > 0:
            options += [(1, size, 1), (size, -1)]
            divisors = [k for k in range(1, size + 1) if size % k == 0]
            k = d(st.sampled_from(divisors))
            options += [(k, size // k), (-1, k)]
        else:
            options += [(0, 3), (2, 0, 1)]
        new = d(st.sampled_from(options))
        return [a], {"shape": new, "order": d(st.sampled_from(["C", "F"]))}

    return build()


def transpose_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=4, max_side=3))
        a = d(ls.arrays(shape, dtype))
        axes = d(st.none() | st.permutations(range(len(shape))).map(tuple))
        if axes is not None and d(st.booleans()):
            axes = tuple(ax - len(shape) for ax in axes)  # negative spellings
        return [a], {"axes": axes}

    return build()


def getitem_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, max_side=4))
        a = d(ls.arrays(shape, dtype))
        return [a], {"index": d(ls.index_expressions(shape))}

    return build()


def integer_exponent_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Any base (negative ones too) with a constant small integer exponent array."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2 = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
        a = d(ls.arrays(s1, dtype, min_value=-3, max_value=3, avoid=(0.0,), margin=0.1))
        b = d(hnp.arrays(dtype, s2, elements=st.integers(-3, 3).map(float)))
        return [a], {"exponent": b}

    return build()


def _power_const_exponent(x: Any, *, exponent: np.ndarray) -> Any:
    return np.power(x, exponent) if isinstance(x, np.ndarray) else lampy.power(x, exponent)


def _ref_getitem(a: np.ndarray, index: Any) -> np.ndarray:
    return a[index]


OPS: list[OpSpec] = [
    OpSpec("add", lampy.add, np.add, binary()),
    OpSpec("subtract", lampy.subtract, np.subtract, binary()),
    OpSpec("multiply", lampy.multiply, np.multiply, binary()),
    OpSpec("divide", lampy.divide, np.divide, binary(avoid2=(0.0,), margin=0.3)),
    OpSpec("negative", lampy.negative, np.negative, unary()),
    OpSpec("power", lampy.power, np.power, binary(0.2, 3.0, -3.0, 3.0)),
    OpSpec(
        "power_integer_exponent",
        _power_const_exponent,
        _power_const_exponent,
        integer_exponent_inputs,
    ),
    OpSpec("exp", lampy.exp, np.exp, unary(-4, 4)),
    OpSpec("log", lampy.log, np.log, unary(0.1, 10)),
    OpSpec("tanh", lampy.tanh, np.tanh, unary(-3, 3)),
    OpSpec("sum", lampy.sum, np.sum, reduction()),
    OpSpec("mean", lampy.mean, np.mean, reduction(nonempty=True)),
    OpSpec("matmul", lampy.matmul, np.matmul, matmul_inputs),
    OpSpec("reshape", lampy.reshape, np.reshape, reshape_inputs),
    OpSpec("transpose", lampy.transpose, np.transpose, transpose_inputs),
    OpSpec("getitem", lampy.getitem, _ref_getitem, getitem_inputs),
]

BINARY_ELEMENTWISE: list[OpSpec] = [
    s for s in OPS if s.name in {"add", "subtract", "multiply", "divide", "power"}
]
