"""One entry per module class of ``lampy.nn``: how to make it, PyTorch's constructor call
for it, and inputs for its forward pass. Tests that must hold for every module (the
constructor habit, the dtype rule, copies, pickles, immutability) run over this table,
and a test checks that it names every module class ``lampy.nn`` exports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import lampy
from lampy import nn

Make = Callable[[np.random.Generator, Any], nn.Module]
Inputs = Callable[[np.random.Generator, Any], tuple[Any, ...]]


@dataclass(frozen=True)
class Entry:
    """A module class in the table."""

    cls: type[nn.Module]
    make: Make
    """Builds the module with ``init`` (rng, dtype of the parameters)."""
    torch_args: tuple[Any, ...] = ()
    """The arguments of PyTorch's constructor call ``torch.nn.X(*torch_args)``."""
    inputs: Inputs | None = None
    """Inputs of a forward pass in the given floating dtype; None for containers."""
    torch_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.cls.__name__


def _normal(*shape: int) -> Inputs:
    return lambda rng, dtype: (rng.normal(size=shape).astype(dtype),)


def _act(cls: type[nn.Module], *args: Any, **kwargs: Any) -> Entry:
    return Entry(cls, lambda r, d: cls.init(*args, **kwargs), args, _normal(2, 4), kwargs)  # type: ignore[attr-defined]


def _linear(rng: np.random.Generator, dtype: Any) -> nn.Linear:
    return nn.Linear.init(4, 4, dtype=dtype, rng=rng)


def _encoder_layer(rng: np.random.Generator, dtype: Any) -> nn.TransformerEncoderLayer:
    return nn.TransformerEncoderLayer.init(8, 2, 16, dtype=dtype, rng=rng)


def _decoder_layer(rng: np.random.Generator, dtype: Any) -> nn.TransformerDecoderLayer:
    return nn.TransformerDecoderLayer.init(8, 2, 16, dtype=dtype, rng=rng)


def _seq(rng: np.random.Generator, dtype: Any) -> tuple[Any, ...]:
    return (rng.normal(size=(3, 2, 8)).astype(dtype),)


def _seq2(rng: np.random.Generator, dtype: Any) -> tuple[Any, ...]:
    return (rng.normal(size=(3, 2, 8)).astype(dtype), rng.normal(size=(4, 2, 8)).astype(dtype))


def _qkv(rng: np.random.Generator, dtype: Any) -> tuple[Any, ...]:
    x = rng.normal(size=(3, 2, 8)).astype(dtype)
    return (x, x, x)


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


