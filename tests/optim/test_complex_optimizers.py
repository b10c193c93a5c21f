"""Optimizers on complex params: each step equals the same step on the param's real and
imaginary parts as a real param with a last axis of 2 (PyTorch's ``view_as_real``,
which its complex optimizers use), and the state keeps the param's complex dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy import optim

RNG = np.random.default_rng(0)
Z0 = RNG.normal(size=(4, 3)) + 1j * RNG.normal(size=(4, 3))
A = RNG.normal(size=(5, 4)) + 1j * RNG.normal(size=(5, 4))
Y = RNG.normal(size=(5, 3)) + 1j * RNG.normal(size=(5, 3))

CASES = [
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.1}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adadelta", {"lr": 1.0}),
    ("Lion", {"lr": 0.01, "weight_decay": 0.1}),
]


def _loss(z: Any) -> lampy.Variable:
    return (lampy.abs(A @ z - Y) ** 2).sum()


def _train(name: str, kwargs: dict[str, Any], pairs: bool) -> np.ndarray:
    start = np.stack([Z0.real, Z0.imag], axis=-1) if pairs else Z0
    with lampy.Scope():
        p = lampy.param(start)
        opt = getattr(optim, name)([p], **kwargs)
        for _ in range(4):
            p.zero_grad()
            with lampy.Scope():
                z = p[..., 0] + 1j * p[..., 1] if pairs else p
                _loss(z).backward()
            opt.step()
        if not pairs:
            for v in opt.state[p].values():
                if isinstance(v, np.ndarray):
                    assert v.dtype == np.complex128 and v.shape == Z0.shape
        out = p.value.copy()
    return out[..., 0] + 1j * out[..., 1] if pairs else out


@pytest.mark.parametrize(
    ("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
)
def test_a_complex_step_is_the_step_on_real_pairs(name: str, kwargs: dict[str, Any]) -> None:
    """Four steps of every optimizer on a complex least-squares problem give what the
    same optimizer gives on the real pairs."""
    np.testing.assert_allclose(
        _train(name, kwargs, False), _train(name, kwargs, True), rtol=1e-13, atol=1e-14
    )


def test_complex_state_round_trips_through_a_state_dict() -> None:
    """A complex param's state saves and loads with its dtype and shape."""
    with lampy.Scope():
        z = lampy.param(Z0)
        opt = optim.Adam([z], lr=0.1)
        with lampy.Scope():
            _loss(z).backward()
        opt.step()
        state = opt.state_dict()
        other = optim.Adam([z], lr=0.1)
        other.load_state_dict(state)
        np.testing.assert_array_equal(other.state[z]["exp_avg"], opt.state[z]["exp_avg"])
        assert other.state[z]["exp_avg_sq"].dtype == np.complex128
        before = z.value.copy()
        z.zero_grad()
        with lampy.Scope():
            _loss(z).backward()
        other.step()
        assert not np.array_equal(z.value, before)
