"""Concurrent backward: bitwise equal to serial for any graph and worker count, streams
final gradients, stops cleanly on errors, and decides per graph whether to go concurrent."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lampy
from lampy.autograd import _pass


@pytest.fixture
def always_concurrent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every graph, however small, take the concurrent path when workers > 1."""
    monkeypatch.setattr(_pass, "BIG_NODE_BYTES", 0)
    monkeypatch.setattr(_pass, "CONCURRENT_MIN_BYTES", 0)


# A random DAG: each step applies an op to one or two earlier nodes (chosen by index),
# so nodes are shared by several consumers, and some nodes are used twice by one op.
UNARY: dict[str, Callable[[Any], Any]] = {
    "tanh": lampy.tanh,
    "exp_small": lambda x: lampy.exp(x * 0.1),
    "square": lambda x: x * x,
    "sum_keep": lambda x: lampy.sum(x, axis=-1, keepdims=True) + x,
    "transpose_matmul": lambda x: (x @ x.T) @ x * 0.1,
    "slice": lambda x: lampy.concatenate([x[:, 1:], x[:, :1]], axis=1),
    "sin_custom": lambda x: _plain_closure_sin(x),
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - b,
    "matmul": lambda a, b: a @ b.T * 0.1,
    "maximum": lampy.maximum,
}


def _plain_closure_sin(x: lampy.Variable) -> lampy.Variable:
    """An op with a plain (g, out) closure, which runs whole at its turn."""
    a = x.value
    return lampy.op(
        "sin_custom",
        np.sin(a),
        x.zip_backward(lambda g, out: np.add(out, g * np.cos(a), out=out)),
    )


steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(sorted(UNARY)), st.integers(0, 100)),
        st.tuples(st.sampled_from(sorted(BINARY)), st.integers(0, 100), st.integers(0, 100)),
    ),
    min_size=1,
    max_size=14,
)


def _run(
    program: list[Any], inputs: list[np.ndarray], workers: int, roots: int
) -> list[np.ndarray]:
    with lampy.Scope():
        params = [lampy.param(a) for a in inputs]
        nodes: list[Any] = list(params)
        for step in program:
            if len(step) == 2:
                nodes.append(UNARY[step[0]](nodes[step[1] % len(nodes)]))
            else:
                a, b = nodes[step[1] % len(nodes)], nodes[step[2] % len(nodes)]
                nodes.append(BINARY[step[0]](a, b))
        outs = [lampy.sum(n) for n in nodes[-roots:]]
        lampy.backward(outs, workers=workers)
        return [np.zeros_like(p.value) if p.grad is None else p.grad.copy() for p in params]


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    program=steps,
    seed=st.integers(0, 2**16),
    roots=st.integers(1, 3),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_random_dags_are_bitwise_equal_for_any_worker_count(
    always_concurrent: None, program: list[Any], seed: int, roots: int, dtype: Any
) -> None:
    """Random DAGs with shared subexpressions: gradients bitwise equal for workers 1..4."""
    rng = np.random.default_rng(seed)
    inputs = [rng.normal(size=(4, 4)).astype(dtype) for _ in range(3)]
    serial = _run(program, inputs, 1, roots)
    for workers in (2, 3, 4):
        got = _run(program, inputs, workers, roots)
        for s, g in zip(serial, got, strict=True):
            assert s.dtype == g.dtype
            assert s.tobytes() == g.tobytes(), f"workers={workers} differs from serial"


def test_many_repetitions_of_a_wide_graph_stay_bitwise_equal(always_concurrent: None) -> None:
    """One wide graph (8 branches into shared buffers) run 200 times with 4 workers never
    differs from serial: the delivery order, not thread timing, decides the sums."""
    rng = np.random.default_rng(1)
    x0 = rng.normal(size=(16, 16))

    def grads(workers: int) -> bytes:
        with lampy.Scope():
            x = lampy.param(x0)
            branches = [lampy.tanh(x * (0.1 * k)) @ x for k in range(8)]
            total = branches[0]
            for b in branches[1:]:
                total = total + b
            (total * total).sum().backward(workers=workers)
            assert x.grad is not None
            return x.grad.tobytes()

    want = grads(1)
    for _ in range(200):
        assert grads(4) == want


