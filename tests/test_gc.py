"""Graphs are freed by reference counting alone: building and backpropagating a long
chain triggers no full (generation-2) collection of the cyclic garbage collector."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import lampy


@pytest.fixture
def full_collections() -> Iterator[list[int]]:
    """Counts the generation-2 collections started while the test runs."""
    count = [0]

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            count[0] += 1

    gc.collect()
    gc.callbacks.append(callback)
    try:
        yield count
    finally:
        gc.callbacks.remove(callback)


@pytest.mark.xfail(
    reason="issue 11: each op leaves 3 objects the cyclic GC tracks (its Node and two "
    "tuples; 6.3 before the 0-d scalars and the 4-tuple params), so a 10^5-op chain "
    "still starts full collections while it is built; a graph of Python objects with "
    "closures in it is tracked by CPython's collector",
    strict=True,
)
def test_a_long_chain_triggers_no_full_collection(full_collections: list[int]) -> None:
    """A 10^5-op scalar chain (y = tanh(y * 0.9 + 0.1)), its backward pass and the exit
    of its scope start no generation-2 collection, and the gradient is right."""
    steps = 100_000 // 3
    with lampy.Scope():
        x = lampy.param(np.float64(0.5))
        y = x
        for _ in range(steps):
            y = lampy.tanh(y * 0.9 + 0.1)
        y.sum().backward()
        grad = float(x.grad)  # type: ignore[arg-type]
    assert full_collections[0] == 0
    v, g = 0.5, 1.0
    for _ in range(steps):
        v = float(np.tanh(v * 0.9 + 0.1))
        g *= (1 - v * v) * 0.9
    assert grad == pytest.approx(g, rel=1e-9)
