"""Fault injection for generators: data pipelines built from generators, with and
without scopes inside them (issue 16 #3).

A generator shares its caller's context, so a scope it opens and holds across a ``yield``
becomes the caller's current scope. Each scenario runs in a fresh thread (a context of
its own), so a corrupted scope stack cannot leak into other tests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import lampy
from lampy import optim

WAIT = 30.0  # seconds: a safety net against a hung thread, not a measurement


def _in_fresh_thread(fn: Callable[[], Any]) -> Any:
    """``fn()`` run in a new thread (with an empty context); its result or its error."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as e:  # reported to the test thread
            box["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join(WAIT)
    assert not t.is_alive(), "the scenario hung"
    if "error" in box:
        raise box["error"]
    return box["result"]


X = np.random.default_rng(0).normal(size=(64, 3))
Y = X @ np.array([1.0, -2.0, 0.5])


def _arrays(batch: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    for i in range(0, len(X), batch):
        yield X[i : i + batch], Y[i : i + batch]


def _standardised(batches: Iterator[Any]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    for x, y in batches:
        yield (x - x.mean(0)) / (x.std(0) + 1e-8), y


def _train(batches: Callable[[], Iterator[Any]], epochs: int = 5) -> np.ndarray:
    """Linear regression by SGD over ``batches()`` (arrays or constant Variables)."""
    with lampy.Scope():
        w = lampy.param(np.zeros(3))
        opt = optim.SGD([w], lr=0.1)
        for _ in range(epochs):
            for x, y in batches():
                with lampy.Scope():
                    ((lampy.matmul(x, w) - y) ** 2).mean().backward()
                opt.step()
                opt.zero_grad()
        return w.value.copy()


def test_a_pipeline_of_generators_yielding_arrays_trains_as_a_list_does() -> None:
    """The pattern that works: generators yield numpy arrays (no scope inside); the
    consumer opens a scope per step. Same weights, bit for bit, as a precomputed list."""
    listed = list(_standardised(_arrays(8)))
    from_list = _train(lambda: iter(listed))
    from_generators = _in_fresh_thread(lambda: _train(lambda: _standardised(_arrays(8))))
    np.testing.assert_array_equal(from_generators, from_list)


def _scoped(values: Iterator[np.ndarray]) -> Iterator[lampy.Variable]:
    """A pipeline stage that computes each item with lampy ops in a scope of its own,
    held open across the yield: the pattern issue 16 #3 is about."""
    for v in values:
        with lampy.Scope():
            yield lampy.const(v) * 1.0


def _zipped_scoped_batches() -> Iterator[tuple[lampy.Variable, lampy.Variable]]:
    """Inputs and targets from two such stages, zipped: their scopes open and close
    interleaved (x1, y1 opened; x1 closed while y1 is the innermost...)."""
    batches = list(_standardised(_arrays(8)))
    return zip(_scoped(x for x, _ in batches), _scoped(y for _, y in batches), strict=True)


def test_a_generator_that_holds_a_scope_across_yield_gets_a_clear_error_or_works() -> None:
    """Two scoped generator stages zipped: either the pipeline trains correctly
    (ownership follows the generators) or it stops with a LampyError naming generators;
    either way the thread's scope stack is consistent afterwards: NoScopeError at top
    level, and a new scope works. Today the second batch fails with "a scope nested
    inside this one is still open" and every later op, even at top level, with a message
    about copied contexts."""
    expected = _train(lambda: _standardised(_arrays(8)))

    def scenario() -> dict[str, Any]:
        outcome: dict[str, Any] = {}
        try:
            outcome["weights"] = _train(_zipped_scoped_batches)
        except lampy.LampyError as e:
            outcome["error"] = e
        try:
            lampy.param(1.0)
        except lampy.NoScopeError:
            outcome["top_level"] = "NoScopeError"
        except Exception as e:
            outcome["top_level"] = repr(e)
        with lampy.Scope():
            outcome["after"] = float((lampy.param(2.0) * 3.0).item())
        return outcome

    outcome = _in_fresh_thread(scenario)
    if "error" in outcome:
        assert "generator" in str(outcome["error"]).lower(), outcome["error"]
    else:
        np.testing.assert_allclose(outcome["weights"], expected, rtol=1e-12)
    assert outcome["top_level"] == "NoScopeError"
    assert outcome["after"] == 6.0
