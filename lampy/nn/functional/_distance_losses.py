"""Similarities, distances and the margin losses built on them, with PyTorch's names,
arguments and semantics (``torch.nn.functional``): ``cosine_similarity``,
``pairwise_distance``, ``cosine_embedding_loss``, ``margin_ranking_loss``,
``triplet_margin_loss``, ``hinge_embedding_loss`` and ``soft_margin_loss``.

Each is one fused op with its exact gradient. ``reduction`` is ``"mean"``, ``"sum"`` or
``"none"``; float32 stays float32. A hinge ``max(0, z)`` passes the gradient where
``z >= 0``, as PyTorch's ``clamp_min``. Targets of +1/-1 are constants (no gradient),
except in ``margin_ranking_loss``, where PyTorch's composite formula differentiates the
target too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.nn.functional._loss_reduction import check_reduction, reduced
from lampy.nn.functional._p_norms import vector_norm, vector_norm_grad
from lampy.opkit import Operand, Variable, contrib_of, normalize_axis, op, unbroadcast, value_of

__all__ = [
    "cosine_embedding_loss",
    "cosine_similarity",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "pairwise_distance",
    "soft_margin_loss",
    "triplet_margin_loss",
]


# PyTorch's constant, a C float: 1e-12 rounded to float32 (9.99999996e-13).
_EPSILON = float(np.float32(1e-12))


def _floats(name: str, *xs: Any) -> list[np.ndarray]:
    """The values of ``xs`` (operands of op ``name``) as arrays of one float dtype (the
    result type, at least float32 when all are float32; integers alone become float64)."""
    vals = [np.asarray(value_of(x, name=name)) for x in xs]
    floats = [v.dtype for v in vals if v.dtype.kind == "f"]
    dtype = np.result_type(*floats) if floats else np.dtype(np.float64)
    return [v.astype(dtype, copy=False) for v in vals]


def _broadcast(name: str, *arrays: np.ndarray) -> tuple[int, ...]:
    """The broadcast shape of ``arrays``; a ShapeError naming ``name`` if there is none."""
    try:
        return np.broadcast_shapes(*(x.shape for x in arrays))
    except ValueError:
        shapes = ", ".join(str(x.shape) for x in arrays)
        raise ShapeError(
            f"{name}: shapes {shapes} do not broadcast together. Numpy broadcasting needs "
            "each set of trailing dimensions to be equal or 1; reshape or expand_dims the "
            "inputs so that they line up."
        ) from None


def _grad_to(x: Any, d: Any) -> np.ndarray:
    """``d`` summed down to the shape of the Variable ``x``, in its dtype, as a new array
    (the engine may keep it as the gradient buffer)."""
    r = unbroadcast(np.asarray(d), x.shape)
    if r.base is not None or not r.flags.writeable:
        return r.astype(x.dtype, copy=True)
    return r.astype(x.dtype, copy=False)


# --- similarities and distances -----------------------------------------------------


def _cosine(
    a: np.ndarray, b: np.ndarray, axis: int, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(cos, n1, n2, d1, d2)`` along ``axis`` (kept), ``d = max(n, eps)``."""
    n1 = np.sqrt((a * a).sum(axis=axis, keepdims=True))
    n2 = np.sqrt((b * b).sum(axis=axis, keepdims=True))
    d1 = np.maximum(n1, a.dtype.type(eps))
    d2 = np.maximum(n2, a.dtype.type(eps))
    cos = (a * b).sum(axis=axis, keepdims=True) / (d1 * d2)
    return cos, n1, n2, d1, d2


