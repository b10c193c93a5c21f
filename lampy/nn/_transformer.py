"""Transformer layers of ``lampy.nn``: ``TransformerEncoderLayer`` and
``TransformerDecoderLayer``, with PyTorch's constructor arguments, initialisation,
state_dict keys and forward passes (``torch.nn.Transformer*Layer``), post-norm (the
default) and pre-norm (``norm_first``); ``generate_square_subsequent_mask`` and the
causal-mask detection the stacks (``_transformer_stacks.py``) share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn._attention import MultiheadAttention
from lampy.nn._dropout import Dropout
from lampy.nn._helpers import check_size, rng_or_default, shape_of
from lampy.nn._linear import Linear
from lampy.nn._module import Module
from lampy.nn._normalization import LayerNorm
from lampy.nn.functional import gelu, relu
from lampy.opkit import Operand, Variable, value_of

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


__all__ = [
    "TransformerDecoderLayer",
    "TransformerEncoderLayer",
    "generate_square_subsequent_mask",
    "is_causal_mask",
]

Activation = Callable[[Any], Any]


def generate_square_subsequent_mask(sz: int, dtype: DTypeLike = np.float32) -> np.ndarray:
    """The (sz, sz) causal float mask: ``-inf`` above the diagonal, 0 elsewhere, as
    ``torch.nn.Transformer.generate_square_subsequent_mask``."""
    n = check_size("generate_square_subsequent_mask", "sz", sz, 0)
    out = np.zeros((n, n), dtype=dtype)
    out[np.triu_indices(n, 1)] = -np.inf
    return out


def _activation(owner: str, activation: str | Activation) -> Activation:
    if isinstance(activation, str):
        if activation == "relu":
            return relu
        if activation == "gelu":
            return gelu
        raise LampyValueError(
            f"{owner}: activation should be 'relu', 'gelu' or a callable, not {activation!r}."
        )
    if not callable(activation):
        raise LampyTypeError(
            f"{owner}: activation must be 'relu', 'gelu' or a callable, got "
            f"{type(activation).__name__}."
        )
    return activation


def _check_dropout(owner: str, dropout: float) -> float:
    p = float(dropout)
    if not 0.0 <= p <= 1.0:
        raise LampyValueError(f"{owner}: dropout must be in [0, 1], got {dropout}.")
    return p


def _check_src(owner: str, what: str, x: Any, d_model: int, batch_first: bool) -> None:
    s = shape_of(x)
    layout = "(N, S, E)" if batch_first else "(S, N, E)"
    if len(s) not in (2, 3) or s[-1] != d_model:
        raise ShapeError(
            f"{owner}: expected {what} {layout} or unbatched (S, E) with E = d_model = "
            f"{d_model}, got shape {s}."
        )


def _layer_settings(
    owner: str, rng: Any, dropout: float, dim_feedforward: int, activation: Any
) -> tuple[np.random.Generator | None, float, int, Activation]:
    """The checked generator (None: the default one), dropout, feed-forward size and
    activation of a layer."""
    if rng is not None:
        rng_or_default(owner, rng)  # the type check; None: the default generator
    p = _check_dropout(owner, dropout)
    ff = check_size(owner, "dim_feedforward", dim_feedforward)
    return rng, p, ff, _activation(owner, activation)


def _feed_forward_parts(
    e: int, ff: int, p: float, bias: bool, dtype: Any, rng: np.random.Generator | None
) -> tuple[Linear, Dropout, Linear]:
    """``linear1``, ``dropout`` and ``linear2`` of a layer's feed-forward block."""
    linear1 = Linear.init(e, ff, bias=bias, dtype=dtype, rng=rng)
    drop = Dropout.init(p, rng=rng)
    return linear1, drop, Linear.init(ff, e, bias=bias, dtype=dtype, rng=rng)


def _feed_forward(
    x: Any, linear1: Linear, dropout: Dropout, linear2: Linear, activation: Activation
) -> Any:
    return linear2(dropout(activation(linear1(x))))


