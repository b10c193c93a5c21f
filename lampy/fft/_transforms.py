"""Discrete Fourier transforms with gradients, as ``numpy.fft``: the complex transforms
(``fft``, ``ifft`` and their 2-d and n-d forms), the real ones (``rfft``, ``irfft``...)
and the shifts.

Gradients follow PyTorch's convention for complex numbers (``dL/dRe + i dL/dIm``). A
transform is linear, so its input's gradient is its adjoint applied to ``g``: the
adjoint of ``fft`` with one ``norm`` is ``ifft`` with the swapped one (``"backward"``
and ``"forward"`` trade places, ``"ortho"`` stays), cut or zero-padded back to the
input's length when ``n``/``s`` changed it. A real input takes the real part. The real
transforms are linear over the reals only: ``rfft``'s adjoint is the real part of
``ifft`` of ``g`` padded to the full length, and ``irfft``'s is ``rfft`` of ``g`` with
the half-spectrum's weights (2 for each bin that stands for two, 1 for the zero and
Nyquist bins), as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lampy._errors import DTypeError, ShapeError
from lampy.fft._common import (
    axes_and_lengths,
    check_norm,
    complex_dtype_of,
    fitted,
    one_length,
    real_dtype_of,
    swapped,
)
from lampy.opkit import LINEAR, OWN, Operand, Variable, complex_rule, contrib_of, op, value_of
from lampy.ops import real as _real_op

_fftn, _ifftn, _rfftn, _irfftn = np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn

Axes = Sequence[int] | None
Lengths = Sequence[int] | None


def _one(name: str, n: int | None, axis: int) -> tuple[Lengths, Axes]:
    """A 1-d transform's ``n`` and ``axis`` as an n-d one's ``s`` and ``axes``."""
    return (None if n is None else (one_length(name, n),)), (axis,)


_INVERSE = {"fft": "ifft", "fft2": "ifft2", "fftn": "ifftn"}
_INVERSE |= {v: k for k, v in _INVERSE.items()}


def _computed(name: str, fn: Any, a: Any, s: Any, axes: Any, norm: Any) -> np.ndarray:
    """``fn(a, s, axes, norm)``, numpy's errors (an empty axis, a length of 0) named."""
    try:
        value: np.ndarray = fn(a, s=s, axes=axes, norm=norm)
    except ValueError as e:
        raise ShapeError(f"fft.{name}: {e} (input shape {np.shape(a)}).") from None
    return value


# ------------------------------------------------------------------ complex transforms
def _complex(name: str, x: Operand, s: Lengths, axes: Axes, norm: Any, inverse: bool) -> Variable:
    norm = check_norm(name, norm)
    a = value_of(x, False, f"fft.{name}")
    shape = np.shape(a)
    ax, lengths = axes_and_lengths(name, shape, s, axes)
    forward, adjoint = (_ifftn, _fftn) if inverse else (_fftn, _ifftn)
    value = _computed(name, forward, a, lengths, ax, norm).astype(complex_dtype_of(a), copy=False)
    back = swapped(norm)
    other = _INVERSE[name]

    def d_x(g: Any) -> Any:
        return fitted(adjoint(g, axes=ax, norm=back), shape, ax)

    def vjp(g: Any, out: Any) -> Any:
        return fitted(_complex(other, g, None, ax, back, not inverse), shape, ax)

    return op(f"fft.{name}", value, contrib_of(x, d_x, vjp=vjp))


def fft(a: Operand, n: int | None = None, axis: int = -1, norm: str | None = None) -> Variable:
    """The 1-d discrete Fourier transform along ``axis``, as ``numpy.fft.fft``: ``a``
    zero-padded or cut to ``n`` first if given; ``norm`` scales as numpy's (None and
    ``"backward"``: none, ``"ortho"``: ``1/sqrt(n)``, ``"forward"``: ``1/n``).

    Gradient:
        ``da = ifft(g, norm=swapped)`` (the adjoint), cut or padded back to ``a``'s
        length; its real part for a real ``a``.
    """
    s, axes = _one("fft", n, axis)
    return _complex("fft", a, s, axes, norm, False)


def ifft(a: Operand, n: int | None = None, axis: int = -1, norm: str | None = None) -> Variable:
    """The 1-d inverse discrete Fourier transform, as ``numpy.fft.ifft``.

    Gradient:
        ``da = fft(g, norm=swapped)``, cut or padded back to ``a``'s length.
    """
    s, axes = _one("ifft", n, axis)
    return _complex("ifft", a, s, axes, norm, True)


