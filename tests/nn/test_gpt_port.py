"""The GPT of docs/coming-from-pytorch.md, in its PyTorch and its lampy form, computes
the same numbers from the same weights: logits, loss, gradients and AdamW steps (issue
25: a PyTorch-style model runs on lampy with the changes the page lists)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lampy
from lampy import optim
from tests.docs.markdown import blocks

PAGE = Path(__file__).resolve().parents[2] / "docs" / "coming-from-pytorch.md"


def _page_module(title: str, tmp_path: Path) -> ModuleType:
    """Import the page's block titled ``title`` as a module."""
    (code,) = [b.code for b in blocks(PAGE.read_text()) if b.title == title]
    path = tmp_path / title
    path.write_text(code)
    name = f"_page_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def test_gpt_ports_with_pytorch_numbers(tmp_path: Path) -> None:
    """Same weights (lampy's state_dict loaded into PyTorch's model): the same logits,
    loss and gradients, and over 20 AdamW steps the same losses, to float32 rounding;
    the same state_dict keys and parameter count."""
    torch = pytest.importorskip("torch")
    mine, theirs = _page_module("lampy_gpt.py", tmp_path), _page_module("torch_gpt.py", tmp_path)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 32, (4, 16))
    y = rng.integers(0, 32, (4, 16))
    tmodel = theirs.GPT(theirs.GPTConfig())
    topt = torch.optim.AdamW(tmodel.parameters(), lr=1e-2)
    with lampy.Scope():
        model = mine.GPT(mine.GPTConfig(), rng)
        assert list(model.state_dict()) == list(tmodel.state_dict())
        assert sum(p.size for p in model.parameters()) == sum(
            p.numel() for p in tmodel.parameters()
        )
        tmodel.load_state_dict({k: torch.tensor(v) for k, v in model.state_dict().items()})
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        for step in range(20):
            with lampy.Scope():
                logits, loss = model(x, y)
                opt.zero_grad()
                loss.backward()
                got: Any = (logits.value, loss.item())
            tlogits, tloss = tmodel(torch.tensor(x), torch.tensor(y))
            topt.zero_grad()
            tloss.backward()
            if step == 0:
                np.testing.assert_allclose(got[0], tlogits.detach().numpy(), atol=2e-5)
                for (name, p), (tname, tp) in zip(
                    model.named_parameters(), tmodel.named_parameters(), strict=True
                ):
                    assert name == tname
                    np.testing.assert_allclose(p.grad, tp.grad.numpy(), atol=2e-6, rtol=1e-3)
            assert abs(got[1] - tloss.item()) < 1e-4 * max(1.0, abs(tloss.item()))
            opt.step()
            topt.step()
        # Adam divides by sqrt(v): where a gradient is ~1e-6, float32 rounding flips the
        # sign of a step of lr, so weights agree to a few lr * 1e-2 (they moved by ~20 lr).
        for k, v in tmodel.state_dict().items():
            np.testing.assert_allclose(model.state_dict()[k], v.numpy(), atol=2e-3)
        with lampy.no_grad(), lampy.Scope():
            top1, _ = model(x[:, :5])
            ttop1, _ = tmodel(torch.tensor(x[:, :5]))
            np.testing.assert_allclose(top1.value, ttop1.detach().numpy(), atol=2e-3)


def test_gpt_generate_greedy_matches_pytorch(tmp_path: Path) -> None:
    """With top_k=1 sampling is greedy: both forms generate the same tokens."""
    torch = pytest.importorskip("torch")
    mine, theirs = _page_module("lampy_gpt.py", tmp_path), _page_module("torch_gpt.py", tmp_path)
    with lampy.Scope():
        model = mine.GPT(mine.GPTConfig(), np.random.default_rng(1))
        tmodel = theirs.GPT(theirs.GPTConfig())
        tmodel.load_state_dict({k: torch.tensor(v) for k, v in model.state_dict().items()})
        start = np.array([[1, 2, 3], [4, 5, 6]])
        out = model.generate(start, 20, top_k=1, rng=np.random.default_rng(0))
        tout = tmodel.generate(torch.tensor(start), 20, top_k=1)
        assert out.tolist() == tout.tolist()
