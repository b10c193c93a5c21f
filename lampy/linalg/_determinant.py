"""Determinants: det, slogdet."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.linalg._common import SlogdetResult, graph_mH, matrix_value, mH, mT
from lampy.linalg._inverse import inv
from lampy.opkit import (
    OWN,
    Operand,
    Variable,
    complex_rule,
    contrib_of,
    graph_value,
    lifted,
    node_of,
    op,
)
from lampy.ops import conj, imag, matrix_transpose, reshape

_add = np.add


def _excluding_products(s: np.ndarray) -> Any:
    """``out[..., i] = prod_{j != i} s[..., j]``, without dividing (zeros allowed)."""
    ones = np.ones_like(s[..., :1])
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return before * after


def _cofactor(a: np.ndarray, det: np.ndarray) -> Any:
    """The cofactor matrix ``det(a) a^{-T}``, also for (nearly) singular matrices.

    Matrices whose ``|det|`` is tiny next to Hadamard's bound (the product of the column
    norms) go through the SVD ``a = U S V^T``: ``det(U) det(V) U diag(prod_{j != i}
    s_j) V^T``, exact at singular matrices; the others through the inverse.
    """
    n = a.shape[-1]
    if a.size == 0:
        return np.zeros_like(a)
    near = np.abs(det) <= 1e-8 * np.prod(np.linalg.norm(a, axis=-2), axis=-1)
    if not near.any():
        return det[..., None, None] * mT(np.linalg.inv(a))
    flat, d, near = a.reshape(-1, n, n), np.reshape(det, -1), np.reshape(near, -1)
    out = np.empty_like(flat)
    if not near.all():
        far = ~near
        out[far] = d[far, None, None] * mT(np.linalg.inv(flat[far]))
    u, s, vh = np.linalg.svd(flat[near])
    signs = np.linalg.det(u) * np.linalg.det(vh)
    out[near] = (u * (signs[:, None] * _excluding_products(s))[:, None, :]) @ vh
    return out.reshape(a.shape)


def det(a: Operand) -> Variable:
    """Determinant of a square matrix, batched over leading axes (``numpy.linalg.det``).

    Gradient:
        ``da = g * det(a) * a^{-T}``, the cofactor matrix. For a (nearly) singular
        ``a`` it is computed from the SVD as ``U diag(prod_{j != i} s_j) V^T`` (times
        ``det(U) det(V)``), so the gradient stays finite and exact there.
    """
    arr = matrix_value("det", a, square=True, complex_ok=True)
    value = np.linalg.det(arr)

    def d_a(g: np.ndarray) -> Any:
        return np.asarray(g)[..., None, None] * _cofactor(arr, np.asarray(value))

    n = node_of(a)

    def vjp(g: Any, out: Any) -> Any:  # g det a^{-T}: through inv, so not at singular a
        scale = reshape(g * lifted(out, value), (*np.shape(value), 1, 1))
        return scale * matrix_transpose(inv(graph_value(n, arr)))

    return op("det", value, contrib_of(a, d_a, fresh=False, vjp=vjp))


def slogdet(a: Operand) -> SlogdetResult:
    """Sign and natural log of the absolute determinant, batched (``numpy.linalg.slogdet``).

    Returns:
        ``SlogdetResult(sign, logabsdet)``: ``logabsdet`` a real Variable (``-inf`` when
        singular); ``sign`` a constant numpy array for a real matrix (1, -1, or 0 when
        singular: piecewise constant), and for a complex matrix ``det / |det|``, a
        Variable when ``a`` needs a gradient (as PyTorch's).

    Gradient:
        ``da = g * a^{-H}`` for ``logabsdet`` (``a^{-T}`` for a real ``a``); for a complex
        ``sign = e^{i theta}``, ``da = -Im(conj(g) sign) * i a^{-H}`` (``d theta = Im(tr(a^{-1}
        da))``). For a singular matrix the gradient is not finite.
    """
    arr = matrix_value("slogdet", a, square=True, complex_ok=True)
    sign, logabsdet = np.linalg.slogdet(arr)

    def inverse_h() -> Any:
        try:
            return mH(np.linalg.inv(arr))
        except np.linalg.LinAlgError:  # singular: 1/s is infinite in some direction
            u, s, vh = np.linalg.svd(arr)
            return (u / s[..., None, :]) @ vh  # a^{-H} = U S^{-1} V^H

    def d_a(g: np.ndarray) -> Any:
        return np.asarray(g)[..., None, None] * inverse_h()

    n = node_of(a)

    def vjp(g: Any, out: Any) -> Any:  # g a^{-H}, through inv (not at singular a)
        inv_t = graph_mH(inv(graph_value(n, arr)))
        return reshape(g, (*np.shape(logabsdet), 1, 1)) * inv_t

    logabs = op("slogdet", logabsdet, contrib_of(a, d_a, fresh=False, vjp=vjp))
    if not np.iscomplexobj(arr) or n is None:
        return SlogdetResult(np.asarray(sign), logabs)

    def d_sign(g: np.ndarray) -> Any:  # the phase's share: -Im(conj(g) sign) i a^{-H}
        phase = np.asarray(np.imag(np.conj(g) * sign)) * -1j
        return phase[..., None, None] * inverse_h()

    def vjp_sign(g: Any, out: Any) -> Any:
        phase = imag(conj(g) * lifted(out, np.asarray(sign)))
        inv_t = graph_mH(inv(graph_value(n, arr)))
        return reshape(phase * -1j, (*np.shape(sign), 1, 1)) * inv_t

    sign_v = op("slogdet_sign", np.asarray(sign), contrib_of(a, d_sign, vjp=vjp_sign))
    return SlogdetResult(sign_v, logabs)


# A complex matrix: slogdet's closures are written with a^{-H} (logabsdet is real, the
# sign's rule is its own).
complex_rule(OWN, "slogdet", "slogdet_sign")

__all__ = ["det", "slogdet"]
