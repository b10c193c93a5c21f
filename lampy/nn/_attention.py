"""Multi-head attention of ``lampy.nn``: ``MultiheadAttention`` (``torch.nn.MultiheadAttention``).

The module holds PyTorch's parameters under PyTorch's names (``in_proj_weight``,
``in_proj_bias``, ``out_proj.weight``, ``out_proj.bias``, or ``q_proj_weight``,
``k_proj_weight``, ``v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``)
and computes what ``torch.nn.functional.multi_head_attention_forward`` computes:

1. the input projection, one matrix product for self-attention (``query is key is
   value``), one for the query and one for the packed key/value when ``key is value``;
2. the split into heads, a strided *view* of the projection (two small private ops
   whose backward adds straight into the projection's gradient, no transposed copy);
3. attention: ``lampy.nn.functional.scaled_dot_product_attention``
   when ``need_weights=False``; with ``need_weights=True`` the weights are computed
   explicitly (scores, softmax, dropout, product) since they are returned;
4. the merge of the heads and the output projection ``out_proj`` (a ``lampy.nn.Linear``).

Masks follow the MultiheadAttention convention: a boolean ``True`` marks a position
that may NOT be attended (the opposite of ``scaled_dot_product_attention``'s boolean
masks); a float mask is added to the scores. Masks are constants (no gradient).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn import init as _init
from lampy.nn._helpers import check_dtype, check_size, rng_or_default, shape_of
from lampy.nn._linear import Linear
from lampy.nn._module import Module
from lampy.nn.functional import dropout as _dropout
from lampy.nn.functional import linear, scaled_dot_product_attention, softmax
from lampy.opkit import Operand, Variable, contribution, frozen, op, param, param_of, value_of
from lampy.ops import matmul, swapaxes

__all__ = ["MultiheadAttention"]


# ----------------------------------------------------------------- head split / merge
def _split_heads(x: Any, chunk: int, width: int, heads: int, batch_first: bool) -> Variable:
    """Chunk ``chunk`` (of width ``width``) of the last axis of ``x`` as (B, H, T, hd).

    ``x`` is (B, T, C) when ``batch_first`` else (T, B, C), with ``C`` a multiple of
    ``width``: the result is a strided view, no copy. Its gradient is added straight
    into the matching columns of ``x``'s gradient buffer.
    """
    a = value_of(x, name="MultiheadAttention.forward")
    perm = (0, 2, 1, 3) if batch_first else (1, 2, 0, 3)
    hd = width // heads
    cols = slice(chunk * width, (chunk + 1) * width)
    four = (a.shape[0], a.shape[1], heads, hd)
    value = a[..., cols].reshape(four).transpose(perm)

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        # Splitting one axis in two is always a view, so the add lands in `out`.
        dst = np.reshape(out[..., cols], four, copy=False).transpose(perm)
        np.add(dst, g, out=dst)

    return op("split_heads", value, param_of(x, d_x))


def _merge_heads(x: Variable, batch_first: bool) -> Variable:
    """(B, H, T, hd) → (B, T, H * hd) when ``batch_first`` else (T, B, H * hd), a copy.

    Gradient:
        ``dx`` is ``g`` reshaped to (…, H, hd) and transposed back: a view of ``g``.
    """
    a = x.value
    b, h, t, hd = a.shape
    perm = (0, 2, 1, 3) if batch_first else (2, 0, 1, 3)
    inverse = (0, 2, 1, 3) if batch_first else (1, 2, 0, 3)
    four = (b, t, h, hd) if batch_first else (t, b, h, hd)
    value = np.empty(four, dtype=a.dtype)
    np.copyto(value, a.transpose(perm))

    def d_x(g: np.ndarray) -> Any:
        return g.reshape(four).transpose(inverse)

    return op(
        "merge_heads",
        frozen(value, (*four[:2], h * hd)),
        param_of(x, contribution(d_x, fresh=False)),
    )


# ----------------------------------------------------------------- masks
def _float_mask(owner: Callable[[], str], what: str, m: Any, dtype: Any) -> np.ndarray:
    """A boolean mask as 0 / -inf of ``dtype`` (True = not allowed), a float one as is.

    ``owner()`` names the caller in the error, built only when raising."""
    a = np.asarray(value_of(m, name="MultiheadAttention.forward"))
    if a.dtype == np.bool_:
        out = np.zeros(a.shape, dtype=dtype)
        out[a] = -np.inf
        return out
    if a.dtype.kind != "f":
        raise LampyTypeError(
            f"{owner()}: {what} must be a boolean or floating mask, got dtype {a.dtype}; use "
            "True (or -inf) for positions that may not be attended."
        )
    return a.astype(dtype, copy=False)


# ----------------------------------------------------------------- the module
@attrs.frozen(eq=False, repr=False)
class MultiheadAttention(Module):
    """Multi-head attention (``torch.nn.MultiheadAttention``), from Vaswani et al. (2017),
    "Attention Is All You Need".

    ``MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_out^T + b_out`` with
    ``head_i = softmax(Q W_q,i^T (K W_k,i^T)^T / sqrt(head_dim) + mask) V W_v,i^T``.

    Attributes:
        in_proj_weight: (3 * embed_dim, embed_dim), the stacked query, key and value
            projections, Glorot-uniform; None when ``kdim`` or ``vdim`` differ from
            ``embed_dim``.
        q_proj_weight: (embed_dim, embed_dim) when ``kdim``/``vdim`` differ, else None.
        k_proj_weight: (embed_dim, kdim) when ``kdim``/``vdim`` differ, else None.
        v_proj_weight: (embed_dim, vdim) when ``kdim``/``vdim`` differ, else None.
        in_proj_bias: (3 * embed_dim,) zeros, or None when ``bias=False``.
        out_proj: The output projection, a Linear(embed_dim, embed_dim) with PyTorch's
            default weight initialisation and a zero bias.
        embed_dim: The model dimension ``E``.
        num_heads: The number of heads ``H`` (``E`` must be a multiple of it).
        dropout: The dropout probability on the attention weights (training only).
        batch_first: Whether batched inputs are (N, L, E) rather than (L, N, E).
        kdim: The key's feature size.
        vdim: The value's feature size.
        rng: The generator drawing the dropout masks.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     mha = nn.MultiheadAttention.init(
        ...         16, 4, batch_first=True, rng=np.random.default_rng(0)
        ...     )
        ...     x = np.ones((2, 5, 16), np.float32)
        ...     out, weights = mha(x, x, x)
        ...     print(out.shape, weights.shape)
        (2, 5, 16) (2, 5, 5)
    """

    in_proj_weight: Variable | None
    q_proj_weight: Variable | None
    k_proj_weight: Variable | None
    v_proj_weight: Variable | None
    in_proj_bias: Variable | None
    out_proj: Linear
    embed_dim: int
    num_heads: int
    dropout: float = 0.0
    batch_first: bool = False
    kdim: int | None = None
    vdim: int | None = None
    rng: np.random.Generator | None = None

    _repr_fields = ("embed_dim", "num_heads", "dropout", "batch_first")

    @property
    def head_dim(self) -> int:
        """``embed_dim // num_heads``."""
        return self.embed_dim // self.num_heads

    @property
    def _qkv_same_embed_dim(self) -> bool:
        return self.in_proj_weight is not None

    @classmethod
    def init(
        cls,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> MultiheadAttention:
        """A MultiheadAttention with PyTorch's initialisation.

        Args:
            embed_dim: The model dimension ``E`` (query feature size and output size).
            num_heads: The number of parallel heads; ``embed_dim`` must be a multiple.
            dropout: Dropout probability on the attention weights (0 disables it).
            bias: Whether the input and output projections have biases.
            add_bias_kv: Not supported in lampy (must be False).
            add_zero_attn: Not supported in lampy (must be False).
            kdim: The key's feature size (default ``embed_dim``).
            vdim: The value's feature size (default ``embed_dim``).
            batch_first: Whether batched inputs are (N, L, E) instead of (L, N, E).
            dtype: The parameters' dtype.
            rng: The generator drawing the initial weights and the dropout masks
                (None: lampy's default generator, for the masks at each call).

        Raises:
            LampyValueError: for sizes below 1, ``embed_dim`` not divisible by
                ``num_heads``, a dropout outside [0, 1], ``add_bias_kv`` or
                ``add_zero_attn``.
        """
        owner = "MultiheadAttention.init"
        e = check_size(owner, "embed_dim", embed_dim)
        h = check_size(owner, "num_heads", num_heads)
        if e % h:
            raise LampyValueError(
                f"{owner}: embed_dim ({e}) must be divisible by num_heads ({h}), since each "
                "head gets embed_dim // num_heads features; change one of them."
            )
        p = float(dropout)
        if not 0.0 <= p <= 1.0:
            raise LampyValueError(f"{owner}: dropout must be in [0, 1], got {dropout}.")
        if add_bias_kv or add_zero_attn:
            raise LampyValueError(
                f"{owner}: add_bias_kv and add_zero_attn are not supported by lampy; build "
                "the module with both False (PyTorch's default)."
            )
        kd = e if kdim is None else check_size(owner, "kdim", kdim)
        vd = e if vdim is None else check_size(owner, "vdim", vdim)
        r = rng_or_default(owner, rng)
        in_w = q_w = k_w = v_w = None
        if kd == e and vd == e:
            in_w = param(_init.xavier_uniform((3 * e, e), rng=r, dtype=dtype))
        else:
            q_w = param(_init.xavier_uniform((e, e), rng=r, dtype=dtype))
            k_w = param(_init.xavier_uniform((e, kd), rng=r, dtype=dtype))
            v_w = param(_init.xavier_uniform((e, vd), rng=r, dtype=dtype))
        in_b = param(_init.zeros(3 * e, dtype=dtype)) if bias else None
        # PyTorch builds out_proj with Linear's default init, then zeroes its bias.
        lin = Linear.init(e, e, bias=False, dtype=dtype, rng=r)
        out_proj = Linear(lin.weight, param(_init.zeros(e, dtype=dtype)) if bias else None)
        return cls(
            in_w,
            q_w,
            k_w,
            v_w,
            in_b,
            out_proj,
            e,
            h,
            p,
            bool(batch_first),
            None if kdim is None else kd,
            None if vdim is None else vd,
            rng,
        )

    def _describe(self) -> str:
        extra = ""
        if not self._qkv_same_embed_dim:
            extra = f", kdim={self._kdim}, vdim={self._vdim}"
        return (
            f"MultiheadAttention(embed_dim={self.embed_dim}, num_heads={self.num_heads}"
            f"{extra}, batch_first={self.batch_first})"
        )

    @property
    def _kdim(self) -> int:
        return self.embed_dim if self.kdim is None else self.kdim

    @property
    def _vdim(self) -> int:
        return self.embed_dim if self.vdim is None else self.vdim

    # ------------------------------------------------------------- validation
    def _check_inputs(
        self, qs: tuple[int, ...], ks: tuple[int, ...], vs: tuple[int, ...]
    ) -> tuple[bool, int, int, int]:
        """(batched, N, L, S) of validated query/key/value shapes."""
        name = self._describe  # called only to build an error message
        layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
        if len(qs) not in (2, 3):
            raise ShapeError(
                f"{name()}: expected query {layout} or unbatched (L, E), got shape {qs} "
                f"({len(qs)}-d)."
            )
        if len(ks) != len(qs) or len(vs) != len(qs):
            raise ShapeError(
                f"{name()}: query, key and value must all be batched (3-d) or all unbatched "
                f"(2-d), got shapes {qs}, {ks} and {vs}."
            )
        for what, s, d in (
            ("query", qs, self.embed_dim),
            ("key", ks, self._kdim),
            ("value", vs, self._vdim),
        ):
            if s[-1] != d:
                extra = (
                    "embed_dim" if d == self.embed_dim else ("kdim" if what == "key" else "vdim")
                )
                raise ShapeError(
                    f"{name()}: {what} must have {d} features ({extra}) in its last axis, got "
                    f"shape {s}."
                )
        if ks[:-1] != vs[:-1]:
            raise ShapeError(
                f"{name()}: key and value must have the same sequence and batch dimensions, "
                f"got shapes {ks} and {vs}."
            )
        if len(qs) == 2:
            return False, 1, qs[0], ks[0]
        bq, lq = (qs[0], qs[1]) if self.batch_first else (qs[1], qs[0])
        bk, sk = (ks[0], ks[1]) if self.batch_first else (ks[1], ks[0])
        if bq != bk:
            raise ShapeError(
                f"{name()}: query and key have different batch sizes ({bq} and {bk}); shapes "
                f"{qs} and {ks} with batch_first={self.batch_first}."
            )
        return True, bq, lq, sk

    def _mask(
        self,
        key_padding_mask: Any,
        attn_mask: Any,
        batched: bool,
        n: int,
        lq: int,
        s: int,
        dtype: Any,
    ) -> np.ndarray | None:
        """The merged additive mask, broadcastable to (N, H, L, S), or None."""
        name = self._describe  # called only to build an error message
        h = self.num_heads
        merged = None
        if attn_mask is not None:
            m = _float_mask(name, "attn_mask", attn_mask, dtype)
            if m.ndim == 2:
                if m.shape != (lq, s):
                    raise ShapeError(
                        f"{name()}: the 2-d attn_mask must be (L, S) = {(lq, s)}, got shape "
                        f"{m.shape}."
                    )
            elif m.ndim == 3:
                want = (n * h, lq, s) if batched else (h, lq, s)
                if m.shape != want:
                    what = "(N * num_heads, L, S)" if batched else "(num_heads, L, S)"
                    raise ShapeError(
                        f"{name()}: the 3-d attn_mask must be {what} = {want}, got shape {m.shape}."
                    )
                m = m.reshape(n, h, lq, s)
            else:
                raise ShapeError(
                    f"{name()}: attn_mask must be 2-d (L, S) or 3-d (N * num_heads, L, S), got "
                    f"shape {m.shape}."
                )
            merged = m
        if key_padding_mask is not None:
            k = _float_mask(name, "key_padding_mask", key_padding_mask, dtype)
            want2 = (n, s) if batched else (s,)
            if k.shape != want2:
                what = "(N, S)" if batched else "(S,)"
                raise ShapeError(
                    f"{name()}: key_padding_mask must be {what} = {want2}, got shape {k.shape}."
                )
            k = k.reshape(n, 1, 1, s)
            merged = k if merged is None else merged + k
        return merged

    # ------------------------------------------------------------- forward
    def _project(self, query: Any, key: Any, value: Any, bf: bool) -> tuple[Variable, ...]:
        """The projected query, key and value split into heads, each (N, H, T, hd)."""
        e, h = self.embed_dim, self.num_heads
        b = self.in_proj_bias
        w = self.in_proj_weight
        w_q: Any
        w_k: Any
        w_v: Any
        if w is not None:
            if query is key and key is value:
                qkv = linear(query, w, b)
                return tuple(_split_heads(qkv, i, e, h, bf) for i in range(3))
            w_q, w_kv = w[:e], w[e:]
            b_q, b_kv = (None, None) if b is None else (b[:e], b[e:])
            q = _split_heads(linear(query, w_q, b_q), 0, e, h, bf)
            if key is value:
                kv = linear(key, w_kv, b_kv)
                return q, _split_heads(kv, 0, e, h, bf), _split_heads(kv, 1, e, h, bf)
            w_k, w_v = w[e : 2 * e], w[2 * e :]
            b_k, b_v = (None, None) if b is None else (b[e : 2 * e], b[2 * e :])
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
            b_q, b_k, b_v = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
            q = _split_heads(linear(query, w_q, b_q), 0, e, h, bf)
        k = _split_heads(linear(key, w_k, b_k), 0, e, h, bf)
        v = _split_heads(linear(value, w_v, b_v), 0, e, h, bf)
        return q, k, v

    def forward(
        self,
        query: Operand,
        key: Operand,
        value: Operand,
        key_padding_mask: Operand | None = None,
        need_weights: bool = True,
        attn_mask: Operand | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Variable, Variable | None]:
        """Attention of ``query`` over ``key``/``value``, as PyTorch's forward.

        Args:
            query: (L, N, E), or (N, L, E) with ``batch_first``, or unbatched (L, E).
            key: (S, N, kdim), (N, S, kdim) or (S, kdim).
            value: (S, N, vdim), (N, S, vdim) or (S, vdim).
            key_padding_mask: (N, S) or (S,) for unbatched input: boolean (True = a
                padding key, ignored) or float (added to the scores).
            need_weights: Whether to return the attention weights too.
            attn_mask: (L, S) or (N * num_heads, L, S) ((num_heads, L, S) unbatched):
                boolean (True = NOT allowed to attend) or float (added to the scores).
            average_attn_weights: Whether the returned weights are averaged over heads.
            is_causal: A hint that ``attn_mask`` is the causal mask; as in PyTorch it
                needs ``attn_mask`` and, without ``key_padding_mask`` and with
                ``need_weights=False``, the causal mask is applied instead of it.

        Returns:
            ``(attn_output, attn_weights)``: the output, shaped as ``query`` with
            ``embed_dim`` features, and the weights after dropout — (N, L, S) averaged,
            (N, num_heads, L, S) per head, without N for unbatched input — or None when
            ``need_weights`` is False.

        Raises:
            ShapeError: for inputs or masks of the wrong shape.
            LampyTypeError: for a mask that is neither boolean nor floating.
            LampyValueError: for ``is_causal`` without ``attn_mask``.
        """
        batched, n, lq, s = self._check_inputs(shape_of(query), shape_of(key), shape_of(value))
        name = self._describe  # called only to build an error message
        if is_causal and attn_mask is None:
            raise LampyValueError(
                f"{name()}: is_causal=True is a hint that attn_mask is the causal mask, so it "
                "needs attn_mask; pass the mask too (e.g. np.triu(np.ones((L, L), bool), 1))."
            )
        dtype = self.out_proj.weight.dtype
        check_dtype(self, dtype, ("the query", query), ("the key", key), ("the value", value))
        causal = bool(is_causal) and key_padding_mask is None and not need_weights
        mask = self._mask(key_padding_mask, None if causal else attn_mask, batched, n, lq, s, dtype)
        # Unbatched (T, E) is laid out as (T, 1, E): the seq-first layout with N = 1.
        bf = self.batch_first and batched
        if not batched:
            q0, k0, v0 = query, key, value
            query = _unsqueeze(q0)
            key = query if k0 is q0 else _unsqueeze(k0)
            value = key if v0 is k0 else (query if v0 is q0 else _unsqueeze(v0))
        q, k, v = self._project(query, key, value, bf)
        p = self.dropout if self.training else 0.0
        weights: Variable | None = None
        if not need_weights:
            o = scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=p, is_causal=causal, rng=self.rng
            )
        else:
            scores = matmul(q * math.sqrt(1.0 / self.head_dim), swapaxes(k, -2, -1))
            if mask is not None:
                scores = scores + mask
            weights = softmax(scores, -1)
            if p > 0:
                weights = _dropout(weights, p, training=True, rng=self.rng)
            o = matmul(weights, v)
            if average_attn_weights:
                weights = weights.mean(axis=1)
            if not batched:
                weights = weights[0]
        out = self.out_proj(_merge_heads(o, bf))
        if not batched:
            out = out[:, 0]
        return out, weights


def _unsqueeze(x: Any) -> Any:
    """(T, E) → (T, 1, E): a Variable stays connected to the graph."""
    if type(x) is Variable:
        return x[:, None]
    return np.asarray(value_of(x, name="MultiheadAttention.forward"))[:, None]
