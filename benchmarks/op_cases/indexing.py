"""Benchmark cases of indexing, scattering and sorting (forward + backward).

Inputs have 200,000 elements: (1000, 200) for row selection (an embedding-style lookup
of 1000 random rows, repeats included), (400, 500) for the along-axis ops, and 200,000
for 1-d takes. Index arrays are fixed constants drawn once here. Each baseline is the
plain numpy forward followed by the hand-written gradient as one would write it:
``numpy.add.at`` on the natural index where indices may repeat, fancy assignment where
they cannot (a permutation, a boolean mask, distinct top-k positions). torch and mygrad
are imported lazily inside the lambdas so this module imports without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.ops._indexing import compress, getitem, take
from lampy.ops._masking import masked_fill
from lampy.ops._scatter import (
    gather,
    index_add,
    index_select,
    put_along_axis,
    scatter_add,
    take_along_axis,
)
from lampy.ops._sorting import sort, topk

from ._case import Case

Arrays = list[np.ndarray]
ROWS = (1000, 200)
GRID = (400, 500)
FLAT = 200_000
K = 50

_rng = np.random.default_rng(7)
ROW_IDX = _rng.integers(0, ROWS[0], ROWS[0])
"""1000 random row indices into (1000, 200), about 37% of them repeats."""
FLAT_IDX = _rng.integers(0, FLAT, FLAT)
COL_IDX = _rng.integers(0, GRID[1], GRID[1])
GRID_IDX = _rng.integers(0, GRID[1], GRID)
"""Random positions along axis 1 of (400, 500), repeats included."""
PUT_IDX = np.argsort(_rng.random(GRID), axis=1)[:, :100]
"""100 distinct positions per row of (400, 500)."""
CONDITION = _rng.random(GRID[0]) < 0.5
MASK = _rng.random(GRID) < 0.5
_ROW_RANGE = np.arange(GRID[0])[:, None]


def _normal(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], Arrays]:
    return lambda rng: [rng.standard_normal(s) for s in shapes]


def _torch(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(torch, *tensors)``, torch imported at the call."""

    def call(*t: Any) -> Any:
        import torch

        return fn(torch, *t)

    return call


