"""A view an op makes of its own new array (``lampy.opkit.frozen``) is charged to the op,
whether or not an input needs a gradient; a view of an input's value is not charged
again. Without a gradient the op has no params to tell the two apart, so ``frozen``
notes the array it made (``lampy.autograd._saved.fresh_view_bytes``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.nn.functional import layer_norm, linear, scaled_dot_product_attention

RNG = np.random.default_rng(0)
Q = RNG.normal(size=(2, 4, 8, 16))  # (B, H, L, E): the result is a view, heads inside
X3 = RNG.normal(size=(3, 4, 16))
W = RNG.normal(size=(5, 16))

VIEW_OPS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "attention": (lambda q: scaled_dot_product_attention(q, q, q, is_causal=True), (Q,)),
    "linear 3-d": (lambda x, w: linear(x, w), (X3, W)),
    "layer_norm 3-d": (lambda x: layer_norm(x, (16,)), (X3,)),
}


@pytest.mark.parametrize("how", ["numpy inputs", "no_grad", "grad"])
@pytest.mark.parametrize("name", list(VIEW_OPS))
def test_a_view_of_the_ops_own_array_is_charged(name: str, how: str) -> None:
    fn, arrays = VIEW_OPS[name]
    with lampy.Scope() as scope:
        args = arrays if how == "numpy inputs" else tuple(lampy.param(a) for a in arrays)
        before = scope.ledger.live
        if how == "no_grad":
            with lampy.no_grad():
                y = fn(*args)
        else:
            y = fn(*args)
        assert y.value.base is not None  # the case under test: a view
        held = y.value
        while held.base is not None:
            held = held.base
        if how == "grad":  # and what the closures keep beyond the graph's values
            assert scope.ledger.live - before >= held.nbytes
        else:
            assert scope.ledger.live - before == held.nbytes
        live = scope.ledger.live
        with lampy.no_grad():
            z = y.swapaxes(0, -1)  # a view of y's value: counted with y, not again
        assert np.shares_memory(z.value, y.value)
        assert scope.ledger.live == live


def test_a_budget_counts_the_view_without_gradients() -> None:
    """Attention's output under a budget too small for it raises, gradients or not."""
    for grad in (False, True):
        with lampy.Scope():
            q = lampy.param(Q) if grad else Q  # 8 KB, as the output
            with pytest.raises(lampy.MemoryBudgetError), lampy.Scope(budget=5_000):
                scaled_dot_product_attention(q, q, q)


def test_a_stale_note_charges_no_other_view() -> None:
    """An op that noted its array and then failed leaves a note (its array still alive)
    that no later view of another array matches; the next view takes it."""
    from lampy.autograd import _saved
    from lampy.opkit import frozen

    with lampy.Scope() as scope:
        x = lampy.param(np.ones((4, 6)))
        alive = frozen(np.zeros((2, 3)), (3, 2))  # noted, and never given to an op
        assert _saved.FRESH_NOTES
        live = scope.ledger.live
        with lampy.no_grad():
            v = x.reshape(6, 4)  # a view of x's value: not charged
        assert scope.ledger.live == live and np.shares_memory(v.value, x.value)
        assert not _saved.FRESH_NOTES
        assert alive.base is not None


def test_a_note_left_with_params_is_not_charged_later() -> None:
    """An op with params charges its view through them (``view_bytes``) and takes its
    note: a view of its value made later without a gradient is not charged again."""
    with lampy.Scope() as scope:
        q = lampy.param(Q)
        y = scaled_dot_product_attention(q, q, q)  # noted, charged through its params
        live = scope.ledger.live
        with lampy.no_grad():
            z = y.swapaxes(1, 2)  # a view of y's value, of the array the note named
        assert np.shares_memory(z.value, y.value)
        assert scope.ledger.live == live


def test_threads_keep_their_own_notes() -> None:
    """Ops in several threads, each noting its own array between ``frozen`` and
    ``op``: every attention output without a gradient is charged its bytes."""
    import threading

    errors: list[str] = []
    expected = Q.nbytes

    def work() -> None:
        with lampy.Scope() as scope, lampy.no_grad():
            x = lampy.const(np.ones((64, 64)))
            for _ in range(300):
                before = scope.ledger.live
                y = scaled_dot_product_attention(Q, Q, Q)
                charged = scope.ledger.live - before
                x.reshape(4096)  # another thread's view ops run meanwhile
                if charged != expected:
                    errors.append(f"charged {charged}, expected {expected}")
                del y

    threads = [threading.Thread(target=work) for _ in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[:3]


def test_the_memory_profile_watches_the_array_a_view_holds() -> None:
    """``lampy.memory_profile`` frees a view value's bytes when the array owning its
    memory goes, not when the view does: a merged view of attention's heads keeps them."""
    with lampy.Scope(), lampy.memory_profile() as prof, lampy.no_grad():
        y = scaled_dot_product_attention(Q, Q, Q)
        merged = y.swapaxes(1, 2).reshape(2, 8, 64)
        del y
        assert prof.live_bytes == Q.nbytes
        assert merged.value.base is not None
        del merged
        assert prof.live_bytes == 0
