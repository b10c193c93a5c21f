"""A view an op makes of its own new array (``lampy.opkit.frozen``) is charged to the op,
whether or not an input needs a gradient; a view of an input's value is not charged
again. Without a gradient the op has no params to tell the two apart, so ``frozen``
notes the array it made (``lampy.autograd._saved.fresh_view_bytes``)."""

from __future__ import annotations

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
        assert scope.ledger.live - before >= held.nbytes
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
    """An op that noted its array and then failed leaves a note no later view matches."""
    from lampy.autograd import _saved
    from lampy.opkit import frozen

    with lampy.Scope() as scope:
        x = lampy.param(np.ones((4, 6)))
        frozen(np.zeros((2, 3)), (3, 2))  # noted, and never given to an op
        assert _saved.FRESH_OWNER[0] is not None
        live = scope.ledger.live
        with lampy.no_grad():
            v = x.reshape(6, 4)  # a view of x's value: not charged
        assert scope.ledger.live == live and np.shares_memory(v.value, x.value)
        assert _saved.FRESH_OWNER[0] is None
