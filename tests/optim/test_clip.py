"""clip_grad_norm_ and clip_grad_value_: PyTorch's formulas, in place, written out here."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError
from lampy.optim import NonFiniteNormError, clip_grad_norm_, clip_grad_value_


def _params_with_grads(grads: list[np.ndarray]) -> list[lampy.Variable]:
    ps = [lampy.param(np.zeros_like(g)) for g in grads]
    with lampy.Scope(), np.errstate(invalid="ignore"):  # 0 * inf in the forward value
        sum(
            ((p * g).sum() for p, g in zip(ps, grads, strict=True)), start=lampy.const(0.0)
        ).backward()
    return ps


grad_lists = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 2**32 - 1)), min_size=1, max_size=4
).map(lambda specs: [np.random.default_rng(s).standard_normal(n) * 3 for n, s in specs])


@given(
    grad_lists,
    st.sampled_from([2.0, 1.0, 3.0, 0.5, math.inf]),
    st.sampled_from([0.01, 1.0, 100.0]),
)
def test_clip_grad_norm_matches_formula(
    grads: list[np.ndarray], norm_type: float, max_norm: float
) -> None:
    """The total norm is the norm of all gradients together; grads scale by min(1, max/(n+1e-6))."""
    flat = np.concatenate(grads)
    if norm_type == math.inf:
        total = np.abs(flat).max(initial=0.0)
    else:
        total = (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    coef = min(1.0, max_norm / (total + 1e-6))
    with lampy.Scope():
        ps = _params_with_grads(grads)
        got = clip_grad_norm_(ps, max_norm, norm_type)
        assert got.shape == () and got.dtype == np.float64
        np.testing.assert_allclose(got, total, rtol=1e-12)
        for p, g in zip(ps, grads, strict=True):
            np.testing.assert_allclose(p.grad, g * coef, rtol=1e-12, atol=1e-15)


def test_clip_grad_norm_float32_single_variable_and_skips() -> None:
    """A single Variable is accepted; float32 gives a float32 norm; grad-less params are skipped."""
    with lampy.Scope():
        (p,) = _params_with_grads([np.array([3.0, 4.0], np.float32)])
        q = lampy.param([1.0])
        total = clip_grad_norm_(p, 1.0)
        assert total.dtype == np.float32 and total == 5.0
        np.testing.assert_allclose(p.grad, [0.6, 0.8], rtol=1e-6)
        assert clip_grad_norm_([q], 1.0) == 0.0 and q.grad is None


def test_clip_grad_norm_nonfinite() -> None:
    """A non-finite norm raises with error_if_nonfinite (grads untouched), else scales to NaN."""
    with lampy.Scope():
        (p,) = _params_with_grads([np.array([np.inf, 1.0])])
        with pytest.raises(NonFiniteNormError, match="non-finite"):
            clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        np.testing.assert_array_equal(p.grad, [np.inf, 1.0])
        assert clip_grad_norm_([p], 1.0) == np.inf
        np.testing.assert_array_equal(p.grad, [np.nan, 0.0])


@given(grad_lists, st.floats(0.0, 5.0))
def test_clip_grad_value_clamps_in_place(grads: list[np.ndarray], clip: float) -> None:
    """Each element is clamped to [-clip_value, clip_value], in the same buffer."""
    with lampy.Scope():
        ps = _params_with_grads(grads)
        buffers = [p.grad for p in ps]
        clip_grad_value_(ps, clip)
        for p, b, g in zip(ps, buffers, grads, strict=True):
            assert p.grad is b
            np.testing.assert_array_equal(p.grad, np.minimum(np.maximum(g, -clip), clip))


@pytest.mark.parametrize("fn", [clip_grad_value_, lambda ps, c: clip_grad_norm_(ps, c)])
def test_clip_rejects_non_variables(fn: Any) -> None:
    """Arrays instead of Variables raise LampyTypeError."""
    with pytest.raises(LampyTypeError, match="Variables"):
        fn([np.zeros(2)], 1.0)


def test_min_norm_ignores_empty_gradients() -> None:
    """norm_type=-inf is the smallest |g| over all elements; an empty gradient has no
    element, so it must not pull the total to 0 (it used to count as norm 0)."""
    with lampy.Scope():
        ps = _params_with_grads([np.zeros(0), np.array([4.0, -2.0]), np.array([3.0])])
        total = clip_grad_norm_(ps, 1.0, -math.inf)
        assert total == 2.0
        np.testing.assert_allclose(ps[1].grad, np.array([4.0, -2.0]) / (2.0 + 1e-6))
        np.testing.assert_allclose(ps[2].grad, [3.0 / (2.0 + 1e-6)])
        (empty,) = _params_with_grads([np.zeros(0)])
        assert clip_grad_norm_([empty], 1.0, math.inf) == 0.0  # max over nothing: 0


def test_clipping_is_under_pytorchs_nn_utils_too() -> None:
    """``torch.nn.utils.clip_grad_norm_`` ports as ``lampy.nn.utils.clip_grad_norm_``:
    the same functions as ``lampy.optim``'s."""
    assert lampy.nn.utils.clip_grad_norm_ is clip_grad_norm_
    assert lampy.nn.utils.clip_grad_value_ is clip_grad_value_
    assert lampy.nn.utils.NonFiniteNormError is NonFiniteNormError
