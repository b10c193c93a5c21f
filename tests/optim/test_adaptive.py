"""RMSprop, Adagrad and Adadelta against the update rules of PyTorch's documentation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy.optim._adadelta import Adadelta
from lampy.optim._adagrad import Adagrad
from lampy.optim._rmsprop import RMSprop

from .problems import (
    Update,
    check_against_reference,
    check_bad_settings,
    check_float32,
    quadratics,
    ref_grad,
)


def ref_rmsprop(
    lr: float = 1e-2,
    alpha: float = 0.99,
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    momentum: float = 0.0,
    centered: bool = False,
    maximize: bool = False,
) -> Update:
    def update(x: np.ndarray, g: np.ndarray, t: int, s: dict[str, Any]) -> np.ndarray:
        g = ref_grad(x, g, weight_decay, maximize)
        s["v"] = alpha * s.get("v", 0.0) + (1 - alpha) * g * g
        v = s["v"]
        if centered:
            s["a"] = alpha * s.get("a", 0.0) + (1 - alpha) * g
            v = v - s["a"] ** 2
        if momentum > 0:
            s["b"] = momentum * s.get("b", 0.0) + g / (np.sqrt(v) + eps)
            return x - lr * s["b"]
        return x - lr * g / (np.sqrt(v) + eps)

    return update


def ref_adagrad(
    lr: float = 1e-2,
    lr_decay: float = 0.0,
    weight_decay: float = 0.0,
    initial_accumulator_value: float = 0.0,
    eps: float = 1e-10,
    maximize: bool = False,
) -> Update:
    def update(x: np.ndarray, g: np.ndarray, t: int, s: dict[str, Any]) -> np.ndarray:
        g = ref_grad(x, g, weight_decay, maximize)
        clr = lr / (1 + (t - 1) * lr_decay)
        s["sum"] = s.get("sum", initial_accumulator_value) + g * g
        return x - clr * g / (np.sqrt(s["sum"]) + eps)

    return update


def ref_adadelta(
    lr: float = 1.0,
    rho: float = 0.9,
    eps: float = 1e-6,
    weight_decay: float = 0.0,
    maximize: bool = False,
) -> Update:
    def update(x: np.ndarray, g: np.ndarray, t: int, s: dict[str, Any]) -> np.ndarray:
        g = ref_grad(x, g, weight_decay, maximize)
        s["v"] = rho * s.get("v", 0.0) + (1 - rho) * g * g
        u = s.get("u", 0.0)
        delta = np.sqrt(u + eps) / np.sqrt(s["v"] + eps) * g
        s["u"] = rho * u + (1 - rho) * delta * delta
        return x - lr * delta

    return update


SETTINGS: dict[str, Any] = {
    "RMSprop": st.fixed_dictionaries(
        {
            "lr": st.floats(0.001, 0.05),
            "alpha": st.sampled_from([0.9, 0.99]),
            "eps": st.sampled_from([1e-8, 1e-2]),
            "weight_decay": st.sampled_from([0.0, 0.1]),
            "momentum": st.sampled_from([0.0, 0.5]),
            "centered": st.booleans(),
            "maximize": st.booleans(),
        }
    ),
    "Adagrad": st.fixed_dictionaries(
        {
            "lr": st.floats(0.001, 0.5),
            "lr_decay": st.sampled_from([0.0, 0.1]),
            "weight_decay": st.sampled_from([0.0, 0.1]),
            "initial_accumulator_value": st.sampled_from([0.0, 0.5]),
            "eps": st.sampled_from([1e-10, 1e-2]),
            "maximize": st.booleans(),
        }
    ),
    "Adadelta": st.fixed_dictionaries(
        {
            "lr": st.floats(0.1, 1.0),
            "rho": st.sampled_from([0.5, 0.9]),
            "eps": st.sampled_from([1e-6, 1e-3]),
            "weight_decay": st.sampled_from([0.0, 0.1]),
            "maximize": st.booleans(),
        }
    ),
}
CASES = {
    "RMSprop": (RMSprop, ref_rmsprop),
    "Adagrad": (Adagrad, ref_adagrad),
    "Adadelta": (Adadelta, ref_adadelta),
}


@pytest.mark.parametrize("name", list(CASES))
@given(data=st.data(), problem=quadratics(), steps=st.integers(1, 6))
def test_matches_reference(name: str, data: st.DataObject, problem: Any, steps: int) -> None:
    """Each option combination follows the documented update on a random quadratic."""
    cls, ref = CASES[name]
    kw = data.draw(SETTINGS[name])
    check_against_reference(
        lambda ps: cls(ps, **kw), ref(**kw), problem, steps, kw["maximize"], rtol=1e-9
    )


@pytest.mark.parametrize("name", list(CASES))
def test_float32_stays_float32(name: str) -> None:
    """float32 params step in float32, close to the float64 reference."""
    cls, ref = CASES[name]
    kw = {"weight_decay": 0.1} | ({"momentum": 0.5, "centered": True} if name == "RMSprop" else {})
    check_float32(lambda ps: cls(ps, **kw), ref(**kw), seed=3, steps=8)


def test_adagrad_state_exists_before_the_first_step() -> None:
    """Adagrad makes its sums at construction (filled with initial_accumulator_value)."""
    with lampy.Scope():
        w = lampy.param(np.zeros((2, 2), np.float32))
        opt = Adagrad([w], initial_accumulator_value=0.25)
        state = opt.state_dict()["state"][0]
        assert state["step"] == 0
        np.testing.assert_array_equal(state["sum"], np.full((2, 2), 0.25, np.float32))
        assert state["sum"].dtype == np.float32


@pytest.mark.parametrize(
    ("cls", "kw", "match"),
    [
        (RMSprop, {"lr": -1.0}, "lr"),
        (RMSprop, {"alpha": -0.1}, "alpha"),
        (RMSprop, {"momentum": -0.1}, "momentum"),
        (RMSprop, {"eps": -0.1}, "eps"),
        (Adagrad, {"lr_decay": -0.1}, "lr_decay"),
        (Adagrad, {"initial_accumulator_value": -1.0}, "initial_accumulator_value"),
        (Adagrad, {"weight_decay": -1.0}, "weight_decay"),
        (Adadelta, {"rho": 1.5}, "rho"),
        (Adadelta, {"lr": -1.0}, "lr"),
    ],
)
def test_bad_settings(cls: Any, kw: dict[str, Any], match: str) -> None:
    """Invalid hyper-parameters raise LampyValueError naming them."""
    check_bad_settings(cls, kw, match)


def test_adagrad_group_accumulator_value_follows_pytorch() -> None:
    """As PyTorch: params given to the constructor start their sums at the constructor's
    initial_accumulator_value, even where their group sets another."""
    with lampy.Scope():
        p = lampy.param(np.array([1.0, 2.0]))
        opt = Adagrad([{"params": [p], "initial_accumulator_value": 0.1}], lr=0.5)
        np.testing.assert_array_equal(opt.state[p]["sum"], [0.0, 0.0])
        p.backward(np.array([0.5, -1.0]))
        opt.step()
        # sum = g^2 = [0.25, 1]; p -= 0.5 * g / (sqrt(sum) + 1e-10)
        np.testing.assert_allclose(p.value, [0.5, 2.5])
