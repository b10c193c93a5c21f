"""Op table of indexing and sorting: take, take_along_axis, put_along_axis, compress,
index_select, index_add, scatter_add, gather, masked_fill, sort, topk.

Index arrays are drawn with repeats and negative values. References of the
PyTorch-named ops are explicit loops over PyTorch's documented formulas (torch is not
a test dependency); ``sort`` and ``topk`` draw distinct, well-spaced values, since at a
tie the sorted values are not differentiable (the conventions at ties are tested
exactly in ``test_sorting.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lampy.ops._indexing import compress, take
from lampy.ops._masking import masked_fill
from lampy.ops._scatter import (
    gather,
    index_add,
    index_select,
    put_along_axis,
    scatter_add,
    take_along_axis,
)
from lampy.ops._sorting import partition, topk
from lampy.ops._sorting import sort as lampy_sort
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec


def index_arrays(shape: Any, n: int, *, spill: int = 0) -> st.SearchStrategy[np.ndarray]:
    """Integer arrays of ``shape`` with values in ``[-n - spill, n + spill)`` (repeats and
    negatives included); ``n == 0`` only allows empty arrays."""
    lo, hi = -n - spill, n - 1 + spill
    if hi < lo:
        lo = hi = 0
    return hnp.arrays(np.intp, shape, elements=st.integers(lo, hi))


def _along(d: st.DrawFn, shape: tuple[int, ...], axis: int, broadcast: bool) -> np.ndarray:
    """Indices for take/put_along_axis: the other axes equal to ``shape`` or 1."""
    ishape = tuple(
        (d(st.integers(0, 4)) if shape[axis] else 0)
        if ax == axis
        else (d(st.sampled_from([m, 1])) if broadcast else m)
        for ax, m in enumerate(shape)
    )
    return d(index_arrays(ishape, shape[axis]))


# ------------------------------------------------------------------------------- inputs
def take_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=3, max_side=4))
        a = d(ls.arrays(shape, dtype))
        ndim = len(shape)
        axis = d(st.none() | st.integers(-max(ndim, 1), max(ndim, 1) - 1))
        n = a.size if axis is None else (shape[axis] if ndim else 1)
        mode = d(st.sampled_from(["raise", "wrap", "clip"])) if n else "raise"
        ishape = d(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
        if n == 0:
            ishape = (0,)
        idx = d(index_arrays(ishape, n, spill=0 if mode == "raise" else 3))
        return [a], {"indices": idx, "axis": axis, "mode": mode}

    return build()


def take_along_axis_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, max_side=4))
        a = d(ls.arrays(shape, dtype))
        if d(st.booleans()):
            n = a.size
            ishape = (d(st.integers(0, 5)),) if n else (0,)
            return [a], {"indices": d(index_arrays(ishape, n)), "axis": None}
        axis = d(st.integers(-len(shape), len(shape) - 1))
        return [a], {"indices": _along(d, shape, axis % len(shape), True), "axis": axis}

    return build()


def put_along_axis_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, max_side=4))
        a = d(ls.arrays(shape, dtype))
        if d(st.booleans()):
            n = a.size
            idx = d(index_arrays((d(st.integers(0, 5)),) if n else (0,), n))
            axis = None
            written: tuple[int, ...] = idx.shape
        else:
            axis = d(st.integers(-len(shape), len(shape) - 1))
            idx = _along(d, shape, axis % len(shape), True)
            others = [m if ax != axis % len(shape) else 1 for ax, m in enumerate(shape)]
            written = np.broadcast_shapes(idx.shape, tuple(others))
        vshape = tuple(d(st.sampled_from([m, 1])) for m in written)
        vshape = vshape[d(st.integers(0, len(vshape))) :]  # fewer leading axes broadcast too
        values = d(ls.arrays(vshape, dtype))
        return [a, values], {"indices": idx, "axis": axis}

    return build()


def compress_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=3, max_side=4))
        a = d(ls.arrays(shape, dtype))
        ndim = len(shape)
        axis = d(st.none() | st.integers(-max(ndim, 1), max(ndim, 1) - 1))
        n = a.size if axis is None else (shape[axis] if ndim else 1)
        cond = list(d(st.lists(st.booleans(), max_size=n)))
        cond += [False] * d(st.integers(0, 2))  # longer than the axis, False beyond it
        return [a], {"condition": np.array(cond, dtype=bool), "axis": axis}

    return build()


def index_select_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, max_side=4))
        axis = d(st.integers(-len(shape), len(shape) - 1))
        n = shape[axis]
        idx = d(index_arrays((d(st.integers(0, 5)) if n else 0,), n))
        return [d(ls.arrays(shape, dtype))], {"axis": axis, "indices": idx}

    return build()


def index_add_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        (a,), kw = d(index_select_inputs(dtype))
        ax = kw["axis"] % a.ndim
        sshape = (*a.shape[:ax], kw["indices"].size, *a.shape[ax + 1 :])
        source = d(ls.arrays(sshape, dtype))
        return [a, source], {**kw, "alpha": d(st.sampled_from([1, -0.5, 2.0]))}

    return build()


def _gather_index(d: st.DrawFn, shape: tuple[int, ...], axis: int, limit: Any) -> np.ndarray:
    """Index for gather/scatter_add: no larger than ``limit`` on every axis but ``axis``."""
    ishape = tuple(
        (d(st.integers(0, 4)) if shape[axis] else 0) if ax == axis else d(st.integers(0, m))
        for ax, m in enumerate(limit)
    )
    return d(index_arrays(ishape, shape[axis]))


def gather_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, max_side=4))
        axis = d(st.integers(-len(shape), len(shape) - 1))
        idx = _gather_index(d, shape, axis % len(shape), shape)
        return [d(ls.arrays(shape, dtype))], {"axis": axis, "indices": idx}

    return build()


def scatter_add_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, max_side=4))
        axis = d(st.integers(-len(shape), len(shape) - 1))
        ax = axis % len(shape)
        idx = _gather_index(d, shape, ax, shape)
        sshape = tuple(m + d(st.integers(0, 2)) for m in idx.shape)  # src may be larger
        a = d(ls.arrays(shape, dtype))
        return [a, d(ls.arrays(sshape, dtype))], {"axis": axis, "indices": idx}

    return build()


def masked_fill_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        sx, sm = d(ls.broadcastable_shapes(2, max_dims=3, max_side=3))
        x = d(ls.arrays(sx, dtype))
        value = d(ls.arrays((), dtype))
        return [x, value], {"mask": d(hnp.arrays(np.bool_, sm))}

    return build()


def _distinct(d: st.DrawFn, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """Distinct values 0.25 apart (no ties), in a drawn order."""
    size = int(np.prod(shape))
    order = np.array(d(st.permutations(range(size))), dtype=np.float64)
    return (
        ((order - size / 2) * 0.25 + d(st.sampled_from([0.0, 0.1, -3.0])))
        .reshape(shape)
        .astype(dtype)
    )


def sort_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=3, max_side=4))
        ndim = len(shape)
        axis = d(st.none() | st.integers(-ndim, ndim - 1)) if ndim else None
        kw: dict[str, Any] = {"axis": axis}
        kind = d(st.sampled_from([None, "quicksort", "stable", "heapsort"]))
        if kind is not None:
            kw["kind"] = kind
        return [_distinct(d, shape, dtype)], kw

    return build()


def partition_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Distinct values (no ties) with one or several ``kth`` positions (negatives too)
    along a drawn axis, or along the flattened array."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
        ndim = len(shape)
        axis = d(st.none() | st.integers(-ndim, ndim - 1))
        n = int(np.prod(shape)) if axis is None else shape[axis]
        kth: Any = d(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3))
        if len(kth) == 1 and d(st.booleans()):
            kth = kth[0]
        return [_distinct(d, shape, dtype)], {"kth": kth, "axis": axis}

    return build()


def topk_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=3, max_side=5))
        ndim = len(shape)
        axis = d(st.integers(-ndim, ndim - 1)) if ndim else -1
        n = shape[axis] if ndim else 1
        k = 1 if not ndim else d(st.integers(0, n))
        kw = {"k": k, "axis": axis, "largest": d(st.booleans()), "sorted": d(st.booleans())}
        return [_distinct(d, shape, dtype)], kw

    return build()


# --------------------------------------------------------- references: explicit loops
def _ref_take(a: np.ndarray, *, indices: np.ndarray, axis: Any, mode: str) -> np.ndarray:
    return np.take(a, indices, axis=axis, mode=mode)  # type: ignore[call-overload,no-any-return]


def _ref_compress(a: np.ndarray, *, condition: np.ndarray, axis: Any) -> np.ndarray:
    return np.compress(condition, a, axis=axis)


def _ref_put_along_axis(
    arr: np.ndarray, values: np.ndarray, *, indices: np.ndarray, axis: Any
) -> np.ndarray:
    """Writes in C order of the written positions, the last write winning."""
    out = arr.copy()
    flat = out.reshape(-1)
    if axis is None:
        vb = np.broadcast_to(values, indices.shape)
        for i, j in enumerate(indices):
            flat[j] = vb[i]
        return out
    ax = axis % arr.ndim
    others = tuple(m if d != ax else 1 for d, m in enumerate(arr.shape))
    written = np.broadcast_shapes(indices.shape, others)
    vb = np.broadcast_to(values, written)
    ib = np.broadcast_to(indices, written)
    for p in np.ndindex(*written):
        pos = [q if arr.shape[d] != 1 else 0 for d, q in enumerate(p)]
        pos[ax] = ib[p]
        out[tuple(pos)] = vb[p]
    return out


def _ref_index_select(x: np.ndarray, *, axis: int, indices: np.ndarray) -> np.ndarray:
    """``out[..., i, ...] = x[..., indices[i], ...]``."""
    ax = axis % x.ndim
    out = np.empty((*x.shape[:ax], len(indices), *x.shape[ax + 1 :]), x.dtype)
    for i, j in enumerate(indices):
        out[(slice(None),) * ax + (i,)] = x[(slice(None),) * ax + (j,)]
    return out


def _ref_index_add(
    x: np.ndarray, source: np.ndarray, *, axis: int, indices: np.ndarray, alpha: float
) -> np.ndarray:
    """``out[..., indices[i], ...] += alpha * source[..., i, ...]``."""
    ax = axis % x.ndim
    out = x.copy()
    for i, j in enumerate(indices):
        out[(slice(None),) * ax + (j,)] += alpha * source[(slice(None),) * ax + (i,)]
    return out


def _ref_gather(x: np.ndarray, *, axis: int, indices: np.ndarray) -> np.ndarray:
    """``out[p] = x[p with p[axis] replaced by indices[p]]``."""
    ax = axis % x.ndim
    out = np.empty(indices.shape, x.dtype)
    for p in np.ndindex(*indices.shape):
        q = list(p)
        q[ax] = indices[p]
        out[p] = x[tuple(q)]
    return out


def _ref_scatter_add(
    x: np.ndarray, src: np.ndarray, *, axis: int, indices: np.ndarray
) -> np.ndarray:
    """``out[p with p[axis] replaced by indices[p]] += src[p]`` over the index's shape."""
    ax = axis % x.ndim
    out = x.copy()
    for p in np.ndindex(*indices.shape):
        q = list(p)
        q[ax] = indices[p]
        out[tuple(q)] += src[p]
    return out


