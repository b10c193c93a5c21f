"""What the transforms share: their arguments read as numpy reads them (``n``/``s``,
``axis``/``axes``, ``norm``), and an input's gradient cut or padded back to its shape."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.opkit import Variable, one_axis
from lampy.ops import pad as _pad_op

Norm = Literal["backward", "ortho", "forward"] | None

_NORMS: dict[Any, Norm] = {
    None: None,
    "backward": "backward",
    "ortho": "ortho",
    "forward": "forward",
}
NORMS = tuple(_NORMS)

# The norm of a transform's adjoint: numpy's unscaled direction swaps with the scaled one.
_SWAPPED: dict[Norm, Norm] = {
    None: "forward",
    "backward": "forward",
    "ortho": "ortho",
    "forward": "backward",
}


def check_norm(name: str, norm: Any) -> Norm:
    """``norm`` if it is one of numpy's (None, "backward", "ortho", "forward")."""
    if not isinstance(norm, str | None) or norm not in _NORMS:
        raise LampyValueError(
            f"fft.{name}: norm must be one of {NORMS}, got {norm!r} (as numpy.fft's)."
        )
    return _NORMS[norm]


def swapped(norm: Norm) -> Norm:
    """The ``norm`` whose transform is the adjoint of this one's inverse: the adjoint of
    ``fft(x, norm)`` is ``ifft(g, swapped(norm))`` and the other way round."""
    return _SWAPPED[norm]


def one_length(name: str, n: Any, what: str = "n") -> int:
    """A transform length: a positive int."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise LampyTypeError(f"fft.{name}: {what} must be an int, got {n!r}.")
    if n < 1:
        raise LampyValueError(f"fft.{name}: {what} must be at least 1, got {n}.")
    return int(n)


def axes_and_lengths(
    name: str, shape: tuple[int, ...], s: Any, axes: Any
) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """The axes of an n-d transform (in their order: the last is a real transform's
    half axis) and the lengths ``s`` asked for, read as ``numpy.fft.fftn`` reads them:
    ``axes`` None is every axis, or the last ``len(s)`` ones when ``s`` is given.

    Raises:
        ShapeError: an axis is out of bounds or repeated, ``s`` and ``axes`` differ in
            length, or the input is 0-d.
    """
    ndim = len(shape)
    if ndim == 0:
        raise ShapeError(f"fft.{name}: the input is 0-d; a transform needs an axis.")
    if axes is None:
        found = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
        if s is not None and len(s) > ndim:
            raise ShapeError(f"fft.{name}: s={s!r} has more entries than the input has axes.")
    else:
        seq = (axes,) if isinstance(axes, int | np.integer) else tuple(axes)
        found = tuple(one_axis(f"fft.{name}", a, ndim, "axes") for a in seq)
        if len(set(found)) != len(found):
            raise ShapeError(f"fft.{name}: axes={axes!r} repeats an axis.")
    if s is None:
        return found, None
    lengths = tuple(one_length(name, k, "s") for k in s)
    if len(lengths) != len(found):
        raise ShapeError(
            f"fft.{name}: s={tuple(s)!r} and axes={found!r} must have the same length."
        )
    return found, lengths


def fitted(d: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """``d`` cut or zero-padded along ``axes`` to ``shape``: an input's gradient when
    the transform padded or cut it to another length (numpy's ``n``/``s``). Works on
    numpy arrays and, for differentiable backward passes, on Variables."""
    widths = [(0, 0)] * len(shape)
    index: list[Any] = [slice(None)] * len(shape)
    cut = padded = False
    for ax in axes:
        have, want = d.shape[ax], shape[ax]
        if have > want:
            index[ax], cut = slice(0, want), True
        elif have < want:
            widths[ax], padded = (0, want - have), True
    if cut:
        d = d[tuple(index)]
    if padded:
        d = _pad_op(d, widths) if type(d) is Variable else np.pad(d, widths)
    return d


def complex_dtype_of(a: Any) -> np.dtype[Any]:
    """The complex dtype a transform of ``a`` has: complex64 for float32 or complex64
    (numpy 1 computes in double: lampy keeps single precision single), else complex128."""
    dt = np.result_type(a)
    return np.dtype(np.complex64 if dt in (np.float32, np.complex64) else np.complex128)


def real_dtype_of(a: Any) -> np.dtype[Any]:
    """The real dtype of an inverse real transform of ``a``: float32 for complex64 or
    float32, else float64."""
    dt = np.result_type(a)
    return np.dtype(np.float32 if dt in (np.float32, np.complex64) else np.float64)


__all__ = [
    "NORMS",
    "Norm",
    "axes_and_lengths",
    "check_norm",
    "complex_dtype_of",
    "fitted",
    "one_length",
    "real_dtype_of",
    "swapped",
]
