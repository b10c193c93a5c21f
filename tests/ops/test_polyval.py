"""polyval: values and gradients worked out by hand, empty coefficients, 0-d x, a list of
Variables as coefficients, numpy's dtypes, and its error."""

from __future__ import annotations

import numpy as np
import pytest

import lampy


def test_by_hand() -> None:
    """2x^2 - 3x + 1 at 0, 1, 2 is 1, 0, 3; dx = 4x - 3; dp = (sum x^2, sum x, count)."""
    with lampy.Scope():
        p, x = lampy.param([2.0, -3.0, 1.0]), lampy.param([0.0, 1.0, 2.0])
        y = lampy.polyval(p, x)
        assert y.value.tolist() == [1.0, 0.0, 3.0]
        y.sum().backward()
        assert x.grad.tolist() == [-3.0, 1.0, 5.0]
        assert p.grad.tolist() == [5.0, 3.0, 3.0]


def test_empty_coefficients_and_0d_x() -> None:
    """No coefficients give zeros (numpy's value) and zero gradients; a 0-d x a 0-d
    value; coefficients may be a list holding Variables."""
    with lampy.Scope():
        x = lampy.param([1.5, -2.0])
        y = lampy.polyval(np.zeros(0), x)
        np.testing.assert_array_equal(y.value, np.polyval(np.zeros(0), x.value))
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]
        a, c = lampy.param(3.0), lampy.param(0.5)
        z = lampy.param(2.0)
        r = lampy.polyval([a, 1.0, c], z)  # 3 z^2 + z + 0.5
        assert r.shape == ()
        assert r.value == 14.5
        r.backward()
        assert (a.grad, c.grad, z.grad) == (4.0, 1.0, 13.0)


def test_dtypes_follow_numpy() -> None:
    """float32 coefficients and x stay float32; float64 coefficients promote, as numpy;
    gradients keep their inputs' dtypes."""
    x32 = np.array([1.0, 2.0], np.float32)
    with lampy.Scope():
        x = lampy.param(x32)
        y = lampy.polyval(np.array([1.0, 2.0], np.float32), x)
        assert y.dtype == np.float32
        z = lampy.polyval(np.array([1.0, 2.0]), x)
        assert z.dtype == np.polyval(np.array([1.0, 2.0]), x32).dtype
        (y.sum() + z.sum().astype(np.float32)).backward()
        assert x.grad.dtype == np.float32
        assert x.grad.tolist() == [2.0, 2.0]


def test_p_must_be_1d() -> None:
    """A 0-d or 2-d p is a ShapeError naming the op."""
    with lampy.Scope():
        with pytest.raises(lampy.ShapeError, match="polyval: p must be 1-d"):
            lampy.polyval(np.ones((2, 2)), lampy.param([1.0]))
        with pytest.raises(lampy.ShapeError, match="polyval: p must be 1-d"):
            lampy.polyval(2.0, lampy.param([1.0]))
