"""Gradients of binary ops whose other operand is a small integer or bool constant.

numpy computes on such constants in their own dtype (``int8 * int8`` wraps) and gives
float16 for their transcendental functions (``log(int8)``); a gradient formula applied
to the constant must not inherit either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad

X = np.array([0.7, 1.3, -2.2])

BINARY: dict[str, Callable[..., Any]] = {
    "add": lampy.add,
    "subtract": lampy.subtract,
    "multiply": lampy.multiply,
    "divide": lampy.divide,
    "power": lampy.power,
    "remainder": lampy.remainder,
    "maximum": lampy.maximum,
    "minimum": lampy.minimum,
    "fmax": lampy.fmax,
    "fmin": lampy.fmin,
    "arctan2": lampy.arctan2,
    "hypot": lampy.hypot,
    "logaddexp": lampy.logaddexp,
    "logaddexp2": lampy.logaddexp2,
}


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64])
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("constant_first", [True, False])
def test_gradient_next_to_a_small_integer_constant(
    name: str, dtype: Any, constant_first: bool
) -> None:
    """The gradient of the float operand matches central differences whatever the
    integer dtype of the other operand (100 squares past int8, log(int8) is float16)."""
    fn = BINARY[name]
    c = np.array([100, 3, 1], dtype)
    if constant_first:
        check_grad(lambda x: fn(c, x), X)
    else:
        check_grad(lambda x: fn(x, c), X)


def test_arctan2_gradient_next_to_int8_equals_the_float_one() -> None:
    """arctan2 with an int8 constant differentiates as with the same values in float64:
    x2 / (x1**2 + x2**2) is not computed with 100**2 wrapped around in int8."""
    c = np.array([100, -100, 12], np.int8)
    grads = []
    for const in (c, c.astype(np.float64)):
        with lampy.Scope():
            x = lampy.param(np.array([0.5, 2.0, -3.0]))
            lampy.backward(lampy.sum(lampy.arctan2(const, x)))
            grads.append(x.grad.copy())
    expected = -c.astype(np.float64) / (c.astype(np.float64) ** 2 + np.array([0.5, 2.0, -3.0]) ** 2)
    np.testing.assert_allclose(grads[0], expected, rtol=1e-12)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("base", [np.array([3, 5], np.int8), np.array([True, True])])
def test_power_exponent_gradient_uses_a_float64_log_of_the_base(base: np.ndarray) -> None:
    """d(base**x)/dx = base**x * log(base), with log(base) in the result's dtype
    (numpy's log of an int8 or bool array is float16, 3 decimal digits)."""
    x0 = np.array([1.5, 2.5])
    with lampy.Scope():
        x = lampy.param(x0)
        lampy.backward(lampy.sum(lampy.power(base, x)))
        got = x.grad.copy()
    b = base.astype(np.float64)
    np.testing.assert_allclose(got, b**x0 * np.log(b), rtol=1e-13, atol=1e-15)
