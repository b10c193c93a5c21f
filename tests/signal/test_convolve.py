"""lampy.signal.convolve beyond the op table: scipy's errors as lampy's, 0-d operands,
and the gradient of one operand alone. (Values and gradients: tests/ops/table_signal.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

import lampy
from lampy.testing import check_grad


def test_bad_arguments_raise_lampy_errors() -> None:
    """Different numbers of dimensions, empty operands, shapes "valid" cannot take, and
    an unknown mode or method raise errors naming lampy.signal.convolve."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3)))
        with pytest.raises(lampy.ShapeError, match=r"signal\.convolve.*same number"):
            lampy.signal.convolve(x, np.ones(3))
        with pytest.raises(lampy.ShapeError, match="length 0"):
            lampy.signal.convolve(x, np.ones((0, 2)))
        with pytest.raises(lampy.ShapeError, match=r"signal\.convolve"):
            lampy.signal.convolve(x, np.ones((3, 2)), mode="valid")
        with pytest.raises(lampy.LampyValueError, match="mode"):
            lampy.signal.convolve(x, x, mode="circular")
        with pytest.raises(lampy.LampyValueError, match="method"):
            lampy.signal.convolve(x, x, method="winograd")


def test_zero_d_operands_multiply() -> None:
    """Two 0-d operands convolve to their product, as scipy's, with its gradients."""
    check_grad(lampy.signal.convolve, np.array(2.0), np.array(-3.0))
    with lampy.Scope():
        assert lampy.signal.convolve(np.array(2.0), np.array(-3.0)).value == -6.0


def test_gradient_of_one_operand_and_float32() -> None:
    """With a constant kernel only the signal gets a gradient; float32 stays float32."""
    rng = np.random.default_rng(0)
    img = rng.normal(size=(6, 5)).astype(np.float32)
    kernel = rng.normal(size=(3, 3)).astype(np.float32)
    with lampy.Scope():
        x = lampy.param(img)
        out = lampy.signal.convolve(x, kernel, mode="same")
        assert out.dtype == np.float32
        np.testing.assert_allclose(out.value, scipy.signal.convolve(img, kernel, mode="same"))
        out.sum().backward()
        assert x.grad.dtype == np.float32
        g_full = np.zeros((8, 7), np.float32)
        g_full[1:7, 1:6] = 1  # the "same" window of the full result
        expected = scipy.signal.correlate(g_full, kernel, mode="valid")
        np.testing.assert_allclose(x.grad, expected, rtol=1e-5)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(("sa", "sb"), [((5,), (3,)), ((3,), (5,)), ((4, 3), (2, 2)), ((), ())])
def test_second_derivatives_in_every_mode(
    mode: str, sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    """The recorded gradient (a convolution with the other operand reversed, of g padded
    to its place in the full result) differentiates again like central differences."""
    rng = np.random.default_rng(len(sa) + len(sb))
    check_grad(
        lambda a, b: lampy.signal.convolve(a, b, mode),
        rng.normal(size=sa),
        rng.normal(size=sb),
        order=2,
    )
