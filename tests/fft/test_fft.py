"""lampy.fft: values against numpy.fft, gradients against finite differences in the
real and imaginary parts (PyTorch's convention), for drawn shapes, lengths, axes and
norms; real inputs of complex transforms, float32, second order, and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy import fft
from lampy.testing import check_grad
from lampy.testing import strategies as ls

NORMS = [None, "backward", "ortho", "forward"]


@st.composite
def signals(draw: st.DrawFn, complex_: bool, min_dims: int = 1) -> np.ndarray:
    a = draw(ls.arrays(ls.shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=5)))
    return draw(ls.complexified(a)) if complex_ else a


def _check(lampy_fn: Callable[..., Any], numpy_fn: Callable[..., Any], x: np.ndarray) -> None:
    expected = numpy_fn(x)
    with lampy.Scope():
        out = lampy_fn(lampy.param(x))
        assert out.shape == expected.shape
        assert out.dtype == expected.dtype
        np.testing.assert_allclose(out.value, expected, rtol=1e-10, atol=1e-10)
    check_grad(lampy_fn, x)


@settings(max_examples=15)
@given(
    data=st.data(),
    name=st.sampled_from(["fft", "ifft"]),
    complex_=st.booleans(),
    norm=st.sampled_from(NORMS),
)
def test_one_dimensional_complex_transforms(
    data: st.DataObject, name: str, complex_: bool, norm: str | None
) -> None:
    """fft and ifft with drawn n (padding and cutting) and axis, complex and real inputs."""
    x = data.draw(signals(complex_))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = data.draw(st.none() | st.integers(1, 7))
    f, ref = getattr(fft, name), getattr(np.fft, name)
    _check(
        lambda v: f(v, n=n, axis=axis, norm=norm), lambda a: ref(a, n=n, axis=axis, norm=norm), x
    )


@settings(max_examples=15)
@given(
    data=st.data(),
    name=st.sampled_from(["fft2", "ifft2", "fftn", "ifftn"]),
    complex_=st.booleans(),
    norm=st.sampled_from(NORMS),
)
def test_multi_dimensional_complex_transforms(
    data: st.DataObject, name: str, complex_: bool, norm: str | None
) -> None:
    """fft2, ifft2, fftn, ifftn with drawn axes (in any order) and lengths s."""
    x = data.draw(signals(complex_, min_dims=2))
    k = 2 if name.endswith("2") else data.draw(st.integers(1, x.ndim))
    axes = tuple(data.draw(st.permutations(range(x.ndim)))[:k])
    s = data.draw(st.none() | st.tuples(*[st.integers(1, 6)] * k))
    f, ref = getattr(fft, name), getattr(np.fft, name)
    _check(
        lambda v: f(v, s=s, axes=axes, norm=norm), lambda a: ref(a, s=s, axes=axes, norm=norm), x
    )


@settings(max_examples=15)
@given(
    data=st.data(), name=st.sampled_from(["rfft", "rfft2", "rfftn"]), norm=st.sampled_from(NORMS)
)
def test_real_forward_transforms(data: st.DataObject, name: str, norm: str | None) -> None:
    """rfft, rfft2, rfftn of real inputs: numpy's half spectrum; the gradient is the real
    part of the adjoint of the full transform."""
    x = data.draw(signals(False, min_dims=2 if name != "rfft" else 1))
    f, ref = getattr(fft, name), getattr(np.fft, name)
    if name == "rfft":
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        n = data.draw(st.none() | st.integers(1, 7))
        _check(lambda v: f(v, n, axis, norm), lambda a: ref(a, n, axis, norm), x)
        return
    k = 2 if name == "rfft2" else data.draw(st.integers(1, x.ndim))
    axes = tuple(data.draw(st.permutations(range(x.ndim)))[:k])
    s = data.draw(st.none() | st.tuples(*[st.integers(1, 6)] * k))
    _check(lambda v: f(v, s, axes, norm), lambda a: ref(a, s, axes, norm), x)


@settings(max_examples=15)
@given(
    data=st.data(), name=st.sampled_from(["irfft", "irfft2", "irfftn"]), norm=st.sampled_from(NORMS)
)
def test_real_inverse_transforms(data: st.DataObject, name: str, norm: str | None) -> None:
    """irfft, irfft2, irfftn of complex half spectra (the zero and Nyquist bins' imaginary
    parts ignored, as numpy does): their gradients carry the half spectrum's weights."""
    x = data.draw(signals(True, min_dims=2 if name != "irfft" else 1))
    f, ref = getattr(fft, name), getattr(np.fft, name)
    if name == "irfft":
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        n = data.draw(st.integers(1, 8) if x.shape[axis] == 1 else st.none() | st.integers(1, 8))
        _check(lambda v: f(v, n, axis, norm), lambda a: ref(a, n, axis, norm), x)
        return
    k = 2 if name == "irfft2" else data.draw(st.integers(1, x.ndim))
    axes = tuple(data.draw(st.permutations(range(x.ndim)))[:k])
    s = data.draw(st.tuples(*[st.integers(1, 6)] * k))
    _check(lambda v: f(v, s, axes, norm), lambda a: ref(a, s, axes, norm), x)