def _cosine_grad(a: np.ndarray, b: np.ndarray, cos: Any, n1: Any, d1: Any, d2: Any, c: Any) -> Any:
    """``c * d cos / d a``: the norm's clamp at eps passes the norm's own derivative
    (PyTorch clamps in place under no_grad), which is 0 where the norm is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        radial = np.where(n1 == 0, 0, cos / (d1 * n1)).astype(a.dtype, copy=False)
    return (b / (d1 * d2) - a * radial) * c


def cosine_similarity(x1: Operand, x2: Operand, dim: int = 1, eps: float = 1e-8) -> Variable:
    """Cosine similarity along ``dim`` of the broadcast of ``x1`` and ``x2``, as
    ``torch.nn.functional.cosine_similarity``:
    ``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))``.

    Gradient:
        With ``d_i = max(||x_i||, eps)``: ``dx1 = g (x2 / (d1 d2) - cos x1 / (d1 ||x1||))``
        (second term 0 where ``x1 = 0``), symmetrically for ``x2``; summed back over
        broadcast dimensions.
    """
    name = "cosine_similarity"
    a, b = _floats("cosine_similarity", x1, x2)
    shape = _broadcast(name, a, b)
    (axis,) = normalize_axis(name, dim, len(shape))
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    cos, n1, n2, d1, d2 = _cosine(a, b, axis, eps)

    def d_x1(g: np.ndarray) -> Any:
        return _grad_to(x1, _cosine_grad(a, b, cos, n1, d1, d2, np.expand_dims(g, axis)))

    def d_x2(g: np.ndarray) -> Any:
        return _grad_to(x2, _cosine_grad(b, a, cos, n2, d2, d1, np.expand_dims(g, axis)))

    value = np.squeeze(cos, axis=axis)
    return op(name, value, contrib_of(x1, d_x1), contrib_of(x2, d_x2))


def _distance(
    name: str, a: np.ndarray, b: np.ndarray, p: float, eps: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(diff, norm, axis)`` with ``diff = a - b + eps`` and its p-norm along the last
    axis of the broadcast shape (kept)."""
    _broadcast(name, a, b)
    diff = np.asarray(a - b + a.dtype.type(eps))
    if diff.ndim == 0:
        diff = diff.reshape(1)
    axis = diff.ndim - 1
    return diff, vector_norm(diff, p, axis), axis


