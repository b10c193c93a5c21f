"""Op table of the array makers differentiable in their values: linspace (in ``start``
and ``stop``, also with ``retstep``) and full (in ``fill_value``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from lampy.ops._creation import full, linspace
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec


def linspace_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """``start`` and ``stop`` of broadcastable shapes, any ``num`` from 0, both
    ``endpoint`` settings and any valid ``axis``."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        s1, s2 = d(ls.broadcastable_shapes(2, max_dims=2, max_side=3))
        nd = len(np.broadcast_shapes(s1, s2)) + 1
        kwargs = {
            "num": d(st.integers(0, 6)),
            "endpoint": d(st.booleans()),
            "axis": d(st.integers(-nd, nd - 1)),
        }
        return [d(ls.arrays(s1, dtype)), d(ls.arrays(s2, dtype))], kwargs

    return build()


def _step(fn: Any) -> Any:
    """The step of ``fn(..., retstep=True)`` (num >= 2, so that it is defined)."""
    return lambda start, stop, **kw: fn(start, stop, max(kw.pop("num"), 2), retstep=True, **kw)[1]


def full_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """A fill value broadcastable to the drawn shape, in C or F order."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=3, max_side=3))
        kept = shape[d(st.integers(0, len(shape))) :]
        fill_shape = tuple(1 if d(st.booleans()) else n for n in kept)
        return [d(ls.arrays(fill_shape, dtype))], {
            "shape": shape,
            "order": d(st.sampled_from("CF")),
        }

    return build()


def _full(fn: Any) -> Any:
    return lambda fill_value, shape, order: fn(shape, fill_value, order=order)


OPS: list[OpSpec] = [
    OpSpec("linspace", linspace, np.linspace, linspace_inputs),
    OpSpec("linspace_step", _step(linspace), _step(np.linspace), linspace_inputs),
    OpSpec("full", _full(full), _full(np.full), full_inputs),
]
