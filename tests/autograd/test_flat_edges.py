"""Nodes hold their op's edges in one flat tuple (``Node.edges``): ops with many inputs
keep linear costs where the engine reads them (``flat_edges``, ``Node.params``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy.autograd import _edge, _node


@pytest.mark.parametrize("create_graph", [False, True])
def test_gradients_read_an_ops_edges_once(monkeypatch: Any, create_graph: bool) -> None:
    """``lampy.gradients`` through an op of n inputs rebuilds its tuple of edges a few
    times, not once per input (which made it quadratic in n)."""
    calls = [0]
    split = _edge.split_edges

    def counted(edges: Any) -> Any:
        calls[0] += 1
        return split(edges)

    monkeypatch.setattr(_node, "split_edges", counted)
    n = 200
    with lampy.Scope():
        xs = [lampy.param(np.full(2, float(i))) for i in range(n)]
        y = (lampy.concatenate(xs) ** 2).sum()
        grads = lampy.gradients(y, xs, create_graph=create_graph)
        for i, g in enumerate(grads):
            np.testing.assert_array_equal(np.asarray(getattr(g, "value", g)), np.full(2, 2.0 * i))
    assert calls[0] < 20


def test_flat_edges_round_trip() -> None:
    """``split_edges(flat_edges(p)) == p`` for 0 to 5 edges; one edge is itself."""
    edges = [(object(), len, _edge.PLAIN, False, None) for _ in range(5)]
    for k in range(6):
        params = tuple(edges[:k])
        flat = _edge.flat_edges(params)
        assert len(flat) == _edge.WIDTH * k
        if k == 1:
            assert flat is edges[0]
        if k:
            assert _edge.split_edges(flat) == params
