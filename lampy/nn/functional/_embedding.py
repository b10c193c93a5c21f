"""Embedding lookup of ``lampy.nn.functional``: ``embedding``, with PyTorch's name,
arguments and defaults (``torch.nn.functional.embedding``).

One fused op: the forward pass is a row gather, the backward pass a scatter-add of
the output gradient into the weight's rows (repeated ids accumulate), through numpy's
one-dimensional ``add.at`` on flat element indices (several times faster than
``add.at`` on rows). float32 stays float32.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lampy._errors import BadIndexError, DTypeError, LampyValueError, shape_mismatch
from lampy.opkit import Operand, Variable, contrib_of, op, param_of, value_of
from lampy.ops import getitem, reshape

__all__ = ["embedding"]

_RENORM_EPS = 1e-7  # PyTorch's embedding_renorm_: scale = max_norm / (norm + 1e-7)


def _check_ids(name: str, ids: np.ndarray, n: int) -> None:
    if ids.dtype.kind not in "iu":
        raise DTypeError(
            f"{name}: input must hold integer ids (indices into the weight's rows), got "
            f"dtype {ids.dtype}. Cast it, for example `ids.astype(numpy.int64)`."
        )
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        bad = ids[(ids < 0) | (ids >= n)]
        raise BadIndexError(
            f"{name}: an id is out of range: ids must lie in [0, {n}) (num_embeddings = {n}, "
            f"the weight's first axis), got {int(bad.flat[0])}."
        )


def _padding(name: str, padding_idx: int | None, n: int) -> int | None:
    if padding_idx is None:
        return None
    if not -n <= padding_idx < n:
        raise LampyValueError(
            f"{name}: padding_idx must be within num_embeddings: in [-{n}, {n}), got {padding_idx}."
        )
    return padding_idx + n if padding_idx < 0 else padding_idx


def _norms(rows: np.ndarray, p: float) -> np.ndarray:
    """The ``p``-norm of each row (last axis), kept as a column."""
    if p == math.inf:
        return np.asarray(np.abs(rows).max(axis=-1, keepdims=True, initial=0))
    if p == 2:
        return np.asarray(np.sqrt(np.einsum("ij,ij->i", rows, rows)))[:, None]
    return np.asarray(np.sum(np.abs(rows) ** p, axis=-1, keepdims=True) ** (1 / p))


def _norm_grad(rows: np.ndarray, norms: np.ndarray, p: float) -> np.ndarray:
    """``d ||r||_p / d r`` for each row; for p = inf, shared equally among the maxima."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == math.inf:
            hit = np.abs(rows) == norms
            return np.asarray(np.sign(rows) * hit / np.maximum(hit.sum(axis=-1, keepdims=True), 1))
        if p == 2:
            return np.asarray(np.where(norms > 0, rows / norms, 0))
        d = np.sign(rows) * (np.abs(rows) / norms) ** (p - 1)
        return np.asarray(np.where(norms > 0, d, 0))


