"""A few steps of optimizers on a 2-layer MLP built from lampy ops match the reference
updates applied to gradients derived by hand in numpy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.optim._adam import AdamW
from lampy.optim._lion import Lion
from lampy.optim._optimizer import Optimizer
from lampy.optim._rmsprop import RMSprop
from lampy.optim._sgd import SGD

from .problems import Update
from .test_adam import ref_adam
from .test_adaptive import ref_rmsprop
from .test_lion import ref_lion
from .test_sgd import ref_sgd

RNG = np.random.default_rng(7)
X, Y = RNG.standard_normal((16, 4)), RNG.standard_normal((16, 2))
INIT = [
    RNG.standard_normal((4, 8)) * 0.5,
    np.zeros(8),
    RNG.standard_normal((8, 2)) * 0.5,
    np.zeros(2),
]


def _grads_by_hand(w1: Any, b1: Any, w2: Any, b2: Any) -> list[np.ndarray]:
    """Gradients of mean((tanh(X w1 + b1) w2 + b2 - Y)**2) by the chain rule."""
    h = np.tanh(X @ w1 + b1)
    d_out = 2 * (h @ w2 + b2 - Y) / Y.size
    d_h = d_out @ w2.T * (1 - h * h)
    return [X.T @ d_h, d_h.sum(0), h.T @ d_out, d_out.sum(0)]


ADAMW_REF = ref_adam(0.01, amsgrad=True, weight_decay=1e-2, decoupled=True)
CASES: list[tuple[str, Callable[[Any], Optimizer], Update]] = [
    ("SGD", lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True), ref_sgd(0.1, 0.9, 0, 0, True)),
    ("AdamW", lambda ps: AdamW(ps, lr=0.01, amsgrad=True), ADAMW_REF),
    ("RMSprop", lambda ps: RMSprop(ps, lr=0.01, centered=True), ref_rmsprop(0.01, centered=True)),
    ("Lion", lambda ps: Lion(ps, lr=0.01, weight_decay=0.1), ref_lion(0.01, weight_decay=0.1)),
]


@pytest.mark.parametrize(("name", "make", "ref"), CASES, ids=[c[0] for c in CASES])
def test_mlp_steps_match_reference(name: str, make: Any, ref: Update) -> None:
    """Five steps on every weight and bias of the MLP agree with the reference to 1e-10."""
    with lampy.Scope():
        ps = [lampy.param(a) for a in INIT]
        opt = make(ps)
        for _ in range(5):
            opt.zero_grad()
            with lampy.Scope():
                w1, b1, w2, b2 = ps
                out = lampy.tanh(X @ w1 + b1) @ w2 + b2
                ((out - Y) ** 2).mean().backward()
            opt.step()
        got = [p.numpy() for p in ps]
    want, states = [a.copy() for a in INIT], [{} for _ in INIT]
    for t in range(1, 6):
        grads = _grads_by_hand(*want)
        want = [ref(x, g, t, s) for x, g, s in zip(want, grads, states, strict=True)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    assert not np.allclose(got[0], INIT[0])
