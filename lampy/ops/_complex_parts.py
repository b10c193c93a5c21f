"""Parts of complex numbers: real, imag, conj (conjugate), angle, real_if_close, and the
tests iscomplex, isreal, iscomplexobj, isrealobj.

These are not holomorphic, so each has its own rule in PyTorch's convention (the
gradient of a real loss with respect to ``z = x + iy`` is ``dL/dx + i dL/dy``); see
``lampy.autograd._complex``. On real inputs they do what numpy does (``real`` and
``conj`` are the identity, ``imag`` and ``angle`` constants).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lampy.opkit import (
    OWN,
    Operand,
    Variable,
    complex_rule,
    contrib_of,
    graph_value,
    node_of,
    op,
    value_of,
)
from lampy.ops._where import where

_real, _imag, _conj = np.real, np.imag, np.conj


def _is_complex(a: Any) -> bool:
    return np.iscomplexobj(a)


def real(x: Operand) -> Variable:
    """The real part of each element (``x`` itself for a real ``x``), as ``numpy.real``.

    Gradient:
        ``dx = g`` (a real ``g`` as the complex ``g + 0i``): only the real part moves.
    """
    a = value_of(x, False, "real")
    value = np.array(_real(a)) if _is_complex(a) else a
    return op("real", value, contrib_of(x, _same, False, _same_vjp))


def imag(x: Operand) -> Variable:
    """The imaginary part of each element (zeros for a real ``x``), as ``numpy.imag``.

    Gradient:
        ``dx = i g``: only the imaginary part moves. For a real ``x`` the result is a
        constant (zero whatever ``x``), so ``x`` gets no gradient from it.
    """
    a = value_of(x, False, "imag")
    if not _is_complex(a):
        return op("imag", np.zeros_like(a))
    return op(
        "imag",
        np.array(_imag(a)),
        contrib_of(x, lambda g: g * 1j, vjp=lambda g, out: g * 1j),
    )


def conj(x: Operand) -> Variable:
    """The complex conjugate of each element (``x`` itself for a real ``x``), as
    ``numpy.conj``.

    Gradient:
        ``dx = conj(g)``.
    """
    a = value_of(x, False, "conj")
    if not _is_complex(a):
        return op("conj", a, contrib_of(x, _same, False, _same_vjp))
    return op("conj", _conj(a), contrib_of(x, _conj, vjp=lambda g, out: conj(g)))


conjugate = conj


def angle(z: Operand, deg: bool = False) -> Variable:
    """The angle of each element in the complex plane, ``atan2(imag, real)``, in radians
    (degrees with ``deg=True``), as ``numpy.angle``.

    Gradient:
        ``dz = g * i z / |z|**2`` (times ``180 / pi`` with ``deg``), and 0 at ``z = 0``.
        For a real ``z`` the angle is 0 or pi, a constant: no gradient.
    """
    a = value_of(z, True, "angle")
    value = np.angle(a, deg=deg)
    if not _is_complex(a):
        return op("angle", np.asarray(value))
    scale = 180.0 / math.pi if deg else 1.0
    n = node_of(z)

    def d_z(g: Any) -> Any:
        m = np.abs(a) ** 2
        safe = np.where(m == 0, 1.0, m)
        return np.where(m == 0, 0, g * (1j * scale) * a / safe)

    def vjp(g: Any, out: Any) -> Any:
        m = np.abs(a) ** 2
        zv = graph_value(n, a)
        safe = where(m == 0, 1.0, real(zv * conj(zv)))
        return where(m == 0, 0j, g * (1j * scale) * zv / safe)

    return op("angle", np.asarray(value), contrib_of(z, d_z, vjp=vjp))


def real_if_close(a: Operand, tol: float = 100) -> Variable:
    """``real(a)`` if every imaginary part is within ``tol`` machine epsilons of zero, else
    ``a`` unchanged, as ``numpy.real_if_close``.

    Gradient:
        That of ``real`` or of the identity, whichever was taken.
    """
    v = value_of(a, False, "real_if_close")
    if _is_complex(v) and np.all(np.real_if_close(v, tol=tol).dtype.kind != "c"):
        return real(a)
    return op("real_if_close", v, contrib_of(a, _same, False, _same_vjp))


def iscomplex(x: Operand) -> np.ndarray:
    """Elementwise: whether each element has a nonzero imaginary part (a boolean numpy
    array, no gradient), as ``numpy.iscomplex``."""
    return np.asarray(np.iscomplex(value_of(x, False, "iscomplex")))


def isreal(x: Operand) -> np.ndarray:
    """Elementwise: whether each element's imaginary part is zero (a boolean numpy array,
    no gradient), as ``numpy.isreal``."""
    return np.asarray(np.isreal(value_of(x, False, "isreal")))


def iscomplexobj(x: Operand) -> bool:
    """Whether ``x`` has a complex dtype, as ``numpy.iscomplexobj``."""
    return bool(np.iscomplexobj(value_of(x, False, "iscomplexobj")))


def isrealobj(x: Operand) -> bool:
    """Whether ``x`` does not have a complex dtype, as ``numpy.isrealobj``."""
    return not iscomplexobj(x)


def _same(g: Any) -> Any:
    return g


def _same_vjp(g: Any, out: Any) -> Any:
    return g


complex_rule(OWN, "real", "imag", "conj", "angle")
complex_rule(OWN, "real_if_close")  # the identity when it keeps the complex values