def embedding(
    input: Operand,
    weight: Operand,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Variable:
    """Rows of ``weight`` at the integer ids ``input``: ``out[..., :] = weight[input[...], :]``.

    Shapes: ``input`` (*) integer ids in [0, num_embeddings) (a numpy integer array or
    an integer const Variable), ``weight`` (num_embeddings, embedding_dim); the result
    is (*, embedding_dim).

    Args:
        input: Integer ids.
        weight: The embedding matrix.
        padding_idx: A row that gets no gradient (negative counts from the end, as in
            PyTorch). Its forward value is the weight's row, as in PyTorch.
        max_norm: If given, each looked-up row whose ``norm_type``-norm exceeds
            ``max_norm`` is scaled by ``max_norm / (norm + 1e-7)``, PyTorch's renorm.
            **Unlike PyTorch, the weight is not modified in place** (lampy's values are
            immutable): lampy renormalises the output rows only and differentiates that
            function exactly, scale included. The output values equal PyTorch's; the
            gradient differs from PyTorch's, which treats the renorm as an edit of the
            weight outside autograd and so passes ``g`` through unscaled. To keep the
            stored weight's rows within ``max_norm`` as PyTorch does, renormalise the
            weight array yourself after each optimiser step.
        norm_type: The ``p`` of the p-norm for ``max_norm`` (``math.inf`` allowed).
        scale_grad_by_freq: Divide each id's gradient by the number of times the id
            occurs in ``input``, as PyTorch.
        sparse: Must be False: lampy has no sparse gradients.

    Returns:
        The looked-up rows.

    Raises:
        DTypeError: if the ids are not integers.
        BadIndexError: if an id lies outside [0, num_embeddings).
        ShapeError: if the weight is not 2-d.
        LampyValueError: for ``sparse=True``, a ``padding_idx`` outside
            [-num_embeddings, num_embeddings), or ``max_norm`` / ``norm_type`` <= 0.

    Gradient:
        ``d weight[i] = sum over positions n with input[n] == i of g[n]`` (repeated ids
        accumulate), times ``1 / count(i)`` with ``scale_grad_by_freq``, and 0 for the
        row ``padding_idx``. With ``max_norm``, each renormalised row ``r`` (scale
        ``s = c / (|r| + 1e-7)``, ``c = max_norm``) contributes
        ``s g - c (g . r) / (|r| + 1e-7)**2 * d|r|/dr`` instead of ``g``.

    Examples:
        >>> import numpy as np, lampy
        >>> from lampy.nn.functional import embedding
        >>> with lampy.Scope():
        ...     w = lampy.param(np.arange(6.0).reshape(3, 2))
        ...     e = embedding(np.array([2, 0, 2]), w)
        ...     e.sum().backward()
        ...     print(e.value.tolist(), w.grad.tolist())
        [[4.0, 5.0], [0.0, 1.0], [4.0, 5.0]] [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]
    """
    name = "embedding"
    if sparse:
        raise LampyValueError(
            f"{name}: sparse=True is not supported: lampy has no sparse gradients. Use "
            "sparse=False (the default); the weight's gradient is then a dense array."
        )
    w = np.asarray(value_of(weight, name=name))
    ids = np.asarray(value_of(input, name=name))
    if w.ndim != 2:
        raise shape_mismatch(
            name, ids, w, detail="weight must be 2-d: (num_embeddings, embedding_dim)."
        )
    n_emb, dim = w.shape
    _check_ids(name, ids, n_emb)
    pad = _padding(name, padding_idx, n_emb)
    if max_norm is not None and not max_norm > 0:
        raise LampyValueError(f"{name}: max_norm must be > 0, got {max_norm}.")
    if max_norm is not None and not norm_type > 0:
        raise LampyValueError(f"{name}: norm_type must be > 0, got {norm_type}.")
    flat_ids = ids.reshape(-1).astype(np.intp, copy=False)
    rows = w.take(flat_ids, axis=0)  # (N, dim), a new array
    renorm = None
    if max_norm is not None and rows.size:
        norms = _norms(rows, norm_type)
        big = norms > max_norm
        if np.any(big):
            c = w.dtype.type(max_norm)
            denom = norms + w.dtype.type(_RENORM_EPS)
            scale = np.where(big, c / denom, 1).astype(w.dtype)
            raw = rows.copy()
            rows *= scale
            renorm = (raw, norms, big, scale, denom)
    rows.flags.writeable = False  # so the reshaped view below is taken without a copy
    value = rows.reshape((*ids.shape, dim))

    def d_weight(g: np.ndarray, out: np.ndarray) -> None:
        g2 = g.reshape(len(flat_ids), dim)
        idx = flat_ids
        if renorm is not None:
            raw, norms, big, scale, denom = renorm
            dot = np.einsum("ij,ij->i", g2, raw)[:, None]
            coef = np.where(big, -w.dtype.type(max_norm) * dot / (denom * denom), 0)
            g2 = g2 * scale + coef.astype(w.dtype) * _norm_grad(raw, norms, norm_type)
        if scale_grad_by_freq:
            counts = np.bincount(idx, minlength=n_emb)[idx]
            g2 = g2 / counts.astype(w.dtype)[:, None]
        if pad is not None:
            keep = idx != pad
            idx, g2 = idx[keep], g2[keep]
        if out.flags.c_contiguous:
            flat = (idx[:, None] * dim + np.arange(dim)).reshape(-1)
            np.add.at(out.reshape(-1), flat, g2.reshape(-1))
        else:
            np.add.at(out, idx, g2)

    def vjp(g: Any, out: Any) -> Any:
        # d_weight is linear in g: a scatter-add of g's rows, as an op whose own
        # gradient gathers the rows again (times 1 / count, 0 at padding_idx)
        dw = np.zeros(w.shape, w.dtype)
        d_weight(np.asarray(value_of(g, name="embedding")), dw)
        if type(g) is not Variable:
            return dw
        f = np.ones(len(flat_ids), w.dtype)
        if scale_grad_by_freq:
            f /= np.bincount(flat_ids, minlength=n_emb)[flat_ids]
        if pad is not None:
            f[flat_ids == pad] = 0
        f2, g_shape = f[:, None], g.shape

        def gather(h: np.ndarray) -> Any:
            return (h[flat_ids] * f2).reshape(g_shape)

        def gather_vjp(h: Any, out: Any) -> Any:
            return reshape(getitem(h, flat_ids) * f2, g_shape)

        return op("embedding_backward", dw, contrib_of(g, gather, vjp=gather_vjp))

    # With max_norm's renormalisation the rule depends on the weight nonlinearly: no vjp
    # (a differentiable pass raises NoSecondOrderError naming the op).
    return op(name, value, param_of(weight, d_weight, vjp=vjp if renorm is None else None))
