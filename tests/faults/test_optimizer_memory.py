"""Fault cases of memory accounting for optimizers (issue 23, #2): state and scratch
arrays are charged to the params' scope where they are allocated (so budgets see them)
and refunded when the optimizer goes (``close()``, a ``with`` block, or CPython freeing
it); the ledger agrees with tracemalloc, an independent measurement."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy import optim
from lampy.optim import _adam

N = 50_000  # float64 elements per param: 400 kB
ADAM_KERNEL = _adam._kernel() is not None

OPTIMIZERS: dict[str, tuple[Callable[[list[lampy.Variable]], optim.Optimizer], int, int]] = {
    # name: (factory, state arrays per param, scratch arrays per shape and dtype)
    "SGD": (lambda ps: optim.SGD(ps, lr=0.1), 0, 2),
    "SGD momentum": (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), 1, 2),
    # Adam's compiled update (with Numba) needs no scratch; numpy's code three arrays
    "Adam": (lambda ps: optim.Adam(ps), 2, 0 if ADAM_KERNEL else 3),
    "Adam amsgrad": (lambda ps: optim.Adam(ps, amsgrad=True), 3, 3),
    "AdamW": (lambda ps: optim.AdamW(ps), 2, 0 if ADAM_KERNEL else 3),
    "RMSprop centered momentum": (
        lambda ps: optim.RMSprop(ps, momentum=0.9, centered=True),
        3,
        3,
    ),
    "Adagrad": (lambda ps: optim.Adagrad(ps), 1, 3),
    "Adadelta": (lambda ps: optim.Adadelta(ps), 2, 3),
    "Lion": (lambda ps: optim.Lion(ps), 1, 3),
}


def _params(k: int = 2) -> list[lampy.Variable]:
    ps = [lampy.param(np.full(N, 1.0 + i)) for i in range(k)]
    for p in ps:
        p.backward(np.ones(N))
    return ps


def _warm(factory: Callable[[list[lampy.Variable]], optim.Optimizer]) -> None:
    """A step of a throwaway optimizer of the same kind on a small float64 param: what
    is loaded once per process (a lazy import, Adam's compiled kernel) is loaded before
    memory is measured."""
    with lampy.Scope():
        p = lampy.param(np.ones(4))
        p.backward(np.ones(4))
        opt = factory([p])
        opt.step()
        opt.close()


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_the_ledger_counts_optimizer_memory_as_tracemalloc_sees_it(name: str) -> None:
    """A first step's new memory (state, scratch), measured by tracemalloc, is what the
    scope's ledger adds, to 1%; both go back to where they were once the optimizer is
    closed."""
    factory, state, scratch = OPTIMIZERS[name]
    _warm(factory)
    with lampy.Scope() as scope:
        ps = _params(2)
        gc.collect()
        tracemalloc.start()
        try:
            traced0, live0 = tracemalloc.get_traced_memory()[0], scope.memory.live_bytes
            opt = factory(ps)
            opt.step()
            traced = tracemalloc.get_traced_memory()[0] - traced0
            counted = scope.memory.live_bytes - live0
            held = opt.nbytes
            opt.close()
            after = tracemalloc.get_traced_memory()[0] - traced0
        finally:
            tracemalloc.stop()
        assert counted == held == (2 * state + scratch) * N * 8  # two params of one shape
        assert abs(counted - traced) <= 0.01 * traced + 16_384, (counted, traced)
        assert scope.memory.live_bytes == live0
        assert after <= 16_384


def test_adam_past_a_budget_raises_before_writing_anything() -> None:
    """The issue's case: Adam's state and scratch went past a 4 MB budget unseen (ledger
    3.2 MB, real 5.6 MB). Now the step raises MemoryBudgetError naming Adam, and no
    param was written."""
    with lampy.Scope(budget="4MB") as scope:
        ps = [lampy.param(np.ones(100_000)) for _ in range(2)]  # 1.6 MB
        for p in ps:
            p.backward(np.ones(100_000))  # + 1.6 MB of gradients
        opt = optim.Adam(ps, lr=0.1)
        with pytest.raises(lampy.MemoryBudgetError, match="Adam"):
            opt.step()
        assert all(p.version == 0 for p in ps)
        np.testing.assert_array_equal(ps[0].value, 1.0)
        assert scope.memory.live_bytes <= 4_000_000
        opt.close()
        assert scope.memory.live_bytes == 3_200_000


def test_a_new_optimizer_per_epoch_is_refunded_when_dropped() -> None:
    """A new Adam each epoch under a budget that fits one optimizer's memory: the one
    dropped is refunded when it is freed (rebinding the name), so no spurious
    MemoryBudgetError at epoch 10 and the ledger stays flat."""
    with lampy.Scope(budget="5MB") as scope:
        ps = _params(2)  # 0.8 MB of values + 0.8 MB of gradients; one Adam: 2.8 MB
        base = scope.memory.live_bytes
        opt: Any = None
        for _ in range(20):
            opt = optim.Adam(ps, lr=1e-3)  # the previous one is freed here
            opt.step()
            assert scope.memory.live_bytes == base + opt.nbytes
        del opt
        assert scope.memory.live_bytes == base


def test_close_and_with_refund_and_step_after_close_raises() -> None:
    """close() (or leaving a with block) refunds at once; a later step raises a
    LampyError saying the optimizer was closed; close() twice is harmless."""
    with lampy.Scope() as scope:
        ps = _params(1)
        base = scope.memory.live_bytes
        with optim.SGD(ps, lr=0.1, momentum=0.9) as opt:
            opt.step()
            assert scope.memory.live_bytes == base + 3 * N * 8
        assert scope.memory.live_bytes == base
        with pytest.raises(lampy.LampyError, match="closed"):
            opt.step()
        opt.close()
        assert scope.memory.live_bytes == base


def test_load_state_dict_charges_the_loaded_state_and_refunds_the_old() -> None:
    """Loading a state replaces the state arrays: the new ones are charged, the old ones
    refunded, so the ledger counts each array once."""
    with lampy.Scope() as scope:
        ps = _params(1)
        opt = optim.Adam(ps)
        opt.step()
        held = scope.memory.live_bytes
        opt.load_state_dict(opt.state_dict())
        assert scope.memory.live_bytes == held
        opt.close()


def test_an_optimizer_outliving_its_params_scope_refunds_nothing_twice() -> None:
    """The params' scope exits first (refunding everything it counted); closing the
    optimizer later changes no ledger, the enclosing one included."""
    with lampy.Scope() as outer:
        base = outer.memory.live_bytes
        with lampy.Scope():
            ps = _params(1)
            opt = optim.Adam(ps)
            opt.step()
        assert outer.memory.live_bytes == base
        opt.close()
        assert outer.memory.live_bytes == base


def test_loading_a_checkpoint_into_an_optimizer_counts_its_state_once(tmp_path: Any) -> None:
    """lampy.load dry-runs load_state_dict on a shallow copy of the optimizer first: the
    copy's charges are its own, so after the load the ledger counts the state once."""
    from lampy import nn

    path = str(tmp_path / "ckpt.safetensors")
    with lampy.Scope() as scope:
        model = nn.Linear.init(200, 100, rng=np.random.default_rng(0), dtype=np.float64)
        opt = optim.Adam(model.parameters())
        for p in model.parameters():
            p.backward(np.ones(p.shape))
        opt.step()
        held = scope.memory.live_bytes
        lampy.save(path, model, opt)
        lampy.load(path, model, opt)
        assert scope.memory.live_bytes == held
        arrays = 2 if ADAM_KERNEL else 5  # the state, and numpy's code's scratch
        assert opt.nbytes == arrays * 200 * 100 * 8 + arrays * 100 * 8
        opt.close()
