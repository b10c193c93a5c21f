"""Triangular factorisations: cholesky, qr."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.linalg._common import QRResult, graph_mH, matrix_value, mH, sym, wants_grad
from lampy.linalg._inverse import inv
from lampy.opkit import OWN, Lazy, Operand, Variable, complex_rule, contrib_of, lifted, op
from lampy.ops import matmul, tril

_add = np.add


def cholesky(a: Operand, /, *, upper: bool = False) -> Variable:
    """Cholesky factor of a symmetric (or complex Hermitian) positive-definite matrix,
    batched (``numpy.linalg.cholesky``): lower ``L`` with ``a = L L^H``, or upper
    ``U = L^H``.

    Only the lower triangle of ``a`` is read (the upper one with ``upper=True``).
    Raises ``numpy.linalg.LinAlgError`` if ``a`` is not positive definite.

    Gradient:
        Symmetric, as PyTorch's: ``da = L^{-H} sym(Phi(L^H gL)) L^{-1}`` with
        ``gL = tril(g)`` (``tril(g^H)`` for ``upper``), ``Phi`` the lower triangle with
        the diagonal halved and ``sym(X) = (X + X^H) / 2`` (Murray 2016,
        Differentiation of the Cholesky decomposition). It is the gradient along
        symmetric (Hermitian) perturbations, split equally between ``a[i, j]`` and
        ``a[j, i]``. (PyTorch's complex rule differs from it by a skew-Hermitian
        term, which no Hermitian perturbation sees.)
    """
    arr = matrix_value("cholesky", a, square=True, complex_ok=True)
    if not upper:
        value = np.linalg.cholesky(arr)
    else:
        try:
            value = np.linalg.cholesky(arr, upper=True)
        except TypeError:  # numpy < 2 has no `upper`: factor the transpose instead
            value = np.ascontiguousarray(mH(np.linalg.cholesky(mH(arr))))

    def d_a(g: np.ndarray) -> Any:
        low = mH(value) if upper else value
        gl = np.tril(mH(g) if upper else g)
        phi = np.tril(mH(low) @ gl)
        n = phi.shape[-1]
        idx = np.arange(n)
        phi[..., idx, idx] *= 0.5
        linv = np.linalg.inv(low)
        return mH(linv) @ sym(phi) @ linv

    def vjp(g: Any, out: Any) -> Any:  # d_a in lampy ops of L (its own value)
        lv = lifted(out, value)
        low = graph_mH(lv) if upper else lv
        gl = tril(graph_mH(g) if upper else g)
        n = value.shape[-1]
        half_diag = np.tril(np.ones((n, n), value.dtype)) - 0.5 * np.eye(n, dtype=value.dtype)
        phi = matmul(graph_mH(low), gl) * half_diag  # tril, the diagonal halved
        linv = inv(low)
        return matmul(matmul(graph_mH(linv), (phi + graph_mH(phi)) * 0.5), linv)

    return op("cholesky", value, contrib_of(a, d_a, fresh=False, vjp=vjp))


def _copyltu(m: np.ndarray) -> Any:
    """The symmetric (Hermitian) matrix with ``m``'s lower triangle: ``tril(m) +
    tril(m, -1)^H``, with the real part of ``m``'s diagonal (PyTorch's ``syminvadj``:
    ``R``'s diagonal is real)."""
    out = np.tril(m) + mH(np.tril(m, -1))
    if out.dtype.kind == "c":
        idx = np.arange(out.shape[-1])
        out[..., idx, idx] = out[..., idx, idx].real
    return out


def _qr_backward(
    q: np.ndarray, r: np.ndarray, rinv: Lazy, gq: np.ndarray | None, gr: np.ndarray | None
) -> Any:
    """Gradient of a reduced QR, ``a = q r`` with ``q`` (M, K), ``r`` (K, N), for one or
    both cotangents. For M >= N: ``(gQ + Q copyltu(M)) R^{-H}``, ``M = R gR^H - gQ^H Q``
    (Walter & Lehmann 2018; Seeger et al. 2017). For M < N, ``a = [X | Y]`` with ``X``
    square: ``X = Q U`` gets the square rule with ``gQ + Y gV^H``, and ``Y = Q V`` gets
    ``Q gV``, ``[U | V] = R``."""
    k, n = r.shape[-2:]
    gv = None
    if k < n:
        gv = None if gr is None else gr[..., k:]
        if gv is not None:
            y = q @ r[..., k:]
            extra = y @ mH(gv)
            gq = extra if gq is None else gq + extra
        gr = None if gr is None else gr[..., :k]
        r = r[..., :k]
    m = 0 if gr is None else r @ mH(gr)
    if gq is not None:
        m = m - mH(gq) @ q
    b = q @ _copyltu(np.asarray(m))
    if gq is not None:
        b = b + gq
    gx = b @ mH(rinv())
    if k < n:
        gy = np.zeros((*gx.shape[:-1], n - k), gx.dtype) if gv is None else q @ gv
        return np.concatenate([gx, gy], axis=-1)
    return gx


