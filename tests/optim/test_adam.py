"""Adam and AdamW against the update rules of PyTorch's documentation, in plain numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy.optim._adam import Adam, AdamW

from .problems import (
    Update,
    check_against_reference,
    check_bad_settings,
    check_float32,
    lampy_trajectory,
    quadratics,
    ref_trajectory,
)


def ref_adam(
    lr: float = 1e-3,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    amsgrad: bool = False,
    maximize: bool = False,
    decoupled: bool = False,
) -> Update:
    b1, b2 = betas

    def update(x: np.ndarray, g: np.ndarray, t: int, s: dict[str, Any]) -> np.ndarray:
        g = -g if maximize else g
        if weight_decay and decoupled:
            x = x - lr * weight_decay * x
        elif weight_decay:
            g = g + weight_decay * x
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        m_hat = s["m"] / (1 - b1**t)
        v = s["v"]
        if amsgrad:
            v = s["vmax"] = np.maximum(s.get("vmax", 0.0), v)
        v_hat = v / (1 - b2**t)
        return x - lr * m_hat / (np.sqrt(v_hat) + eps)

    return update


@st.composite
def adam_settings(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "lr": draw(st.floats(0.001, 0.2)),
        "betas": (draw(st.sampled_from([0.0, 0.5, 0.9])), draw(st.sampled_from([0.7, 0.999]))),
        "eps": draw(st.sampled_from([1e-8, 1e-3])),
        "weight_decay": draw(st.sampled_from([0.0, 0.1])),
        "amsgrad": draw(st.booleans()),
        "maximize": draw(st.booleans()),
    }


@given(quadratics(), adam_settings(), st.integers(1, 6))
def test_adam_matches_reference(problem: Any, kw: dict[str, Any], steps: int) -> None:
    """Adam (L2 weight decay, amsgrad, maximize) follows the documented update."""
    check_against_reference(
        lambda ps: Adam(ps, **kw), ref_adam(**kw), problem, steps, kw["maximize"], rtol=1e-9
    )


@given(quadratics(), adam_settings(), st.integers(1, 6))
def test_adamw_matches_reference(problem: Any, kw: dict[str, Any], steps: int) -> None:
    """AdamW decays the weights directly, outside the moment averages."""
    a, b, x0 = problem
    sign = -1.0 if kw["maximize"] else 1.0
    got = lampy_trajectory(lambda ps: AdamW(ps, **kw), a, b, x0, steps, sign=sign)
    want = ref_trajectory(ref_adam(**kw, decoupled=True), a, b, x0, steps, sign=sign)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    got_adam = lampy_trajectory(
        lambda ps: Adam(ps, **kw, decoupled_weight_decay=True), a, b, x0, steps, sign=sign
    )
    np.testing.assert_array_equal(got_adam, got)


def test_adamw_default_weight_decay() -> None:
    """AdamW's default weight decay is 1e-2 (Adam's is 0), as in PyTorch."""
    with lampy.Scope():
        w = lampy.param([1.0])
        assert AdamW([w]).defaults["weight_decay"] == 1e-2
        assert Adam([w]).defaults["weight_decay"] == 0.0


@pytest.mark.parametrize("cls", [Adam, AdamW])
def test_adam_float32_stays_float32(cls: Any) -> None:
    """float32 params and state stay float32 and close to the float64 reference."""
    kw = {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}
    check_float32(
        lambda ps: cls(ps, **kw), ref_adam(**kw, decoupled=cls is AdamW), seed=2, steps=10
    )
    with lampy.Scope():
        w = lampy.param([0.5, -1.0, 2.0], dtype=np.float32)
        (w * w).sum().backward()
        opt = cls([w], amsgrad=True)
        opt.step()
        assert {k: v.dtype for k, v in opt.state[w].items() if k != "step"} == {
            "exp_avg": np.float32,
            "exp_avg_sq": np.float32,
            "max_exp_avg_sq": np.float32,
        }
        assert opt.state[w]["step"] == 1


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"lr": -1e-3}, "lr"),
        ({"eps": -1.0}, "eps"),
        ({"betas": (1.0, 0.9)}, "index 0"),
        ({"betas": (0.9, -0.1)}, "index 1"),
        ({"betas": (0.9,)}, "pair"),
        ({"weight_decay": -0.1}, "weight_decay"),
    ],
)
def test_adam_bad_settings(kw: dict[str, Any], match: str) -> None:
    """Invalid hyper-parameters raise LampyValueError naming them."""
    for cls in (Adam, AdamW):
        check_bad_settings(cls, kw, match)
