"""Eigendecompositions: eigh and eigvalsh (symmetric or Hermitian), eig and eigvals
(general, real or complex spectra)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from lampy.linalg._common import (
    EighResult,
    EigResult,
    distinct_or_raise,
    graph_inverse_gaps,
    graph_mH,
    inverse_gaps,
    matrix_value,
    mH,
    wants_grad,
)
from lampy.opkit import OWN, Operand, Variable, complex_rule, contrib_of, graph_value, node_of, op
from lampy.ops import matmul, reshape

_add = np.add


def _values_backward(v: np.ndarray, g: np.ndarray) -> Any:
    """``V diag(g) V^H``: the gradient of the eigenvalues."""
    return (v * g[..., None, :]) @ mH(v)


def _graph_values_backward(v: Any, g: Any) -> Any:
    """:func:`_values_backward` with lampy ops."""
    return matmul(v * reshape(g, (*np.shape(g)[:-1], 1, np.shape(g)[-1])), graph_mH(v))


def _graph_eigh(name: str, n_a: Any, arr: np.ndarray, w: np.ndarray, UPLO: Any) -> Any:
    """``eigh`` of the saved ``arr`` recomputed with lampy's, so that a vjp's result
    differentiates again; ``NoSecondOrderError`` for repeated eigenvalues ``w``."""
    distinct_or_raise(name, w)
    return eigh(graph_value(n_a, arr), UPLO=UPLO)


def eigh(a: Operand, UPLO: Literal["L", "U"] = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of a symmetric (or complex Hermitian)
    matrix, batched (``numpy.linalg.eigh``).

    Only the triangle named by ``UPLO`` (``'L'`` or ``'U'``) is read (and of its
    diagonal only the real part, as LAPACK).

    Returns:
        ``EighResult(eigenvalues, eigenvectors)``, both Variables.

    Gradient:
        The symmetric gradient, PyTorch's convention: ``da`` is symmetric and gives the
        derivative along symmetric perturbations, shared equally between ``a[i, j]``
        and ``a[j, i]`` (whichever triangle was read); Hermitian for a complex ``a``.
        With ``X = V^H gV`` and ``F[i, j] = 1 / (w_j - w_i)`` (0 on the diagonal):
        ``da = V (diag(gw) + F * (X - X^H) / 2) V^H`` (Giles 2008; Seeger et al. 2017).
        Valid for distinct eigenvalues: repeated ones make the eigenvector part
        infinite or nan, as in PyTorch. The eigenvector part is exact only for
        functions invariant to each eigenvector's sign (its phase ``e^{i phi}`` when
        complex).
    """
    arr = matrix_value("eigh", a, square=True, complex_ok=True)
    w, v = np.linalg.eigh(arr, UPLO=UPLO)

    def d_w(g: np.ndarray) -> Any:
        return _values_backward(v, g)

    def d_v(g: np.ndarray) -> Any:
        vh = mH(v)
        x = vh @ g
        inner = (x - mH(x)) * inverse_gaps(w)
        inner *= 0.5
        return v @ inner @ vh

    n_a = node_of(a)

    def vjp_w(g: Any, out: Any) -> Any:
        _, vv = _graph_eigh("eigh", n_a, arr, w, UPLO)
        return _graph_values_backward(vv, g)

    def vjp_v(g: Any, out: Any) -> Any:
        wv, vv = _graph_eigh("eigh", n_a, arr, w, UPLO)
        vt = graph_mH(vv)
        x = matmul(vt, g)
        inner = (x - graph_mH(x)) * graph_inverse_gaps(wv) * 0.5
        return matmul(matmul(vv, inner), vt)

    return EighResult(
        op("eigh", w, contrib_of(a, d_w, fresh=False, vjp=vjp_w)),
        op("eigh", v, contrib_of(a, d_v, fresh=False, vjp=vjp_v)),
    )


def eigvalsh(a: Operand, UPLO: Literal["L", "U"] = "L") -> Variable:
    """Eigenvalues (ascending) of a symmetric (or complex Hermitian) matrix, batched
    (``numpy.linalg.eigvalsh``).

    Only the triangle named by ``UPLO`` is read. When a gradient is needed the
    eigenvectors are computed too (numpy's ``eigh``).

    Gradient:
        ``da = V diag(g) V^H``, symmetric (Hermitian) as for :func:`eigh`. Where eigenvalues
        repeat, single eigenvalues are not differentiable, but functions that treat a
        repeated group symmetrically (its sum, for example) get their exact gradient.
    """
    arr = matrix_value("eigvalsh", a, square=True, complex_ok=True)
    if not wants_grad(a):
        return op("eigvalsh", np.linalg.eigvalsh(arr, UPLO=UPLO))
    w, v = np.linalg.eigh(arr, UPLO=UPLO)
    n_a = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        _, vv = _graph_eigh("eigvalsh", n_a, arr, w, UPLO)
        return _graph_values_backward(vv, g)

    d_a = lambda g: _values_backward(v, g)
    return op("eigvalsh", w, contrib_of(a, d_a, fresh=False, vjp=vjp))


