"""SGD against the update rule of PyTorch's documentation, written here in plain numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy.optim._sgd import SGD

from .problems import (
    Update,
    check_against_reference,
    check_bad_settings,
    check_float32,
    quadratics,
    ref_grad,
)


def ref_sgd(
    lr: float,
    momentum: float = 0.0,
    dampening: float = 0.0,
    weight_decay: float = 0.0,
    nesterov: bool = False,
    maximize: bool = False,
) -> Update:
    def update(x: np.ndarray, g: np.ndarray, t: int, s: dict[str, Any]) -> np.ndarray:
        g = ref_grad(x, g, weight_decay, maximize)
        if momentum:
            s["b"] = g.copy() if t == 1 else momentum * s["b"] + (1 - dampening) * g
            g = g + momentum * s["b"] if nesterov else s["b"]
        return x - lr * g

    return update


@st.composite
def sgd_settings(draw: st.DrawFn) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "lr": draw(st.floats(0.001, 0.3)),
        "momentum": draw(st.sampled_from([0.0, 0.5, 0.9])),
        "dampening": draw(st.sampled_from([0.0, 0.3])),
        "weight_decay": draw(st.sampled_from([0.0, 0.1])),
        "maximize": draw(st.booleans()),
    }
    kw["nesterov"] = kw["momentum"] > 0 and kw["dampening"] == 0 and draw(st.booleans())
    return kw


@given(quadratics(), sgd_settings(), st.integers(1, 6))
def test_sgd_matches_reference(problem: Any, kw: dict[str, Any], steps: int) -> None:
    """Every option combination follows the documented update on a random quadratic."""
    check_against_reference(
        lambda ps: SGD(ps, **kw), ref_sgd(**kw), problem, steps, kw["maximize"], rtol=1e-10
    )


def test_sgd_float32_stays_float32() -> None:
    """float32 params step in float32 and stay close to the float64 reference."""
    kw = {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}
    check_float32(lambda ps: SGD(ps, **kw), ref_sgd(**kw), seed=1, steps=10)


def test_sgd_state_has_momentum_buffer_only_with_momentum() -> None:
    """The state holds a momentum buffer (PyTorch's key) only when momentum is used."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        (w * w).sum().backward()
        plain, heavy = SGD([w], lr=0.1), SGD([w], lr=0.1, momentum=0.9)
        plain.step()
        heavy.step()
        assert plain.state_dict()["state"] == {}
        assert set(heavy.state_dict()["state"][0]) == {"momentum_buffer"}


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"lr": -0.1}, "lr"),
        ({"momentum": -0.5}, "momentum"),
        ({"weight_decay": -1.0}, "weight_decay"),
        ({"nesterov": True}, "Nesterov"),
        ({"nesterov": True, "momentum": 0.9, "dampening": 0.1}, "Nesterov"),
    ],
)
def test_sgd_bad_settings(kw: dict[str, Any], match: str) -> None:
    """Invalid hyper-parameters raise LampyValueError naming them, as PyTorch checks."""
    check_bad_settings(SGD, kw, match)