def fft2(
    a: Operand, s: Lengths = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Variable:
    """The 2-d discrete Fourier transform over ``axes``, as ``numpy.fft.fft2``.

    Gradient:
        ``da = ifft2(g, norm=swapped)``, cut or padded back to ``a``'s shape.
    """
    return _complex("fft2", a, s, axes, norm, False)


def ifft2(
    a: Operand, s: Lengths = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Variable:
    """The 2-d inverse discrete Fourier transform, as ``numpy.fft.ifft2``.

    Gradient:
        ``da = fft2(g, norm=swapped)``, cut or padded back to ``a``'s shape.
    """
    return _complex("ifft2", a, s, axes, norm, True)


def fftn(a: Operand, s: Lengths = None, axes: Axes = None, norm: str | None = None) -> Variable:
    """The n-d discrete Fourier transform, as ``numpy.fft.fftn`` (``axes`` None: every
    axis, or the last ``len(s)``).

    Gradient:
        ``da = ifftn(g, norm=swapped)``, cut or padded back to ``a``'s shape.
    """
    return _complex("fftn", a, s, axes, norm, False)


def ifftn(a: Operand, s: Lengths = None, axes: Axes = None, norm: str | None = None) -> Variable:
    """The n-d inverse discrete Fourier transform, as ``numpy.fft.ifftn``.

    Gradient:
        ``da = fftn(g, norm=swapped)``, cut or padded back to ``a``'s shape.
    """
    return _complex("ifftn", a, s, axes, norm, True)


# ------------------------------------------------------------------ real transforms
def _forward_real(name: str, x: Operand, s: Lengths, axes: Axes, norm: Any) -> Variable:
    """``rfftn`` (``rfft``, ``rfft2``): a real input's half spectrum."""
    norm = check_norm(name, norm)
    a = value_of(x, False, f"fft.{name}")
    if np.iscomplexobj(a):
        raise DTypeError(
            f"fft.{name}: the input is complex ({np.result_type(a)}); the real transforms "
            "take real inputs (numpy's raise too). Use fft.fft / fftn for complex inputs."
        )
    shape = np.shape(a)
    ax, lengths = axes_and_lengths(name, shape, s, axes)
    full = lengths if lengths is not None else tuple(shape[i] for i in ax)
    value = _computed(name, _rfftn, a, full, ax, norm).astype(complex_dtype_of(a), copy=False)
    back = swapped(norm)

    def d_x(g: Any) -> Any:  # the adjoint: g padded to the full spectrum, back, real part
        return fitted(np.real(_ifftn(g, s=full, axes=ax, norm=back)), shape, ax)

    def vjp(g: Any, out: Any) -> Any:
        return fitted(_real_op(_complex("ifftn", g, full, ax, back, True)), shape, ax)

    return op(f"fft.{name}", value, contrib_of(x, d_x, vjp=vjp))


def _half_weights(n: int, ndim: int, axis: int) -> np.ndarray:
    """The weights of a half spectrum of length ``n // 2 + 1`` for a real signal of
    length ``n``: 2 for a bin standing for itself and its mirror image, 1 for the zero
    bin and (``n`` even) the Nyquist bin; shaped to broadcast along ``axis``."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = w.size
    return w.reshape(shape)


def _inverse_real(name: str, x: Operand, s: Lengths, axes: Axes, norm: Any) -> Variable:
    """``irfftn`` (``irfft``, ``irfft2``): a real signal from its half spectrum."""
    norm = check_norm(name, norm)
    c = value_of(x, False, f"fft.{name}")
    shape = np.shape(c)
    ax, lengths = axes_and_lengths(name, shape, s, axes)
    if lengths is None:  # numpy's default: the last axis's full length 2 * (m - 1)
        lengths = (*(shape[i] for i in ax[:-1]), 2 * (shape[ax[-1]] - 1))
        if lengths[-1] < 1:
            raise ShapeError(
                f"fft.{name}: a half spectrum of length {shape[ax[-1]]} gives no output; "
                "pass n (or s) for its length."
            )
    value = _computed(name, _irfftn, c, lengths, ax, norm).astype(real_dtype_of(c), copy=False)
    back = swapped(norm)
    w = _half_weights(lengths[-1], len(shape), ax[-1])

    def d_x(g: Any) -> Any:
        return fitted(_rfftn(g, axes=ax, norm=back) * w, shape, ax)

    def vjp(g: Any, out: Any) -> Any:
        return fitted(_forward_real("rfftn", g, None, ax, back) * w, shape, ax)

    return op(f"fft.{name}", value, contrib_of(x, d_x, vjp=vjp))


def rfft(a: Operand, n: int | None = None, axis: int = -1, norm: str | None = None) -> Variable:
    """The 1-d transform of a real input, its ``n // 2 + 1`` non-negative frequencies,
    as ``numpy.fft.rfft``.

    Gradient:
        ``da = real(ifft(g padded to n, norm=swapped))``, cut or padded back.
    """
    s, axes = _one("rfft", n, axis)
    return _forward_real("rfft", a, s, axes, norm)


def irfft(a: Operand, n: int | None = None, axis: int = -1, norm: str | None = None) -> Variable:
    """The real signal of length ``n`` (default ``2 * (m - 1)``) whose half spectrum is
    ``a``, as ``numpy.fft.irfft`` (the imaginary parts of the zero and Nyquist bins are
    ignored, as numpy does).

    Gradient:
        ``da = rfft(g, norm=swapped) * w``, ``w`` 2 for each bin that stands for two
        and 1 for the zero and (``n`` even) Nyquist bins; cut or padded back.
    """
    s, axes = _one("irfft", n, axis)
    return _inverse_real("irfft", a, s, axes, norm)


def rfft2(
    a: Operand, s: Lengths = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Variable:
    """The 2-d transform of a real input, as ``numpy.fft.rfft2`` (the last axis halved).

    Gradient:
        ``da = real(ifft2(g padded to s, norm=swapped))``.
    """
    return _forward_real("rfft2", a, s, axes, norm)


def irfft2(
    a: Operand, s: Lengths = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Variable:
    """The inverse of ``rfft2``, as ``numpy.fft.irfft2``.

    Gradient:
        ``da = rfft2(g, norm=swapped) * w`` (the half axis's weights, as ``irfft``).
    """
    return _inverse_real("irfft2", a, s, axes, norm)


def rfftn(a: Operand, s: Lengths = None, axes: Axes = None, norm: str | None = None) -> Variable:
    """The n-d transform of a real input, as ``numpy.fft.rfftn`` (the last of ``axes``
    halved).

    Gradient:
        ``da = real(ifftn(g padded to s, norm=swapped))``.
    """
    return _forward_real("rfftn", a, s, axes, norm)


def irfftn(a: Operand, s: Lengths = None, axes: Axes = None, norm: str | None = None) -> Variable:
    """The inverse of ``rfftn``, as ``numpy.fft.irfftn``.

    Gradient:
        ``da = rfftn(g, norm=swapped) * w`` (the half axis's weights, as ``irfft``).
    """
    return _inverse_real("irfftn", a, s, axes, norm)


# ------------------------------------------------------------------ shifts
def _shifted(name: str, x: Operand, axes: Any, inverse: bool) -> Variable:
    a = value_of(x, False, f"fft.{name}")
    ax = None if axes is None else axes_and_lengths(name, np.shape(a), None, axes)[0]
    forward, back = (
        (np.fft.ifftshift, np.fft.fftshift) if inverse else (np.fft.fftshift, np.fft.ifftshift)
    )

    def d_x(g: Any) -> Any:
        return back(g, axes=ax)

    def vjp(g: Any, out: Any) -> Any:
        return _shifted(name, g, ax, not inverse)

    return op(f"fft.{name}", forward(a, axes=ax), contrib_of(x, d_x, vjp=vjp))


def fftshift(x: Operand, axes: int | Sequence[int] | None = None) -> Variable:
    """The zero frequency moved to the middle (half of each axis rolled round), as
    ``numpy.fft.fftshift``.

    Gradient:
        ``dx = ifftshift(g)``.
    """
    return _shifted("fftshift", x, axes, False)


def ifftshift(x: Operand, axes: int | Sequence[int] | None = None) -> Variable:
    """The inverse of ``fftshift``, as ``numpy.fft.ifftshift``.

    Gradient:
        ``dx = fftshift(g)``.
    """
    return _shifted("ifftshift", x, axes, True)


complex_rule(
    OWN,
    *(f"fft.{n}" for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn")),
    *(f"fft.{n}" for n in ("rfft", "rfft2", "rfftn", "irfft", "irfft2", "irfftn")),
)
complex_rule(LINEAR, "fft.fftshift", "fft.ifftshift")
