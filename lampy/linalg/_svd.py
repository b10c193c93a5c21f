"""Singular value decomposition: svd."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import NoSecondOrderError
from lampy.linalg._common import (
    SVDResult,
    distinct_or_raise,
    graph_inverse_gaps,
    graph_mH,
    inverse_gaps,
    matrix_value,
    mH,
    sym,
    wants_grad,
)
from lampy.opkit import (
    OWN,
    Lazy,
    Operand,
    Variable,
    complex_rule,
    contrib_of,
    graph_value,
    node_of,
    op,
    param_of,
)
from lampy.ops import diagonal, imag, matmul, reshape

_add = np.add


def values_backward(u: np.ndarray, vh: np.ndarray, gs: np.ndarray) -> Any:
    """``U diag(gS) V^H``: the gradient of the singular values (thin ``u``, ``vh``)."""
    return (u * gs[..., None, :]) @ vh


def _u_backward(u: np.ndarray, s: np.ndarray, vh: np.ndarray, f: Lazy, gu: np.ndarray) -> Any:
    """Gradient of thin ``U`` (M, K): ``U (F * (X - X^H) S + i im(diag(X)) S^{-1}) V^H
    + (I - U U^H) gU S^{-1} V^H`` with ``X = U^H gU`` (the imaginary diagonal only for
    complex ``U``, PyTorch's ``svd_backward``)."""
    x = mH(u) @ gu
    inner = (x - mH(x)) * f()
    inner *= s[..., None, :]
    if x.dtype.kind == "c":
        idx = np.arange(x.shape[-1])
        inner[..., idx, idx] += 1j * np.diagonal(x, axis1=-2, axis2=-1).imag / s
    if u.shape[-2] > u.shape[-1]:
        inner -= x / s[..., None, :]
        return (u @ inner + gu / s[..., None, :]) @ vh
    return u @ inner @ vh


def _vh_backward(u: np.ndarray, s: np.ndarray, vh: np.ndarray, f: Lazy, gvh: np.ndarray) -> Any:
    """Gradient of thin ``Vh`` (K, N): ``U S (F * (Y - Y^H)) V^H + U S^{-1} gV^H (I - V
    V^H)`` with ``gV = gVh^H`` and ``Y = V^H gV``."""
    y = vh @ mH(gvh)
    inner = (y - mH(y)) * f()
    inner *= s[..., :, None]
    if vh.shape[-1] > vh.shape[-2]:
        return u @ ((inner - mH(y) / s[..., :, None]) @ vh + gvh / s[..., :, None])
    return u @ (inner @ vh)


def _row(s: Any) -> Any:
    """``s[..., None, :]`` with lampy ops."""
    return reshape(s, (*s.shape[:-1], 1, s.shape[-1]))


def _col(s: Any) -> Any:
    """``s[..., :, None]`` with lampy ops."""
    return reshape(s, (*s.shape, 1))


def graph_svd(a: Any, s: np.ndarray, hermitian: bool = False) -> Any:
    """The thin SVD of ``a`` (a saved value brought back into the graph, whose singular
    values were ``s``) recomputed with lampy's, for vjps (whose results then
    differentiate again). ``NoSecondOrderError`` where the second derivative does not
    exist: repeated singular values, or a zero one of a non-square matrix."""
    distinct_or_raise("svd", s * s)
    m, n = np.shape(a)[-2:]
    if m != n and s.size and np.any(s <= 16 * max(m, n) * np.finfo(s.dtype).eps * s.max()):
        raise NoSecondOrderError(
            "op 'svd': a differentiable backward pass met a non-square matrix with a zero "
            "singular value, where the second derivative does not exist."
        )
    return svd(a, full_matrices=False, hermitian=hermitian)


def _graph_finish(ga: Any, hermitian: bool) -> Any:
    return (ga + graph_mH(ga)) * 0.5 if hermitian else ga


def _graph_u_backward(u: Any, s: Any, vh: Any, gu: Any) -> Any:
    """:func:`_u_backward` with lampy ops."""
    x = matmul(graph_mH(u), gu)
    inner = (x - graph_mH(x)) * graph_inverse_gaps(s * s) * _row(s)
    if np.iscomplexobj(x.value if isinstance(x, Variable) else x):
        k = s.shape[-1]
        im = imag(diagonal(x, axis1=-2, axis2=-1)) / s
        inner = inner + _row(im) * (1j * np.eye(k, dtype=s.dtype))
    if u.shape[-2] > u.shape[-1]:
        inner = inner - x / _row(s)
        return matmul(matmul(u, inner) + gu / _row(s), vh)
    return matmul(matmul(u, inner), vh)


def _graph_vh_backward(u: Any, s: Any, vh: Any, gvh: Any) -> Any:
    """:func:`_vh_backward` with lampy ops."""
    y = matmul(vh, graph_mH(gvh))
    inner = (y - graph_mH(y)) * graph_inverse_gaps(s * s) * _col(s)
    if vh.shape[-1] > vh.shape[-2]:
        inner = matmul(inner - graph_mH(y) / _col(s), vh) + gvh / _col(s)
        return matmul(u, inner)
    return matmul(u, matmul(inner, vh))


def svd(
    a: Operand, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> Any:
    """Singular value decomposition ``a = U diag(S) Vh``, batched (``numpy.linalg.svd``).

    Args:
        a: A matrix ``(..., M, N)``.
        full_matrices: ``U`` is ``(M, M)`` and ``Vh`` is ``(N, N)`` if True, else
            ``(M, K)`` and ``(K, N)`` with ``K = min(M, N)``.
        compute_uv: If False, return the singular values ``S`` alone.
        hermitian: ``a`` is symmetric (Hermitian): numpy then reads its lower triangle
            only.

    Returns:
        ``SVDResult(U, S, Vh)`` of Variables, or the Variable ``S``.

    Gradient:
        With ``F[i, j] = 1 / (s_j^2 - s_i^2)`` (0 on the diagonal), ``X = U^H gU``,
        ``Y = V^H gV`` (Townsend 2016, Differentiating the singular value decomposition;
        PyTorch's ``svd_backward`` for complex ``a``):
        ``da = U (diag(gS) + (F * (X - X^H)) S + S (F * (Y - Y^H)) + i im(diag(X))
        S^{-1}) V^H + (I - U U^H) gU S^{-1} V^H + U S^{-1} gV^H (I - V V^H)``.
        The ``S`` part ``U diag(gS) V^T`` is valid for any ``a``; the ``U``, ``Vh`` parts
        need distinct singular values (repeated ones give inf or nan, as in PyTorch),
        nonzero ones when ``a`` is not square, and functions that are invariant to
        flipping the signs of a pair ``(u_i, v_i)`` (for complex ``a``, to multiplying
        both by one phase ``e^{i phi}``). With ``full_matrices=True`` and a
        non-square ``a``, the extra columns ``U2`` (rows ``Vh2``) are any basis of the
        complement: their cotangent is folded into the first ones as
        ``gU1 - U2 gU2^H U1``, exact for functions that depend on them only through
        their span (PyTorch ignores that cotangent instead). With ``hermitian=True``
        the gradient is symmetrised (its Hermitian part), as for :func:`eigh`.
    """
    arr = matrix_value("svd", a, complex_ok=True)
    grad = wants_grad(a)
    if not compute_uv:
        if not grad:
            return op("svd", np.linalg.svd(arr, compute_uv=False, hermitian=hermitian))
        u, s, vh = np.linalg.svd(arr, full_matrices=False, hermitian=hermitian)

        def d_s_only(g: np.ndarray) -> Any:
            ga = values_backward(u, vh, g)
            return sym(ga) if hermitian else ga

        n_a = node_of(a)

        def vjp_s_only(g: Any, out: Any) -> Any:
            uv, _, vhv = graph_svd(graph_value(n_a, arr), s, hermitian)
            return _graph_finish(matmul(uv * _row(g), vhv), hermitian)

        return op("svd", s, contrib_of(a, d_s_only, fresh=False, vjp=vjp_s_only))

    u_full, s, vh_full = np.linalg.svd(arr, full_matrices=full_matrices, hermitian=hermitian)
    k = s.shape[-1]
    u, vh = u_full[..., :k], vh_full[..., :k, :]
    f = Lazy(lambda: inverse_gaps(s * s))

    def finish(ga: np.ndarray, out: np.ndarray) -> None:
        _add(out, sym(ga) if hermitian else ga, out=out)

    def d_u(g: np.ndarray, out: np.ndarray) -> None:
        gu = g
        if u_full.shape[-1] > k:
            gu = g[..., :k] - u_full[..., k:] @ (mH(g[..., k:]) @ u)
        finish(_u_backward(u, s, vh, f, gu), out)

    def d_s(g: np.ndarray, out: np.ndarray) -> None:
        finish(values_backward(u, vh, g), out)

    def d_vh(g: np.ndarray, out: np.ndarray) -> None:
        gvh = g
        if vh_full.shape[-2] > k:
            gvh = g[..., :k, :] - (vh @ mH(g[..., k:, :])) @ vh_full[..., k:, :]
        finish(_vh_backward(u, s, vh, f, gvh), out)

    n_a = node_of(a)

    def vjp_u(g: Any, out: Any) -> Any:
        uv, sv, vhv = graph_svd(graph_value(n_a, arr), s, hermitian)
        return _graph_finish(_graph_u_backward(uv, sv, vhv, g), hermitian)

    def vjp_s(g: Any, out: Any) -> Any:
        uv, _, vhv = graph_svd(graph_value(n_a, arr), s, hermitian)
        return _graph_finish(matmul(uv * _row(g), vhv), hermitian)

    def vjp_vh(g: Any, out: Any) -> Any:
        uv, sv, vhv = graph_svd(graph_value(n_a, arr), s, hermitian)
        return _graph_finish(_graph_vh_backward(uv, sv, vhv, g), hermitian)

    # Extra columns of U (rows of Vh) are any basis of a complement: no vjp (their
    # derivative is not defined), so a differentiable pass through them refuses.
    return SVDResult(
        op("svd", u_full, param_of(a, d_u, vjp=vjp_u if u_full.shape[-1] == k else None)),
        op("svd", s, param_of(a, d_s, vjp=vjp_s)),
        op("svd", vh_full, param_of(a, d_vh, vjp=vjp_vh if vh_full.shape[-2] == k else None)),
    )


# Complex matrices: closures written with conjugate transposes (and the phase term).
complex_rule(OWN, "svd")

__all__ = ["graph_svd", "svd", "values_backward"]
