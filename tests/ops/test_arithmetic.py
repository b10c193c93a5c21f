"""Arithmetic: dtype promotion, conventions at awkward points, errors."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad


@pytest.mark.parametrize("shape", [(), (3,)])
@pytest.mark.parametrize(
    "expr",
    [
        lambda x: x * 2.0,
        lambda x: 2.0 * x,
        lambda x: x + 1,
        lambda x: 1 - x,
        lambda x: x / 3.0,
        lambda x: 3.0 / x,
        lambda x: x**2.0,
        lambda x: 2.0**x,
    ],
)
def test_python_number_keeps_float32(shape: tuple[int, ...], expr: object) -> None:
    """A Python int or float never turns float32 into float64, also for 0-d values."""
    with lampy.Scope():
        x = lampy.param(np.ones(shape, np.float32))
        y = expr(x)  # type: ignore[operator]
        assert y.dtype == np.float32
        y.sum().backward()
        assert x.grad is not None and x.grad.dtype == np.float32


def test_mixed_dtypes_promote_like_numpy() -> None:
    """float32 with float64 gives float64; each gradient keeps its input's dtype."""
    with lampy.Scope():
        a = lampy.param(np.ones(3, np.float32))
        b = lampy.param(np.ones(3, np.float64))
        y = a * b
        assert y.dtype == np.float64
        y.sum().backward()
        assert a.grad is not None and a.grad.dtype == np.float32
        assert b.grad is not None and b.grad.dtype == np.float64


def test_integer_constant_with_float_param() -> None:
    """An integer constant promotes with a float param as in numpy and gets no gradient."""
    with lampy.Scope():
        k = lampy.const(np.arange(3))
        x = lampy.param(np.ones(3, np.float32))
        y = k * x
        assert y.dtype == (np.arange(3) * np.ones(3, np.float32)).dtype
        y.sum().backward()
        np.testing.assert_array_equal(x.grad, [0.0, 1.0, 2.0])
        assert k.grad is None and not k.needs_grad


def test_integer_only_arithmetic_is_constant() -> None:
    """Ops on integer constants give integer constants with no recorded closures."""
    with lampy.Scope():
        y = lampy.const([1, 2]) + lampy.const([3, 4])
        assert y.dtype.kind == "i" and not y.needs_grad
        assert y.op is not None and y.op.params == ()


@pytest.mark.parametrize(
    "fn", [lampy.add, lampy.subtract, lampy.multiply, lampy.divide, lampy.power]
)
def test_shape_mismatch_names_op_and_shapes(fn: object) -> None:
    """Incompatible shapes raise a ValueError naming the op and both shapes."""
    with lampy.Scope() as s:
        a, b = lampy.param(np.ones((2, 3))), lampy.param(np.ones((4,)))
        before = len(s)
        with pytest.raises(ValueError, match=rf"{fn.__name__}: shapes \(2, 3\) and \(4,\)"):  # type: ignore[attr-defined]
            fn(a, b)  # type: ignore[operator]
        assert len(s) == before, "a failed op must record nothing"


def test_power_gradient_at_zero_base() -> None:
    """x**y at x = 0: d/dx follows y*x**(y-1) (0 for y=0), d/dy is 0 for y >= 0."""
    with lampy.Scope():
        x = lampy.param([0.0, 0.0, 0.0])
        y = lampy.param([0.0, 1.0, 2.0])
        (x**y).sum().backward()
        np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0])
        np.testing.assert_array_equal(y.grad, [0.0, 0.0, 0.0])


def test_power_negative_base_integer_exponent() -> None:
    """A negative base with a constant integer exponent differentiates like a polynomial."""
    check_grad(lambda x: x**3, np.array([-2.0, -0.5, 1.5]))
    check_grad(lambda x: x**-2, np.array([-2.0, -0.5, 1.5]))


def test_log_of_negative_follows_numpy() -> None:
    """log(-1) is nan with numpy's RuntimeWarning; backward raises nothing."""
    with lampy.Scope():
        x = lampy.param([-1.0, 0.0, 1.0])
        with pytest.warns(RuntimeWarning):
            y = lampy.log(x)
        np.testing.assert_array_equal(np.isnan(y.value), [True, False, False])
        assert np.isneginf(y.value[1])
        with np.errstate(all="raise"):
            y.sum().backward()
        assert x.grad is not None
        assert np.isinf(x.grad[1]) and x.grad[2] == 1.0


def test_division_by_zero_gradient_is_inf_not_error() -> None:
    """Dividing by a zero param gives inf values and inf/nan gradients, never an exception."""
    with lampy.Scope():
        x = lampy.param([1.0])
        z = lampy.param([0.0])
        with pytest.warns(RuntimeWarning):
            y = x / z
        with np.errstate(all="raise"):
            y.sum().backward()
        assert np.isinf(x.grad[0])  # type: ignore[index]


def test_variable_used_many_times_in_one_expression() -> None:
    """x*x*x + x/x - x accumulates every use: gradient 3x^2 - 1."""
    a = np.array([0.5, -1.5, 2.0])
    check_grad(lambda x: x * x * x + x / x - x, a)
    with lampy.Scope():
        x = lampy.param(a)
        (x * x * x + x / x - x).sum().backward()
        np.testing.assert_allclose(x.grad, 3 * a**2 - 1)


def test_numpy_array_on_the_left() -> None:
    """ndarray (op) Variable dispatches to the Variable and differentiates it."""
    a = np.array([1.0, 2.0])
    with lampy.Scope():
        x = lampy.param([3.0, 4.0])
        for y in (a + x, a - x, a * x, a / x, a**x, a @ x):
            assert isinstance(y, lampy.Variable)
        (a * x).sum().backward()
        np.testing.assert_array_equal(x.grad, a)
