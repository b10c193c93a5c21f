"""A scope released by its owner while another thread runs a backward pass through its
graph: the pass raises ReleasedError (serial and concurrent), never returns as if it
had succeeded, never hangs, and its worker threads finish."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.autograd import _pass


def _gate(x: lampy.Variable, reached: threading.Event, go: threading.Event) -> lampy.Variable:
    """An identity op whose closure signals ``reached``, then waits for ``go``."""

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        reached.set()
        assert go.wait(10)
        np.add(out, g, out=out)

    return lampy.op("gate", x.value.copy(), x.zip_backward(d_x))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_scope_released_during_another_threads_backward_raises(
    workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The owner exits the scope while the pass waits inside a closure: the pass raises
    ReleasedError in its thread, within seconds, 20 times in a row."""
    if workers > 1:  # concurrent even for this small graph
        monkeypatch.setattr(_pass, "BIG_NODE_BYTES", 0)
        monkeypatch.setattr(_pass, "CONCURRENT_MIN_BYTES", 0)
    for _ in range(20):
        reached, go = threading.Event(), threading.Event()
        outcome: dict[str, Any] = {}
        scope = lampy.Scope()
        with scope:
            w = lampy.param(np.ones((4, 4)))
            v = lampy.param(np.ones((4, 4)))
            loss = lampy.sum(lampy.tanh(_gate(w * 2.0, reached, go)) * v) + lampy.sum(v * v)

            def run() -> None:
                try:
                    loss.backward(workers=workers)
                    outcome["ok"] = True
                except lampy.ReleasedError as e:
                    outcome["error"] = e
                except BaseException as e:
                    outcome["other"] = e

            t = threading.Thread(target=run)
            t.start()
            assert reached.wait(10)
        # the owner's `with` block has exited: everything it owned is released
        go.set()
        t.join(10)
        assert not t.is_alive(), "the pass hung"
        assert "error" in outcome, outcome
        assert "released" in str(outcome["error"]) or "exited" in str(outcome["error"])
