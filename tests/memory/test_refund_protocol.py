"""Refunds when a Variable is gone follow ``Node.held`` (who else may hold the value):
the ledger never counts less than the bytes of the counted arrays still alive, and
more only by values a weak reference found still held when their Variable was gone
(refunded when the scope exits), whatever ops made them, which Variables are dropped,
which values the caller keeps, views and nested scopes. The truth is taken with weak
references to every counted value."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy.autograd._node import HELD_BY_OP, PRIVATE, SHARED

UNARY: dict[str, Callable[[Any], Any]] = {
    "tanh": lampy.tanh,
    "exp_small": lambda x: lampy.exp(lampy.tanh(x)),
    "log": lambda x: lampy.log(x * x + 1.0),
    "sin": lampy.sin,
    "neg": lambda x: -x,
    "scale": lambda x: x * 0.5,
    "shift": lambda x: x + 0.25,
    "div_const": lambda x: x / 3.0,
    "const_div": lambda x: 2.0 / (x * x + 1.0),
    "reshape": lambda x: x.reshape(-1),  # a view
    "transpose": lambda x: x.T,  # a view
    "slice": lambda x: x[1:],  # a view
    "ravel": lampy.ravel,
    "sum0": lambda x: lampy.sum(x, axis=0, keepdims=True),
    "relu": lambda x: lampy.maximum(x, 0.0),
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1.0),
}

step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), st.integers(0, 50)),
    st.tuples(
        st.just("binary"), st.sampled_from(sorted(BINARY)), st.integers(0, 50), st.integers(0, 50)
    ),
    st.tuples(st.just("drop"), st.integers(0, 50)),
    st.tuples(st.just("hold"), st.integers(0, 50)),  # the caller keeps `v.value`
    st.tuples(st.just("const"), st.integers(0, 50)),  # a constant made from a value
)


def _truth(scope: lampy.Scope, refs: list[tuple[Any, int]]) -> int:
    """Bytes of the counted values still alive (``refs``), the gradients the scope owns
    and what the backward closures of its nodes still hold beyond the values."""
    nodes = scope.owned_nodes()
    total = sum(n.grad.nbytes for n in nodes if n.grad is not None)
    total += sum(n.kept for n in nodes)
    return total + sum(n for ref, n in refs if ref() is not None)


def _late(deferred: list[tuple[Any, int]]) -> int:
    """Bytes of values still counted though freed: those a weak reference found alive
    when their Variable was gone (a caller's frame clearing its locals after its
    argument, say), refunded at the scope's exit."""
    return sum(n for ref, n in deferred if ref() is None)


def _run(program: list[Any], dtype: Any, nested: bool, monkeypatch: Any) -> None:
    rng = np.random.default_rng(len(program))
    refs: dict[Any, list[tuple[Any, int]]] = {}  # every counted value, by scope
    deferred: list[tuple[Any, int]] = []  # SHARED values alive when their Variable died

    real_register, real_gone = lampy.Scope.register, lampy.Variable.__del__

    def register(scope: lampy.Scope, node: Any, nbytes: int = -1) -> None:
        real_register(scope, node, nbytes)
        if node.charged:
            refs.setdefault(node.scope, []).append((weakref.ref(node.value), node.charged))

    def gone(v: Any) -> None:
        node = v.node
        value = node.value
        ref = None if value is None or not node.charged else weakref.ref(value)
        held, n = node.held, node.charged
        del value
        real_gone(v)
        if ref is not None and node.scope is not None and ref() is not None:
            assert held != PRIVATE, "a PRIVATE value outlived its Variable"
            if held == SHARED:
                deferred.append((ref, n))

    monkeypatch.setattr(lampy.Scope, "register", register)
    monkeypatch.setattr(lampy.Variable, "__del__", gone)

    def check(scope: lampy.Scope, what: Any) -> None:
        live, truth = scope.memory.live_bytes, _truth(scope, refs.get(scope, []))
        assert truth <= live <= truth + _late(deferred), what

    with lampy.Scope() as outer:
        params = [lampy.param(rng.normal(size=(3, 4)).astype(dtype)) for _ in range(2)]
        with lampy.Scope() as s:
            pool: list[Any] = list(params)
            held: list[np.ndarray] = []
            for st_ in program:
                kind = st_[0]
                alive = [v for v in pool if v is not None]
                if kind == "drop":
                    i = st_[1] % len(pool)
                    if pool[i] is not None and i >= len(params):
                        pool[i] = None
                    continue
                if kind == "hold":
                    held.append(alive[st_[1] % len(alive)].value)
                    continue
                if kind == "const":
                    pool.append(lampy.const(alive[st_[1] % len(alive)].value))
                elif kind == "unary":
                    pool.append(UNARY[st_[1]](alive[st_[2] % len(alive)]))
                else:
                    a, b = alive[st_[2] % len(alive)], alive[st_[3] % len(alive)]
                    try:
                        pool.append(BINARY[st_[1]](a, b))
                    except lampy.ShapeError:
                        continue
                check(s, st_)
            live = [v for v in pool if v is not None and v.needs_grad and v.size]
            if live:
                lampy.sum(live[-1]).backward()
            check(s, "backward")
            del pool, live, alive
            check(s, "dropped")
            if nested:
                inner = _truth(s, refs.get(s, []))
                outer_live = outer.memory.live_bytes
                assert outer_live >= inner + _truth(outer, refs.get(outer, []))
            del held
        assert s.memory.live_bytes == 0
        assert outer.memory.live_bytes == _truth(outer, refs.get(outer, []))


