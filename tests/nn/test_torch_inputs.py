"""Another library's arrays given as targets (a CPU PyTorch tensor) are read as numpy
arrays, not mistaken for numpy ones (issue 25, item 3)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F


class _ArrayOnly:
    """Something with __array__ and a foreign dtype, as a PyTorch tensor."""

    dtype = object()

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.a


def test_cross_entropy_takes_foreign_array_targets() -> None:
    """Class indices and probabilities given through __array__ give numpy's loss."""
    logits = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    with lampy.Scope():
        x = lampy.param(logits)
        want = F.cross_entropy(x, np.array([1, 2, 3])).value
        got = F.cross_entropy(x, _ArrayOnly(np.array([1, 2, 3])))
        np.testing.assert_allclose(got.value, want)
        probs = np.full((3, 4), 0.25, np.float32)
        np.testing.assert_allclose(
            F.cross_entropy(x, _ArrayOnly(probs)).value, F.cross_entropy(x, probs).value
        )


def test_cross_entropy_takes_torch_tensors() -> None:
    """A CPU torch tensor target gives PyTorch's own number."""
    torch = pytest.importorskip("torch")
    logits = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    target = torch.tensor([1, 2, 3])
    with lampy.Scope():
        got = F.cross_entropy(lampy.param(logits), target).value
    want = torch.nn.functional.cross_entropy(torch.tensor(logits), target).item()
    assert abs(float(got) - want) < 1e-6