def _numpy_eig(name: str, a: Any) -> tuple[np.ndarray, np.ndarray]:
    """numpy's ``eig`` of a (stack of) square matrices. A real matrix whose eigenvalues
    are all real gives real arrays (numpy < 2.5's rule, kept on numpy >= 2.5, which
    returns complex arrays always); otherwise they are complex, as numpy's."""
    arr = matrix_value(name, a, square=True, complex_ok=True)
    w, v = np.linalg.eig(arr)
    if arr.dtype.kind != "c" and w.dtype.kind == "c" and not w.imag.any() and not v.imag.any():
        w, v = w.real.copy(), v.real.copy()
    return w, v


def _general_values_backward(v: np.ndarray, g: np.ndarray) -> Any:
    """``V^{-H} diag(g) V^H``: the gradient of the eigenvalues of a general matrix."""
    vh = mH(v)
    return np.linalg.solve(vh, g[..., :, None] * vh)


def eig(a: Operand) -> EigResult:
    """Eigenvalues and right eigenvectors of a square matrix, batched
    (``numpy.linalg.eig``). The eigenvalues come in numpy's order (not sorted) and the
    eigenvectors are the columns, of unit length.

    Both are real for a real matrix whose eigenvalues are all real (whatever numpy's
    version), complex otherwise (a real matrix with a complex eigenvalue anywhere in
    the stack, or a complex matrix), as numpy's.

    Raises:
        ShapeError: if ``a`` is not a (stack of) square matrices.

    Gradient:
        PyTorch's ``linalg_eig_backward``: with ``A = V diag(w) V^{-1}``, ``X = V^H gV``,
        ``F[i, j] = 1 / (w_j - w_i)`` (0 on the diagonal):
        ``da = V^{-H} (diag(gw) + conj(F) * (X - V^H V diag(re(diag(X))))) V^H``
        (Giles 2008; the ``V^H V`` term accounts for the unit-length columns); its real
        part for a real ``a``. Valid for distinct eigenvalues (repeated ones give inf or
        nan, as in PyTorch); the eigenvector part is exact for functions invariant to
        each eigenvector's sign (its phase ``e^{i phi}`` when complex: numpy fixes the
        phase by making the largest component real, which the gradient ignores).
    """
    w, v = _numpy_eig("eig", a)

    def d_w(g: np.ndarray) -> Any:
        return _general_values_backward(v, g)

    def d_v(g: np.ndarray) -> Any:
        vh = mH(v)
        x = vh @ g
        diag = np.diagonal(x, axis1=-2, axis2=-1).real
        inner = x - (vh @ v) * diag[..., None, :]
        f = inverse_gaps(w)
        inner *= f.conj() if f.dtype.kind == "c" else f
        return np.linalg.solve(vh, inner @ vh)

    return EigResult(
        op("eig", w, contrib_of(a, d_w, fresh=False)),
        op("eig", v, contrib_of(a, d_v, fresh=False)),
    )


def eigvals(a: Operand) -> Variable:
    """Eigenvalues of a square matrix, batched, in numpy's order
    (``numpy.linalg.eigvals``): real for a real matrix whose eigenvalues are all real,
    complex otherwise, as :func:`eig`. When a gradient is needed the eigenvectors are
    computed too (numpy's ``eig``).

    Gradient:
        ``da = V^{-H} diag(g) V^H`` (for distinct eigenvalues; its real part for a real
        ``a``).
    """
    if not wants_grad(a):
        arr = matrix_value("eigvals", a, square=True, complex_ok=True)
        w = np.linalg.eigvals(arr)
        if w.dtype.kind == "c" and arr.dtype.kind != "c" and not w.imag.any():
            w = w.real.copy()  # numpy >= 2.5: complex dtype for a real spectrum
        return op("eigvals", w)
    w, v = _numpy_eig("eigvals", a)
    return op("eigvals", w, contrib_of(a, lambda g: _general_values_backward(v, g), fresh=False))


# Complex matrices and complex spectra: closures written for complex values (conjugate
# transposes), their real part taken for a real input.
complex_rule(OWN, "eig", "eigvals", "eigh", "eigvalsh")

__all__ = ["eig", "eigh", "eigvals", "eigvalsh"]
