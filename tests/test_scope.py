"""Scopes: ownership, nesting, keep, release on exit, threads, asyncio tasks, and memory."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import threading
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import numpy as np
import pytest

import lampy


@contextmanager
def gc_disabled() -> Iterator[None]:
    """Turn the cyclic collector off, so anything freed is freed by reference counting."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def is_released(v: lampy.Variable) -> bool:
    """Whether reading ``v.value`` raises ReleasedError."""
    try:
        v.value
    except lampy.ReleasedError:
        return True
    return False


def run_in_thread(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a new thread and return its result (or re-raise its exception)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn()
        except BaseException as e:  # re-raised in the calling thread
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


def identity_op(x: lampy.Variable, name: str = "identity") -> lampy.Variable:
    """A custom op returning a copy of ``x`` with gradient ``g``."""
    return lampy.op(name, x.value.copy(), x.zip_backward(lambda g, out: np.add(out, g, out=out)))


# --------------------------------------------------------------------- current scope


def test_enter_returns_the_scope_itself() -> None:
    """`with lampy.Scope() as s` binds the Scope object that was entered."""
    scope = lampy.Scope()
    with scope as entered:
        assert entered is scope


def test_current_is_the_innermost_scope() -> None:
    """Scope.current() is the innermost open scope, and the outer one again after it exits."""
    with lampy.Scope() as outer:
        assert lampy.Scope.current() is outer
        with lampy.Scope() as inner:
            assert lampy.Scope.current() is inner
            with lampy.Scope() as innermost:
                assert lampy.Scope.current() is innermost
            assert lampy.Scope.current() is inner
        assert lampy.Scope.current() is outer


def test_current_without_a_scope_raises_no_scope_error() -> None:
    """Scope.current() with no scope open raises NoScopeError showing `with lampy.Scope():`."""
    with pytest.raises(lampy.NoScopeError, match=r"with lampy\.Scope\(\):"):
        lampy.Scope.current()


def test_current_is_restored_after_an_exception() -> None:
    """A scope exited by an exception stops being current; the outer one is current again."""
    with lampy.Scope() as outer:
        with pytest.raises(KeyError), lampy.Scope():
            raise KeyError("boom")
        assert lampy.Scope.current() is outer


def test_a_scope_cannot_be_entered_twice() -> None:
    """Entering a Scope a second time raises LampyError (a Scope serves one `with` block)."""
    scope = lampy.Scope()
    with scope:
        pass
    with pytest.raises(lampy.LampyError, match="already entered"), scope:
        pass


@pytest.mark.parametrize(
    ("what", "make"),
    [
        ("param", lambda: lampy.param(1.0)),
        ("const", lambda: lampy.const(1.0)),
        ("op", lambda: lampy.op("custom", np.ones(2))),
        ("exp", lambda: lampy.exp(np.ones(2))),
    ],
)
def test_creating_a_variable_without_a_scope_raises(what: str, make: Callable[[], Any]) -> None:
    """Creating a Variable with no scope open raises NoScopeError showing `with lampy.Scope():`."""
    with pytest.raises(lampy.NoScopeError, match=r"with lampy\.Scope\(\):"):
        make()


# --------------------------------------------------------------------- ownership, nesting


def test_variables_belong_to_the_innermost_scope() -> None:
    """Inner Variables are released when the inner scope exits; outer ones survive until theirs."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        with lampy.Scope():
            p = lampy.param(3.0)
            c = lampy.const(4.0)
            y = w * p
        assert is_released(p)
        assert is_released(c)
        assert is_released(y)
        assert not is_released(w)
        np.testing.assert_array_equal(w.value, [1.0, 2.0])
    assert is_released(w)


def test_variables_made_after_an_inner_scope_exits_belong_to_the_outer_one() -> None:
    """After an inner scope exits, new Variables go to the outer scope and live as long as it."""
    with lampy.Scope():
        with lampy.Scope():
            pass
        v = lampy.param(1.0)
        with lampy.Scope():
            pass
        assert not is_released(v)
    assert is_released(v)


def test_outer_param_keeps_gradient_computed_in_an_inner_scope() -> None:
    """A param of an outer scope keeps the gradient backpropagated inside an inner scope."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        with lampy.Scope():
            loss = (w * w).sum()
            loss.backward()
        assert is_released(loss)
        np.testing.assert_array_equal(w.grad, [2.0, 4.0])
        with lampy.Scope():
            (w * 3.0).sum().backward()
        np.testing.assert_array_equal(w.grad, [5.0, 7.0])


def test_sibling_scopes_are_independent() -> None:
    """Variables of one inner scope are released at its exit; a sibling scope is unaffected."""
    with lampy.Scope():
        with lampy.Scope():
            a = lampy.param(1.0)
        with lampy.Scope():
            b = lampy.param(2.0)
            assert is_released(a)
            assert b.item() == 2.0
        assert is_released(b)


def test_many_nested_scopes_release_in_order() -> None:
    """Fifty nested scopes each release exactly their own Variables as they exit."""
    made: list[lampy.Variable] = []

    def nest(depth: int) -> None:
        with lampy.Scope():
            made.append(lampy.param(float(depth)))
            if depth < 49:
                nest(depth + 1)
            assert [is_released(v) for v in made] == [False] * (depth + 1) + [True] * (
                len(made) - depth - 1
            )

    nest(0)
    assert all(is_released(v) for v in made)


# --------------------------------------------------------------------- release


def test_exit_releases_value_grad_and_op() -> None:
    """After exit, .value, .grad and .op of every owned Variable are gone."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        y = lampy.exp(x)
        loss = y.sum()
        loss.backward(retain=[y], retain_graph=True)
        assert y.op is not None
        assert y.grad is not None
    for v in (x, y, loss):
        with pytest.raises(lampy.ReleasedError):
            v.value
        with pytest.raises(lampy.ReleasedError):
            v.grad
        assert v.op is None


def test_release_on_exception_then_the_exception_propagates() -> None:
    """An exception inside a scope propagates unchanged and the scope still releases everything."""
    err = ValueError("inside the scope")
    made: dict[str, Any] = {}

    def fail_inside_a_scope() -> None:
        with lampy.Scope():
            x = lampy.param(np.ones(1000))
            y = x * 2.0
            y.sum().backward()
            made.update(x=x, y=y)
            made["refs"] = [weakref.ref(x.value), weakref.ref(y.value), weakref.ref(x.grad)]
            raise err

    with gc_disabled():
        with pytest.raises(ValueError, match="inside the scope") as excinfo:
            fail_inside_a_scope()
        assert excinfo.value is err
        assert is_released(made["x"])
        assert is_released(made["y"])
        assert all(r() is None for r in made["refs"])


def _plain_sin(x: lampy.Variable) -> lampy.Variable:
    a = x.value
    return lampy.op(
        "sin_plain", np.sin(a), x.zip_backward(lambda g, out: np.add(out, g * np.cos(a), out=out))
    )


def test_released_values_are_freed_without_garbage_collection() -> None:
    """Right after exit, weak references to values, gradients and closures are dead (no gc)."""
    with gc_disabled():
        with lampy.Scope():
            x = lampy.param(np.ones((100, 100)))
            c = lampy.const(np.full((100, 100), 2.0))
            h = lampy.tanh(x * c)
            s = _plain_sin(h)  # an op whose closure only the graph holds
            hh = s @ s
            loss = hh.mean()  # 0-d: held as a numpy scalar, which takes no weak reference
            loss.backward(retain=[h], retain_graph=True)
            assert s.op is not None
            refs = [
                weakref.ref(x.value),
                weakref.ref(c.value),
                weakref.ref(h.value),
                weakref.ref(hh.value),
                weakref.ref(x.grad),
                weakref.ref(h.grad),
                weakref.ref(s.op.params[0][1]),  # the closure
            ]
            assert all(r() is not None for r in refs)
        dead = [r() is None for r in refs]
    assert dead == [True] * len(refs)
    assert loss.is_released


def test_memory_is_back_to_baseline_when_the_with_block_returns() -> None:
    """About 8 MB of values and gradients allocated in a scope are returned by its exit."""
    started_here = not tracemalloc.is_tracing()
    if started_here:
        tracemalloc.start()
    try:
        with gc_disabled():
            baseline, _ = tracemalloc.get_traced_memory()
            with lampy.Scope():
                x = lampy.param(np.ones(100_000))  # 0.8 MB
                held = [x]  # held by Python: their values stay until the scope exits
                for _ in range(10):
                    held.append(held[-1] * 1.0001)
                held[-1].sum().backward()
                inside, _ = tracemalloc.get_traced_memory()
            after, _ = tracemalloc.get_traced_memory()
    finally:
        if started_here:
            tracemalloc.stop()
    assert inside - baseline > 8_000_000
    assert after - baseline < 200_000, f"{after - baseline} bytes still held after exit"


def test_kept_variables_survive_while_the_rest_is_freed() -> None:
    """Keeping one result keeps only its value alive; everything else in the scope is freed."""
    with gc_disabled(), lampy.Scope():
        with lampy.Scope() as inner:
            x = lampy.param(np.ones(1000))
            h = x * 3.0
            y = h + 1.0
            inner.keep(y)
            ref_x, ref_h, ref_y = weakref.ref(x.value), weakref.ref(h.value), weakref.ref(y.value)
        assert ref_x() is None
        assert ref_h() is None
        assert ref_y() is not None
        np.testing.assert_array_equal(y.value, np.full(1000, 4.0))


# --------------------------------------------------------------------- use after release


def _released_variables() -> dict[str, lampy.Variable]:
    with lampy.Scope():
        made = {
            "param": lampy.param([1.0, 2.0]),
            "const": lampy.const([1.0, 2.0]),
        }
        made["multiply"] = made["param"] * 2.0
    return made


@pytest.mark.parametrize("made_by", ["param", "const", "multiply"])
@pytest.mark.parametrize(
    "use",
    [
        pytest.param(lambda v: v.value, id="value"),
        pytest.param(lambda v: v.grad, id="grad"),
        pytest.param(lambda v: v.shape, id="shape"),
        pytest.param(lambda v: v.dtype, id="dtype"),
        pytest.param(lambda v: v.item(), id="item"),
        pytest.param(lambda v: v.zero_grad(), id="zero_grad"),
        pytest.param(lambda v: v.backward(np.ones(2)), id="backward"),
        pytest.param(lambda v: lampy.backward([v], [np.ones(2)]), id="lampy.backward"),
        pytest.param(lambda v: v + 1.0, id="add"),
        pytest.param(lambda v: 1.0 - v, id="rsub"),
        pytest.param(lambda v: lampy.exp(v), id="exp"),
        pytest.param(lambda v: v[0], id="getitem"),
        pytest.param(lambda v: lampy.param(v), id="param_of_it"),
    ],
)
def test_use_after_release_raises_released_error(made_by: str, use: Callable[[Any], Any]) -> None:
    """Any use of a released Variable raises ReleasedError naming its op and how to keep it."""
    v = _released_variables()[made_by]
    with lampy.Scope(), pytest.raises(lampy.ReleasedError) as excinfo:
        use(v)
    message = str(excinfo.value)
    assert f"'{made_by}'" in message
    assert "keep" in message


def test_custom_op_on_a_released_input_names_the_op() -> None:
    """lampy.op with a released input raises ReleasedError naming the op being recorded."""
    v = _released_variables()["param"]
    with lampy.Scope(), pytest.raises(lampy.ReleasedError, match="my_op"):
        lampy.op("my_op", np.zeros(2), v.zip_backward(lambda g, out: None))


@pytest.mark.parametrize("made_by", ["param", "const", "multiply"])
def test_repr_of_a_released_variable_says_released(made_by: str) -> None:
    """repr() of a released Variable does not raise; it says released and names its op."""
    text = repr(_released_variables()[made_by])
    assert "released" in text
    assert made_by in text


def test_live_variables_of_a_scope_still_work_next_to_released_ones() -> None:
    """Using an outer Variable together with a released one fails only because of the latter."""
    with lampy.Scope():
        w = lampy.param(2.0)
        with lampy.Scope():
            t = w * 3.0
        with pytest.raises(lampy.ReleasedError):
            w * t
        assert (w * 3.0).item() == 6.0


# --------------------------------------------------------------------- keep


def test_keep_returns_the_object_it_was_given() -> None:
    """keep returns the very object passed in, for a Variable and for containers."""
    with lampy.Scope(), lampy.Scope() as inner:
        v = lampy.param(1.0)
        box = (v, [v], {"v": v})
        assert inner.keep(v) is v
        assert inner.keep(box) is box


def test_kept_param_stays_a_param_with_value_and_gradient() -> None:
    """A kept param keeps its value and gradient, is still a param, and keeps accumulating."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            p = lampy.param([1.0, 2.0])
            (p * p).sum().backward()
            inner.keep(p)
        assert p.needs_grad
        assert p.op is None
        np.testing.assert_array_equal(p.value, [1.0, 2.0])
        np.testing.assert_array_equal(p.grad, [2.0, 4.0])
        (p * 10.0).sum().backward()
        np.testing.assert_array_equal(p.grad, [12.0, 14.0])
    assert is_released(p)


def test_kept_op_result_becomes_a_constant_with_its_value_and_gradient() -> None:
    """A kept op result keeps value and retained gradient, with op None and needs_grad False."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        with lampy.Scope() as inner:
            y = w * 3.0
            (y * y).sum().backward(retain=[y])
            inner.keep(y)
        assert y.op is None
        assert not y.needs_grad
        np.testing.assert_array_equal(y.value, [3.0, 6.0])
        np.testing.assert_array_equal(y.grad, [6.0, 12.0])
        np.testing.assert_array_equal(w.grad, [18.0, 36.0])


def test_kept_op_result_without_gradient_has_none() -> None:
    """A kept op result that was not retained in a backward call has grad None."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            y = inner.keep(lampy.param(2.0) * 3.0)
        assert y.grad is None
        assert y.item() == 6.0


def test_kept_op_result_is_a_constant_in_new_graphs() -> None:
    """A kept op result used in the parent scope is a constant: gradient reaches only new params."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            x = lampy.param(2.0)
            y = inner.keep(x * x)
        v = lampy.param(5.0)
        loss = y * v
        loss.backward()
        assert v.grad == 4.0
        assert is_released(x)
        with pytest.raises(lampy.LampyError):
            y.backward()


def test_keep_walks_nested_tuples_lists_and_dicts() -> None:
    """keep moves Variables nested in tuples, lists and dicts; the rest of the scope is released."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            a, b, c, d = (lampy.param(float(i)) for i in range(4))
            dropped = lampy.param(9.0)
            nest = (a, [b, {"c": c, "more": [(d,)]}], "text", 3, np.ones(2), None)
            assert inner.keep(nest) is nest
        assert [v.item() for v in (a, b, c, d)] == [0.0, 1.0, 2.0, 3.0]
        assert is_released(dropped)
        np.testing.assert_array_equal(nest[4], np.ones(2))
    assert all(is_released(v) for v in (a, b, c, d))


def test_keep_walks_attrs_records() -> None:
    """keep moves Variables held in fields of attrs records."""

    @attrs.frozen
    class Pair:
        left: Any
        right: Any

    with lampy.Scope():
        with lampy.Scope() as inner:
            pair = inner.keep(Pair(lampy.param(1.0), [lampy.const(2.0)]))
        assert pair.left.item() == 1.0
        assert pair.right[0].item() == 2.0


def test_keep_walks_dataclasses_and_sets_but_not_other_objects() -> None:
    """keep moves Variables in dataclass fields, sets and frozensets (as
    docs/scopes-and-memory.md says); a Variable in an ordinary object is released."""

    @dataclasses.dataclass
    class Pair:
        left: Any
        right: Any

    class Plain:
        def __init__(self, v: lampy.Variable) -> None:
            self.v = v

    with lampy.Scope():
        with lampy.Scope() as inner:
            a, b, c = (lampy.param(float(i)) for i in range(3))
            hidden = Plain(lampy.param(9.0))
            inner.keep((Pair(a, {b}), frozenset([c]), hidden))
        assert [v.item() for v in (a, b, c)] == [0.0, 1.0, 2.0]
        assert is_released(hidden.v)


def test_keep_moves_one_level_only() -> None:
    """A kept Variable belongs to the parent scope and is released when the parent exits."""
    with lampy.Scope():
        with lampy.Scope():
            with lampy.Scope() as inner:
                v = inner.keep(lampy.param(1.0))
            assert not is_released(v)
        assert is_released(v)


def test_multi_level_keep_moves_through_each_scope() -> None:
    """Keeping again from the parent moves the Variable further out, through every level."""
    with lampy.Scope():
        with lampy.Scope() as middle:
            with lampy.Scope() as inner:
                p = lampy.param([1.0, 2.0])
                y = p * 2.0
                (y * y).sum().backward(retain=[y])
                inner.keep((p, y))
            middle.keep([p, y])
        assert p.needs_grad
        np.testing.assert_array_equal(p.grad, [8.0, 16.0])
        assert y.op is None
        np.testing.assert_array_equal(y.value, [2.0, 4.0])
        np.testing.assert_array_equal(y.grad, [4.0, 8.0])
    assert is_released(p)
    assert is_released(y)


def test_keep_of_a_variable_owned_by_an_ancestor_is_a_no_op() -> None:
    """keep leaves a Variable of an enclosing scope where it is (it is not moved further out)."""
    with lampy.Scope():
        with lampy.Scope():
            w = lampy.param(1.0)
            with lampy.Scope() as inner:
                assert inner.keep(w) is w
                assert inner.keep({"w": [w]})["w"][0] is w
            assert not is_released(w)
            assert w.needs_grad
        assert is_released(w)


def test_keep_of_a_variable_owned_by_the_grandparent_is_a_no_op() -> None:
    """keep of a Variable owned two levels up changes nothing."""
    with lampy.Scope():
        g = lampy.param(1.0)
        with lampy.Scope(), lampy.Scope() as inner:
            inner.keep(g)
        assert not is_released(g)
    assert is_released(g)


def test_keeping_the_same_variable_twice_is_harmless() -> None:
    """A second keep of an already kept Variable is a no-op (it is then owned by an ancestor)."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            v = lampy.param(1.0)
            inner.keep(v)
            inner.keep([v, v])
        assert v.item() == 1.0
    assert is_released(v)


def test_keep_on_a_root_scope_raises() -> None:
    """keep on a scope with no parent raises LampyError, and the Variable is still released."""
    with lampy.Scope() as root:
        v = lampy.param(1.0)
        with pytest.raises(lampy.LampyError, match="root scope"):
            root.keep(v)
    assert is_released(v)


def test_keep_after_exit_raises() -> None:
    """keep on a scope whose `with` block has ended raises LampyError."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            v = lampy.param(1.0)
        with pytest.raises(lampy.LampyError, match="not open"):
            inner.keep(v)


def test_keep_before_enter_raises() -> None:
    """keep on a scope that was never entered raises LampyError."""
    with lampy.Scope():
        v = lampy.param(1.0)
        with pytest.raises(lampy.LampyError, match="not open"):
            lampy.Scope().keep(v)


def test_keep_of_a_variable_from_a_nested_scope_raises() -> None:
    """An outer scope cannot keep a Variable owned by a scope nested inside it."""
    with lampy.Scope(), lampy.Scope() as outer, lampy.Scope():
        v = lampy.param(1.0)
        with pytest.raises(lampy.LampyError, match="another scope"):
            outer.keep(v)


def test_keep_of_a_released_variable_raises_released_error() -> None:
    """keep of a Variable whose scope already exited raises ReleasedError."""
    with lampy.Scope():
        with lampy.Scope():
            v = lampy.param(1.0)
        with lampy.Scope() as inner, pytest.raises(lampy.ReleasedError):
            inner.keep(v)


def test_keep_then_exception_still_keeps() -> None:
    """A Variable kept before an exception leaves the inner scope alive; the rest is released."""
    made: dict[str, lampy.Variable] = {}

    def fail_after_keep() -> None:
        with lampy.Scope() as inner:
            made["kept"] = inner.keep(lampy.param(1.0))
            made["other"] = lampy.param(2.0)
            raise RuntimeError("after keep")

    with lampy.Scope():
        with pytest.raises(RuntimeError, match="after keep"):
            fail_after_keep()
        assert made["kept"].item() == 1.0
        assert is_released(made["other"])


# --------------------------------------------------------------------- threads


def test_a_new_thread_sees_no_scope_even_if_the_main_thread_has_one() -> None:
    """A thread has its own scope stack: the main thread's open scope is not current there."""

    def probe() -> tuple[type[BaseException], type[BaseException]]:
        errors = []
        for fn in (lampy.Scope.current, lambda: lampy.param(1.0)):
            try:
                fn()
            except lampy.NoScopeError as e:
                errors.append(type(e))
        return tuple(errors)  # type: ignore[return-value]

    with lampy.Scope():
        assert run_in_thread(probe) == (lampy.NoScopeError, lampy.NoScopeError)


def test_an_op_in_a_thread_without_a_scope_raises_even_on_main_thread_variables() -> None:
    """An op run in a thread with no scope raises NoScopeError though its inputs live in main."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        with pytest.raises(lampy.NoScopeError, match=r"with lampy\.Scope\(\):"):
            run_in_thread(lambda: w * 2.0)


def test_threads_with_simultaneously_open_scopes_do_not_interfere() -> None:
    """Four threads, each inside its own scopes at the same time, see only their own scopes."""
    n = 4
    barrier = threading.Barrier(n)
    results: dict[int, Any] = {}

    def work(i: int) -> None:
        try:
            with lampy.Scope() as mine:
                barrier.wait(timeout=10)
                x = lampy.param(float(i))
                with lampy.Scope() as inner:
                    barrier.wait(timeout=10)
                    assert lampy.Scope.current() is inner
                    y = inner.keep(x * x)
                barrier.wait(timeout=10)
                assert lampy.Scope.current() is mine
                results[i] = (y.item(), x.item())
            assert is_released(x)
            try:
                lampy.Scope.current()
            except lampy.NoScopeError:
                pass
            else:
                raise AssertionError("a scope is still current after the thread's scopes exited")
        except BaseException as e:
            results[i] = e

    with lampy.Scope() as main_scope:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert lampy.Scope.current() is main_scope
    for i in range(n):
        if isinstance(results[i], BaseException):
            raise results[i]
        assert results[i] == (float(i * i), float(i))


def test_thread_scope_release_leaves_the_main_thread_variables_alone() -> None:
    """A scope exiting in another thread releases only what that thread made in it."""
    with lampy.Scope():
        w = lampy.param(2.0)

        def work() -> float:
            with lampy.Scope():
                return (w * 3.0).item()

        assert run_in_thread(work) == 6.0
        assert w.item() == 2.0


# --------------------------------------------------------------------- asyncio tasks


def test_asyncio_tasks_each_have_their_own_current_scope() -> None:
    """Interleaved asyncio tasks each see their own scope as current across awaits."""

    async def task(i: int, both_open: asyncio.Event, count: list[int]) -> float:
        with lampy.Scope() as mine:
            x = lampy.param(float(i))
            count.append(i)
            if len(count) == 2:
                both_open.set()
            await both_open.wait()
            for _ in range(5):
                await asyncio.sleep(0)
                assert lampy.Scope.current() is mine
            return (x * 2.0).item()

    async def main() -> list[float]:
        both_open = asyncio.Event()
        count: list[int] = []
        return list(await asyncio.gather(task(1, both_open, count), task(2, both_open, count)))

    assert asyncio.run(main()) == [2.0, 4.0]


def test_a_task_scope_does_not_become_current_in_its_creator() -> None:
    """While a task has its own scope open, the coroutine that spawned it keeps its own."""

    async def main() -> None:
        entered = asyncio.Event()
        finish = asyncio.Event()

        async def child() -> None:
            with lampy.Scope():
                lampy.param(1.0)
                entered.set()
                await finish.wait()

        with lampy.Scope() as mine:
            t = asyncio.create_task(child())
            await entered.wait()
            assert lampy.Scope.current() is mine
            finish.set()
            await t
            assert lampy.Scope.current() is mine

    asyncio.run(main())


def test_a_task_without_a_scope_cannot_make_variables() -> None:
    """A task started with no scope open raises NoScopeError when it makes a Variable."""

    async def main() -> None:
        with pytest.raises(lampy.NoScopeError):
            lampy.param(1.0)

    asyncio.run(main())


# --------------------------------------------------------------------- out-of-order exits


def _batches() -> Any:
    """The trap: a generator that yields inside a scope it opened."""
    for i in range(3):
        with lampy.Scope():
            yield lampy.const(float(i))


def test_a_generator_yielding_inside_a_scope_is_a_clear_error_not_a_stuck_thread() -> None:
    """The issue's generator: the caller's later exit names generators, the scope stack is
    consistent afterwards (NoScopeError at top level) and closing the generator is quiet."""
    g = _batches()
    outer = lampy.Scope()
    outer.__enter__()
    w = lampy.param(1.0)
    loss = w * next(g)
    next(g)
    assert loss.is_released  # the generator's scope owned it (the trap, documented)
    with pytest.raises(lampy.ReleasedError, match="generator"):
        loss.value
    with pytest.raises(lampy.LampyError, match="generator"):
        outer.__exit__(None, None, None)
    with pytest.raises(lampy.NoScopeError):
        lampy.const(1.0)
    g.close()
    with pytest.raises(lampy.NoScopeError):
        lampy.const(1.0)
    with lampy.Scope():  # and scopes work as before
        assert (lampy.param(2.0) * 3.0).item() == 6.0


def test_the_generator_pattern_that_works() -> None:
    """Open the scope around the loop and yield plain values: nothing is released early."""

    def batches() -> Any:
        for i in range(3):
            yield np.full(2, float(i))

    with lampy.Scope():
        w = lampy.param(np.ones(2))
        losses = []
        for x in batches():
            with lampy.Scope() as step:
                losses.append(step.keep((w * x).sum()))
        assert [v.item() for v in losses] == [0.0, 2.0, 4.0]


def test_manual_exits_out_of_order_restore_a_consistent_stack() -> None:
    """a.__exit__ while b (entered inside a) is open: both close, a clear error, and the
    stack is back at a's parent; b's own exit afterwards is quiet."""
    a, b = lampy.Scope(), lampy.Scope()
    a.__enter__()
    b.__enter__()
    x = lampy.const(1.0)
    with pytest.raises(lampy.LampyError, match="out of order"):
        a.__exit__(None, None, None)
    assert x.is_released
    assert not a.is_open and not b.is_open
    b.__exit__(None, None, None)
    with pytest.raises(lampy.NoScopeError):
        lampy.Scope.current()


def test_an_out_of_order_exit_during_an_exception_keeps_that_exception() -> None:
    """When the outer block exits by an exception, that exception propagates (with a
    note about the out-of-order scopes) and the stack is consistent."""
    g = _batches()

    def fail_inside() -> None:
        with lampy.Scope():
            next(g)
            raise KeyError("original")

    with pytest.raises(KeyError):
        fail_inside()
    with pytest.raises(lampy.NoScopeError):
        lampy.Scope.current()
    g.close()


def test_exiting_a_scope_in_another_thread_is_an_error_that_releases_it() -> None:
    """A scope exited where it is not current (another thread): clear error, released."""
    s = lampy.Scope()
    s.__enter__()
    v = lampy.const(1.0)
    with pytest.raises(lampy.LampyError, match="not current here"):
        run_in_thread(lambda: s.__exit__(None, None, None))
    assert v.is_released
    with pytest.raises(lampy.LampyError, match="already exited"):
        lampy.const(2.0)  # this thread's current scope is the closed s: a clear error
    s.__exit__(None, None, None)  # already closed: quiet, and the stack is not changed