ENTRIES: list[Entry] = [
    # activations: no parameters
    _act(nn.ReLU),
    _act(nn.ReLU6),
    _act(nn.LeakyReLU, 0.2),
    _act(nn.ELU, 0.5),
    _act(nn.SELU),
    _act(nn.CELU, 0.5),
    _act(nn.GELU),
    _act(nn.SiLU),
    _act(nn.Mish),
    _act(nn.Softplus, 2.0),
    _act(nn.Sigmoid),
    _act(nn.LogSigmoid),
    _act(nn.Tanh),
    _act(nn.Hardtanh),
    _act(nn.Hardsigmoid),
    _act(nn.Hardswish),
    _act(nn.Softsign),
    _act(nn.Softmax, dim=1),
    _act(nn.LogSoftmax, dim=1),
    _act(nn.GLU),
    # linear and shape modules
    Entry(nn.Linear, lambda r, d: nn.Linear.init(3, 2, dtype=d, rng=r), (3, 2), _normal(5, 3)),
    Entry(
        nn.Bilinear,
        lambda r, d: nn.Bilinear.init(3, 4, 2, dtype=d, rng=r),
        (3, 4, 2),
        lambda rng, d: (rng.normal(size=(5, 3)).astype(d), rng.normal(size=(5, 4)).astype(d)),
    ),
    Entry(nn.Identity, lambda r, d: nn.Identity.init(), (), _normal(2, 3)),
    Entry(nn.Flatten, lambda r, d: nn.Flatten.init(), (), _normal(2, 3, 4)),
    Entry(nn.Unflatten, lambda r, d: nn.Unflatten.init(1, (2, 3)), (1, (2, 3)), _normal(4, 6)),
    Entry(nn.Lambda, lambda r, d: nn.Lambda.init(lampy.tanh), (lampy.tanh,), _normal(2, 3)),
    Entry(
        nn.Embedding,
        lambda r, d: nn.Embedding.init(10, 3, dtype=d, rng=r),
        (10, 3),
        lambda rng, d: (np.array([[1, 2], [0, 9]]),),
    ),
    Entry(nn.Dropout, lambda r, d: nn.Dropout.init(0.5, rng=r), (0.5,), _normal(4, 5)),
    # convolutions
    Entry(
        nn.Conv1d, lambda r, d: nn.Conv1d.init(2, 3, 3, dtype=d, rng=r), (2, 3, 3), _normal(1, 2, 8)
    ),
    Entry(
        nn.Conv2d,
        lambda r, d: nn.Conv2d.init(2, 3, 3, dtype=d, rng=r),
        (2, 3, 3),
        _normal(1, 2, 6, 6),
    ),
    Entry(
        nn.ConvTranspose1d,
        lambda r, d: nn.ConvTranspose1d.init(2, 3, 3, dtype=d, rng=r),
        (2, 3, 3),
        _normal(1, 2, 5),
    ),
    Entry(
        nn.ConvTranspose2d,
        lambda r, d: nn.ConvTranspose2d.init(2, 3, 3, dtype=d, rng=r),
        (2, 3, 3),
        _normal(1, 2, 4, 4),
    ),
    # pooling
    Entry(nn.MaxPool1d, lambda r, d: nn.MaxPool1d.init(2), (2,), _normal(1, 2, 6)),
    Entry(nn.MaxPool2d, lambda r, d: nn.MaxPool2d.init(2), (2,), _normal(1, 2, 4, 4)),
    Entry(nn.AvgPool1d, lambda r, d: nn.AvgPool1d.init(2), (2,), _normal(1, 2, 6)),
    Entry(nn.AvgPool2d, lambda r, d: nn.AvgPool2d.init(2), (2,), _normal(1, 2, 4, 4)),
    Entry(
        nn.AdaptiveAvgPool2d, lambda r, d: nn.AdaptiveAvgPool2d.init(1), (1,), _normal(1, 2, 4, 4)
    ),
    # normalisation
    Entry(nn.BatchNorm1d, lambda r, d: nn.BatchNorm1d.init(3, dtype=d), (3,), _normal(4, 3)),
    Entry(nn.BatchNorm2d, lambda r, d: nn.BatchNorm2d.init(3, dtype=d), (3,), _normal(2, 3, 4, 4)),
    Entry(nn.LayerNorm, lambda r, d: nn.LayerNorm.init(4, dtype=d), (4,), _normal(2, 4)),
    Entry(nn.GroupNorm, lambda r, d: nn.GroupNorm.init(2, 4, dtype=d), (2, 4), _normal(2, 4, 3)),
    Entry(nn.RMSNorm, lambda r, d: nn.RMSNorm.init(4, dtype=d), (4,), _normal(2, 4)),
    # recurrent
    Entry(nn.RNN, lambda r, d: nn.RNN.init(3, 4, dtype=d, rng=r), (3, 4), _normal(5, 2, 3)),
    Entry(nn.GRU, lambda r, d: nn.GRU.init(3, 4, dtype=d, rng=r), (3, 4), _normal(5, 2, 3)),
    Entry(nn.LSTM, lambda r, d: nn.LSTM.init(3, 4, dtype=d, rng=r), (3, 4), _normal(5, 2, 3)),
    Entry(nn.RNNCell, lambda r, d: nn.RNNCell.init(3, 4, dtype=d, rng=r), (3, 4), _normal(2, 3)),
    Entry(nn.GRUCell, lambda r, d: nn.GRUCell.init(3, 4, dtype=d, rng=r), (3, 4), _normal(2, 3)),
    Entry(nn.LSTMCell, lambda r, d: nn.LSTMCell.init(3, 4, dtype=d, rng=r), (3, 4), _normal(2, 3)),
    # attention and transformers
    Entry(
        nn.MultiheadAttention,
        lambda r, d: nn.MultiheadAttention.init(8, 2, dtype=d, rng=r),
        (8, 2),
        _qkv,
    ),
    Entry(nn.TransformerEncoderLayer, _encoder_layer, (8, 2, 16), _seq),
    Entry(nn.TransformerDecoderLayer, _decoder_layer, (8, 2, 16), _seq2),
    Entry(
        nn.TransformerEncoder,
        lambda r, d: nn.TransformerEncoder.init(_encoder_layer(r, d), 2),
        (_encoder_layer, 2),
        _seq,
    ),
    Entry(
        nn.TransformerDecoder,
        lambda r, d: nn.TransformerDecoder.init(_decoder_layer(r, d), 2),
        (_decoder_layer, 2),
        _seq2,
    ),
    # containers and composites
    Entry(
        nn.Sequential,
        lambda r, d: nn.Sequential.init(_linear(r, d), nn.ReLU.init(), _linear(r, d)),
        (_linear, nn.ReLU, _linear),
        _normal(5, 4),
    ),
    Entry(
        nn.ModuleList,
        lambda r, d: nn.ModuleList.init([_linear(r, d), nn.ReLU.init()]),
        ([_linear, nn.ReLU],),
    ),
    Entry(
        nn.ModuleDict, lambda r, d: nn.ModuleDict.init({"lin": _linear(r, d)}), ({"lin": _linear},)
    ),
    Entry(nn.Residual, lambda r, d: nn.Residual.init(_linear(r, d)), (_linear,), _normal(5, 4)),
    Entry(nn.MLP, lambda r, d: nn.MLP.init(4, [8, 3], dtype=d, rng=r), (4, [8, 3]), _normal(5, 4)),
]

# Base classes exported for isinstance checks and subclassing; not made directly.
BASES = {nn.Module, nn.RNNBase, nn.RNNCellBase}


def torch_call_args(entry: Entry, rng: np.random.Generator) -> tuple[Any, ...]:
    """PyTorch's constructor arguments with modules made (the table names their
    factories, so that each call gets new ones in the current scope)."""

    def made(a: Any) -> Any:
        if isinstance(a, type) and issubclass(a, nn.Module):
            return a.init()  # type: ignore[attr-defined]
        if callable(a) and getattr(a, "__module__", None) == __name__:
            return a(rng, np.float32)
        if isinstance(a, list):
            return [made(x) for x in a]
        if isinstance(a, dict):
            return {k: made(v) for k, v in a.items()}
        return a

    return tuple(made(a) for a in entry.torch_args)
