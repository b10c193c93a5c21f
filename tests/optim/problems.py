"""Shared test problems for the optimizers: random quadratics, trajectories of lampy
optimizers, and plain-numpy reference loops to compare them with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyValueError

Update = Callable[[np.ndarray, np.ndarray, int, dict[str, Any]], np.ndarray]
"""A reference update ``(x, g, t, state) -> new x`` at step ``t`` (from 1)."""


@st.composite
def quadratics(draw: st.DrawFn, max_n: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, b, x0)``: a random SPD matrix, a linear term and a start point."""
    n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m = rng.standard_normal((n, n))
    a = m @ m.T / n + 0.5 * np.eye(n)
    return a, rng.standard_normal(n), rng.standard_normal(n)


def lampy_trajectory(
    make_opt: Callable[[list[lampy.Variable]], Any],
    a: np.ndarray,
    b: np.ndarray,
    x0: np.ndarray,
    steps: int,
    dtype: Any = np.float64,
    sign: float = 1.0,
) -> np.ndarray:
    """The iterates of a lampy optimizer on ``sign * (x'Ax/2 + b'x)``, one row per step."""
    out = []
    with lampy.Scope():
        x = lampy.param(x0.astype(dtype))
        opt = make_opt([x])
        ac, bc = a.astype(dtype), b.astype(dtype)
        for _ in range(steps):
            opt.zero_grad()
            with lampy.Scope():
                loss = sign * (0.5 * ((x @ ac) @ x) + bc @ x)
                loss.backward()
            opt.step()
            assert x.value.dtype == dtype
            out.append(x.value.copy())
    return np.array(out)


def ref_trajectory(
    update: Update, a: np.ndarray, b: np.ndarray, x0: np.ndarray, steps: int, sign: float = 1.0
) -> np.ndarray:
    """The iterates of a reference update on the same quadratic, in float64."""
    x, state, out = x0.copy(), {}, []
    for t in range(1, steps + 1):
        x = update(x, sign * (a @ x + b), t, state)
        out.append(x)
    return np.array(out)


def ref_grad(x: np.ndarray, g: np.ndarray, weight_decay: float, maximize: bool) -> np.ndarray:
    """The documented first lines of most updates: negate for ``maximize``, then add the
    L2 penalty ``weight_decay * x``."""
    g = -g if maximize else g
    return g + weight_decay * x if weight_decay else g


def check_against_reference(
    make_opt: Callable[[list[lampy.Variable]], Any],
    update: Update,
    problem: tuple[np.ndarray, np.ndarray, np.ndarray],
    steps: int,
    maximize: bool,
    rtol: float,
) -> None:
    """A lampy optimizer's iterates equal the reference's on ``problem`` (maximizing the
    negated quadratic when ``maximize``: the same descent path)."""
    a, b, x0 = problem
    sign = -1.0 if maximize else 1.0
    got = lampy_trajectory(make_opt, a, b, x0, steps, sign=sign)
    want = ref_trajectory(update, a, b, x0, steps, sign=sign)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


def check_float32(
    make_opt: Callable[[list[lampy.Variable]], Any], update: Update, seed: int, steps: int
) -> None:
    """float32 params step in float32 and stay close to the float64 reference on a
    diagonal quadratic."""
    rng = np.random.default_rng(seed)
    a, b, x0 = np.diag([1.0, 2.0, 3.0]), rng.standard_normal(3), rng.standard_normal(3)
    got = lampy_trajectory(make_opt, a, b, x0, steps, dtype=np.float32)
    want = ref_trajectory(update, a, b, x0, steps)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def check_bad_settings(cls: Any, kw: dict[str, Any], match: str) -> None:
    """``cls([w], **kw)`` raises LampyValueError matching ``match``."""
    with lampy.Scope():
        w = lampy.param([1.0])
        with pytest.raises(LampyValueError, match=match):
            cls([w], **kw)
