"""Symmetric eigendecomposition: eigh, eigvalsh."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from lampy.autograd._variable import Variable, op
from lampy.linalg._common import EighResult, inverse_gaps, matrix_value, mT, wants_grad
from lampy.ops._operands import contrib_of

_add = np.add


def _values_backward(v: np.ndarray, g: np.ndarray) -> Any:
    """``V diag(g) V^T``: the gradient of the eigenvalues."""
    return (v * g[..., None, :]) @ mT(v)


def eigh(a: Any, UPLO: Literal["L", "U"] = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, batched
    (``numpy.linalg.eigh``).

    Only the triangle named by ``UPLO`` (``'L'`` or ``'U'``) is read.

    Returns:
        ``EighResult(eigenvalues, eigenvectors)``, both Variables.

    Gradient:
        The symmetric gradient, PyTorch's convention: ``da`` is symmetric and gives the
        derivative along symmetric perturbations, shared equally between ``a[i, j]``
        and ``a[j, i]`` (whichever triangle was read). With ``X = V^T gV`` and
        ``F[i, j] = 1 / (w_j - w_i)`` (0 on the diagonal):
        ``da = V (diag(gw) + F * (X - X^T) / 2) V^T`` (Giles 2008; Seeger et al. 2017).
        Valid for distinct eigenvalues: repeated ones make the eigenvector part
        infinite or nan, as in PyTorch. The eigenvector part is exact only for
        functions invariant to each eigenvector's sign.
    """
    arr = matrix_value("eigh", a, square=True)
    w, v = np.linalg.eigh(arr, UPLO=UPLO)

    def d_w(g: np.ndarray) -> Any:
        return _values_backward(v, g)

    def d_v(g: np.ndarray) -> Any:
        x = mT(v) @ g
        inner = (x - mT(x)) * inverse_gaps(w)
        inner *= 0.5
        return v @ inner @ mT(v)

    return EighResult(
        op("eigh", w, contrib_of(a, d_w, fresh=False)),
        op("eigh", v, contrib_of(a, d_v, fresh=False)),
    )


def eigvalsh(a: Any, UPLO: Literal["L", "U"] = "L") -> Variable:
    """Eigenvalues (ascending) of a symmetric matrix, batched (``numpy.linalg.eigvalsh``).

    Only the triangle named by ``UPLO`` is read. When a gradient is needed the
    eigenvectors are computed too (numpy's ``eigh``).

    Gradient:
        ``da = V diag(g) V^T``, symmetric as for :func:`eigh`. Where eigenvalues
        repeat, single eigenvalues are not differentiable, but functions that treat a
        repeated group symmetrically (its sum, for example) get their exact gradient.
    """
    arr = matrix_value("eigvalsh", a, square=True)
    if not wants_grad(a):
        return op("eigvalsh", np.linalg.eigvalsh(arr, UPLO=UPLO))
    w, v = np.linalg.eigh(arr, UPLO=UPLO)
    return op("eigvalsh", w, contrib_of(a, lambda g: _values_backward(v, g), fresh=False))


__all__ = ["eigh", "eigvalsh"]