def test_backward_iter_streams_each_param_once_and_final(always_concurrent: None) -> None:
    """With workers, backward_iter yields every param exactly once, each with its final
    gradient, equal to the serial pass."""
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(8, 8)) for _ in range(6)]

    def run(workers: int) -> dict[int, bytes]:
        with lampy.Scope():
            ws = [lampy.param(v) for v in values]
            h = ws[0]
            for w in ws[1:]:
                h = lampy.tanh(h @ w)
            seen: dict[int, bytes] = {}
            for p, g in lampy.backward_iter(h.sum(), workers=workers):
                i = next(k for k, w in enumerate(ws) if w is p)
                assert i not in seen
                assert g is p.grad
                seen[i] = g.copy().tobytes()
            for i, w in enumerate(ws):  # nothing changed after it was yielded
                assert w.grad is not None and w.grad.tobytes() == seen[i]
            return seen

    assert run(3) == run(1)


def test_a_failing_closure_stops_the_pass_and_changes_no_gradient(
    always_concurrent: None,
) -> None:
    """A closure raising in a worker: BackwardError naming the op, every running closure
    finished before it reaches the caller, and no param's .grad changed."""
    events: list[str] = []
    lock = threading.Lock()

    def slow(x: lampy.Variable) -> lampy.Variable:
        def d(g: np.ndarray, out: np.ndarray) -> None:
            with lock:
                events.append("enter")
            time.sleep(0.05)
            np.add(out, g, out=out)
            with lock:
                events.append("exit")

        return lampy.op("slow", x.value.copy(), x.zip_backward(d))

    def failing(x: lampy.Variable) -> lampy.Variable:
        def d(g: np.ndarray, out: np.ndarray) -> None:
            raise ValueError("boom")

        return lampy.op("failing", x.value.copy(), x.zip_backward(d))

    with lampy.Scope():
        x = lampy.param(np.ones(3))
        (x * 2.0).sum().backward()
        before = x.grad.copy()  # type: ignore[union-attr]
        loss = sum((slow(x) for _ in range(4)), failing(x)).sum()  # type: ignore[arg-type]
        with pytest.raises(lampy.BackwardError, match="'failing'") as info:
            loss.backward(workers=4)
        assert isinstance(info.value.__cause__, ValueError)
        with lock:
            assert events.count("enter") == events.count("exit")
        np.testing.assert_array_equal(x.grad, before)  # type: ignore[arg-type]


@pytest.mark.parametrize("workers", [1, 2])
def test_the_serial_engine_names_the_op_too(workers: int) -> None:
    """Serial or concurrent, a closure's exception becomes a BackwardError naming the op
    and its input, with the original exception as its cause."""
    with lampy.Scope():
        x = lampy.param(np.ones(2))
        bad = lampy.op("my_op", x.value * 2, x.zip_backward(lambda g, out: 1 / 0))
        with pytest.raises(lampy.BackwardError, match=r"op 'my_op' for its input 0") as info:
            bad.sum().backward(workers=workers)
        assert isinstance(info.value.__cause__, ZeroDivisionError)
        assert x.grad is None


def test_stopping_backward_iter_early_leaves_no_worker_running(always_concurrent: None) -> None:
    """Closing a concurrent backward_iter after the first gradient waits for running
    closures; the pass stops there."""
    with lampy.Scope():
        ws = [lampy.param(np.full((4, 4), 0.1 * k)) for k in range(1, 6)]
        h = ws[0]
        for w in ws[1:]:
            h = lampy.tanh(h @ w)
        it = lampy.backward_iter(h.sum(), workers=3)
        next(it)
        it.close()
        active = [t for t in threading.enumerate() if t.name.startswith("lampy")]
        time.sleep(0.01)
        for t in active:  # pool threads are idle, waiting for work (not running ours)
            assert t.is_alive()


