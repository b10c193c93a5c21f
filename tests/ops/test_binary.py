"""Binary elementwise ops and where: conventions at ties, nans and singular points,
dtypes, broadcasting, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.ops._binary_math import arctan2, hypot, logaddexp, logaddexp2
from lampy.ops._extrema import fmax, fmin, maximum, minimum
from lampy.ops._where import where
from lampy.testing import check_grad

nan, inf = np.nan, np.inf

DIFFERENTIABLE: list[Callable[..., Any]] = [
    maximum,
    minimum,
    fmax,
    fmin,
    arctan2,
    hypot,
    logaddexp,
    logaddexp2,
]
ids = [f.__name__ for f in DIFFERENTIABLE]


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", "fn")


def _grads(fn: Callable[..., Any], a: Any, b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Value of ``fn(a, b)`` and the gradients of its sum."""
    with lampy.Scope():
        x, y = lampy.param(a), lampy.param(b)
        out = fn(x, y)
        out.backward(np.ones(out.shape))
        assert x.grad is not None and y.grad is not None
        return out.numpy(), x.grad.copy(), y.grad.copy()


# ------------------------------------------------------------------------- extrema


@pytest.mark.parametrize("fn", [maximum, minimum, fmax, fmin], ids=_name)
def test_ties_share_the_gradient_equally(fn: Callable[..., Any]) -> None:
    """Where x1 == x2 each input gets exactly half of the gradient (also for -0.0 == 0.0)."""
    _, gx, gy = _grads(fn, [1.0, -2.0, 0.0, 3.0], [1.0, -2.0, -0.0, 3.0])
    np.testing.assert_array_equal(gx, [0.5, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(gy, [0.5, 0.5, 0.5, 0.5])


@pytest.mark.parametrize("fn", [maximum, minimum, fmax, fmin], ids=_name)
def test_same_variable_twice_differentiates_to_one(fn: Callable[..., Any]) -> None:
    """fn(x, x) == x, so its gradient is exactly 1: the two halves add up."""
    with lampy.Scope():
        x = lampy.param([1.5, -2.0, 0.0])
        fn(x, x).sum().backward()
        np.testing.assert_array_equal(x.grad, [1.0, 1.0, 1.0])


@pytest.mark.parametrize(
    ("fn", "gx"),
    [(maximum, [1.0, 0.0, 0.5]), (minimum, [0.0, 1.0, 0.5])],
    ids=["maximum", "minimum"],
)
def test_extremum_gradient_goes_to_the_selected_input(fn: Callable[..., Any], gx: list) -> None:
    """The whole gradient goes to the input whose value the output took."""
    _, dx, dy = _grads(fn, [3.0, -1.0, 2.0], [1.0, 4.0, 2.0])
    np.testing.assert_array_equal(dx, gx)
    np.testing.assert_array_equal(dy, 1 - np.asarray(gx))


@pytest.mark.parametrize("fn", [maximum, minimum], ids=_name)
def test_maximum_minimum_propagate_nan_and_its_gradient(fn: Callable[..., Any]) -> None:
    """A nan in either input gives nan (as numpy); the gradient goes to the nan input,
    to x1 if both are nan."""
    a, b = [nan, 1.0, nan, 2.0], [1.0, nan, nan, 1.0]
    value, gx, gy = _grads(fn, a, b)
    np.testing.assert_array_equal(value, getattr(np, fn.__name__)(a, b))
    np.testing.assert_array_equal(gx, [1.0, 0.0, 1.0, float(fn is maximum)])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 0.0, float(fn is minimum)])


@pytest.mark.parametrize("fn", [fmax, fmin], ids=_name)
def test_fmax_fmin_ignore_nan_and_send_the_gradient_to_the_number(
    fn: Callable[..., Any],
) -> None:
    """fmax/fmin take the non-nan input (as numpy) and so does its gradient; x1 gets it
    if both are nan."""
    a, b = [nan, 1.0, nan, 2.0, 5.0], [1.0, nan, nan, 1.0, 5.0]
    value, gx, gy = _grads(fn, a, b)
    np.testing.assert_array_equal(value, getattr(np, fn.__name__)(a, b))
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0, float(fn is fmax), 0.5])
    np.testing.assert_array_equal(gy, [1.0, 0.0, 0.0, float(fn is fmin), 0.5])


