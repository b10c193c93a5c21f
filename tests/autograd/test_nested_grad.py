"""Nested differentiation: lampy computes first derivatives only, so a grad (or
value_and_grad) whose result depends on a Variable that an enclosing differentiation is
differentiating would silently cut the graph (the issue's example gave 1.0 for 2.0).
Until higher-order gradients exist, such calls raise a LampyError saying so.

The tests also pin down what must keep working (nesting that touches nothing of the outer call, and
closing over params outside any differentiation, as a model's weights).
"""

from __future__ import annotations

import numpy as np
import pytest

import lampy

HIGHER_ORDER = "higher-order gradients are not supported yet"


def test_the_issues_example_raises() -> None:
    """The inner grad closes over the outer param x: d/dx (x * d/dy (x * y)) = 2x, and
    lampy gave x (the inner result taken as a constant). It raises instead."""
    with pytest.raises(lampy.LampyError, match=HIGHER_ORDER):
        lampy.grad(lambda x: x * lampy.grad(lambda y: x * y)(2.0))(1.0)


def test_inner_value_and_grad_closing_over_an_outer_param_raises() -> None:
    """The same with value_and_grad inside and outside."""

    def outer(x: lampy.Variable) -> lampy.Variable:
        _, g = lampy.value_and_grad(lambda y: (x * y).sum())(np.array([2.0, 3.0]))
        return (x * g).sum()

    with pytest.raises(lampy.LampyError, match=HIGHER_ORDER):
        lampy.value_and_grad(outer)(np.array([1.0, 1.0]))


def test_inner_grad_reaching_an_outer_intermediate_raises() -> None:
    """An intermediate of the outer function (here h = 3 x) carries x's dependence just
    as well as x itself."""

    def outer(x: lampy.Variable) -> lampy.Variable:
        h = x * 3.0
        return x * lampy.grad(lambda y: h * y)(2.0)

    with pytest.raises(lampy.LampyError, match=HIGHER_ORDER):
        lampy.grad(outer)(1.0)


def test_grad_called_on_a_variable_that_needs_a_gradient_raises() -> None:
    """grad(f)(x) with x a param: the gradient would come back as a constant array, cut
    from x's graph. Inside an enclosing differentiation and outside of it alike."""
    with lampy.Scope():
        x = lampy.param(1.5)
        with pytest.raises(lampy.LampyError, match=HIGHER_ORDER):
            lampy.grad(lambda y: y * y)(x)
    with pytest.raises(lampy.LampyError, match=HIGHER_ORDER):
        lampy.grad(lambda x: x * lampy.grad(lambda y: y * y)(x))(1.5)


def test_the_error_leaves_the_outer_call_clean() -> None:
    """After the error the outer scope and grad mode are as before (the autouse fixture
    checks no scope is left open), and the same functions work unnested."""
    with lampy.Scope() as scope:
        x = lampy.param(2.0)
        with pytest.raises(lampy.LampyError, match=HIGHER_ORDER):
            lampy.grad(lambda y: y * y)(x)
        assert len(scope) == 1
    assert lampy.is_grad_enabled()


def test_nesting_that_touches_nothing_of_the_outer_call_works() -> None:
    """An inner grad of a function of its own arguments only is a constant for the outer
    one, correctly: d/dx (x * d/dy y**2 at 3) = 6."""
    g = lampy.grad(lambda x: x * float(lampy.grad(lambda y: y * y)(3.0)))(1.0)
    assert g == 6.0


def test_closing_over_params_outside_any_differentiation_works() -> None:
    """A model's weights (params of an enclosing scope, not of an enclosing grad) may be
    closed over: the input gradient of a fixed model, with the weights as constants,
    declared by no_grad (with grad mode on it raises: issue 26, tests/faults)."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        with lampy.no_grad():
            g = lampy.grad(lambda v: (v * w).sum())(np.array([3.0, 4.0]))
        np.testing.assert_array_equal(g, [1.0, -2.0])
        assert w.grad is None


def test_a_constant_variable_argument_works() -> None:
    """A Variable that needs no gradient is just an array to grad."""
    with lampy.Scope():
        c = lampy.const([1.0, 2.0])
        np.testing.assert_array_equal(lampy.grad(lambda v: (v * v).sum())(c), [2.0, 4.0])
