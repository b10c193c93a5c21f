"""Attention of ``lampy.nn.functional``: ``scaled_dot_product_attention``, with
PyTorch's name, arguments, defaults and masking conventions
(``torch.nn.functional.scaled_dot_product_attention``).

One fused op with a hand-written backward pass. Like FlashAttention (Dao et al. 2022),
the forward pass keeps q, k, v and the row sums of the weights, not the (L, S) weights
``P`` themselves, nor its output: the backward pass recomputes the weights bit for bit
(one more matmul and exp) and uses the softmax identity
``dS = P * (dP - rowsum(dP * P))``, with ``rowsum(dP * P)`` taken from the recomputed
weights. float32 stays float32.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lampy._errors import DTypeError, LampyValueError, ShapeError
from lampy.nn.functional._shared import SharedInBackward, compiled, kernel_input, rng_or_default
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    frozen,
    needs_grad,
    op,
    replayable,
    unbroadcast,
    value_of,
)

__all__ = ["scaled_dot_product_attention"]

_matmul = np.matmul
_NAME = "scaled_dot_product_attention"


def _shapes_error(detail: str, *arrays: np.ndarray) -> ShapeError:
    shapes = ", ".join(str(a.shape) for a in arrays)
    return ShapeError(f"{_NAME}: shapes {shapes} do not fit together: {detail}")


def _check_shapes(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[int, ...]:
    """Check query (..., L, E), key (..., S, E), value (..., S, Ev); returns the
    broadcast batch shape of the scores (query's and key's batch dimensions)."""
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise _shapes_error(
            "query, key and value need at least 2 dimensions: (..., L, E), (..., S, E) "
            "and (..., S, Ev).",
            q,
            k,
            v,
        )
    if q.shape[-1] != k.shape[-1]:
        raise _shapes_error(
            f"the query's last axis (E = {q.shape[-1]}) must equal the key's "
            f"({k.shape[-1]}): query is (..., L, E), key (..., S, E).",
            q,
            k,
        )
    if k.shape[-2] != v.shape[-2]:
        raise _shapes_error(
            f"key and value need the same sequence length S (axis -2): {k.shape[-2]} and "
            f"{v.shape[-2]}.",
            k,
            v,
        )
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
        np.broadcast_shapes(batch, v.shape[:-2])
    except ValueError:
        raise _shapes_error(
            "the leading (batch, head) dimensions of query, key and value must be equal or "
            "broadcast (numpy rules); for grouped-query attention pass enable_gqa=True.",
            q,
            k,
            v,
        ) from None
    return batch


def _repeat_heads(
    q: np.ndarray, k: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Grouped-query attention: repeat key and value heads (axis -3) so that each of the
    query's heads has one; returns them and the two group sizes."""
    if q.ndim < 3 or k.ndim < 3 or v.ndim < 3:
        raise _shapes_error(
            "enable_gqa=True needs a head axis (-3): (..., H, L, E) inputs.", q, k, v
        )
    hq, hk, hv = q.shape[-3], k.shape[-3], v.shape[-3]
    if hk == 0 or hv == 0 or hq % hk or hq % hv:
        raise _shapes_error(
            f"with enable_gqa=True the query's number of heads ({hq}) must be a multiple of "
            f"the key's ({hk}) and the value's ({hv}).",
            q,
            k,
            v,
        )
    gk, gv = hq // hk, hq // hv
    return (
        np.repeat(k, gk, axis=-3) if gk > 1 else k,
        np.repeat(v, gv, axis=-3) if gv > 1 else v,
        gk,
        gv,
    )


def _group_sum(d: np.ndarray, groups: int) -> np.ndarray:
    """Undo ``np.repeat(x, groups, axis=-3)`` in a gradient: sum each group of heads."""
    if groups == 1:
        return d
    h = d.shape[-3] // groups
    summed: np.ndarray = d.reshape((*d.shape[:-3], h, groups, *d.shape[-2:])).sum(axis=-3)
    return summed


