"""interp: the gradients at knots, outside the range, for left/right, with a period,
one sample point, nan x, float32 and 0-d inputs, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad

XP = [0.0, 1.0, 3.0]  # segment slopes with FP: 2 on [0, 1], 0.5 on [1, 3]
FP = [0.0, 2.0, 3.0]
X = [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0]


def test_gradients_at_knots_and_outside() -> None:
    """dx is the slope of the segment right of a knot (the last one at xp[-1]) and 0
    outside; fp and xp get the interpolation weights (worked out by hand)."""
    with lampy.Scope():
        x, xp, fp = lampy.param(X), lampy.param(XP), lampy.param(FP)
        y = lampy.interp(x, xp, fp)
        np.testing.assert_array_equal(y.value, np.interp(X, XP, FP))
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 2.0, 2.0, 0.5, 0.5, 0.5, 0.0]
        assert fp.grad.tolist() == [2.5, 2.0, 2.5]
        assert xp.grad.tolist() == [-3.0, -1.75, -0.75]


def test_left_and_right() -> None:
    """Given left/right take the clamped values and their gradients; fp[0] and fp[-1]
    then get nothing from outside the range."""
    with lampy.Scope():
        fp, left, right = lampy.param(FP), lampy.param(-5.0), lampy.param(7.0)
        y = lampy.interp([-2.0, -1.0, 0.5, 9.0], XP, fp, left, right)
        np.testing.assert_array_equal(y.value, np.interp([-2.0, -1.0, 0.5, 9.0], XP, FP, -5, 7))
        y.sum().backward()
        assert left.grad == 2.0
        assert right.grad == 1.0
        assert fp.grad.tolist() == [0.5, 0.5, 0.0]


def test_period() -> None:
    """With a period, x and xp wrap (xp in any order), as numpy; gradients match finite
    differences, and left/right are ignored (gradient 0)."""
    xp = np.array([190.0, -190.0, 350.0, -350.0])
    fp = np.array([5.0, 10.0, 3.0, 4.0])
    x = np.array([-180.0, -170.0, -185.0, 185.0, -10.0, -5.0, 0.0, 365.0, 10.0])
    with lampy.Scope():
        left = lampy.param(1.0)
        y = lampy.interp(x, xp, fp, left=left, period=360)
        np.testing.assert_allclose(y.value, np.interp(x, xp, fp, period=360), rtol=1e-14)
        y.sum().backward()
        assert left.grad == 0.0
    check_grad(lambda a, b, c: lampy.interp(a, b, c, period=-360), x + 0.3, xp, fp)


def test_one_sample_point_nan_x_and_0d() -> None:
    """One sample point gives fp[0] (left/right outside); a nan x gives nan with
    gradient 0 and sends nothing to fp; a 0-d x gives a 0-d result."""
    with lampy.Scope():
        x, fp = lampy.param([-1.0, 2.0, 3.0, np.nan]), lampy.param([4.0])
        y = lampy.interp(x, [2.0], fp, right=9.0)
        np.testing.assert_array_equal(y.value, np.interp(x.value, [2.0], [4.0], right=9.0))
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0, 0.0]
        assert fp.grad.tolist() == [2.0]
        z = lampy.param(0.5)
        r = lampy.interp(z, XP, FP)
        assert r.shape == ()
        r.backward()
        assert z.grad == 2.0


def test_float32_gives_numpy_float64() -> None:
    """float32 inputs give numpy's float64 value and float32 gradients."""
    a = np.array([0.25, 2.0], np.float32)
    with lampy.Scope():
        x = lampy.param(a)
        fp = lampy.param(np.array(FP, np.float32))
        y = lampy.interp(x, np.array(XP, np.float32), fp)
        assert y.dtype == np.interp(a, XP, FP).dtype == np.float64
        y.sum().backward()
        assert x.grad.dtype == fp.grad.dtype == np.float32
        assert x.grad.tolist() == [2.0, 0.5]


def test_errors() -> None:
    """Sample points that are not 1-d, of different lengths or empty, a non-scalar
    left and a zero period are refused, naming the op."""
    with lampy.Scope():
        x = lampy.param([0.5])
        with pytest.raises(lampy.ShapeError, match="interp: xp and fp must be 1-d"):
            lampy.interp(x, [[0.0, 1.0]], [[0.0, 1.0]])
        with pytest.raises(lampy.ShapeError, match="one length"):
            lampy.interp(x, [0.0, 1.0], [0.0, 1.0, 2.0])
        with pytest.raises(lampy.ShapeError, match="empty"):
            lampy.interp(x, [], [])
        with pytest.raises(lampy.ShapeError, match="left must be a number"):
            lampy.interp(x, XP, FP, left=[1.0, 2.0])
        with pytest.raises(lampy.LampyValueError, match="period"):
            lampy.interp(x, XP, FP, period=0)
