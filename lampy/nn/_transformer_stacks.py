"""Transformer stacks of ``lampy.nn``: ``TransformerEncoder`` and ``TransformerDecoder``
(``torch.nn.TransformerEncoder``/``TransformerDecoder``): ``num_layers`` copies of a
layer of ``_transformer.py``, then an optional final norm.

The stacks copy the given layer ``num_layers`` times, as PyTorch's ``copy.deepcopy``
does: every layer starts with the SAME weights, each in parameters of its own. The
dropout generator is shared (a deep copy would make all layers draw identical masks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from lampy._errors import LampyTypeError
from lampy._tree import map_leaves
from lampy.nn._buffer import Buffer
from lampy.nn._helpers import check_size, shape_of
from lampy.nn._marker import is_module
from lampy.nn._module import Module
from lampy.nn._transformer import TransformerDecoderLayer, TransformerEncoderLayer, is_causal_mask
from lampy.opkit import Operand, Variable, const, param

__all__ = ["TransformerDecoder", "TransformerEncoder"]


def _clone(value: Any) -> Any:
    """A copy of ``value`` with new parameters (same values) and new buffers; modules
    and containers (``lampy.tree``'s) are rebuilt, other settings (ints, callables,
    generators) shared."""
    return map_leaves(_cloned_leaf, value, is_leaf=is_module)


def _cloned_leaf(value: Any) -> Any:
    if isinstance(value, Module):
        changes = {
            f.alias or f.name: _clone(getattr(value, f.name))
            for f in attrs.fields(type(value))
            if f.name != "_training"
        }
        return attrs.evolve(value, **changes)
    if type(value) is Variable:
        return param(value.value) if value.needs_grad else const(value.value)
    if isinstance(value, Buffer | np.ndarray):
        return value.copy()
    return value


def _stack(owner: str, layer: Any, cls: type, num_layers: int, norm: Any) -> tuple[Any, ...]:
    if not isinstance(layer, cls):
        raise LampyTypeError(f"{owner}: expected a {cls.__name__}, got {type(layer).__name__}.")
    n = check_size(owner, "num_layers", num_layers, 0)
    if norm is not None and not isinstance(norm, Module):
        raise LampyTypeError(
            f"{owner}: norm must be a lampy.nn.Module (e.g. LayerNorm) or None, got "
            f"{type(norm).__name__}."
        )
    return tuple(_clone(layer) for _ in range(n))


def _seq_len(x: Any, batch_first: bool) -> int:
    s = shape_of(x)
    return s[0] if len(s) == 2 else s[1 if batch_first else 0]


@attrs.frozen(eq=False, repr=False)
class _Stack(Module):
    """The fields, repr and final norm shared by the encoder and decoder stacks."""

    layers: tuple[Any, ...]
    norm: Module | None = None

    @property
    def num_layers(self) -> int:
        """The number of layers."""
        return len(self.layers)

    def extra_repr(self) -> str:
        return f"num_layers={self.num_layers}"

    def _final_norm(self, x: Any) -> Any:
        return x if self.norm is None else self.norm(x)


@attrs.frozen(eq=False, repr=False)
class TransformerEncoder(_Stack):
    """A stack of ``num_layers`` encoder layers and an optional final norm
    (``torch.nn.TransformerEncoder``). Parameters are named ``layers.0.…``,
    ``layers.1.…`` and ``norm.…``.

    Like PyTorch's deep copies, the layers are copies of the given layer: they start
    with identical weights, each held in its own parameters (train them apart). The
    given layer itself is not part of the stack.

    Attributes:
        layers: The encoder layers.
        norm: The final normalisation (e.g. a LayerNorm) or None.
    """

    if TYPE_CHECKING:  # the fields are _Stack's
        layers: tuple[TransformerEncoderLayer, ...]

    @classmethod
    def init(
        cls,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> TransformerEncoder:
        """``num_layers`` copies of ``encoder_layer`` (same initial weights, own
        parameters), then ``norm``.

        Args:
            encoder_layer: The layer to copy.
            num_layers: How many copies.
            norm: An optional module applied to the last layer's output.
            enable_nested_tensor: Accepted for PyTorch compatibility and ignored: lampy
                has no nested tensors (PyTorch's fast path, taken only without
                gradients in eval mode with a padding mask, also writes 0 at padded
                output positions; lampy computes them as the training path does).
            mask_check: Accepted for PyTorch compatibility and ignored (it configures
                the same nested-tensor fast path).
        """
        del enable_nested_tensor, mask_check
        layers = _stack(
            "TransformerEncoder.init", encoder_layer, TransformerEncoderLayer, num_layers, norm
        )
        return cls(layers, norm)

    def forward(
        self,
        src: Operand,
        mask: Operand | None = None,
        src_key_padding_mask: Operand | None = None,
        is_causal: bool | None = None,
    ) -> Any:
        """Each layer applied in turn, then ``norm``.

        Args:
            src: (S, N, E), (N, S, E) with ``batch_first``, or (S, E).
            mask: The layers' ``src_mask``.
            src_key_padding_mask: The layers' ``src_key_padding_mask``.
            is_causal: A hint that ``mask`` is causal; None (the default) detects it by
                comparing ``mask`` with the causal mask, as PyTorch does.
        """
        x = src
        if self.layers:
            bf = self.layers[0].self_attn.batch_first
            causal = is_causal_mask(mask, is_causal, _seq_len(src, bf))
            for layer in self.layers:
                x = layer(x, mask, src_key_padding_mask, causal)
        return self._final_norm(x)


@attrs.frozen(eq=False, repr=False)
class TransformerDecoder(_Stack):
    """A stack of ``num_layers`` decoder layers and an optional final norm
    (``torch.nn.TransformerDecoder``); the layers are copies of the given one, as in
    ``lampy.nn.TransformerEncoder``.

    Attributes:
        layers: The decoder layers.
        norm: The final normalisation or None.
    """

    if TYPE_CHECKING:  # the fields are _Stack's
        layers: tuple[TransformerDecoderLayer, ...]

    @classmethod
    def init(
        cls,
        decoder_layer: TransformerDecoderLayer,
        num_layers: int,
        norm: Module | None = None,
    ) -> TransformerDecoder:
        """``num_layers`` copies of ``decoder_layer`` (same initial weights, own
        parameters), then ``norm``."""
        layers = _stack(
            "TransformerDecoder.init", decoder_layer, TransformerDecoderLayer, num_layers, norm
        )
        return cls(layers, norm)

    def forward(
        self,
        tgt: Operand,
        memory: Operand,
        tgt_mask: Operand | None = None,
        memory_mask: Operand | None = None,
        tgt_key_padding_mask: Operand | None = None,
        memory_key_padding_mask: Operand | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Any:
        """Each layer applied in turn to ``tgt`` with the same ``memory``, then ``norm``;
        the arguments are those of
        ``lampy.nn.TransformerDecoderLayer.forward``, with
        ``tgt_is_causal=None`` detecting a causal ``tgt_mask``."""
        x = tgt
        if self.layers:
            bf = self.layers[0].self_attn.batch_first
            causal = is_causal_mask(tgt_mask, tgt_is_causal, _seq_len(tgt, bf))
            for layer in self.layers:
                x = layer(
                    x,
                    memory,
                    tgt_mask,
                    memory_mask,
                    tgt_key_padding_mask,
                    memory_key_padding_mask,
                    causal,
                    memory_is_causal,
                )
        return self._final_norm(x)
