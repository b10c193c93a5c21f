"""Threads: parallel_map under the caller's scope, many threads with their own or a shared
scope, and scopes exiting while another thread still uses their Variables."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import lampy


def _in_threads(n: int, fn: Any) -> list[Any]:
    """Run ``fn(i)`` for i in range(n) in n threads at once; results in order."""
    results: list[Any] = [None] * n
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def target(i: int) -> None:
        try:
            start.wait()
            results[i] = fn(i)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _train(seed: int, steps: int) -> bytes:
    """``steps`` SGD steps of a small model in its own scopes; the final weights."""
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(16, 4)), rng.normal(size=(16, 1))
    with lampy.Scope():
        w = lampy.param(rng.normal(size=(4, 1)))
        opt = lampy.optim.Adam([w], lr=0.01)
        for _ in range(steps):
            with lampy.Scope():
                (lampy.tanh(x @ w) - y).__pow__(2).mean().backward()
            opt.step()
            opt.zero_grad()
        return w.value.tobytes()


def test_eight_threads_with_their_own_scopes_equal_serial() -> None:
    """8 threads x 500 steps, each in its own scopes: bitwise the serial results."""
    serial = [_train(i, 500) for i in range(8)]
    assert _in_threads(8, lambda i: _train(i, 500)) == serial


def test_eight_threads_in_one_shared_scope() -> None:
    """8 threads x 500 ops each, registering Variables in one shared scope at once: every
    one is owned and correct, and the scope's exit releases them all."""
    rng = np.random.default_rng(0)
    consts = rng.normal(size=(8, 5))
    with lampy.Scope() as shared:
        w = lampy.param(rng.normal(size=5))

        def work(i: int) -> list[lampy.Variable]:
            return [lampy.tanh(w * consts[i] + 0.001 * k) for k in range(500)]

        made = lampy.parallel_map(work, range(8), workers=8)
        assert len(shared) == 1 + 8 * 500 * 3  # w, and multiply, add, tanh per step
        for i, ys in enumerate(made):
            np.testing.assert_array_equal(ys[7].value, np.tanh(w.value * consts[i] + 0.007))
        total = lampy.sum(lampy.stack([ys[-1] for ys in made]))
        total.backward()
        want = sum((1 - np.tanh(w.value * c + 0.499) ** 2) * c for c in consts)
        np.testing.assert_allclose(w.grad, want)  # type: ignore[arg-type]
    assert all(y.is_released for ys in made for y in ys)


def test_parallel_map_returns_results_in_order_and_owned_by_the_caller() -> None:
    """parallel_map gives fn(item) in item order; the Variables belong to the caller's scope."""
    with lampy.Scope() as s:
        out = lampy.parallel_map(lambda k: lampy.const(float(k)) * 2.0, range(20), workers=4)
        assert [v.item() for v in out] == [2.0 * k for k in range(20)]
        assert len(s) == 40
    assert all(v.is_released for v in out)


def test_parallel_map_gradients_flow_to_the_callers_params() -> None:
    """Branches built by parallel_map are one graph with the caller's params."""
    rng = np.random.default_rng(1)
    xs = [rng.normal(size=(8, 8)) for _ in range(4)]
    with lampy.Scope():
        w = lampy.param(rng.normal(size=(8, 8)))
        heads = lampy.parallel_map(lambda x: lampy.tanh(x @ w), xs, workers=4)
        sum(h.sum() for h in heads).backward()  # type: ignore[union-attr]
        got = w.grad.copy()  # type: ignore[union-attr]
        w.zero_grad()
        sum(lampy.tanh(x @ w).sum() for x in xs).backward()  # type: ignore[union-attr]
        np.testing.assert_array_equal(got, w.grad)  # type: ignore[arg-type]


def test_parallel_map_raises_the_first_error_after_all_finished() -> None:
    """An exception in fn is re-raised (the first in item order) once every call ended."""
    done: list[int] = []

    def fn(k: int) -> int:
        if k in (3, 5):
            raise KeyError(k)
        done.append(k)
        return k

    with lampy.Scope(), pytest.raises(KeyError, match="3"):
        lampy.parallel_map(fn, range(10), workers=3)
    assert sorted(done) == [0, 1, 2, 4, 6, 7, 8, 9]


def test_parallel_map_needs_an_open_scope() -> None:
    """No scope: NoScopeError; a scope that exited (a copied context): ReleasedError."""
    import contextvars

    with pytest.raises(lampy.NoScopeError):
        lampy.parallel_map(lambda k: k, range(3))
    with lampy.Scope():
        ctx = contextvars.copy_context()
    with pytest.raises(lampy.ReleasedError, match="parallel_map"):
        ctx.run(lampy.parallel_map, lambda k: k, range(3))


def test_nested_parallel_map_does_not_deadlock() -> None:
    """parallel_map inside parallel_map (the pool is busy) still completes."""
    with lampy.Scope():
        out = lampy.parallel_map(
            lambda i: sum(lampy.parallel_map(lambda j: i * j, range(4), workers=2)),
            range(4),
            workers=2,
        )
    assert out == [0, 6, 12, 18]


def test_backward_through_an_input_released_by_another_thread() -> None:
    """A param whose scope exits (in another thread) before backward: ReleasedError naming
    the input, raised before anything is accumulated."""
    made = threading.Event()
    released = threading.Event()
    box: dict[str, Any] = {}

    def owner() -> None:
        with lampy.Scope():
            box["w"] = lampy.param(np.ones(2))
            made.set()
            released.wait()

    t = threading.Thread(target=owner)
    t.start()
    made.wait()
    with lampy.Scope():
        c = lampy.param(np.full(2, 3.0))
        y = (box["w"] * c).sum()
        released.set()
        t.join()
        with pytest.raises(lampy.ReleasedError, match=r"'param', shape \(2,\)"):
            y.backward()
        assert c.grad is None


def test_a_scope_exited_while_a_thread_still_uses_it() -> None:
    """Variables made in a scope after it exited (another thread) are a clear error and
    are not leaked or freed twice."""
    import contextvars

    with lampy.Scope() as s:
        ctx = contextvars.copy_context()
    with pytest.raises(lampy.LampyError, match="already exited"):
        ctx.run(lambda: lampy.const(1.0) * 2.0)
    assert len(s) == 0