def test_extremum_with_integer_constant() -> None:
    """An integer array against a float param promotes as numpy and ties still split."""
    with lampy.Scope():
        x = lampy.param(np.array([0.0, 1.0, 5.0], np.float32))
        y = maximum(np.arange(3), x)
        assert y.dtype == np.maximum(np.arange(3), np.zeros(3, np.float32)).dtype
        y.sum().backward()
        np.testing.assert_array_equal(x.grad, [0.5, 0.5, 1.0])
        assert x.grad is not None and x.grad.dtype == np.float32


def test_relu_via_maximum_with_zero() -> None:
    """maximum(x, 0.0) is relu, float32 kept, with gradient 1/2 at exactly 0."""
    with lampy.Scope():
        x = lampy.param(np.array([-1.0, 0.0, 2.0], np.float32))
        y = maximum(x, 0.0)
        assert y.dtype == np.float32
        y.sum().backward()
        np.testing.assert_array_equal(x.grad, [0.0, 0.5, 1.0])


# ----------------------------------------------------------------- binary math


@pytest.mark.parametrize("fn", [arctan2, hypot], ids=_name)
def test_gradient_at_the_origin_is_zero(fn: Callable[..., Any]) -> None:
    """At x1 = x2 = 0 (not differentiable) both gradients are exactly 0, without warnings."""
    with np.errstate(all="raise"):
        value, gx, gy = _grads(fn, [0.0, 3.0], [0.0, 4.0])
    np.testing.assert_array_equal(value, getattr(np, fn.__name__)([0.0, 3.0], [0.0, 4.0]))
    assert gx[0] == 0.0 and gy[0] == 0.0
    expected = (4 / 25, -3 / 25) if fn is arctan2 else (3 / 5, 4 / 5)
    np.testing.assert_allclose([gx[1], gy[1]], expected, rtol=1e-15)


def test_arctan2_gradient_on_the_axes() -> None:
    """On the axes away from the origin the formula holds: d/dx1 arctan2(0, x2) = 1/x2."""
    _, gx, gy = _grads(arctan2, [0.0, 0.0, 2.0, -2.0], [2.0, -2.0, 0.0, 0.0])
    np.testing.assert_allclose(gx, [0.5, -0.5, 0.0, 0.0])
    np.testing.assert_allclose(gy, [0.0, 0.0, -0.5, 0.5])


def test_hypot_does_not_overflow() -> None:
    """hypot and its gradient stay finite where x1**2 would overflow."""
    _, gx, gy = _grads(hypot, [3e200], [4e200])
    np.testing.assert_allclose(gx, [0.6])
    np.testing.assert_allclose(gy, [0.8])


@pytest.mark.parametrize("fn", [logaddexp, logaddexp2], ids=_name)
def test_logaddexp_gradient_is_stable_for_large_inputs(fn: Callable[..., Any]) -> None:
    """Inputs that would overflow exp give finite softmax weights summing to 1."""
    a = np.array([1000.0, -1000.0, 800.0, 0.0])
    b = np.array([0.0, -1000.0, 800.0, 1e4])
    with np.errstate(over="raise", invalid="raise"):
        value, gx, gy = _grads(fn, a, b)
    assert np.all(np.isfinite(value))
    np.testing.assert_allclose(gx + gy, 1.0, rtol=1e-12)
    np.testing.assert_allclose(gx[1:3], [0.5, 0.5], rtol=1e-12)
    assert gx[0] == 1.0 and gx[3] == 0.0


