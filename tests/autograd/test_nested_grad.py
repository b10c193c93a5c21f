"""Nested differentiation: a ``lampy.grad`` (or ``value_and_grad``) whose result depends on
a Variable that needs a gradient from outside the call (an enclosing grad's input, a
param it closes over, an argument that is such a Variable) returns Variables recorded in
the caller's scope, so the enclosing computation differentiates through them (the
issue's example used to give 1.0 for 2.0). Nesting that touches nothing outside, and
calls under ``no_grad``, still return numpy arrays."""

from __future__ import annotations

import numpy as np
import pytest

import lampy


def test_the_issues_example_gives_the_second_derivative() -> None:
    """d/dx (x * d/dy (x * y)) = d/dx x**2 = 2x."""
    assert lampy.grad(lambda x: x * lampy.grad(lambda y: x * y)(2.0))(1.0) == 2.0
    assert lampy.grad(lambda x: x * lampy.grad(lambda y: x * y)(2.0))(3.5) == 7.0


def test_grad_of_grad_of_grad() -> None:
    """Third derivatives of x**3 (6) and of sin (-cos), elementwise."""
    f = lambda x: (x**3).sum()
    d2 = lambda x: lampy.grad(lambda y: lampy.grad(f)(y).sum())(x).sum()
    np.testing.assert_allclose(lampy.grad(d2)(np.array([1.0, 2.0])), [6.0, 6.0])
    x = np.array([0.3, -1.2, 2.0])
    g3 = lampy.grad(
        lambda a: lampy.grad(lambda b: lampy.grad(lambda c: lampy.sin(c).sum())(b).sum())(a).sum()
    )(x)
    np.testing.assert_allclose(g3, -np.cos(x), rtol=1e-12)


def test_inner_value_and_grad_closing_over_an_outer_input() -> None:
    """value_and_grad inside and outside: outer(x) = sum(x * d/dy (x * y).sum()) = sum(x**2),
    whose gradient is 2x; the inner value comes back as a Variable too."""

    def outer(x: lampy.Variable) -> lampy.Variable:
        value, g = lampy.value_and_grad(lambda y: (x * y).sum())(np.array([2.0, 3.0]))
        assert isinstance(value, lampy.Variable) and isinstance(g, lampy.Variable)
        return (x * g).sum() + 0.0 * value

    value, g = lampy.value_and_grad(outer)(np.array([1.0, -2.0]))
    assert value == 5.0
    np.testing.assert_allclose(g, [2.0, -4.0])


def test_an_outer_intermediate_carries_the_dependence() -> None:
    """The inner grad closes over h = 3x, an intermediate: d/dx (x * d/dy (h * y)) = 6x."""

    def outer(x: lampy.Variable) -> lampy.Variable:
        h = x * 3.0
        return x * lampy.grad(lambda y: h * y)(2.0)

    assert lampy.grad(outer)(1.0) == 6.0


def test_grad_of_a_variable_argument_is_a_variable_of_its_graph() -> None:
    """grad(f)(x) with x a param: the gradient 2x is a Variable that depends on x, so a
    later backward through it reaches x (d/dx (2x)**2 = 8x)."""
    with lampy.Scope() as scope:
        x = lampy.param(1.5)
        g = lampy.grad(lambda y: y * y)(x)
        assert isinstance(g, lampy.Variable) and g.needs_grad
        assert g.item() == 3.0
        lampy.backward(g * g)
        assert x.grad == 12.0
        assert all(n.scope is scope for n in scope.owned_nodes())


def test_the_graph_it_records_is_released_with_the_callers_scope() -> None:
    """The recorded inner graph belongs to the caller's scope: released at its exit."""
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0]))
        with lampy.Scope() as inner:
            g = lampy.grad(lambda y: (y * y * x).sum())(np.array([3.0, 4.0]))
            n_owned = len(inner)
        assert n_owned > 0
        with pytest.raises(lampy.ReleasedError):
            _ = g.value


def test_nesting_that_touches_nothing_of_the_outer_call_returns_numpy() -> None:
    """An inner grad of a function of its own arguments only is a constant for the outer
    one, correctly: d/dx (x * d/dy y**2 at 3) = 6; the inner result is a numpy array."""
    inner = lampy.grad(lambda y: y * y)(3.0)
    assert isinstance(inner, np.ndarray)
    g = lampy.grad(lambda x: x * float(lampy.grad(lambda y: y * y)(3.0)))(1.0)
    assert g == 6.0


def test_under_no_grad_enclosing_params_are_constants() -> None:
    """Under no_grad the caller says the result is not differentiated: closed-over params
    are constants, the result numpy, the params untouched."""
    with lampy.Scope():
        w = lampy.param([1.0, -2.0])
        with lampy.no_grad():
            g = lampy.grad(lambda v: (v * w).sum())(np.array([3.0, 4.0]))
        assert isinstance(g, np.ndarray)
        np.testing.assert_array_equal(g, [1.0, -2.0])
        assert w.grad is None


def test_a_constant_variable_argument_works() -> None:
    """A Variable that needs no gradient is just an array to grad."""
    with lampy.Scope():
        c = lampy.const([1.0, 2.0])
        np.testing.assert_array_equal(lampy.grad(lambda v: (v * v).sum())(c), [2.0, 4.0])


def test_an_unused_argument_gets_a_zero_gradient_when_nested() -> None:
    """argnums naming an argument f does not use: zeros, as unnested."""
    with lampy.Scope():
        x = lampy.param(2.0)
        ga, gb = lampy.grad(lambda a, b: a * x, argnums=(0, 1))(1.0, 5.0)
        assert ga.item() == 2.0 and gb.item() == 0.0


def test_a_failing_f_leaves_the_callers_scope_clean() -> None:
    """An error inside a nested call leaves grad mode and the scopes as before."""
    with lampy.Scope() as scope:
        x = lampy.param(2.0)
        with pytest.raises(ZeroDivisionError):
            lampy.grad(lambda y: y * x * (1 / 0))(1.0)
        assert len(scope) == 1
    assert lampy.is_grad_enabled()
