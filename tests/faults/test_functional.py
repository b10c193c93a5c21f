"""Fault cases of the functional API (issue 26, "silent wrong answers to fix first"):
``lampy.grad`` returns numpy constants, so a result that depends on a Variable needing a
gradient from outside the call would be cut from that Variable's graph. Until
higher-order gradients exist, such calls raise, unless the caller says the result is
not differentiated (``lampy.no_grad()``)."""

from __future__ import annotations

import numpy as np
import pytest

import lampy

X = np.array([3.0, 4.0])


def test_a_gradient_penalty_through_a_closed_over_param_raises() -> None:
    """The issue's example: gx = w, a constant to backward, gave w.grad = x ([3, 4])
    where x + 2w ([5, 0]) is right. The grad call raises, naming the param and the fix."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        with pytest.raises(lampy.LampyError) as info:
            lampy.grad(lambda v: (v * w).sum())(X)
        message = str(info.value)
        assert "'param', shape (2,), dtype float64" in message
        assert "silently wrong" in message and "lampy.no_grad()" in message
        assert w.grad is None


def test_value_and_grad_and_aux_closing_over_a_param_raise() -> None:
    """The value (and an aux Variable) depend on the closed-over param just as well."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        with pytest.raises(lampy.LampyError, match="silently wrong"):
            lampy.value_and_grad(lambda v: (v * w.value).sum() + (w * w).sum())(X)
        with pytest.raises(lampy.LampyError, match="silently wrong"):
            lampy.grad(lambda v: ((v * v).sum(), w * 2.0), has_aux=True)(X)


def test_an_intermediate_of_a_closed_over_param_raises() -> None:
    """An op result of the enclosing scope (h = 3 w) carries w's dependence too."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        h = w * 3.0
        with pytest.raises(lampy.LampyError, match=r"'mul'|'multiply'|silently wrong"):
            lampy.grad(lambda v: (v * h).sum())(X)


def test_a_param_passed_outside_argnums_raises() -> None:
    """grad(f, argnums=1)(x, y) with x a param: x was taken by value (1.5 where 3.0 is
    right for d/dx of the later loss). It raises, naming argument 0 and argnums."""
    with lampy.Scope():
        x = lampy.param(1.5)
        with pytest.raises(lampy.LampyError) as info:
            lampy.grad(lambda a, b: a * b, argnums=1)(x, 2.0)
        assert "argument 0 is a Variable that needs a gradient" in str(info.value)
        assert "argnums=1" in str(info.value)


def test_under_no_grad_enclosing_params_are_constants() -> None:
    """The documented way to use an enclosing scope's params as constants (an input
    gradient for logging): call under no_grad. The gradient is right, w untouched."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        with lampy.no_grad():
            g = lampy.grad(lambda v: (v * w).sum())(X)
            g2 = lampy.grad(lambda a, b: (a * b).sum(), argnums=1)(w, X)
        np.testing.assert_array_equal(g, [1.0, -2.0])
        np.testing.assert_array_equal(g2, [1.0, -2.0])
        assert w.grad is None


def test_plain_inputs_constants_and_values_still_work() -> None:
    """grad of a function of numpy inputs, of constants, and of a param's value (w.value,
    a constant by construction) works inside a scope with grad mode on."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        c = lampy.const([2.0, 2.0])
        np.testing.assert_array_equal(lampy.grad(lambda v: (v * v).sum())(X), 2 * X)
        np.testing.assert_array_equal(lampy.grad(lambda v: (v * c).sum())(X), [2.0, 2.0])
        np.testing.assert_array_equal(lampy.grad(lambda v: (v * w.value).sum())(X), w.value)
        np.testing.assert_array_equal(
            lampy.grad(lambda a, b: (a * b).sum(), argnums=1)(c, X), [2.0, 2.0]
        )
