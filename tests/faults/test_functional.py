"""Fault cases of the functional API (issue 26, "silent wrong answers to fix first"):
``lampy.grad`` returned numpy constants, so a result that depends on a Variable needing
a gradient from outside the call was cut from that Variable's graph (a silently wrong
gradient penalty). Such results are now Variables recorded with their graph, and the
gradients through them are right; under ``lampy.no_grad()`` the caller says the result
is not differentiated, and numpy constants come back."""

from __future__ import annotations

import numpy as np

import lampy

X = np.array([3.0, 4.0])


def test_a_gradient_penalty_through_a_closed_over_param() -> None:
    """The issue's example: gx = d/dv (v * w).sum() = w, recorded as a Variable of w's
    graph, so the penalty's gradient reaches w: x + 2w = [5, 0] (lampy gave x, [3, 4],
    when the inner result was a constant)."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        gx = lampy.grad(lambda v: (v * w).sum())(X)
        assert isinstance(gx, lampy.Variable)
        loss = (X * w).sum() + (gx * gx).sum()
        lampy.backward(loss)
        np.testing.assert_array_equal(w.grad, [5.0, 0.0])


def test_value_and_grad_and_aux_closing_over_a_param() -> None:
    """The value and an aux Variable depend on the closed-over param just as well; all
    come back as Variables whose gradients reach it."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        value, g = lampy.value_and_grad(lambda v: (v * w).sum() + (w * w).sum())(X)
        lampy.backward(value + (g * g).sum())  # d/dw (x.w + w.w + w.w) = x + 4w
        np.testing.assert_array_equal(w.grad, X + 4 * w.value)
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        g, aux = lampy.grad(lambda v: ((v * v).sum(), w * 2.0), has_aux=True)(X)
        assert isinstance(aux, lampy.Variable)
        lampy.backward(aux.sum())
        np.testing.assert_array_equal(w.grad, [2.0, 2.0])


def test_an_intermediate_of_a_closed_over_param() -> None:
    """An op result of the enclosing scope (h = 3 w) carries w's dependence too: the
    gradient 3w, squared and summed, gives 18 w."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        h = w * 3.0
        g = lampy.grad(lambda v: (v * h).sum())(X)
        lampy.backward((g * g).sum())
        np.testing.assert_array_equal(w.grad, 18 * w.value)


def test_a_param_passed_outside_argnums() -> None:
    """grad(f, argnums=1)(x, y) with x a param: d/dy (x * y) = x stays x's Variable, so
    d/dx of x * g = x**2 is 2x = 3.0 (lampy took x by value and gave 1.5)."""
    with lampy.Scope():
        x = lampy.param(1.5)
        g = lampy.grad(lambda a, b: a * b, argnums=1)(x, 2.0)
        lampy.backward(x * g)
        assert x.grad == 3.0


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