@pytest.mark.parametrize("fn", [logaddexp, logaddexp2], ids=_name)
def test_logaddexp_of_equal_infinities_splits_the_gradient(fn: Callable[..., Any]) -> None:
    """Where both inputs are -inf (or both +inf) each gets half the gradient, not nan."""
    value, gx, gy = _grads(fn, [-inf, inf, -inf, 0.0], [-inf, inf, 0.0, -inf])
    np.testing.assert_array_equal(value[:2], [-inf, inf])
    np.testing.assert_array_equal(gx, [0.5, 0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.5, 0.5, 1.0, 0.0])


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (arctan2, 0.0),  # arctan2(x, x) = pi/4 for x > 0
        (hypot, 2 * np.sqrt(2.0)),  # sqrt(2) |x|, two params in the sum below
        (logaddexp, 1.0),  # x + log(2)
        (logaddexp2, 1.0),  # x + 1
    ],
    ids=["arctan2", "hypot", "logaddexp", "logaddexp2"],
)
def test_math_same_variable_twice(fn: Callable[..., Any], expected: float) -> None:
    """fn(x, x) differentiates by adding both contributions into the same buffer."""
    with lampy.Scope():
        x = lampy.param([0.5, 2.0])
        y = fn(x, x)
        (y * 2.0 if fn is hypot else y).sum().backward()
        np.testing.assert_allclose(x.grad, [expected, expected], rtol=1e-14, atol=1e-15)


# ------------------------------------------------------------ shared behaviour


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=ids)
@pytest.mark.parametrize("left", [True, False])
def test_python_number_keeps_float32(fn: Callable[..., Any], left: bool) -> None:
    """A Python float on either side never turns float32 into float64, also for 0-d."""
    for shape in [(), (3,)]:
        with lampy.Scope():
            x = lampy.param(np.full(shape, 0.75, np.float32))
            y = fn(0.5, x) if left else fn(x, 0.5)
            assert y.dtype == np.float32
            y.sum().backward()
            assert x.grad is not None and x.grad.dtype == np.float32


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=ids)
def test_broadcasting_both_ways_sums_gradients(fn: Callable[..., Any]) -> None:
    """(3, 1) against (1, 4) broadcasts to (3, 4); gradients are summed back per input."""
    a = np.array([[0.5], [1.7], [-2.3]])
    b = np.array([[1.1, -0.4, 2.6, -3.2]])
    with lampy.Scope():
        out = fn(lampy.param(a), lampy.param(b))
        assert out.shape == (3, 4)
    check_grad(fn, a, b)
    check_grad(fn, b.T, a.T)


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=ids)
def test_zero_d_and_empty(fn: Callable[..., Any]) -> None:
    """0-d inputs give 0-d results and gradients; empty ones give empty arrays."""
    check_grad(fn, np.array(0.7), np.array(-1.3))
    with lampy.Scope():
        x, y = lampy.param(np.zeros((0, 3))), lampy.param(np.zeros((2, 1, 1)))
        out = fn(x, y)
        assert out.shape == (2, 0, 3)
        out.sum().backward()
        assert x.grad is not None and x.grad.shape == (0, 3)
        np.testing.assert_array_equal(y.grad, np.zeros((2, 1, 1)))


@pytest.mark.parametrize(
    ("fn", "name"),
    [*((f, f.__name__) for f in DIFFERENTIABLE), (lambda a, b: where(True, a, b), "where")],
    ids=[*ids, "where"],
)
def test_shape_mismatch_records_nothing(fn: Callable[..., Any], name: str) -> None:
    """Shapes that do not broadcast raise a ShapeError naming the op and both shapes."""
    with lampy.Scope() as s:
        a, b = lampy.param(np.ones((2, 3))), lampy.param(np.ones(4))
        before = len(s)
        with pytest.raises(lampy.ShapeError, match=rf"^{name}: shapes .*\(2, 3\) and \(4,\)"):
            fn(a, b)
        assert len(s) == before


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=ids)
def test_integer_inputs_give_a_constant(fn: Callable[..., Any]) -> None:
    """Integer constants give numpy's result as a constant with no closures."""
    with lampy.Scope():
        out = fn(lampy.const([1, 2]), lampy.const([3, 0]))
        np.testing.assert_array_equal(out.value, getattr(np, fn.__name__)([1, 2], [3, 0]))
        assert not out.needs_grad


# ------------------------------------------------------------------------ where


