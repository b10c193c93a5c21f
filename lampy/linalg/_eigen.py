"""Eigendecompositions: eigh and eigvalsh (symmetric), eig and eigvals (general, for
matrices whose eigenvalues are real)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from lampy._errors import DTypeError
from lampy.linalg._common import (
    EighResult,
    EigResult,
    distinct_or_raise,
    graph_inverse_gaps,
    inverse_gaps,
    matrix_value,
    mT,
    wants_grad,
)
from lampy.opkit import Operand, Variable, contrib_of, graph_value, node_of, op
from lampy.ops import matmul, matrix_transpose, reshape

_add = np.add


def _values_backward(v: np.ndarray, g: np.ndarray) -> Any:
    """``V diag(g) V^T``: the gradient of the eigenvalues."""
    return (v * g[..., None, :]) @ mT(v)


def _graph_values_backward(v: Any, g: Any) -> Any:
    """:func:`_values_backward` with lampy ops."""
    return matmul(v * reshape(g, (*np.shape(g)[:-1], 1, np.shape(g)[-1])), matrix_transpose(v))


def _graph_eigh(name: str, n_a: Any, arr: np.ndarray, w: np.ndarray, UPLO: Any) -> Any:
    """``eigh`` of the saved ``arr`` recomputed with lampy's, so that a vjp's result
    differentiates again; ``NoSecondOrderError`` for repeated eigenvalues ``w``."""
    distinct_or_raise(name, w)
    return eigh(graph_value(n_a, arr), UPLO=UPLO)


def eigh(a: Operand, UPLO: Literal["L", "U"] = "L") -> EighResult:
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

    n_a = node_of(a)

    def vjp_w(g: Any, out: Any) -> Any:
        _, vv = _graph_eigh("eigh", n_a, arr, w, UPLO)
        return _graph_values_backward(vv, g)

    def vjp_v(g: Any, out: Any) -> Any:
        wv, vv = _graph_eigh("eigh", n_a, arr, w, UPLO)
        vt = matrix_transpose(vv)
        x = matmul(vt, g)
        inner = (x - matrix_transpose(x)) * graph_inverse_gaps(wv) * 0.5
        return matmul(matmul(vv, inner), vt)

    return EighResult(
        op("eigh", w, contrib_of(a, d_w, fresh=False, vjp=vjp_w)),
        op("eigh", v, contrib_of(a, d_v, fresh=False, vjp=vjp_v)),
    )


def eigvalsh(a: Operand, UPLO: Literal["L", "U"] = "L") -> Variable:
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
    n_a = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        _, vv = _graph_eigh("eigvalsh", n_a, arr, w, UPLO)
        return _graph_values_backward(vv, g)

    d_a = lambda g: _values_backward(v, g)
    return op("eigvalsh", w, contrib_of(a, d_a, fresh=False, vjp=vjp))


def _real_eig(name: str, a: Any) -> tuple[np.ndarray, np.ndarray]:
    """numpy's ``eig`` of a real matrix (stack), refusing complex eigenvalues."""
    arr = matrix_value(name, a, square=True)
    if arr.dtype.kind == "c":
        raise DTypeError(
            f"{name}: the matrix is complex ({arr.dtype}); lampy's gradients are real and "
            "complex numbers are not supported yet."
        )
    w, v = np.linalg.eig(arr)
    if w.dtype.kind == "c" and not w.imag.any() and not v.imag.any():
        # numpy >= 2.5 returns complex arrays even when every eigenvalue is real
        w, v = w.real.astype(arr.dtype), v.real.astype(arr.dtype)
    if w.dtype.kind == "c":
        raise DTypeError(
            f"{name}: the matrix of shape {arr.shape} has complex eigenvalues (e.g. "
            f"{w.reshape(-1)[np.argmax(np.abs(w.imag.reshape(-1)))]:.4g}), and lampy's "
            "gradients are real: complex numbers are not supported yet. For a symmetric "
            "matrix use lampy.linalg.eigh (always real, with a stable gradient); for "
            "constant eigenvalues call numpy.linalg.eig on the value (`x.value`)."
        )
    return w, v


def _general_values_backward(v: np.ndarray, g: np.ndarray) -> Any:
    """``V^{-T} diag(g) V^T``: the gradient of the eigenvalues of a general matrix."""
    vt = mT(v)
    return np.linalg.solve(vt, g[..., :, None] * vt)


def eig(a: Operand) -> EigResult:
    """Eigenvalues and right eigenvectors of a square matrix whose eigenvalues are all
    real, batched (``numpy.linalg.eig``). The eigenvalues come in numpy's order (not
    sorted) and the eigenvectors are the columns, of unit length.

    Raises:
        DTypeError: if an eigenvalue is complex (or the matrix is): lampy's gradients
            are real. Use ``lampy.linalg.eigh`` for symmetric matrices.
        ShapeError: if ``a`` is not a (stack of) square matrices.

    Gradient:
        With ``A = V diag(w) V^{-1}``, ``X = V^T gV``, ``F[i, j] = 1 / (w_j - w_i)`` (0 on
        the diagonal): ``da = V^{-T} (diag(gw) + F * (X - V^T V diag(diag(X)))) V^T``
        (Giles 2008; the ``V^T V`` term accounts for numpy's unit-length columns,
        PyTorch's ``linalg_eig_backward``). Valid for distinct eigenvalues (repeated ones
        give inf or nan, as in PyTorch); the eigenvector part is exact for functions
        invariant to each eigenvector's sign.
    """
    w, v = _real_eig("eig", a)

    def d_w(g: np.ndarray) -> Any:
        return _general_values_backward(v, g)

    def d_v(g: np.ndarray) -> Any:
        vt = mT(v)
        x = vt @ g
        diag = np.diagonal(x, axis1=-2, axis2=-1)
        inner = x - (vt @ v) * diag[..., None, :]
        inner *= inverse_gaps(w)
        return np.linalg.solve(vt, inner @ vt)

    return EigResult(
        op("eig", w, contrib_of(a, d_w, fresh=False)),
        op("eig", v, contrib_of(a, d_v, fresh=False)),
    )


def eigvals(a: Operand) -> Variable:
    """Eigenvalues of a square matrix whose eigenvalues are all real, batched, in numpy's
    order (``numpy.linalg.eigvals``). When a gradient is needed the eigenvectors are
    computed too (numpy's ``eig``).

    Raises:
        DTypeError: if an eigenvalue is complex (or the matrix is). Use
            ``lampy.linalg.eigvalsh`` for symmetric matrices.

    Gradient:
        ``da = V^{-T} diag(g) V^T`` (for distinct eigenvalues).
    """
    if not wants_grad(a):
        arr = matrix_value("eigvals", a, square=True)
        w = np.linalg.eigvals(arr)
        if w.dtype.kind == "c" and arr.dtype.kind != "c" and not w.imag.any():
            w = w.real.astype(arr.dtype)  # numpy >= 2.5: complex dtype for a real spectrum
        if w.dtype.kind == "c":
            _real_eig("eigvals", a)  # raises, naming a complex eigenvalue
        return op("eigvals", w)
    w, v = _real_eig("eigvals", a)
    return op("eigvals", w, contrib_of(a, lambda g: _general_values_backward(v, g), fresh=False))


__all__ = ["eig", "eigh", "eigvals", "eigvalsh"]
