"""convolve and correlate: values and gradients worked out by hand, numpy's windows for
every pair of lengths and mode (either operand the longer), 0-d, float32, errors."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad


def test_convolve_by_hand() -> None:
    """[1, 2, 3] * [0, 1, 0.5] is [0, 1, 2.5, 4, 1.5]; the gradient of its sum is the
    sum of the other operand at every position."""
    with lampy.Scope():
        a, v = lampy.param([1.0, 2.0, 3.0]), lampy.param([0.0, 1.0, 0.5])
        y = lampy.convolve(a, v)
        assert y.value.tolist() == [0.0, 1.0, 2.5, 4.0, 1.5]
        y.sum().backward()
        assert a.grad.tolist() == [1.5, 1.5, 1.5]
        assert v.grad.tolist() == [6.0, 6.0, 6.0]


def test_correlate_by_hand() -> None:
    """correlate([1, 2, 3], [0, 1, 0.5]) keeps the one full overlap, 1*0 + 2*1 + 3*0.5;
    in 'same' mode a weighted sum checks which window each output uses."""
    with lampy.Scope():
        a, v = lampy.param([1.0, 2.0, 3.0]), lampy.param([0.0, 1.0, 0.5])
        y = lampy.correlate(a, v)
        assert y.value.tolist() == [3.5]
        y.sum().backward()
        assert a.grad.tolist() == [0.0, 1.0, 0.5]
        assert v.grad.tolist() == [1.0, 2.0, 3.0]
        a.zero_grad()
        v.zero_grad()
        # same: c[k] = sum_n a[n + k - 1] v[n]: c0 = a0 v1 + a1 v2,
        # c1 = a0 v0 + a1 v1 + a2 v2, c2 = a1 v0 + a2 v1
        s = lampy.correlate(a, v, "same")
        assert s.value.tolist() == [2.0, 3.5, 3.0]
        (s * np.array([1.0, 10.0, 100.0])).sum().backward()
        assert a.grad.tolist() == [1.0, 10.5, 105.0]  # a0: v1 + 10 v0; a1: v2 + 10 v1...
        assert v.grad.tolist() == [210.0, 321.0, 32.0]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid", 0, 1, 2])
def test_every_length_pair_matches_numpy(name: str, mode: object) -> None:
    """For lengths 1 to 5 of each operand, the value is numpy's and the gradients match
    finite differences, whichever operand is longer; numpy's integer modes work."""
    fn, ref = getattr(lampy, name), getattr(np, name)
    rng = np.random.default_rng(7)
    for n in range(1, 6):
        for m in range(1, 6):
            a, v = rng.normal(size=n), rng.normal(size=m)
            with lampy.Scope():
                y = fn(lampy.param(a), lampy.param(v), mode)
                np.testing.assert_allclose(y.value, ref(a, v, mode), rtol=1e-13, atol=1e-15)
            check_grad(lambda x, w: fn(x, w, mode), a, v)


def test_zero_d_float32_and_constants() -> None:
    """convolve takes numbers as length-1 sequences (numpy's ndmin=1); float32 stays
    float32; a constant operand gets no gradient while the Variable does."""
    with lampy.Scope():
        s = lampy.param(2.0)
        y = lampy.convolve(s, [1.0, 3.0])
        assert y.value.tolist() == [2.0, 6.0]
        y.sum().backward()
        assert s.grad == 4.0
        a = lampy.param(np.array([1.0, 2.0], np.float32))
        z = lampy.correlate(a, np.array([1.0, -1.0], np.float32), "full")
        assert z.dtype == np.float32
        z.sum().backward()
        assert a.grad.dtype == np.float32
        assert a.grad.tolist() == [0.0, 0.0]


def test_errors() -> None:
    """Empty, n-d, 0-d (correlate, as numpy) operands and unknown modes are refused,
    naming the op."""
    with lampy.Scope():
        a = lampy.param([1.0, 2.0])
        with pytest.raises(lampy.ShapeError, match="convolve: v is empty"):
            lampy.convolve(a, [])
        with pytest.raises(lampy.ShapeError, match="correlate: a must be 1-d"):
            lampy.correlate(np.ones((2, 2)), a)
        with pytest.raises(lampy.ShapeError, match="correlate: a must be 1-d"):
            lampy.correlate(2.0, a)
        with pytest.raises(lampy.LampyValueError, match="mode='wide'"):
            lampy.convolve(a, a, "wide")
        with pytest.raises(lampy.LampyValueError, match="mode=3"):
            lampy.convolve(a, a, 3)
        with pytest.raises(lampy.LampyValueError, match="mode='FULL'"):
            lampy.correlate(a, a, "FULL")  # numpy takes lower-case names only