def test_where_routes_the_gradient_by_condition() -> None:
    """dx is g where the condition holds, dy is g elsewhere, exactly."""
    cond = np.array([True, False, True])
    _, gx, gy = _grads(lambda x, y: where(cond, x, y) * 3.0, [1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(gx, [3.0, 0.0, 3.0])
    np.testing.assert_array_equal(gy, [0.0, 3.0, 0.0])


def test_where_condition_broadcasts_beyond_x_and_y() -> None:
    """A (2, 3) condition with (3,) x and 0-d y gives (2, 3); gradients sum back."""
    cond = np.array([[True, False, True], [False, False, True]])
    with lampy.Scope():
        x, y = lampy.param([1.0, 2.0, 3.0]), lampy.param(0.5)
        out = where(cond, x, y)
        np.testing.assert_array_equal(out.value, np.where(cond, [1.0, 2.0, 3.0], 0.5))
        out.sum().backward()
        np.testing.assert_array_equal(x.grad, [1.0, 0.0, 2.0])
        np.testing.assert_array_equal(y.grad, 3.0)


@pytest.mark.parametrize(
    "condition",
    [
        [1, 0, 2],  # integer list: truth values
        np.array([0.5, 0.0, -1.0]),  # float array: nonzero is True
        "variable",
    ],
)
def test_where_condition_kinds(condition: Any) -> None:
    """The condition may be a list, any dtype (truth value) or a Variable, as in numpy."""
    with lampy.Scope():
        c = lampy.param([1.0, 0.0, 1.0]) if isinstance(condition, str) else condition
        x, y = lampy.param([1.0, 2.0, 3.0]), lampy.param([4.0, 5.0, 6.0])
        out = where(c, x, y)
        np.testing.assert_array_equal(out.value, [1.0, 5.0, 3.0])
        out.sum().backward()
        np.testing.assert_array_equal(x.grad, [1.0, 0.0, 1.0])
        if isinstance(c, lampy.Variable):
            assert c.grad is None, "the condition carries no gradient"


@pytest.mark.parametrize("shape", [(), (3,)])
def test_where_python_scalars_keep_float32(shape: tuple[int, ...]) -> None:
    """where(c, x, 0.0) and where(c, 0.0, x) keep a float32 x float32, also for 0-d."""
    with lampy.Scope():
        x = lampy.param(np.ones(shape, np.float32))
        c = np.ones(shape, bool)
        for out in (where(c, x, 0.0), where(c, 0.0, x)):
            assert out.dtype == np.float32
            out.sum().backward()
        assert x.grad is not None and x.grad.dtype == np.float32
        np.testing.assert_array_equal(x.grad, np.ones(shape))


def test_where_dtypes_follow_numpy() -> None:
    """Mixed float32/float64 and integer operands promote as numpy; gradients keep dtypes."""
    with lampy.Scope():
        x = lampy.param(np.ones(2, np.float32))
        y = lampy.param(np.zeros(2, np.float64))
        out = where([True, False], x, y)
        assert out.dtype == np.float64
        out.sum().backward()
        assert x.grad is not None and x.grad.dtype == np.float32
        assert y.grad is not None and y.grad.dtype == np.float64
        assert (
            where([True, False], np.arange(2), x).dtype
            == np.where([True, False], np.arange(2), np.ones(2, np.float32)).dtype
        )


def test_where_same_variable_on_both_sides() -> None:
    """where(c, x, x) is x: the gradient is exactly 1 everywhere."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        where([True, False], x, x).sum().backward()
        np.testing.assert_array_equal(x.grad, [1.0, 1.0])


def test_where_selects_rather_than_multiplies_the_gradient() -> None:
    """A nan in g at positions where y was selected does not reach x (no ``g * mask``)."""
    with lampy.Scope():
        x, y = lampy.param([1.0, 2.0]), lampy.param([3.0, 4.0])
        (where([True, False], x, y) * np.array([2.0, nan])).sum().backward()
        np.testing.assert_array_equal(x.grad, [2.0, 0.0])
        np.testing.assert_array_equal(y.grad, [0.0, nan])


def test_where_shape_mismatch_names_three_shapes() -> None:
    """A condition that does not broadcast with x and y is reported with all shapes."""
    with (
        lampy.Scope(),
        pytest.raises(lampy.ShapeError, match=r"where: shapes \(4,\) and \(3,\) and \(\)"),
    ):
        where(np.ones(4, bool), lampy.param(np.ones(3)), 0.0)