def _ref_masked_fill(x: np.ndarray, value: np.ndarray, *, mask: np.ndarray) -> np.ndarray:
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.broadcast_to(x, shape).copy()
    out[np.broadcast_to(mask, shape)] = value
    return out


def _ref_topk(x: np.ndarray, *, k: int, axis: int, largest: bool, sorted: bool) -> np.ndarray:
    """Values distinct: the k extremes, sorted, or in the order of their positions."""
    xm = np.moveaxis(np.atleast_1d(x), axis, -1)
    order = np.argsort(-xm if largest else xm, axis=-1)[..., :k]
    if not sorted:
        order = np.sort(order, axis=-1)
    out = np.moveaxis(np.take_along_axis(xm, order, axis=-1), -1, axis)
    return out.reshape(()) if x.ndim == 0 else out


# ---------------------------------------------------------------------------- lampy side
def _take(a: Any, *, indices: Any, axis: Any, mode: str) -> Any:
    return take(a, indices, axis=axis, mode=mode)


def _take_along_axis(a: Any, *, indices: Any, axis: Any) -> Any:
    return take_along_axis(a, indices, axis)


def _put_along_axis(a: Any, values: Any, *, indices: Any, axis: Any) -> Any:
    return put_along_axis(a, indices, values, axis)


def _compress(a: Any, *, condition: Any, axis: Any) -> Any:
    return compress(condition, a, axis=axis)


