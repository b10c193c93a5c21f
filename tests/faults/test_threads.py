"""Fault injection for threads: scopes released under another thread's feet, and
threads training side by side. A released input is a clear ReleasedError, never a bare
assertion or a wrong result; independent runs in threads lose nothing (issue 16 #4)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

import lampy
from lampy import optim

WAIT = 30.0  # seconds: a safety net against a hung thread, not a measurement


def _run(*targets: Callable[[], None]) -> None:
    """Run each target in its own thread and re-raise the first error in this one."""
    errors: list[BaseException] = []

    def guarded(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as e:  # reported to the test thread
                errors.append(e)

        return run

    threads = [threading.Thread(target=guarded(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


def _owner_and_user(use: Callable[[lampy.Variable, dict[str, Any]], None]) -> dict[str, Any]:
    """Thread "owner" makes a param w in its scope; thread "user" builds on w in its own
    scope; the owner's scope exits; then the user calls ``use(w, shared)``."""
    shared: dict[str, Any] = {}
    made, built, released = threading.Event(), threading.Event(), threading.Event()

    def owner() -> None:
        with lampy.Scope():
            shared["w"] = lampy.param(np.array([1.0, 2.0, 3.0]))
            made.set()
            assert built.wait(WAIT)
        released.set()

    def user() -> None:
        assert made.wait(WAIT)
        with lampy.Scope():
            v = lampy.param(np.array([1.0, -1.0]))
            shared["v"] = v
            shared["loss"] = (shared["w"] * 2.0).sum() + (v * v).sum()
            built.set()
            assert released.wait(WAIT)
            try:
                use(shared["w"], shared)
            except Exception as e:
                shared["error"] = e
            shared["v_grad"] = None if v.grad is None else v.grad.copy()

    _run(owner, user)
    return shared


def test_reading_a_variable_released_by_another_thread_is_a_released_error() -> None:
    """An op on a param whose owning scope (in another thread) has exited raises
    ReleasedError naming the param."""
    shared = _owner_and_user(lambda w, s: w * 2.0)
    assert isinstance(shared["error"], lampy.ReleasedError)
    assert "param" in str(shared["error"])


def test_backward_through_an_input_released_by_another_thread_is_a_released_error() -> None:
    """Backward through a graph whose input was released by its owner's scope exiting in
    another thread raises ReleasedError naming the input, before any gradient is
    accumulated (today: a bare AssertionError, or an AttributeError under python -O)."""
    shared = _owner_and_user(lambda w, s: s["loss"].backward())
    assert isinstance(shared.get("error"), lampy.ReleasedError), shared.get("error")
    assert "param" in str(shared["error"])
    assert shared["v_grad"] is None


def test_threads_training_side_by_side_equal_serial_runs() -> None:
    """Four threads, each with its own scopes, model and Adam, interleaving freely: each
    ends with the weights of the same run made alone, bit for bit."""
    rng = np.random.default_rng(0)
    data = [rng.normal(size=(16, 3)) for _ in range(4)]

    def train(x: np.ndarray, out: list[np.ndarray]) -> None:
        with lampy.Scope():
            w = lampy.param(np.linspace(-1.0, 1.0, 3))
            opt = optim.Adam([w], lr=0.05)
            for _ in range(50):
                with lampy.Scope():
                    (lampy.tanh(lampy.matmul(x, w)) ** 2).mean().backward()
                opt.step()
                opt.zero_grad()
            out.append(w.value.copy())

    serial: list[list[np.ndarray]] = [[] for _ in data]
    for x, out in zip(data, serial, strict=True):
        train(x, out)
    threaded: list[list[np.ndarray]] = [[] for _ in data]
    _run(*(lambda x=x, out=out: train(x, out) for x, out in zip(data, threaded, strict=True)))
    for a, b in zip(serial, threaded, strict=True):
        np.testing.assert_array_equal(a[0], b[0])