@settings(max_examples=60, deadline=None)
@given(
    program=st.lists(step, min_size=1, max_size=25),
    dtype=st.sampled_from([np.float32, np.float64]),
    nested=st.booleans(),
)
def test_live_bytes_are_the_counted_values_still_alive(
    program: list[Any], dtype: Any, nested: bool
) -> None:
    """After every op and at the end of backward, live_bytes is the bytes of the values
    still alive plus the gradients, and at most the values a weak reference found still
    held when their Variable was dropped more: a value nothing else holds (PRIVATE) is
    refunded at once, and never one still held (by a closure, a view, the caller or a
    constant made from it)."""
    gc.collect()  # nothing of an earlier example lingers
    with gc_paused(), pytest.MonkeyPatch.context() as mp:
        _run(program, dtype, nested, mp)


class gc_paused:
    """The cyclic GC off: only reference counting frees (as the protocol assumes)."""

    def __enter__(self) -> None:
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was:
            gc.enable()


def test_held_states_of_common_ops() -> None:
    """Who else may hold each value, as op() and the readers record it."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3)))
        y = x * 0.5  # multiply keeps the constant only
        assert y.node.held == PRIVATE
        t = lampy.tanh(y)  # tanh reads y without keeping it; its param keeps t's value
        assert y.node.held == PRIVATE and t.node.held == HELD_BY_OP
        z = t * x  # both kept by the other's param
        assert t.node.held == SHARED and z.node.held == PRIVATE
        w = lampy.sin(z)  # a closure: it may keep anything
        assert z.node.held == SHARED and w.node.held == SHARED
        u = w + 1.0
        assert u.node.held == PRIVATE
        u.value
        assert u.node.held == SHARED


def test_dropped_private_value_is_refunded_and_freed() -> None:
    with lampy.Scope() as s:
        x = lampy.param(np.ones(1000))
        base = s.memory.live_bytes
        y = x * 2.0
        ref = weakref.ref(y.node.value)
        assert s.memory.live_bytes == base + 8000
        z = lampy.tanh(y)
        del y
        assert ref() is None and s.memory.live_bytes == base + 8000  # only z's value
        del z  # held by tanh's own param until the scope exits: still counted
        assert s.memory.live_bytes == base + 8000


def test_a_kept_node_is_checked_after_its_params_are_gone() -> None:
    """keep() detaches the node at the inner exit: its value is no longer held by its
    op's param, so dropping the Variable later refunds it."""
    with lampy.Scope() as outer:
        x = lampy.param(np.ones(1000))
        with lampy.Scope() as inner:
            t = inner.keep(lampy.tanh(x))
            assert t.node.held == HELD_BY_OP
        assert t.node.held == SHARED
        before = outer.memory.live_bytes
        del t
        assert outer.memory.live_bytes == before - 8000


@pytest.mark.parametrize("keep_reference", [True, False])
def test_value_read_by_the_caller_is_refunded_only_when_freed(keep_reference: bool) -> None:
    with lampy.Scope() as s:
        x = lampy.param(np.ones(1000))
        base = s.memory.live_bytes
        y = x + 1.0
        a = y.value
        if not keep_reference:
            del a
        del y
        assert s.memory.live_bytes == base + (8000 if keep_reference else 0)


def test_a_view_of_the_value_saved_by_the_op_holds_it() -> None:
    """An op whose 4-tuple param keeps a view of its own value (not the value itself)
    still counts the value until the scope exits: the view holds its memory."""
    from lampy.opkit._operands import contrib_with

    def flat_exp(x: lampy.Variable) -> lampy.Variable:  # exp, keeping a flat view of exp(x)
        value = np.exp(x.value)
        return lampy.op("flat_exp", value, contrib_with(x, _times_flat, value.reshape(-1)))

    with lampy.Scope() as s:
        x = lampy.param(np.ones((10, 100)))
        base = s.memory.live_bytes
        y = flat_exp(x)
        assert y.node.held == HELD_BY_OP
        ref = weakref.ref(y.node.value)
        del y
        assert ref() is not None and s.memory.live_bytes == base + 8000


def _times_flat(g: Any, flat: Any) -> Any:
    return g * flat.reshape(g.shape)