def _index_select(x: Any, *, axis: int, indices: Any) -> Any:
    return index_select(x, axis, indices)


def _index_add(x: Any, source: Any, *, axis: int, indices: Any, alpha: float) -> Any:
    return index_add(x, axis, indices, source, alpha=alpha)


def _gather(x: Any, *, axis: int, indices: Any) -> Any:
    return gather(x, axis, indices)


def _scatter_add(x: Any, src: Any, *, axis: int, indices: Any) -> Any:
    return scatter_add(x, axis, indices, src)


def _masked_fill(x: Any, value: Any, *, mask: Any) -> Any:
    return masked_fill(x, mask, value)


def _topk_values(x: Any, **kw: Any) -> Any:
    return topk(x, **kw).values


OPS: list[OpSpec] = [
    OpSpec("take", _take, _ref_take, take_inputs),
    OpSpec("take_along_axis", _take_along_axis, np.take_along_axis, take_along_axis_inputs),
    OpSpec("put_along_axis", _put_along_axis, _ref_put_along_axis, put_along_axis_inputs),
    OpSpec("compress", _compress, _ref_compress, compress_inputs),
    OpSpec("index_select", _index_select, _ref_index_select, index_select_inputs),
    OpSpec("index_add", _index_add, _ref_index_add, index_add_inputs),
    OpSpec("gather", _gather, _ref_gather, gather_inputs),
    OpSpec("scatter_add", _scatter_add, _ref_scatter_add, scatter_add_inputs),
    OpSpec("masked_fill", _masked_fill, _ref_masked_fill, masked_fill_inputs),
    OpSpec("sort", lampy_sort, np.sort, sort_inputs),
    OpSpec("partition", partition, np.partition, partition_inputs),
    OpSpec("topk", _topk_values, _ref_topk, topk_inputs),
]