def qr(a: Operand, mode: str = "reduced") -> Any:
    """QR decomposition by Householder reflections, batched (``numpy.linalg.qr``).

    Args:
        a: A matrix ``(..., M, N)``.
        mode: ``'reduced'`` (``Q`` is ``(M, K)``, ``R`` is ``(K, N)``, ``K = min(M, N)``),
            ``'complete'`` (``Q`` is ``(M, M)``, ``R`` is ``(M, N)``) or ``'r'`` (``R``
            alone). ``'raw'`` is not supported (its Householder reflectors have no
            gradient); use ``numpy.linalg.qr(x.value, mode='raw')``.

    Returns:
        ``QRResult(Q, R)`` of Variables, or the Variable ``R`` for ``mode='r'``.

    Gradient:
        For ``a`` of full rank, and for ``M < N`` with a nonsingular leading ``M x M``
        block (elsewhere the factors jump with the signs Householder picks), following
        Walter & Lehmann 2018 (Algorithmic differentiation of linear algebra functions
        with application in optimum experimental design) and Seeger et al. 2017: with
        ``M = R gR^H - gQ^H Q``, ``da = (gQ + Q copyltu(M)) R^{-H}`` for ``M >= N``,
        where ``copyltu(M) = tril(M) + tril(M, -1)^H`` with the real part of ``M``'s
        diagonal (a complex ``a``: LAPACK's ``R`` has a real diagonal, PyTorch's rule).
        For ``M < N``, ``a = [X | Y]`` splits into a square QR of ``X`` and ``Y = Q V``,
        as PyTorch does. For ``mode='complete'`` with ``M > N``, the extra columns
        ``Q2`` of ``Q`` are any basis of the complement; their cotangent is folded into
        the first columns as ``gQ1 - Q2 gQ2^H Q1``, which is exact for functions that
        depend on ``Q2`` only through its span (PyTorch refuses this case). The zero
        rows of ``R`` get no gradient.
    """
    arr = matrix_value("qr", a, complex_ok=True)
    if mode not in ("reduced", "complete", "r"):
        if mode == "raw":
            raise ValueError(
                "qr: mode='raw' is not supported (its Householder reflectors have no "
                "gradient); use numpy.linalg.qr(x.value, mode='raw') for the raw factors."
            )
        raise ValueError(f"qr: unrecognized mode {mode!r}; use 'reduced', 'complete' or 'r'.")
    m, n = arr.shape[-2:]
    k = min(m, n)
    if mode == "r" and not wants_grad(a):
        return op("qr", np.linalg.qr(arr, mode="r"))
    q, r = np.linalg.qr(arr, mode="complete" if mode == "complete" else "reduced")
    q1, r1 = q[..., :k], r[..., :k, :]
    rinv = Lazy(lambda: np.linalg.inv(r1[..., :k]))

    def d_q(g: np.ndarray) -> Any:
        gq = g
        if q.shape[-1] > k:  # 'complete' with M > N: fold the complement's cotangent
            q2 = q[..., k:]
            gq = g[..., :k] - q2 @ (mH(g[..., k:]) @ q1)
        return _qr_backward(q1, r1, rinv, gq, None)

    def d_r(g: np.ndarray) -> Any:
        return _qr_backward(q1, r1, rinv, None, g[..., :k, :])

    rv = op("qr", r, contrib_of(a, d_r, fresh=False))
    if mode == "r":
        return rv
    return QRResult(op("qr", q, contrib_of(a, d_q, fresh=False)), rv)


# Complex matrices: closures written with conjugate transposes.
complex_rule(OWN, "cholesky", "qr")

__all__ = ["cholesky", "qr"]
