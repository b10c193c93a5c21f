"""Discrete Fourier transforms with gradients, as ``numpy.fft`` (same names, arguments
and values; numpy computes them), for complex and real inputs. See the docs page
"Complex numbers and FFT"."""

from lampy.fft._transforms import fft as fft
from lampy.fft._transforms import fft2 as fft2
from lampy.fft._transforms import fftn as fftn
from lampy.fft._transforms import fftshift as fftshift
from lampy.fft._transforms import ifft as ifft
from lampy.fft._transforms import ifft2 as ifft2
from lampy.fft._transforms import ifftn as ifftn
from lampy.fft._transforms import ifftshift as ifftshift
from lampy.fft._transforms import irfft as irfft
from lampy.fft._transforms import irfft2 as irfft2
from lampy.fft._transforms import irfftn as irfftn
from lampy.fft._transforms import rfft as rfft
from lampy.fft._transforms import rfft2 as rfft2
from lampy.fft._transforms import rfftn as rfftn

__all__ = [
    "fft",
    "fft2",
    "fftn",
    "fftshift",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftn",
]
