"""Grad mode: lampy.no_grad as a context manager and decorator, per thread and per task."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref

import numpy as np
import pytest

import lampy


def test_grad_is_enabled_by_default() -> None:
    """Outside no_grad, is_grad_enabled() is True."""
    assert lampy.is_grad_enabled()


def test_no_grad_switches_recording_off_and_back_on(scope: lampy.Scope) -> None:
    """Inside no_grad ops record nothing; after it they record again."""
    x = lampy.param([1.0, 2.0])
    with lampy.no_grad():
        assert not lampy.is_grad_enabled()
        y = lampy.exp(x * 2.0)
    assert lampy.is_grad_enabled()
    assert not y.needs_grad
    assert y.op is None
    np.testing.assert_allclose(y.value, np.exp([2.0, 4.0]))
    z = x * 2.0
    assert z.needs_grad
    assert z.op is not None


def test_no_grad_keeps_no_closures(scope: lampy.Scope) -> None:
    """Under no_grad, the closures given to lampy.op are dropped at once."""
    x = lampy.param([1.0, 2.0])

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        raise AssertionError("never called")

    ref = weakref.ref(d_x)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with lampy.no_grad():
            y = lampy.op("custom", x.value * 2.0, x.zip_backward(d_x))
        del d_x
        assert ref() is None
    finally:
        if was_enabled:
            gc.enable()
    assert not y.needs_grad
    assert y.op is None


def test_backward_from_a_no_grad_result_raises(scope: lampy.Scope) -> None:
    """A result computed under no_grad is not a valid root: backward raises LampyError."""
    x = lampy.param(2.0)
    with lampy.no_grad():
        y = x * x
    with pytest.raises(lampy.LampyError):
        y.backward()


def test_no_grad_results_are_constants_in_later_graphs(scope: lampy.Scope) -> None:
    """A value computed under no_grad acts as a constant (a stop-gradient) afterwards."""
    x = lampy.param([1.0, 2.0])
    with lampy.no_grad():
        s = x * 3.0
    (x * s).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 6.0])


def test_params_made_under_no_grad_still_need_a_gradient(scope: lampy.Scope) -> None:
    """lampy.param inside no_grad still makes a param; ops on it record once grad mode is back."""
    with lampy.no_grad():
        p = lampy.param(2.0)
    assert p.needs_grad
    (p * p).backward()
    assert p.grad == 4.0


def test_nested_no_grad_stays_off_until_the_outermost_exits() -> None:
    """Leaving an inner no_grad keeps grad mode off; leaving the outer one turns it on."""
    with lampy.no_grad():
        with lampy.no_grad():
            assert not lampy.is_grad_enabled()
        assert not lampy.is_grad_enabled()
    assert lampy.is_grad_enabled()


def test_one_no_grad_object_can_be_entered_while_already_active() -> None:
    """The same no_grad instance entered twice (nested) restores grad mode correctly."""
    ng = lampy.no_grad()
    with ng:
        with ng:
            assert not lampy.is_grad_enabled()
        assert not lampy.is_grad_enabled()
    assert lampy.is_grad_enabled()
    with ng:
        assert not lampy.is_grad_enabled()
    assert lampy.is_grad_enabled()


def test_no_grad_is_restored_after_an_exception() -> None:
    """An exception inside no_grad propagates and grad mode is back on afterwards."""
    with pytest.raises(ZeroDivisionError), lampy.no_grad():
        1 / 0
    assert lampy.is_grad_enabled()


def test_no_grad_as_a_decorator(scope: lampy.Scope) -> None:
    """@lampy.no_grad() makes a function record nothing, passing arguments and result through."""

    @lampy.no_grad()
    def double(v: lampy.Variable, *, factor: float = 2.0) -> lampy.Variable:
        """Multiply by a factor."""
        assert not lampy.is_grad_enabled()
        return v * factor

    x = lampy.param([1.0, 2.0])
    y = double(x, factor=3.0)
    assert lampy.is_grad_enabled()
    assert not y.needs_grad
    assert y.op is None
    np.testing.assert_array_equal(y.value, [3.0, 6.0])
    assert double.__name__ == "double"
    assert double.__doc__ == "Multiply by a factor."
    # Calling it again, and recursively from within no_grad, works the same way.
    with lampy.no_grad():
        assert not double(x).needs_grad
    assert lampy.is_grad_enabled()


def test_decorated_function_restores_grad_mode_after_an_exception() -> None:
    """A no_grad-decorated function that raises leaves grad mode on."""

    @lampy.no_grad()
    def fail() -> None:
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        fail()
    assert lampy.is_grad_enabled()


def test_no_grad_in_one_thread_does_not_affect_another() -> None:
    """Grad mode is per thread: no_grad in the main thread leaves a new thread recording."""
    seen: dict[str, object] = {}

    def work() -> None:
        try:
            seen["enabled"] = lampy.is_grad_enabled()
            with lampy.Scope():
                seen["needs_grad"] = (lampy.param(1.0) * 2.0).needs_grad
        except BaseException as e:
            seen["error"] = e

    with lampy.no_grad():
        t = threading.Thread(target=work)
        t.start()
        t.join()
    assert "error" not in seen, seen.get("error")
    assert seen == {"enabled": True, "needs_grad": True}


def test_no_grad_in_one_task_does_not_affect_another() -> None:
    """Grad mode is per asyncio task: a task inside no_grad does not switch off its sibling."""

    async def quiet(entered: asyncio.Event, done: asyncio.Event) -> bool:
        with lampy.no_grad():
            entered.set()
            await done.wait()
            return lampy.is_grad_enabled()

    async def loud(entered: asyncio.Event, done: asyncio.Event) -> bool:
        await entered.wait()
        enabled = lampy.is_grad_enabled()
        done.set()
        return enabled

    async def main() -> list[bool]:
        entered, done = asyncio.Event(), asyncio.Event()
        return list(await asyncio.gather(quiet(entered, done), loud(entered, done)))

    assert asyncio.run(main()) == [False, True]
