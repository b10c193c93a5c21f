"""Lion against Algorithm 2 of Chen et al. 2023 ("Symbolic Discovery of Optimization
Algorithms"), written here in plain numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy.optim._lion import Lion

from .problems import Update, check_against_reference, check_bad_settings, quadratics


def ref_lion(
    lr: float = 1e-4,
    betas: tuple[float, float] = (0.9, 0.99),
    weight_decay: float = 0.0,
    maximize: bool = False,
) -> Update:
    b1, b2 = betas

    def update(x: np.ndarray, g: np.ndarray, t: int, s: dict[str, Any]) -> np.ndarray:
        g = -g if maximize else g
        m = s.get("m", np.zeros_like(x))
        c = b1 * m + (1 - b1) * g
        x = x - lr * (np.sign(c) + weight_decay * x)
        s["m"] = b2 * m + (1 - b2) * g
        return x

    return update


@given(
    quadratics(),
    st.fixed_dictionaries(
        {
            "lr": st.floats(0.001, 0.1),
            "betas": st.sampled_from([(0.9, 0.99), (0.5, 0.8), (0.0, 0.9)]),
            "weight_decay": st.sampled_from([0.0, 0.5]),
            "maximize": st.booleans(),
        }
    ),
    st.integers(1, 6),
)
def test_lion_matches_paper(problem: Any, kw: dict[str, Any], steps: int) -> None:
    """Lion follows the paper's update with decoupled weight decay."""
    check_against_reference(
        lambda ps: Lion(ps, **kw), ref_lion(**kw), problem, steps, kw["maximize"], rtol=1e-10
    )


def test_lion_float32_and_unit_steps() -> None:
    """Each coordinate moves by exactly lr per step (without decay); float32 stays float32."""
    with lampy.Scope():
        w = lampy.param(np.array([1.0, -2.0, 3.0], np.float32))
        opt = Lion([w], lr=0.125)
        before = w.numpy()
        (w * np.array([3.0, -1.0, 0.5], np.float32)).sum().backward()
        opt.step()
        assert w.value.dtype == np.float32
        np.testing.assert_array_equal(before - w.value, [0.125, -0.125, 0.125])


@pytest.mark.parametrize(
    ("kw", "match"),
    [({"lr": -1.0}, "lr"), ({"betas": (1.2, 0.9)}, "index 0"), ({"weight_decay": -1}, "decay")],
)
def test_lion_bad_settings(kw: dict[str, Any], match: str) -> None:
    """Invalid hyper-parameters raise LampyValueError naming them."""
    check_bad_settings(Lion, kw, match)
