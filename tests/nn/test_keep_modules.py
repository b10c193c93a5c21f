"""Scope.keep moves a module's parameters, for records and PyTorch-style classes."""

from __future__ import annotations

import numpy as np

import lampy
from lampy import nn


class MLP(nn.Module):
    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__()
        self.fc1 = nn.Linear.init(3, 4, rng=rng)
        self.blocks = nn.ModuleList.init([nn.Linear.init(4, 4, rng=rng)])
        self.fc2 = nn.Linear.init(4, 2, rng=rng)

    def forward(self, x: np.ndarray) -> lampy.Variable:
        return self.fc2(self.blocks[0](self.fc1(x)))


def test_keep_moves_a_pytorch_style_modules_parameters() -> None:
    """A module built inside an inner scope and kept lives on in the outer one: every
    parameter (nested containers included) moves, none is released."""
    rng = np.random.default_rng(0)
    with lampy.Scope():
        with lampy.Scope() as inner:
            model = inner.keep(MLP(rng))
            record = inner.keep(nn.Sequential.init(nn.Linear.init(3, 2, rng=rng)))
        params = list(model.parameters()) + list(record.parameters())
        assert len(params) == 8 and not any(p.is_released for p in params)
        with lampy.Scope():
            model(np.ones((2, 3), np.float32)).sum().backward()
        assert all(p.grad is not None for p in model.parameters())
