"""Shared pieces of lampy.linalg: shape checks, batched transposes, result records."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from lampy._errors import NoSecondOrderError, ShapeError
from lampy.opkit import (
    HOLOMORPHIC,
    Operand,
    Variable,
    complex_rule,
    is_grad_enabled,
    needs_grad,
    real_operands,
    value_of,
)
from lampy.ops import conj, matrix_transpose, reshape

_swapaxes = np.swapaxes


class SlogdetResult(NamedTuple):
    """What :func:`lampy.linalg.slogdet` returns, as ``numpy.linalg.slogdet`` does."""

    sign: np.ndarray | Variable
    """The sign of the determinant: a constant numpy array for a real matrix (1, -1 or 0:
    piecewise constant, no gradient); for a complex one ``det / |det|``, a Variable when
    the matrix needs a gradient."""
    logabsdet: Variable
    """The natural logarithm of the absolute value of the determinant."""


class EighResult(NamedTuple):
    """What :func:`lampy.linalg.eigh` returns, as ``numpy.linalg.eigh`` does."""

    eigenvalues: Variable
    """The eigenvalues in ascending order, shape ``(..., M)``."""
    eigenvectors: Variable
    """The normalised eigenvectors as columns, shape ``(..., M, M)``."""


class EigResult(NamedTuple):
    """What :func:`lampy.linalg.eig` returns, as ``numpy.linalg.eig`` does."""

    eigenvalues: Variable
    """The eigenvalues in numpy's (LAPACK's) order, shape ``(..., M)``: real for a real
    matrix whose eigenvalues are all real, complex otherwise."""
    eigenvectors: Variable
    """The eigenvectors as columns of unit length, shape ``(..., M, M)`` (complex with the
    eigenvalues)."""


class QRResult(NamedTuple):
    """What :func:`lampy.linalg.qr` returns, as ``numpy.linalg.qr`` does."""

    Q: Variable
    """The matrix with orthonormal columns."""
    R: Variable
    """The upper-triangular matrix."""


class SVDResult(NamedTuple):
    """What :func:`lampy.linalg.svd` returns, as ``numpy.linalg.svd`` does."""

    U: Variable
    """The left singular vectors as columns."""
    S: Variable
    """The singular values in descending order."""
    Vh: Variable
    """The right singular vectors as rows (the transpose of ``V``)."""


def mT(a: np.ndarray) -> np.ndarray:
    """The batched matrix transpose: the last two axes swapped."""
    return _swapaxes(a, -1, -2)


def mH(a: np.ndarray) -> np.ndarray:
    """The batched conjugate transpose ``a^H`` (``mT`` for a real ``a``)."""
    return _swapaxes(a.conj() if a.dtype.kind == "c" else a, -1, -2)


def sym(a: np.ndarray) -> Any:
    """The symmetric part ``(a + a^T) / 2`` of a stack of square matrices: the Hermitian
    part ``(a + a^H) / 2`` for complex ones."""
    return 0.5 * (a + mH(a))


def graph_mH(x: Any) -> Any:
    """:func:`mH` with lampy ops (a Variable of a vjp, or a constant)."""
    t = matrix_transpose(x)
    return conj(t) if np.iscomplexobj(getattr(x, "value", x)) else t


def wants_grad(x: Operand) -> bool:
    """Whether an op on ``x`` will record a gradient (so a decomposition's extra factors
    are worth computing)."""
    return needs_grad(x) and is_grad_enabled()


def matrix_value(
    name: str, x: Operand, *, square: bool = False, complex_ok: bool = False
) -> np.ndarray:
    """``x``'s value as an array of at least 2 dimensions (square in the last two if
    ``square``), or a ShapeError naming the op, raised before anything is recorded.
    A complex ``x`` that needs a gradient is refused (a DTypeError) unless the op's rule
    holds for complex matrices (``complex_ok``)."""
    if not complex_ok:
        real_operands(name, x)
    a = np.asarray(value_of(x, name=name))
    if a.ndim < 2:
        raise ShapeError(
            f"{name}: expected a matrix or a stack of matrices (at least 2 dimensions), got "
            f"an array of shape {a.shape}. Reshape it, e.g. `x.reshape(1, -1)` for a row."
        )
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"{name}: the last two dimensions must be square (a stack of M x M matrices), "
            f"got shape {a.shape}."
        )
    return a


def inverse_gaps(w: np.ndarray) -> Any:
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal and 0 on it.

    Repeated values give infinities: derivatives of eigenvectors and singular vectors do
    not exist there (PyTorch behaves the same way).
    """
    d = w[..., None, :] - w[..., :, None]
    n = w.shape[-1]
    idx = np.arange(n)
    d[..., idx, idx] = 1
    f = np.divide(1, d)
    f[..., idx, idx] = 0
    return f


def distinct_or_raise(name: str, w: np.ndarray) -> None:
    """Raise ``NoSecondOrderError`` if two of the values ``w`` (eigenvalues, squared
    singular values; along the last axis) coincide to rounding: a differentiable pass
    through ``name`` there would need ``1 / (w_j - w_i)``, which does not exist (the
    second derivative of a repeated eigenvalue is not defined), so it refuses rather
    than give inf, nan or a silently wrong answer."""
    w = np.asarray(w)
    n = w.shape[-1] if w.ndim else 0
    if n < 2:
        return
    gaps = np.where(np.eye(n, dtype=bool), np.inf, np.abs(w[..., None, :] - w[..., :, None]))
    scale = np.maximum(np.max(np.abs(w), axis=-1), np.finfo(w.dtype).tiny)
    if np.any(gaps <= (16 * n * np.finfo(w.dtype).eps) * scale[..., None, None]):
        raise NoSecondOrderError(
            f"op '{name}': a differentiable backward pass (create_graph=True, a nested "
            "lampy.grad, lampy.hessian...) met a matrix with repeated eigenvalues or "
            "singular values, where the second derivative does not exist. Perturb the "
            "matrix, or compute this part under lampy.no_grad() if it is a constant for "
            "the outer derivative."
        )


def graph_inverse_gaps(w: Any) -> Any:
    """:func:`inverse_gaps` with lampy ops, for vjps: ``w`` a Variable of the graph
    (distinct values, checked by :func:`distinct_or_raise`)."""
    n = w.shape[-1]
    lead = tuple(w.shape[:-1])
    eye = np.eye(n, dtype=w.dtype)
    d = reshape(w, (*lead, 1, n)) - reshape(w, (*lead, n, 1))
    return (1 - eye) / (d + eye)


__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "distinct_or_raise",
    "graph_inverse_gaps",
    "inverse_gaps",
    "graph_mH",
    "matrix_value",
    "mH",
    "mT",
    "sym",
    "wants_grad",
]


# The linalg ops whose rules hold for complex matrices (PyTorch's convention; their
# closures conjugated by the engine). The others refuse complex inputs that need a
# gradient (``matrix_value``).
complex_rule(HOLOMORPHIC, "inv", "det", "solve", "matrix_power", "sqrtm", "solve_sylvester")
