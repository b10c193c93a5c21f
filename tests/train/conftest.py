"""Small models and data shared by the training tests."""

from __future__ import annotations

from typing import Any

import numpy as np

import lampy
import lampy.nn.functional as F
from lampy import nn
from lampy.nn._activation_modules import Tanh
from lampy.nn._dropout import Dropout
from lampy.nn._linear import Linear


def classification_data(n: int = 96, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two linearly separable classes in 4 dimensions."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = (x[:, 0] - x[:, 2] > 0).astype(np.int64)
    return x, y


def mlp(seed: int, dropout: float = 0.0) -> Any:
    """A 4-8-2 MLP; with dropout, its masks come from a generator seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    layers = [Linear.init(4, 8, rng=rng), Tanh.init()]
    if dropout:
        layers.append(Dropout.init(dropout, rng=np.random.default_rng(seed + 1000)))
    return nn.Sequential.init(*layers, Linear.init(8, 2, rng=rng))


def ce_loss(model: Any, batch: tuple[np.ndarray, ...]) -> lampy.Variable:
    """Cross-entropy of the model's scores on ``batch = (x, y)``."""
    return F.cross_entropy(model(batch[0]), batch[1])