def _attend(attn: MultiheadAttention, x: Any, kv: Any, mask: Any, kpm: Any, is_causal: bool) -> Any:
    """``attn(x, kv, kv)``'s output, without the weights."""
    out, _ = attn(
        x, kv, kv, attn_mask=mask, key_padding_mask=kpm, need_weights=False, is_causal=is_causal
    )
    return out


def _layer_repr(attn: MultiheadAttention, norm_first: bool) -> str:
    return f"d_model={attn.embed_dim}, nhead={attn.num_heads}, norm_first={norm_first}"


def is_causal_mask(mask: Any, is_causal: bool | None, size: int) -> bool:
    """PyTorch's ``_detect_is_causal_mask``: the hint if given, else whether ``mask``
    (boolean True = masked, or float) equals the (size, size) causal mask."""
    if is_causal is not None:
        return bool(is_causal)
    if mask is None:
        return False
    m = np.asarray(value_of(mask, name="is_causal_mask"))
    if m.shape != (size, size):
        return False
    causal = np.triu(np.ones((size, size), dtype=bool), 1)
    if m.dtype == np.bool_:
        return bool(np.array_equal(m, causal))
    return bool(np.array_equal(m, np.where(causal, -np.inf, 0.0)))


# ----------------------------------------------------------------- layers
@attrs.frozen(eq=False, repr=False)
class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with a residual connection and a
    layer norm (``torch.nn.TransformerEncoderLayer``), from Vaswani et al. (2017).

    Post-norm (``norm_first=False``, the default)::

        x = norm1(x + dropout1(self_attn(x, x, x)))
        x = norm2(x + dropout2(linear2(dropout(activation(linear1(x))))))

    Pre-norm (``norm_first=True``)::

        x = x + dropout1(self_attn(norm1(x), …))
        x = x + dropout2(linear2(dropout(activation(linear1(norm2(x))))))

    Attributes:
        self_attn: A MultiheadAttention(d_model, nhead, dropout).
        linear1: Linear(d_model, dim_feedforward).
        dropout: Dropout after the activation.
        linear2: Linear(dim_feedforward, d_model).
        norm1: LayerNorm(d_model) of the attention block.
        norm2: LayerNorm(d_model) of the feed-forward block.
        dropout1: Dropout on the attention output.
        dropout2: Dropout on the feed-forward output.
        activation: The feed-forward activation (``relu`` by default).
        norm_first: Pre-norm when True.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     layer = nn.TransformerEncoderLayer.init(
        ...         32, 4, 64, batch_first=True, rng=np.random.default_rng(0)
        ...     )
        ...     print(layer(np.zeros((2, 10, 32), np.float32)).shape)
        (2, 10, 32)
    """

    self_attn: MultiheadAttention
    linear1: Linear
    dropout: Dropout
    linear2: Linear
    norm1: LayerNorm
    norm2: LayerNorm
    dropout1: Dropout
    dropout2: Dropout
    activation: Activation = relu
    norm_first: bool = False

    @classmethod
    def init(
        cls,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Activation = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> TransformerEncoderLayer:
        """An encoder layer with PyTorch's initialisation.

        Args:
            d_model: The model dimension (input and output features).
            nhead: The number of attention heads (``d_model`` must be a multiple).
            dim_feedforward: The hidden size of the feed-forward block.
            dropout: The dropout probability everywhere (attention weights included).
            activation: ``"relu"``, ``"gelu"`` or a callable on Variables.
            layer_norm_eps: The layer norms' epsilon.
            batch_first: Whether inputs are (N, S, E) instead of (S, N, E).
            norm_first: Pre-norm (layer norm before each block) when True.
            bias: Whether the linear layers and layer norms have biases.
            dtype: The parameters' dtype.
            rng: The generator drawing the initial weights and dropout masks (None:
                lampy's default generator).
        """
        r, p, ff, act = _layer_settings(
            "TransformerEncoderLayer.init", rng, dropout, dim_feedforward, activation
        )
        attn = MultiheadAttention.init(
            d_model, nhead, dropout=p, bias=bias, batch_first=batch_first, dtype=dtype, rng=r
        )
        e = attn.embed_dim
        return cls(
            attn,
            *_feed_forward_parts(e, ff, p, bias, dtype, r),
            LayerNorm.init(e, eps=layer_norm_eps, bias=bias, dtype=dtype),
            LayerNorm.init(e, eps=layer_norm_eps, bias=bias, dtype=dtype),
            Dropout.init(p, rng=r),
            Dropout.init(p, rng=r),
            act,
            bool(norm_first),
        )

    def extra_repr(self) -> str:
        return _layer_repr(self.self_attn, self.norm_first)

    def _sa_block(self, x: Any, mask: Any, kpm: Any, is_causal: bool) -> Any:
        return self.dropout1(_attend(self.self_attn, x, x, mask, kpm, is_causal))

    def _ff_block(self, x: Any) -> Any:
        y = _feed_forward(x, self.linear1, self.dropout, self.linear2, self.activation)
        return self.dropout2(y)

    def forward(
        self,
        src: Operand,
        src_mask: Operand | None = None,
        src_key_padding_mask: Operand | None = None,
        is_causal: bool = False,
    ) -> Variable:
        """The layer applied to ``src`` (S, N, E), (N, S, E) with ``batch_first``, or (S, E).

        Args:
            src: The input sequence.
            src_mask: (S, S) or (N * nhead, S, S) attention mask, boolean (True = NOT
                allowed) or float (added to the scores).
            src_key_padding_mask: (N, S) or (S,): True (or -inf) marks padding keys.
            is_causal: A hint that ``src_mask`` is the causal mask (see
                ``lampy.nn.MultiheadAttention.forward``).

        Raises:
            ShapeError: for an input or mask of the wrong shape.
        """
        attn = self.self_attn
        _check_src(
            f"TransformerEncoderLayer(d_model={attn.embed_dim}, nhead={attn.num_heads})",
            "src",
            src,
            attn.embed_dim,
            attn.batch_first,
        )
        x = src
        if self.norm_first:
            x = self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal) + x
            return self._ff_block(self.norm2(x)) + x  # type: ignore[no-any-return]
        x = self.norm1(self._sa_block(x, src_mask, src_key_padding_mask, is_causal) + x)
        return self.norm2(self._ff_block(x) + x)  # type: ignore[no-any-return]


@attrs.frozen(eq=False, repr=False)
class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (``memory``) and a
    feed-forward block, each with a residual connection and a layer norm
    (``torch.nn.TransformerDecoderLayer``).

    Post-norm (the default)::

        x = norm1(x + dropout1(self_attn(x, x, x)))
        x = norm2(x + dropout2(multihead_attn(x, memory, memory)))
        x = norm3(x + dropout3(linear2(dropout(activation(linear1(x))))))

    Pre-norm (``norm_first=True``) applies ``norm1``/``norm2``/``norm3`` to each
    block's input instead, as in the encoder layer.

    Attributes:
        self_attn: MultiheadAttention over the target.
        multihead_attn: MultiheadAttention of the target over the memory.
        linear1: Linear(d_model, dim_feedforward).
        dropout: Dropout after the activation.
        linear2: Linear(dim_feedforward, d_model).
        norm1: LayerNorm(d_model).
        norm2: LayerNorm(d_model).
        norm3: LayerNorm(d_model).
        dropout1: Dropout on the self-attention output.
        dropout2: Dropout on the cross-attention output.
        dropout3: Dropout on the feed-forward output.
        activation: The feed-forward activation.
        norm_first: Pre-norm when True.
    """

    self_attn: MultiheadAttention
    multihead_attn: MultiheadAttention
    linear1: Linear
    dropout: Dropout
    linear2: Linear
    norm1: LayerNorm
    norm2: LayerNorm
    norm3: LayerNorm
    dropout1: Dropout
    dropout2: Dropout
    dropout3: Dropout
    activation: Activation = relu
    norm_first: bool = False

    @classmethod
    def init(
        cls,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Activation = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> TransformerDecoderLayer:
        """A decoder layer with PyTorch's initialisation; the arguments are the encoder
        layer's (see ``lampy.nn.TransformerEncoderLayer.init``)."""
        r, p, ff, act = _layer_settings(
            "TransformerDecoderLayer.init", rng, dropout, dim_feedforward, activation
        )

        def mha() -> MultiheadAttention:
            return MultiheadAttention.init(
                d_model, nhead, dropout=p, bias=bias, batch_first=batch_first, dtype=dtype, rng=r
            )

        self_attn = mha()
        cross = mha()
        e = self_attn.embed_dim
        feed_forward = _feed_forward_parts(e, ff, p, bias, dtype, r)

        def norm() -> LayerNorm:
            return LayerNorm.init(e, eps=layer_norm_eps, bias=bias, dtype=dtype)

        return cls(
            self_attn,
            cross,
            *feed_forward,
            norm(),
            norm(),
            norm(),
            Dropout.init(p, rng=r),
            Dropout.init(p, rng=r),
            Dropout.init(p, rng=r),
            act,
            bool(norm_first),
        )

    def extra_repr(self) -> str:
        return _layer_repr(self.self_attn, self.norm_first)

    def _sa_block(self, x: Any, mask: Any, kpm: Any, is_causal: bool) -> Any:
        return self.dropout1(_attend(self.self_attn, x, x, mask, kpm, is_causal))

    def _mha_block(self, x: Any, mem: Any, mask: Any, kpm: Any, is_causal: bool) -> Any:
        return self.dropout2(_attend(self.multihead_attn, x, mem, mask, kpm, is_causal))

    def _ff_block(self, x: Any) -> Any:
        y = _feed_forward(x, self.linear1, self.dropout, self.linear2, self.activation)
        return self.dropout3(y)

    def forward(
        self,
        tgt: Operand,
        memory: Operand,
        tgt_mask: Operand | None = None,
        memory_mask: Operand | None = None,
        tgt_key_padding_mask: Operand | None = None,
        memory_key_padding_mask: Operand | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Variable:
        """The layer applied to ``tgt`` (T, N, E) attending to ``memory`` (S, N, E)
        ((N, T, E) and (N, S, E) with ``batch_first``; (T, E), (S, E) unbatched).

        Args:
            tgt: The target sequence.
            memory: The encoder's output.
            tgt_mask: (T, T) or (N * nhead, T, T) mask of the self-attention.
            memory_mask: (T, S) or (N * nhead, T, S) mask of the cross-attention.
            tgt_key_padding_mask: (N, T) or (T,) padding of the target.
            memory_key_padding_mask: (N, S) or (S,) padding of the memory.
            tgt_is_causal: A hint that ``tgt_mask`` is the causal mask.
            memory_is_causal: A hint that ``memory_mask`` is the causal mask.

        Boolean masks are True where attention is NOT allowed; float masks are added.

        Raises:
            ShapeError: for inputs or masks of the wrong shape.
        """
        attn = self.self_attn
        owner = f"TransformerDecoderLayer(d_model={attn.embed_dim}, nhead={attn.num_heads})"
        _check_src(owner, "tgt", tgt, attn.embed_dim, attn.batch_first)
        _check_src(owner, "memory", memory, attn.embed_dim, attn.batch_first)
        x = tgt
        m_args = (memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        if self.norm_first:
            x = self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal) + x
            x = self._mha_block(self.norm2(x), *m_args) + x
            return self._ff_block(self.norm3(x)) + x  # type: ignore[no-any-return]
        x = self.norm1(self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal) + x)
        x = self.norm2(self._mha_block(x, *m_args) + x)
        return self.norm3(self._ff_block(x) + x)  # type: ignore[no-any-return]
