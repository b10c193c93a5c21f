"""Norms and rank: norm, matrix_rank."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import ShapeError
from lampy.linalg._common import wants_grad
from lampy.linalg._svd import graph_svd, values_backward
from lampy.opkit import (
    OWN,
    Operand,
    Variable,
    array_of,
    complex_rule,
    contrib_of,
    graph_value,
    lifted,
    node_of,
    one_axis,
    op,
    param_of,
    value_of,
)
from lampy.ops import matmul, moveaxis, reshape, where

_add, _abs, _sign = np.add, np.abs, np.sign
_inf = np.inf


def _safe_divide(g: np.ndarray, v: np.ndarray) -> Any:
    """``g / v``, taken as 0 where ``v == 0`` (the gradient of a norm at 0)."""
    g, v = np.asarray(g), np.asarray(v)
    shape = np.broadcast_shapes(g.shape, v.shape)
    return np.divide(g, v, out=np.zeros(shape, np.result_type(g, v)), where=v != 0)


def _kept(g: Any, value: Any, axes: Any, keepdims: bool) -> Any:
    """A norm's cotangent ``g`` (or its value) with the reduced ``axes`` put back as
    length-1 axes, with lampy ops (for vjps)."""
    if keepdims or axes is None:
        return g
    return reshape(g, np.shape(np.expand_dims(value, axes)))


def _safe_over(g: Any, v: Any, zero: np.ndarray) -> Any:
    """``g / v`` with lampy ops, 0 where the constant mask ``zero`` holds (where the
    value ``v`` is 0), as :func:`_safe_divide`."""
    if not zero.any():
        return g / v
    return (g * ~zero) / where(zero, 1, v)


def _euclidean(x: Any, a: np.ndarray, value: Any, axes: Any, keepdims: bool) -> Variable:
    """The 2-norm over ``axes`` (None: all, flattened); gradient ``g x / norm``, 0 at 0."""

    def d_x(g: np.ndarray) -> Any:
        gk, vk = g, value
        if not keepdims and axes is not None:
            gk, vk = np.expand_dims(g, axes), np.expand_dims(value, axes)
        return a * _safe_divide(gk, vk)

    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:
        zero = np.asarray(np.expand_dims(value, axes) if not keepdims and axes else value) == 0
        kg, kv = _kept(g, value, axes, keepdims), _kept(lifted(out, value), value, axes, keepdims)
        return graph_value(n, a) * _safe_over(kg, kv, zero)

    return op("norm", value, contrib_of(x, d_x, fresh=False, vjp=vjp))


def _abs2(a: np.ndarray) -> Any:
    """``|a|**2`` elementwise, as numpy's norms compute it: ``(conj(a) * a).real``."""
    return (a.conj() * a).real if a.dtype.kind == "c" else a * a


def _real_only(a: np.ndarray, vjp: Any) -> Any:
    """``vjp``, which treats ``sign(x)`` as a constant (right for real ``x``, where it is
    piecewise constant), or None for a complex ``x``, whose ``x / |x|`` varies: a
    differentiable pass then raises ``NoSecondOrderError``."""
    return None if a.dtype.kind == "c" else vjp


def _extreme_share(m: np.ndarray, ext: np.ndarray, axis: Any) -> Any:
    """Weights that share a max/min equally among the entries of ``m`` equal to ``ext``
    (``ext`` kept-dims along ``axis``)."""
    hit = m == ext
    return hit / np.sum(hit, axis=axis, keepdims=True)