def test_small_graphs_stay_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph of small ops runs serially even with workers=4 (handing it to threads
    would cost more than it saves)."""
    import lampy.autograd._backprop as backprop

    def fail(*args: Any) -> Any:
        raise AssertionError("went concurrent")

    monkeypatch.setattr(backprop, "run_concurrent", fail)
    with lampy.Scope():
        x = lampy.param(np.ones(10))
        y = x
        for _ in range(50):
            y = lampy.tanh(y * 0.9 + 0.1)
        y.sum().backward(workers=4)
        assert x.grad is not None


def test_big_independent_branches_go_concurrent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Big matmul branches take the concurrent path with workers=2, with gradients
    bitwise equal to serial."""
    import lampy.autograd._backprop as backprop

    calls: list[int] = []
    real = backprop.run_concurrent

    def spy(p: Any, n: int, stream: bool) -> Any:
        calls.append(n)
        return real(p, n, stream)

    monkeypatch.setattr(backprop, "run_concurrent", spy)
    rng = np.random.default_rng(3)
    a = rng.normal(size=(256, 256)) / 16

    def grads(workers: int) -> bytes:
        with lampy.Scope():
            x = lampy.param(a)
            branches = [(x @ x) @ x for _ in range(4)]
            (branches[0] + branches[1] + branches[2] + branches[3]).sum().backward(workers=workers)
            return x.grad.tobytes()  # type: ignore[union-attr]

    assert grads(2) == grads(1)
    assert calls == [2]


# ------------------------------------------------------------------ settings


@pytest.mark.parametrize("bad", [0, -1, 1.5, "two", None, True])
def test_bad_workers_are_clear_errors(bad: Any) -> None:
    """workers must be a positive int or 'auto' (None only means 'the default' in calls)."""
    with pytest.raises((lampy.LampyTypeError, lampy.LampyValueError), match="workers"):
        lampy.set_num_workers(bad)
    if bad is not None:
        with lampy.Scope():
            x = lampy.param(1.0)
            with pytest.raises((lampy.LampyTypeError, lampy.LampyValueError), match="workers"):
                (x * 2.0).backward(workers=bad)
            assert x.grad is None


def test_the_process_default_and_auto() -> None:
    """set_num_workers changes the default that backward uses; 'auto' is the core count."""
    assert lampy.get_num_workers() == 1
    try:
        lampy.set_num_workers("auto")
        assert lampy.get_num_workers() >= 1
        lampy.set_num_workers(3)
        assert lampy.get_num_workers() == 3
    finally:
        lampy.set_num_workers(1)


@pytest.mark.parametrize("workers", [1, 2, "auto"])
def test_workers_keyword_everywhere(workers: Any) -> None:
    """backward, Variable.backward, backward_iter, grad and value_and_grad take workers."""
    f = lambda x: (lampy.tanh(x) * x).sum()
    want = lampy.grad(f)(np.arange(3.0))
    np.testing.assert_array_equal(lampy.grad(f, workers=workers)(np.arange(3.0)), want)
    _, got = lampy.value_and_grad(f, workers=workers)(np.arange(3.0))
    np.testing.assert_array_equal(got, want)
    with lampy.Scope():
        x = lampy.param(np.arange(3.0))
        f(x).backward(workers=workers)
        np.testing.assert_array_equal(x.grad, want)  # type: ignore[arg-type]
        lampy.backward([f(x)], workers=workers)
        np.testing.assert_array_equal(x.grad, 2 * want)  # type: ignore[operator]
        [(p, g)] = list(lampy.backward_iter(f(x), workers=workers))
        assert p is x
        np.testing.assert_array_equal(g, 3 * want)  # type: ignore[operator]