def pairwise_distance(
    x1: Operand, x2: Operand, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Variable:
    """The p-norm of ``x1 - x2 + eps`` along the last dimension of their broadcast, as
    ``torch.nn.functional.pairwise_distance`` (``p`` may be 0, negative or ``inf``).

    Gradient:
        ``dx1 = g * d||v||_p / dv`` at ``v = x1 - x2 + eps`` (for p = 2: ``g v / ||v||``;
        0 where the norm is 0; for ``inf`` split among the entries attaining the max),
        ``dx2 = -dx1``; summed back over broadcast dimensions.
    """
    name = "pairwise_distance"
    a, b = _floats("pairwise_distance", x1, x2)
    out_ndim = max(a.ndim, b.ndim)
    diff, norm, axis = _distance(name, a, b, p, eps)
    value = norm if keepdim and out_ndim else np.squeeze(norm, axis=axis)

    def d_diff(g: np.ndarray) -> np.ndarray:
        c = g.reshape(norm.shape)
        return np.asarray(vector_norm_grad(diff, norm, p, axis, c)).reshape(diff.shape)

    def d_x1(g: np.ndarray) -> Any:
        return _grad_to(x1, d_diff(g).reshape(np.broadcast_shapes(a.shape, b.shape)))

    def d_x2(g: np.ndarray) -> Any:
        return _grad_to(x2, -d_diff(g).reshape(np.broadcast_shapes(a.shape, b.shape)))

    return op(name, value, contrib_of(x1, d_x1), contrib_of(x2, d_x2))


# --- margin losses ------------------------------------------------------------------


def _expand(c: Any, axis: int) -> Any:
    """The per-sample cotangent ``c`` (0-d after a reduction) broadcast over ``axis``."""
    return np.expand_dims(c, axis) if np.ndim(c) else c


def cosine_embedding_loss(
    input1: Operand,
    input2: Operand,
    target: Operand,
    margin: float = 0,
    reduction: str = "mean",
) -> Variable:
    """``1 - cos`` where ``target == 1`` and ``max(0, cos - margin)`` where
    ``target == -1`` (0 for other targets), as ``torch.nn.functional.cosine_embedding_loss``;
    ``cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-12) (sum(x2^2) + 1e-12))`` along the
    last dimension of inputs of shape (N, D) with targets (N,), or (D,) with a 0-d target.

    Gradient:
        ``dx1 = dl/dcos * (x2 / s - cos x1 / (sum(x1^2) + 1e-12))`` with
        ``s = sqrt((sum(x1^2) + 1e-12)(sum(x2^2) + 1e-12))``, ``dl/dcos = -1`` for
        ``target == 1``, ``1`` for ``target == -1`` where ``cos - margin >= 0``, else 0;
        symmetrically for ``x2``. The target gets no gradient.
    """
    name = "cosine_embedding_loss"
    check_reduction(name, reduction)
    a, b, t = _floats("cosine_embedding_loss", input1, input2, target)
    if a.shape != b.shape or t.ndim not in (0, 1) or a.ndim != t.ndim + 1:
        raise ShapeError(
            f"{name}: inputs of shapes {a.shape} and {b.shape} with a target of shape "
            f"{t.shape} do not fit; pass inputs of one shape (N, D) with targets (N,), "
            "or (D,) with a 0-d target."
        )
    if t.ndim == 1 and t.shape[0] != a.shape[0]:
        raise ShapeError(
            f"{name}: the target of shape {t.shape} needs one value per row of the inputs "
            f"of shape {a.shape}; pass a target of shape ({a.shape[0]},)."
        )
    axis = a.ndim - 1
    tiny = a.dtype.type(_EPSILON)
    s1 = (a * a).sum(axis=axis) + tiny
    s2 = (b * b).sum(axis=axis) + tiny
    denom = np.sqrt(s1 * s2)
    cos = (a * b).sum(axis=axis) / denom
    pos, neg = t == 1, t == -1
    hinge = cos - a.dtype.type(margin)
    loss = np.where(pos, 1 - cos, 0) + np.where(neg, np.maximum(hinge, 0), 0)
    loss = np.asarray(loss, dtype=a.dtype)
    slope = (np.where(neg & (hinge >= 0), 1, 0) - pos).astype(a.dtype)

    def d_in(x: Any, u: np.ndarray, v: np.ndarray, su: np.ndarray) -> Any:
        def d(c: Any) -> Any:
            k = _expand(c * slope, axis)
            return _grad_to(x, (v / denom[..., None] - u * (cos / su)[..., None]) * k)

        return d

    pairs = [(input1, d_in(input1, a, b, s1)), (input2, d_in(input2, b, a, s2))]
    return reduced(name, loss, reduction, loss.size, pairs)


def margin_ranking_loss(
    input1: Operand,
    input2: Operand,
    target: Operand,
    margin: float = 0,
    reduction: str = "mean",
) -> Variable:
    """``max(0, -target (input1 - input2) + margin)``, elementwise with broadcasting, as
    ``torch.nn.functional.margin_ranking_loss`` (the three must have the same number of
    dimensions).

    Gradient:
        Where ``z = -target (x1 - x2) + margin >= 0``: ``dx1 = -g target``,
        ``dx2 = g target``, ``dtarget = -g (x1 - x2)``; 0 elsewhere.
    """
    name = "margin_ranking_loss"
    check_reduction(name, reduction)
    a, b, t = _floats("margin_ranking_loss", input1, input2, target)
    if not a.ndim == b.ndim == t.ndim:
        raise ShapeError(
            f"{name}: input1 {a.shape}, input2 {b.shape} and target {t.shape} must have "
            "the same number of dimensions; reshape them to match."
        )
    shape = _broadcast(name, a, b, t)
    diff = a - b
    z = -t * diff + a.dtype.type(margin)
    active = z >= 0
    loss = np.asarray(np.maximum(z, 0), dtype=a.dtype)
    ta = np.where(active, t, 0).astype(a.dtype)

    def to(x: Any, d: Any) -> Any:
        return lambda c: _grad_to(x, np.broadcast_to(d(c), shape))

    pairs = [
        (input1, to(input1, lambda c: -ta * c)),
        (input2, to(input2, lambda c: ta * c)),
        (target, to(target, lambda c: np.where(active, -diff, 0) * c)),
    ]
    return reduced(name, loss, reduction, loss.size, pairs)


def triplet_margin_loss(
    anchor: Operand,
    positive: Operand,
    negative: Operand,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-06,
    swap: bool = False,
    reduction: str = "mean",
) -> Variable:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d = pairwise_distance(., ., p, eps)``
    along the last dimension, as ``torch.nn.functional.triplet_margin_loss``; with
    ``swap``, ``d(a, n)`` is replaced by ``min(d(a, n), d(p, n))``. The three inputs
    must have the same number of dimensions (they broadcast).

    Gradient:
        Where the hinge is active (``>= 0``): ``g`` times the gradients of
        ``d(a, p) - d(a, n)`` (``pairwise_distance``'s); with ``swap`` a tie between
        ``d(a, n)`` and ``d(p, n)`` splits the gradient equally, as PyTorch's ``min``.
    """
    name = "triplet_margin_loss"
    check_reduction(name, reduction)
    if margin <= 0:
        raise LampyValueError(f"{name}: margin must be greater than 0, got {margin}.")
    a, pos, neg = _floats("triplet_margin_loss", anchor, positive, negative)
    if not a.ndim == pos.ndim == neg.ndim:
        raise ShapeError(
            f"{name}: the anchor {a.shape}, positive {pos.shape} and negative {neg.shape} "
            "must have the same number of dimensions; reshape them to match."
        )
    shape = _broadcast(name, a, pos, neg)
    diff_p, dist_p, axis = _distance(name, a, pos, p, eps)
    diff_n, dist_n, _ = _distance(name, a, neg, p, eps)
    w_an = np.ones_like(dist_n)
    w_pn = np.zeros_like(dist_n)
    if swap:
        diff_s, dist_s, _ = _distance(name, pos, neg, p, eps)
        w_an = np.where(dist_n < dist_s, 1.0, np.where(dist_n == dist_s, 0.5, 0.0))
        w_pn = (1 - w_an).astype(a.dtype)
        w_an = w_an.astype(a.dtype)
        dist_neg = np.minimum(dist_n, dist_s)
    else:
        dist_neg = dist_n
    z = margin + dist_p - dist_neg
    active = (z >= 0).astype(a.dtype)
    loss = np.asarray(np.maximum(z, 0), dtype=a.dtype)
    loss = np.squeeze(loss, axis=axis) if a.ndim else loss.reshape(())

    def parts(c: Any) -> tuple[Any, Any, Any]:
        k = _expand(c, -1) * active
        gp = vector_norm_grad(diff_p, dist_p, p, axis, k)
        gn = vector_norm_grad(diff_n, dist_n, p, axis, k * w_an)
        gs = vector_norm_grad(diff_s, dist_s, p, axis, k * w_pn) if swap else 0
        return gp, gn, gs

    def grad(x: Any, pick: Any) -> Any:
        return lambda c: _grad_to(x, np.broadcast_to(pick(*parts(c)), shape or (1,)))

    pairs = [
        (anchor, grad(anchor, lambda gp, gn, gs: gp - gn)),
        (positive, grad(positive, lambda gp, gn, gs: -gp - gs)),
        (negative, grad(negative, lambda gp, gn, gs: gn + gs)),
    ]
    return reduced(name, loss, reduction, loss.size, pairs)


def hinge_embedding_loss(
    input: Operand, target: Operand, margin: float = 1.0, reduction: str = "mean"
) -> Variable:
    """``x`` where ``target == 1`` and ``max(0, margin - x)`` where ``target == -1``
    (both terms for other targets), elementwise with broadcasting, as
    ``torch.nn.functional.hinge_embedding_loss``.

    Gradient:
        ``dx = g ([target != -1] - [target != 1] [margin - x >= 0])``; the target gets
        no gradient.
    """
    name = "hinge_embedding_loss"
    check_reduction(name, reduction)
    a, t = _floats("hinge_embedding_loss", input, target)
    shape = _broadcast(name, a, t)
    z = a.dtype.type(margin) - a
    loss = np.where(t != 1, np.maximum(z, 0), 0) + np.where(t != -1, a, 0)
    loss = np.asarray(np.broadcast_to(loss, shape), dtype=a.dtype)
    slope = ((t != -1).astype(a.dtype) - ((t != 1) & (z >= 0))).astype(a.dtype)
    pairs = [(input, lambda c: _grad_to(input, np.broadcast_to(slope * c, shape)))]
    return reduced(name, loss, reduction, loss.size, pairs)


def soft_margin_loss(input: Operand, target: Operand, reduction: str = "mean") -> Variable:
    """``log(1 + exp(-target * input))``, elementwise with broadcasting, computed stably,
    as ``torch.nn.functional.soft_margin_loss``.

    Gradient:
        ``dx = -g target sigmoid(-target x)``; the target gets no gradient (PyTorch
        does not differentiate it either).
    """
    name = "soft_margin_loss"
    check_reduction(name, reduction)
    a, t = _floats("soft_margin_loss", input, target)
    shape = _broadcast(name, a, t)
    u = -t * a
    loss = np.maximum(u, 0) + np.log1p(np.exp(-np.abs(u)))
    loss = np.asarray(np.broadcast_to(loss, shape), dtype=a.dtype)

    def d_input(c: Any) -> Any:
        with np.errstate(over="ignore"):
            sig = 1 / (1 + np.exp(-u))
        return _grad_to(input, np.broadcast_to(-t * sig * c, shape))

    return reduced(name, loss, reduction, loss.size, [(input, d_input)])