def _mask_of(
    attn_mask: Any, is_causal: bool, scores_shape: tuple[int, ...], dtype: Any
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(blocked, bias)``: a boolean array True where attention is not allowed, or a
    float array to add to the scores (at most one is not None; both None for the causal
    mask, which ``_exp_rows`` applies)."""
    if is_causal:
        if attn_mask is not None:
            raise LampyValueError(
                f"{_NAME}: pass either attn_mask or is_causal=True, not both; to combine "
                "them, build one boolean mask (numpy.tril(numpy.ones((L, S), bool)) & mask)."
            )
        return None, None
    if attn_mask is None:
        return None, None
    m = np.asarray(value_of(attn_mask, name=_NAME))
    if m.dtype.kind not in "bf":
        raise DTypeError(
            f"{_NAME}: attn_mask must be boolean (True = may attend) or floating (added to "
            f"the scores), got dtype {m.dtype}."
        )
    try:
        fits = np.broadcast_shapes(m.shape, scores_shape) == scores_shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(
            f"{_NAME}: attn_mask of shape {m.shape} must broadcast to the attention "
            f"scores' shape {scores_shape} (batch..., L, S)."
        )
    if m.dtype.kind == "b":
        return ~m, None
    return None, m.astype(dtype, copy=False)


def _exp_rows(scores: np.ndarray, causal: bool, scale: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(E, inv)`` for the new (..., L, S) array ``scores`` and ``scale`` (> 0, of the
    scores' dtype): ``E = exp((scores - rowmax) * scale)`` and ``inv = 1 / rowsum(E)`` of
    shape (..., 1), so that the softmax of ``scores * scale`` is ``E * inv``. Rows with
    no allowed entry (all -inf) get ``inv = 0``: zeros, as PyTorch's
    ``_safe_softmax``. ``causal``: the top-left causal mask ``tril(ones(L, S))`` first
    (entries above it are 0 in ``E``). One compiled pass over the rows into a new ``E``
    (the masked entries unread, the scale applied in the same pass) when Numba is
    installed, else numpy in place."""
    n_l, n_s = scores.shape[-2:]
    kernels = compiled(scores)
    if kernels is not None and scores.flags.c_contiguous:
        e = np.empty_like(scores)
        inv = np.empty((*scores.shape[:-1], 1), scores.dtype)
        rows = (-1, n_s)
        kernels.attention_exp_rows(
            scores.reshape(rows), e.reshape(rows), inv.reshape(-1), n_l, causal, scale
        )
        return e, inv
    if causal:
        np.copyto(scores, -np.inf, where=~np.tri(n_l, n_s, dtype=bool))
    m = scores.max(axis=-1, keepdims=True, initial=-np.inf)
    m[m == -np.inf] = 0
    scores -= m
    if scale != 1:
        scores *= scale
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    return scores, np.divide(1, total, out=np.zeros_like(total), where=total > 0)


_CAUSAL_BLOCK = 32
"""Query rows per block of the causal products: each block is multiplied with the keys it
sees only (``_causal_blocks``). Below four blocks, one product over all of them."""


def _causal_blocks(n_l: int, n_s: int) -> list[tuple[int, int, int]] | None:
    """For the top-left causal mask of (L, S) scores (query ``i`` sees keys ``0..i``):
    blocks ``(r0, r1, w)`` of query rows ``r0:r1`` and the keys ``0:w`` they see, or None
    when one product over all rows is cheaper (fewer than four blocks). A product over
    the blocks skips the masked part above the diagonal, up to nearly half of the work;
    on small blocks BLAS is slower, so that (one thread, heads of 32) attention's
    forward and backward take 4% longer with L = 64 in two blocks, 10% less with
    L = 256 and 16% less with L = 512."""
    b = _CAUSAL_BLOCK
    if n_l < 4 * b or n_s == 0:
        return None
    return [(r0, min(r0 + b, n_l), min(r0 + b, n_l, n_s)) for r0 in range(0, n_l, b)]


def _scores(a: np.ndarray, b_t: np.ndarray, blocks: list[tuple[int, int, int]] | None) -> Any:
    """``a @ b_t``, (..., L, E) by (..., E, S), computed below the causal mask only when
    ``blocks`` are given (each block's masked rectangle then holds zeros)."""
    if blocks is None:
        return _matmul(a, b_t)
    shape = (*np.broadcast_shapes(a.shape[:-2], b_t.shape[:-2]), a.shape[-2], b_t.shape[-1])
    out = np.empty(shape, np.result_type(a.dtype, b_t.dtype))
    for r0, r1, w in blocks:
        _matmul(a[..., r0:r1, :], b_t[..., :w], out=out[..., r0:r1, :w])
        out[..., r0:r1, w:] = 0
    return out


def _masked_times(
    p: np.ndarray,
    b: np.ndarray,
    blocks: list[tuple[int, int, int]] | None,
    heads_inside: bool = False,
) -> Any:
    """``p @ b`` for (..., L, S) weights ``p`` that are 0 above the causal mask, by
    (..., S, N): with ``blocks``, each block of rows times the keys it sees.
    ``heads_inside``: for (B, H, L, S) weights, the (B, H, L, N) result is laid out as
    (B, L, H, N) in memory (``_heads_inside``)."""
    if blocks is None and not heads_inside:  # backward's calls: no shape to work out
        return _matmul(p, b)
    shape = (*np.broadcast_shapes(p.shape[:-2], b.shape[:-2]), p.shape[-2], b.shape[-1])
    dtype = np.result_type(p.dtype, b.dtype)
    if heads_inside and len(shape) == 4:
        out = _heads_inside(shape, dtype)
    elif blocks is None:
        return _matmul(p, b)
    else:
        out = np.empty(shape, dtype)
    if blocks is None:
        return _matmul(p, b, out=out)
    for r0, r1, w in blocks:
        _matmul(p[..., r0:r1, :w], b[..., :w, :], out=out[..., r0:r1, :])
    return out


def _heads_inside(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A new (B, H, L, N) array laid out as (B, L, H, N) in memory: the layout of
    PyTorch's flash attention output, whose ``swapaxes(1, 2).reshape(B, L, H * N)``
    (the heads merged back, as every multi-head layer does next) is a view, not a
    copy. Each (L, N) matrix of a head has rows ``H * N`` apart, which BLAS writes
    directly (``ldc``)."""
    b, h, n_l, n = shape
    return np.swapaxes(np.empty((b, n_l, h, n), dtype), 1, 2)


def _masked_t_times(p: np.ndarray, b: np.ndarray, blocks: list[tuple[int, int, int]] | None) -> Any:
    """``p^T @ b`` for (..., L, S) weights ``p`` that are 0 above the causal mask, by
    (..., L, N), a (..., S, N) result: with ``blocks``, each block of key columns
    ``c0:c1`` times the rows that see it (``c0:``; the keys beyond the last row see
    none: zeros)."""
    if blocks is None:
        return _matmul(np.swapaxes(p, -1, -2), b)
    n_l, n_s = p.shape[-2:]
    shape = (*np.broadcast_shapes(p.shape[:-2], b.shape[:-2]), n_s, b.shape[-1])
    out = np.empty(shape, np.result_type(p.dtype, b.dtype))
    for c0, c1, _ in blocks:
        c1 = min(c1, n_s)
        if c0 < c1:
            _matmul(np.swapaxes(p[..., c0:, c0:c1], -1, -2), b[..., c0:, :], out=out[..., c0:c1, :])
    out[..., min(n_l, n_s) :, :] = 0
    return out


def _softmax_backward(ds: np.ndarray, e: np.ndarray, inv: np.ndarray) -> None:
    """``ds = E (ds - rowsum(ds E) inv)`` in place, for the new (..., L, S) array ``ds``:
    the softmax's backward on the weights ``P = E inv`` (``inv`` of shape (..., 1)). One
    compiled pass over the rows when Numba is installed, else numpy."""
    n_s = ds.shape[-1]
    kernels = compiled(ds)
    # The kernel takes the rows of ds and e one for one: not when the value's batch
    # axes broadcast beyond the scores' (then ds has more rows than e and inv).
    if (
        kernels is not None
        and ds.shape == e.shape
        and ds.flags.c_contiguous
        and e.flags.c_contiguous
    ):
        rows = (-1, n_s)
        kernels.attention_scores_backward(
            ds.reshape(rows), kernel_input(e).reshape(rows), kernel_input(inv).reshape(-1)
        )
        return
    ds -= np.einsum("...j,...j->...", ds, e)[..., None] * inv
    ds *= e


def scaled_dot_product_attention(
    query: Operand,
    key: Operand,
    value: Operand,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
    *,
    rng: np.random.Generator | None = None,
) -> Variable:
    """Attention ``softmax(q k^T * scale + mask) v``, fused.

    Shapes: ``query`` (..., L, E), ``key`` (..., S, E), ``value`` (..., S, Ev); the
    leading (batch, head) dimensions broadcast; the result is (..., L, Ev).

    Args:
        query: The queries.
        key: The keys.
        value: The values.
        attn_mask: Boolean (True = the query may attend to that key, as PyTorch) or
            floating (added to the scores; a float Variable gets its gradient),
            broadcastable to the scores' shape (..., L, S).
        dropout_p: Dropout probability on the attention weights (applied whenever > 0,
            as in PyTorch's functional form; pass 0 for evaluation).
        is_causal: Apply the top-left causal mask ``tril(ones(L, S))`` (query ``i``
            sees keys ``0..i``); not together with ``attn_mask``.
        scale: The score scale; ``1 / sqrt(E)`` by default.
        enable_gqa: Grouped-query attention: key and value may have fewer heads (axis
            -3) than the query, each serving ``Hq / Hk`` consecutive query heads.
        rng: The generator drawing the dropout mask (``0 < dropout_p < 1``); lampy's
            default generator (``lampy.manual_seed``) when None.

    Returns:
        The attention output.

    Raises:
        ShapeError: if the shapes do not fit (named in the message).
        DTypeError: if the mask is neither boolean nor floating.
        LampyValueError: for ``dropout_p`` outside [0, 1], or both
            ``attn_mask`` and ``is_causal``.

    A row whose keys are all masked gives zeros (and zero gradients), not NaN, as
    PyTorch has since version 2.5 (its ``_safe_softmax``, pytorch/pytorch#133882).

    Gradient:
        With ``P`` the attention weights, ``D`` the dropout mask scaled by
        ``1 / (1 - p)`` (ones without dropout) and ``g`` the output gradient:
        ``d value = (P D)^T g``; ``dP = (g v^T) D``;
        ``dS = P (dP - rowsum(g * out))``; ``d query = scale dS k``,
        ``d key = scale dS^T q``, ``d attn_mask = dS`` (float masks), summed over
        broadcast dimensions and over each group of query heads with ``enable_gqa``.

    Examples:
        >>> import numpy as np, lampy
        >>> from lampy.nn.functional import scaled_dot_product_attention
        >>> with lampy.Scope():
        ...     q = k = np.zeros((1, 2, 4))
        ...     v = np.array([[[1.0], [3.0]]])
        ...     print(scaled_dot_product_attention(q, k, v, is_causal=True).value.ravel())
        [1. 2.]
    """
    q, k, v = (np.asarray(value_of(x, name=_NAME)) for x in (query, key, value))
    dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    if dtype.kind != "f":
        dtype = np.dtype(np.float64)
    q, k, v = (x.astype(dtype, copy=False) for x in (q, k, v))
    if not 0.0 <= dropout_p <= 1.0:
        raise LampyValueError(f"{_NAME}: dropout_p has to be between 0 and 1, got {dropout_p}.")
    gk = gv = 1
    if enable_gqa:
        k, v, gk, gv = _repeat_heads(q, k, v)
    batch = _check_shapes(q, k, v)
    out_heads = batch[-1] if len(batch) == 2 else 1  # (B, H): the heads' output layout
    n_l, n_e, n_s = q.shape[-2], q.shape[-1], k.shape[-2]
    scores_shape = (*batch, n_l, n_s)
    blocked, bias = _mask_of(attn_mask, is_causal, scores_shape, dtype)
    if 0 < dropout_p < 1:
        rng = rng_or_default(_NAME, rng)
    s = float(1.0 / math.sqrt(n_e) if scale is None else scale)
    sc = dtype.type(s)

    # Forward: E = exp(q k^T s + mask - rowmax), P = E * inv with inv = 1 / rowsum(E),
    # out = (P D) v = ((E D) v) * inv: the normalisation scales the (L, Ev) output
    # rather than the (L, S) weights (and, in backward, g rather than dP).
    blocks = _causal_blocks(n_l, n_s) if is_causal else None
    # The scale goes into the exps (no scaled copy of q) where nothing is added to the
    # scores and it keeps their order: compiled kernels, no mask but the causal one, s > 0.
    late = s > 0 and blocked is None and bias is None and compiled(q) is not None
    one = dtype.type(1)

    def weights() -> tuple[np.ndarray, np.ndarray]:
        """E and inv from q and k (and the mask): in the forward pass, and again, bit
        for bit, in backward, so the op keeps q, k, v and the row sums rather than the
        (L, S) weights (as PyTorch's flash attention: a matmul and an exp more in
        backward, a (B, H, L, S) array less held from forward to backward)."""
        if late:  # the kernel scales the scores as it takes their exps
            return _exp_rows(_scores(q, np.swapaxes(k, -1, -2), blocks), is_causal, sc)
        e = _scores(q * sc if s != 1.0 else q, np.swapaxes(k, -1, -2), blocks)
        if blocked is not None:
            np.copyto(e, -np.inf, where=blocked)
        elif bias is not None:
            e += bias
        return _exp_rows(e, is_causal, one)

    e, inv = weights()
    keep = None
    if dropout_p == 1:
        keep = np.zeros_like(e)
    elif dropout_p > 0:
        assert rng is not None
        draw = np.float32 if dtype == np.float32 else np.float64
        keep = np.multiply(
            replayable(rng).random(e.shape, dtype=draw) < draw(1.0 - dropout_p),
            dtype.type(1.0 / (1.0 - dropout_p)),
            dtype=dtype,
        )
    # (B, H, L, Ev) heads laid out as (B, L, H, Ev): merging the heads next is a view
    out = _masked_times(e if keep is None else e * keep, v, blocks, out_heads > 1)
    if out.base is None:
        out *= inv
    else:  # heads inside: scaled in memory order (twice as fast as through the view)
        inner = np.swapaxes(out, 1, 2)
        inner *= np.swapaxes(inv, 1, 2)
        del inner
        out = frozen(out)  # lampy.op takes a view of memory no one else writes as it is
    del e

    # dS = P (dP - rowsum(g * out)) = E ((g inv) v^T D - rowsum(g * out) inv) is shared by
    # the query's, key's and mask's closures, and E D by the value's: computed by the
    # first that runs (the engine serves one op's closures one after another), dropped
    # by the last.
    mask_grad = bias is not None and needs_grad(attn_mask)
    users = int(needs_grad(query)) + int(needs_grad(key)) + int(mask_grad)
    users += int(needs_grad(value))
    mask_shape = np.shape(value_of(attn_mask, name=_NAME)) if mask_grad else ()

    def compute_scores(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = weights()[0]
        ed = e if keep is None else e * keep
        ds: np.ndarray = _scores(g * inv, np.swapaxes(v, -1, -2), blocks)
        if keep is not None:
            ds *= keep
        # rowsum(g * out) = rowsum(ds * E) (out = ((E D) v) inv): from the weights, so the
        # closures need not keep the op's output
        _softmax_backward(ds, e, inv)
        return ds, ed

    shared = SharedInBackward(compute_scores, users)

    def d_query(g: np.ndarray) -> Any:
        d = _masked_times(shared(g)[0], k, blocks)
        d *= sc
        return unbroadcast(d, q.shape)

    def d_key(g: np.ndarray) -> Any:
        d = _masked_t_times(shared(g)[0], q, blocks)
        d *= sc  # scaled here: the closure keeps q (an input's value), not q * scale
        return _group_sum(unbroadcast(d, k.shape), gk)

    def d_value(g: np.ndarray) -> Any:
        d = _masked_t_times(shared(g)[1], g * inv, blocks)
        return _group_sum(unbroadcast(d, v.shape), gv)

    def d_mask(g: np.ndarray) -> Any:
        return unbroadcast(shared(g)[0], mask_shape)

    return op(
        _NAME,
        out,
        contrib_of(query, d_query),
        contrib_of(key, d_key),
        contrib_of(value, d_value),
        contrib_of(attn_mask, d_mask, fresh=False) if mask_grad else None,
    )