def _mygrad(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(mygrad, *tensors)``, mygrad imported at the call."""

    def call(*t: Any) -> Any:
        import mygrad

        return fn(mygrad, *t)

    return call


def _t(torch: Any, a: np.ndarray) -> Any:
    return torch.from_numpy(a)


# ------------------------------------------------------------------------------ baselines
def _rows_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    x[ROW_IDX]
    dx = np.zeros_like(x)
    np.add.at(dx, ROW_IDX, g)
    return [dx]


def _take_flat_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    np.take(x, FLAT_IDX)
    dx = np.zeros_like(x)
    np.add.at(dx, FLAT_IDX, g)
    return [dx]


def _take_cols_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    np.take(x, COL_IDX, axis=1)
    dx = np.zeros_like(x)
    np.add.at(dx, (slice(None), COL_IDX), g)
    return [dx]


def _along_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    np.take_along_axis(x, GRID_IDX, axis=1)
    dx = np.zeros_like(x)
    np.add.at(dx, (_ROW_RANGE, GRID_IDX), g)
    return [dx]


def _put_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    x, v = inputs
    out = x.copy()
    np.put_along_axis(out, PUT_IDX, v, axis=1)
    dx = g.copy()
    np.put_along_axis(dx, PUT_IDX, 0.0, axis=1)
    return [dx, np.take_along_axis(g, PUT_IDX, axis=1)]


def _compress_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    np.compress(CONDITION, x, axis=0)
    dx = np.zeros_like(x)
    dx[CONDITION] = g
    return [dx]


def _index_add_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    x, s = inputs
    out = x.copy()
    np.add.at(out, ROW_IDX, s)
    return [g, g[ROW_IDX]]


def _scatter_add_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    x, s = inputs
    out = x.copy()
    np.add.at(out, (_ROW_RANGE, GRID_IDX), s)
    return [g, np.take_along_axis(g, GRID_IDX, axis=1)]


def _masked_fill_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    x, v = inputs
    np.where(MASK, v, x)
    return [np.where(MASK, 0.0, g), np.sum(g, where=MASK)]


def _sort_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    p = np.argsort(x, axis=1)
    np.take_along_axis(x, p, axis=1)
    dx = np.empty_like(x)
    np.put_along_axis(dx, p, g, axis=1)
    return [dx]


def _topk_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    part = np.argpartition(-x, K - 1, axis=1)[:, :K]
    vals = np.take_along_axis(x, part, axis=1)
    order = np.argsort(-vals, axis=1, kind="stable")
    idx = np.take_along_axis(part, order, axis=1)
    np.take_along_axis(vals, order, axis=1)
    dx = np.zeros_like(x)
    np.put_along_axis(dx, idx, g, axis=1)
    return [dx]


CASES: list[Case] = [
    Case(
        name="getitem x[rows] (1000 rows, repeats)",
        family="indexing",
        make_inputs=_normal(ROWS),
        lampy_fn=lambda x: getitem(x, ROW_IDX),
        numpy_fwd_bwd=_rows_baseline,
        torch_fn=_torch(lambda torch, t: t[torch.from_numpy(ROW_IDX)]),
        mygrad_fn=lambda t: t[ROW_IDX],
    ),
    Case(
        name="index_select axis=0 (1000 rows, repeats)",
        family="indexing",
        make_inputs=_normal(ROWS),
        lampy_fn=lambda x: index_select(x, 0, ROW_IDX),
        numpy_fwd_bwd=_rows_baseline,
        torch_fn=_torch(lambda torch, t: torch.index_select(t, 0, _t(torch, ROW_IDX))),
    ),
    Case(
        name="take flat (200,000 of 200,000)",
        family="indexing",
        make_inputs=_normal((FLAT,)),
        lampy_fn=lambda x: take(x, FLAT_IDX),
        numpy_fwd_bwd=_take_flat_baseline,
        torch_fn=_torch(lambda torch, t: torch.take(t, _t(torch, FLAT_IDX))),
        mygrad_fn=lambda t: t[FLAT_IDX],
    ),
    Case(
        name="take axis=1 (500 of 500 columns)",
        family="indexing",
        make_inputs=_normal(GRID),
        lampy_fn=lambda x: take(x, COL_IDX, axis=1),
        numpy_fwd_bwd=_take_cols_baseline,
        torch_fn=_torch(lambda torch, t: t[:, _t(torch, COL_IDX)]),
        mygrad_fn=lambda t: t[:, COL_IDX],
    ),
    Case(
        name="take_along_axis axis=1",
        family="indexing",
        make_inputs=_normal(GRID),
        lampy_fn=lambda x: take_along_axis(x, GRID_IDX, axis=1),
        numpy_fwd_bwd=_along_baseline,
        torch_fn=_torch(lambda torch, t: torch.take_along_dim(t, _t(torch, GRID_IDX), 1)),
        mygrad_fn=lambda t: t[_ROW_RANGE, GRID_IDX],
    ),
    Case(
        name="gather axis=1",
        family="indexing",
        make_inputs=_normal(GRID),
        lampy_fn=lambda x: gather(x, 1, GRID_IDX),
        numpy_fwd_bwd=_along_baseline,
        torch_fn=_torch(lambda torch, t: torch.gather(t, 1, _t(torch, GRID_IDX))),
    ),
    Case(
        name="put_along_axis axis=1 (100 distinct per row)",
        family="indexing",
        make_inputs=_normal(GRID, (GRID[0], 100)),
        lampy_fn=lambda x, v: put_along_axis(x, PUT_IDX, v, axis=1),
        numpy_fwd_bwd=_put_baseline,
        torch_fn=_torch(lambda torch, t, v: torch.scatter(t, 1, _t(torch, PUT_IDX), v)),
    ),
    Case(
        name="compress axis=0 (half the rows)",
        family="indexing",
        make_inputs=_normal(GRID),
        lampy_fn=lambda x: compress(CONDITION, x, axis=0),
        numpy_fwd_bwd=_compress_baseline,
        torch_fn=_torch(lambda torch, t: t[_t(torch, CONDITION)]),
        mygrad_fn=lambda t: t[CONDITION],
    ),
    Case(
        name="index_add axis=0 (1000 rows, repeats)",
        family="indexing",
        make_inputs=_normal(ROWS, ROWS),
        lampy_fn=lambda x, s: index_add(x, 0, ROW_IDX, s),
        numpy_fwd_bwd=_index_add_baseline,
        torch_fn=_torch(lambda torch, t, s: torch.index_add(t, 0, _t(torch, ROW_IDX), s)),
    ),
    Case(
        name="scatter_add axis=1",
        family="indexing",
        make_inputs=_normal(GRID, GRID),
        lampy_fn=lambda x, s: scatter_add(x, 1, GRID_IDX, s),
        numpy_fwd_bwd=_scatter_add_baseline,
        torch_fn=_torch(lambda torch, t, s: torch.scatter_add(t, 1, _t(torch, GRID_IDX), s)),
    ),
    Case(
        name="masked_fill (half masked, 0-d value)",
        family="indexing",
        make_inputs=lambda rng: [rng.standard_normal(GRID), np.array(rng.standard_normal())],
        lampy_fn=lambda x, v: masked_fill(x, MASK, v),
        numpy_fwd_bwd=_masked_fill_baseline,
        torch_fn=_torch(lambda torch, t, v: torch.masked_fill(t, _t(torch, MASK), v)),
    ),
    Case(
        name="sort axis=1",
        family="indexing",
        make_inputs=_normal(GRID),
        lampy_fn=lambda x: sort(x, axis=1),
        numpy_fwd_bwd=_sort_baseline,
        torch_fn=_torch(lambda torch, t: torch.sort(t, dim=1).values),
    ),
    Case(
        name=f"topk k={K} axis=1",
        family="indexing",
        make_inputs=_normal(GRID),
        lampy_fn=lambda x: topk(x, K, axis=1).values,
        numpy_fwd_bwd=_topk_baseline,
        torch_fn=_torch(lambda torch, t: torch.topk(t, K, dim=1).values),
    ),
]
