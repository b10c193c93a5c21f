"""A PyTorch optimizer's state_dict, with its tensor step counts, loads into lampy's
optimizer, and training goes on with PyTorch's numbers (issue 25, item 4)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy import optim


class _Tensor0d:
    """A one-element array of another library, as PyTorch's tensor(2.)."""

    def __init__(self, v: float) -> None:
        self.v = v

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self.v, dtype=dtype)


def test_a_step_count_given_as_a_foreign_scalar_array_loads() -> None:
    """A step stored as a one-element array of another library is an int once loaded."""
    with lampy.Scope():
        w = lampy.param(np.ones(2))
        opt = optim.Adam([w])
        sd = opt.state_dict()
        sd["state"] = {
            0: {"step": _Tensor0d(2.0), "exp_avg": np.zeros(2), "exp_avg_sq": np.zeros(2)}
        }
        opt.load_state_dict(sd)
        assert opt.state_dict()["state"][0]["step"] == 2


def test_torch_adamw_state_resumes_with_torch_numbers() -> None:
    """Two AdamW steps in PyTorch, the state loaded into lampy, two more steps in each:
    the same weights to float64 rounding."""
    torch = pytest.importorskip("torch")
    x0 = np.array([0.5, -1.0, 2.0])
    t = torch.nn.Parameter(torch.tensor(x0))
    topt = torch.optim.AdamW([t], lr=0.1, weight_decay=0.01)

    def torch_step() -> None:
        topt.zero_grad()
        (t**3).sum().backward()
        topt.step()

    for _ in range(2):
        torch_step()
    sd = topt.state_dict()
    assert isinstance(sd["state"][0]["step"], torch.Tensor)
    with lampy.Scope():
        w = lampy.param(t.detach().numpy().copy())
        opt = optim.AdamW([w], lr=0.1, weight_decay=0.01)
        opt.load_state_dict(sd)
        for _ in range(2):
            torch_step()
            opt.zero_grad()
            with lampy.Scope():
                (w**3).sum().backward()
            opt.step()
        np.testing.assert_allclose(w.value, t.detach().numpy(), rtol=1e-12)
