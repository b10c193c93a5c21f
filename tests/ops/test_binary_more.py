"""remainder (mod) and select: numpy's values and signs, the conventions at remainder's
jumps and at a zero divisor, select's first-true rule, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy._errors import DTypeError, LampyValueError, ShapeError
from lampy.ops._arithmetic import mod, remainder
from lampy.ops._where import select
from lampy.testing import check_grad

X1 = np.array([5.5, -5.5, 5.5, -5.5, 0.25, 7.0])
X2 = np.array([2.0, 2.0, -2.0, -2.0, 0.75, 3.5])


def test_remainder_has_numpys_values_and_the_divisors_sign() -> None:
    """The result has the sign of x2 (Python's %), as numpy.remainder; mod is the same
    function."""
    assert mod is remainder
    with lampy.Scope():
        y = remainder(lampy.param(X1), X2)
        np.testing.assert_array_equal(y.value, np.remainder(X1, X2))
        np.testing.assert_array_equal(y.value, [a % b for a, b in zip(X1, X2, strict=True)])


def test_remainder_gradient_is_exact() -> None:
    """dx1 = g and dx2 = -g * floor_divide(x1, x2); at a jump (x1 / x2 an integer, here
    7 / 3.5) the quotient is that integer."""
    with lampy.Scope():
        x1, x2 = lampy.param(X1), lampy.param(X2)
        remainder(x1, x2).sum().backward()
        np.testing.assert_array_equal(x1.grad, np.ones(6))
        np.testing.assert_array_equal(x2.grad, -np.floor_divide(X1, X2))
        assert x2.grad[-1] == -2.0


def test_remainder_by_zero() -> None:
    """x2 = 0 gives numpy's nan (and its RuntimeWarning); x1 still gets g."""
    with lampy.Scope():
        x1 = lampy.param([1.0])
        with pytest.warns(RuntimeWarning):
            y = remainder(x1, 0.0)
        assert np.isnan(y.value[0])
        y.sum().backward()
        assert x1.grad[0] == 1.0


def test_remainder_dtypes() -> None:
    """float32 stays float32 next to a Python number, with float32 gradients; integer
    operands give numpy's integer result, a constant; complex is refused by numpy's
    ufunc as a DTypeError."""
    check_grad(lambda a: remainder(a, 1.5), np.array([0.4, -2.2], np.float32))
    check_grad(lambda b: remainder(3.3, b), np.array([1.5, -2.0], np.float32))
    with lampy.Scope():
        assert remainder(lampy.param(np.float32([2.5])), 2.0).dtype == np.float32
        ints = remainder(np.array([7, -7]), 3)
        np.testing.assert_array_equal(ints.value, [1, 2])
        assert not ints.needs_grad
        with pytest.raises(DTypeError, match="remainder: "):
            remainder(lampy.param([1.0]), 1j)


# ---------------------------------------------------------------------------- select
def test_select_takes_the_first_true_condition() -> None:
    """Where several conditions hold the first one wins; where none holds, default; the
    gradients follow the same choice, each summed back over its broadcast axes."""
    c1 = np.array([True, False, True, False])
    c2 = np.array([True, True, False, False])
    with lampy.Scope():
        a, b = lampy.param([1.0, 2.0, 3.0, 4.0]), lampy.param(10.0)
        d = lampy.param([-1.0, -2.0, -3.0, -4.0])
        y = select([c1, c2], [a, b], d)
        np.testing.assert_array_equal(y.value, [1.0, 10.0, 3.0, -4.0])
        y.backward(np.array([1.0, 2.0, 3.0, 4.0]))
        np.testing.assert_array_equal(a.grad, [1.0, 0.0, 3.0, 0.0])
        assert b.grad == 2.0
        np.testing.assert_array_equal(d.grad, [0.0, 0.0, 0.0, 4.0])


def test_select_default_and_dtypes() -> None:
    """The default 0 keeps a float32 choice float32; numbers among the choices are
    constants; the value is numpy's."""
    c = [np.array([True, False])]
    with lampy.Scope():
        x = lampy.param(np.float32([1.0, 2.0]))
        y = select(c, [x])
        assert y.dtype == np.select(c, [x.value]).dtype == np.float32
        np.testing.assert_array_equal(y.value, [1.0, 0.0])
        z = select([np.array([False, True])], [5.0], x)
        np.testing.assert_array_equal(z.value, [1.0, 5.0])


def test_select_errors() -> None:
    """Mismatched or empty lists, non-boolean conditions and shapes that do not
    broadcast raise before anything is recorded."""
    with lampy.Scope() as scope:
        x = lampy.param([1.0, 2.0])
        with pytest.raises(LampyValueError, match="select: condlist has 1 conditions but"):
            select([np.array([True, False])], [x, x])
        with pytest.raises(LampyValueError, match="select: condlist is empty"):
            select([], [])
        with pytest.raises(DTypeError, match="select: condition 0 has dtype int64"):
            select([np.array([1, 0])], [x])
        with pytest.raises(ShapeError, match="select: the conditions, choices and default"):
            select([np.array([True, False, True])], [x])
        assert len(scope) == 1