def _vector(x: Any, a: np.ndarray, ord: Any, ax: int, keepdims: bool) -> Variable:
    axis = (ax,)
    if ord is None or ord == 2:
        value = np.sqrt(np.sum(_abs2(a), axis=axis, keepdims=keepdims))
        return _euclidean(x, a, value, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order '{ord}' for vectors")
    if ord == 0:
        value = (a != 0).astype(a.real.dtype).sum(axis=axis, keepdims=keepdims)
        return op("norm", value, param_of(x, lambda g, out: None, vjp=lambda g, out: None))
    absx = _abs(a)
    if ord == _inf or ord == -_inf:
        ext = (
            absx.max(axis=ax, keepdims=True, initial=0)
            if ord > 0
            else absx.min(axis=ax, keepdims=True)
        )
        value = ext if keepdims else np.squeeze(ext, axis)

        def d_ext(g: np.ndarray) -> Any:
            gk = g if keepdims else np.expand_dims(g, axis)
            return _sign(a) * _extreme_share(absx, ext, axis) * gk

        def vjp_ext(g: Any, out: Any) -> Any:  # a constant times g
            return _kept(g, value, axis, keepdims) * (_sign(a) * _extreme_share(absx, ext, axis))

        return op("norm", value, contrib_of(x, d_ext, fresh=False, vjp=_real_only(a, vjp_ext)))
    if ord == 1:
        value = np.sum(absx, axis=axis, keepdims=keepdims)

        def d_one(g: np.ndarray) -> Any:
            gk = g if keepdims else np.expand_dims(g, axis)
            return _sign(a) * gk

        vjp_one = lambda g, out: _kept(g, value, axis, keepdims) * _sign(a)
        return op("norm", value, contrib_of(x, d_one, fresh=False, vjp=_real_only(a, vjp_one)))
    powered = absx**ord
    value = np.sum(powered, axis=axis, keepdims=keepdims)
    value **= np.reciprocal(ord, dtype=value.dtype)

    def d_p(g: np.ndarray) -> Any:
        gk, vk = g, value
        if not keepdims:
            gk, vk = np.expand_dims(g, axis), np.expand_dims(value, axis)
        d = _sign(a) * absx ** (ord - 1) * vk ** (1 - ord)
        d[a == 0] = 0
        return d * gk

    n = node_of(x)

    def vjp_p(g: Any, out: Any) -> Any:  # d_p with lampy ops; 0 kept where x or the norm is 0
        vk = _kept(lifted(out, value), value, axis, keepdims)
        zero = np.asarray(a == 0)
        kv = np.asarray(value if keepdims else np.expand_dims(value, axis))
        absx_v = abs(graph_value(n, a))
        if zero.any():
            absx_v = where(zero, 1, absx_v)
        vk = where(kv == 0, 1, vk) if (kv == 0).any() else vk
        d = absx_v ** (ord - 1) * vk ** (1 - ord) * (_sign(a) * ~zero)
        return d * _kept(g, value, axis, keepdims)

    return op("norm", value, contrib_of(x, d_p, fresh=False, vjp=_real_only(a, vjp_p)))


def _matrix(x: Any, a: np.ndarray, ord: Any, r: int, c: int, keepdims: bool) -> Variable:
    if r == c:
        raise ValueError("norm: duplicate axes given.")
    axis = (r, c)
    if ord is None or (isinstance(ord, str) and ord in ("fro", "f")):
        value = np.sqrt(np.sum(_abs2(a), axis=axis, keepdims=keepdims))
        return _euclidean(x, a, value, axis, keepdims)
    if (isinstance(ord, str) and ord == "nuc") or ord in (2, -2):
        return _svd_norm(x, a, ord, r, c, keepdims)
    if isinstance(ord, str) or ord not in (1, -1, _inf, -_inf):
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices.")
    absx = _abs(a)
    # ord +-1: sum down the rows (axis r), then max/min over columns; +-inf the reverse
    summed, other = (r, c) if ord in (1, -1) else (c, r)
    sums = np.sum(absx, axis=summed, keepdims=True)
    ext = (
        sums.max(axis=other, keepdims=True, initial=0)
        if ord > 0
        else sums.min(axis=other, keepdims=True)
    )
    value = ext if keepdims else np.squeeze(ext, axis)

    def d_x(g: np.ndarray) -> Any:
        gk = g if keepdims else np.expand_dims(g, axis)
        return _sign(a) * (_extreme_share(sums, ext, other) * gk)

    def vjp(g: Any, out: Any) -> Any:  # a constant times g
        return _kept(g, value, axis, keepdims) * (_sign(a) * _extreme_share(sums, ext, other))

    return op("norm", value, contrib_of(x, d_x, fresh=False, vjp=_real_only(a, vjp)))


def _svd_norm(x: Any, a: np.ndarray, ord: Any, r: int, c: int, keepdims: bool) -> Variable:
    y = np.moveaxis(a, (r, c), (-2, -1))
    grad = wants_grad(x)
    if grad:
        u, s, vh = np.linalg.svd(y, full_matrices=False)
    else:
        s = np.linalg.svd(y, compute_uv=False)
    if ord == 2:
        value = np.amax(s, axis=-1, initial=0)
    elif ord == -2:
        value = np.amin(s, axis=-1)
    else:
        value = np.sum(s, axis=-1, initial=0)
    if keepdims:
        value = np.expand_dims(value, (r, c))

    def d_x(g: np.ndarray) -> Any:
        gb = np.squeeze(g, (r, c)) if keepdims else g
        if ord == "nuc":
            gs = np.broadcast_to(np.asarray(gb)[..., None], s.shape)
        else:
            ext = value if not keepdims else np.squeeze(value, (r, c))
            gs = _extreme_share(s, np.asarray(ext)[..., None], -1) * np.asarray(gb)[..., None]
        return np.moveaxis(values_backward(u, vh, gs), (-2, -1), (r, c))

    n = node_of(x)

    def vjp(g: Any, out: Any) -> Any:  # U diag(gs) V^T, the SVD recomputed with lampy's
        uv, _, vhv = graph_svd(moveaxis(graph_value(n, a), (r, c), (-2, -1)), s)
        gs = reshape(g, (*s.shape[:-1], 1, 1))
        if ord != "nuc":
            ext = value if not keepdims else np.squeeze(value, (r, c))
            gs = gs * _extreme_share(s, np.asarray(ext)[..., None], -1)[..., None, :]
        return moveaxis(matmul(uv * gs, vhv), (-2, -1), (r, c))

    return op("norm", value, contrib_of(x, d_x, fresh=False, vjp=vjp) if grad else None)


def norm(x: Operand, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Variable:
    """Vector or matrix norm, as ``numpy.linalg.norm``.

    With ``axis`` an int (or ``x`` 1-d and ``axis=None``) a vector norm: ``ord`` None or
    2 (Euclidean), 1, ``inf``, ``-inf``, 0 (count of nonzeros) or any other number
    ``p``: ``sum(|x|**p)**(1/p)``. With ``axis`` a pair (or ``x`` 2-d) a matrix norm:
    ``'fro'`` (default), ``'nuc'`` (sum of singular values), 1 / -1 (max / min column
    sum of ``|x|``), ``inf`` / ``-inf`` (max / min row sum), 2 / -2 (largest / smallest
    singular value). ``ord=None, axis=None`` is the 2-norm of ``x`` flattened. ``x`` may
    be a list of Variables, stacked as numpy stacks an array-like.

    Gradient:
        Euclidean and ``'fro'``: ``g x / norm``. ``p``: ``g sign(x) |x|**(p-1) /
        norm**(p-1)``. 1: ``g sign(x)``. ``+-inf``: ``g sign(x)`` on the entries of
        extreme ``|x|``. Matrix 1 / inf: ``g sign(x)`` on the extreme column / row.
        ``'nuc'``: ``g U V^T``; 2 / -2: ``g u v^T`` for the extreme singular pair
        (Townsend 2016). Conventions (PyTorch's): the gradient is 0 where the norm is
        0, and for ``p < 1`` at entries equal to 0; ``sign(0) = 0``; ties for a max or
        min share the gradient equally (for 2 / -2 that is ``U diag(share) V^T``); the
        0-"norm" has zero gradient. A complex ``x`` (its norms are real, numpy's
        values) gets the same formulas with ``sign(x) = x / |x|`` and ``V^H``; its
        second derivatives exist for the Euclidean, ``'fro'`` and singular-value norms
        only (the others raise ``NoSecondOrderError`` in a differentiable pass).
    """
    x = array_of("norm", x)
    a = np.asarray(value_of(x, name="norm"))
    if a.dtype.kind not in "fc":
        a = a.astype(float)
    nd = a.ndim
    if axis is None:
        fro = isinstance(ord, str) and ord in ("f", "fro") and nd == 2
        if ord is None or fro or (not isinstance(ord, str) and ord == 2 and nd == 1):
            flat = a.ravel(order="K")
            if flat.dtype.kind == "c":  # numpy's sum of squares for complex values
                value = np.sqrt(flat.real.dot(flat.real) + flat.imag.dot(flat.imag))
            else:
                value = np.sqrt(flat.dot(flat))
            if keepdims:
                value = value.reshape(nd * [1])
            return _euclidean(x, a, value, None, keepdims)
        axes: tuple[int, ...] = tuple(range(nd))
    elif isinstance(axis, tuple):
        axes = tuple(one_axis("norm", ax, nd) for ax in axis)
    else:
        axes = (one_axis("norm", axis, nd),)
    if len(axes) == 1:
        return _vector(x, a, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix(x, a, ord, axes[0], axes[1], keepdims)
    raise ShapeError(
        f"norm: improper number of dimensions to norm: axis {axis!r} of an array of shape "
        f"{a.shape} names {len(axes)} axes; pass one axis (vector norm) or two (matrix norm)."
    )


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """Rank of a matrix (or stack) by the SVD, as ``numpy.linalg.matrix_rank``.

    A constant: returns numpy's integer result, never a Variable.

    Gradient:
        None (the rank is piecewise constant).
    """
    t = None if tol is None else value_of(tol, name="matrix_rank")
    extra = (
        {} if rtol is None else {"rtol": value_of(rtol, name="matrix_rank")}
    )  # numpy < 2 has no rtol
    return np.linalg.matrix_rank(
        value_of(A, name="matrix_rank"), tol=t, hermitian=hermitian, **extra
    )


# Complex arrays: the closures use sign(x) = x / |x| and U diag(gs) V^H (the values are real).
complex_rule(OWN, "norm")

__all__ = ["matrix_rank", "norm"]