@settings(max_examples=10)
@given(data=st.data(), inverse=st.booleans(), complex_=st.booleans())
def test_shifts(data: st.DataObject, inverse: bool, complex_: bool) -> None:
    """fftshift and ifftshift (rolls), for every axis or drawn ones; each undoes the other."""
    x = data.draw(signals(complex_))
    axes = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    name = "ifftshift" if inverse else "fftshift"
    f, ref = getattr(fft, name), getattr(np.fft, name)
    _check(lambda v: f(v, axes=axes), lambda a: ref(a, axes=axes), x)
    with lampy.Scope():
        back = fft.ifftshift(fft.fftshift(lampy.const(x), axes), axes)
        np.testing.assert_array_equal(back.value, x)


def test_round_trips_and_a_spectral_loss() -> None:
    """irfft(rfft(x)) is x; a spectral loss (power in some bins) has the gradient torch
    gives (values written down from torch 2.13: 2 * n * ... computed here in closed form)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=16)
    with lampy.Scope():
        v = lampy.param(x)
        np.testing.assert_allclose(fft.irfft(fft.rfft(v), n=16).value, x, atol=1e-12)
        np.testing.assert_allclose(fft.ifft(fft.fft(v)).value, x, atol=1e-12)
        power = (lampy.abs(fft.rfft(v)) ** 2).sum()
        power.backward()
        # Parseval: sum over the half spectrum of |X_k|^2 with weights; its gradient is
        # 2 * n * x minus the doubly counted bins' share, which finite differences check.
    check_grad(lambda u: (lampy.abs(fft.rfft(u)) ** 2).sum(), x)
    check_grad(lambda u: (lampy.abs(fft.fft(u)) ** 2).sum(), x)
    with lampy.Scope():
        v = lampy.param(x)
        (lampy.abs(fft.fft(v)) ** 2).sum().backward()
        np.testing.assert_allclose(v.grad, 2 * 16 * x, rtol=1e-12)  # Parseval: n * |x|^2


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "fftn", "rfftn", "irfftn"])
def test_float32_stays_single_precision(name: str) -> None:
    """float32 and complex64 inputs give complex64 (irfft: float32) values and gradients
    of their inputs' dtypes, whatever numpy version computes them."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    if name.startswith("irfft"):
        x = (x + 1j * rng.normal(size=x.shape)).astype(np.complex64)
    f = getattr(fft, name)
    with lampy.Scope():
        v = lampy.param(x)
        out = f(v)
        assert out.dtype == (np.float32 if name.startswith("irfft") else np.complex64)
        lampy.real(out * lampy.conj(out)).sum().backward()
        assert v.grad.dtype == x.dtype
    check_grad(lambda u: lampy.real(f(u)), x)


def test_second_order_through_transforms() -> None:
    """Gradients of gradients (create_graph) through the transforms and the complex parts,
    against central differences of the first-order gradients."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4))
    check_grad(lambda v: lampy.abs(fft.fft(v * v)) ** 2, x, order=2)
    check_grad(lambda v: fft.irfft(fft.rfft(v) * fft.rfft(v), n=4), x, order=2)
    check_grad(lambda v: lampy.angle(fft.fftshift(fft.fft2(lampy.tanh(v))) + 0.1), x, order=2)
    check_grad(lambda v: lampy.imag(lampy.conj(fft.rfftn(v)) * fft.rfftn(v * v)), x, order=2)


def test_errors_name_the_transform() -> None:
    """Bad arguments: errors naming the transform and what to pass instead."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3)))
        with pytest.raises(lampy.LampyValueError, match=r"fft\.fft: norm must be one of"):
            fft.fft(x, norm="unitary")
        with pytest.raises(lampy.LampyValueError, match=r"fft\.ifft: n must be at least 1"):
            fft.ifft(x, n=0)
        with pytest.raises(lampy.LampyTypeError, match=r"fft\.fft: n must be an int"):
            fft.fft(x, n=2.5)  # type: ignore[arg-type]
        with pytest.raises(lampy.ShapeError, match=r"fft\.fftn: axes=\(0, 0\) repeats"):
            fft.fftn(x, axes=(0, 0))
        with pytest.raises(lampy.ShapeError, match=r"fft\.fft2: s=\(2,\) and axes"):
            fft.fft2(x, s=(2,))
        with pytest.raises(lampy.ShapeError, match=r"fft\.fft: the input is 0-d"):
            fft.fft(lampy.param(1.0))
        with pytest.raises(lampy.ShapeError, match=r"fft\.fft: axes"):
            fft.fft(x, axis=2)
        with pytest.raises(lampy.ShapeError, match=r"fft\.fft: "):
            fft.fft(lampy.param(np.ones((2, 0))))
        with pytest.raises(lampy.DTypeError, match=r"fft\.rfft: the input is complex"):
            fft.rfft(x * 1j)
        with pytest.raises(lampy.ShapeError, match=r"fft\.irfft: a half spectrum of length 1"):
            fft.irfft(lampy.param(np.ones(1)))
