"""nanoGPT's model, as PyTorch users write it, runs on lampy with only its import lines
changed (issue 25): the ``gpt.py`` block of docs/coming-from-pytorch.md is that source;
with the three lines swapped back it is the PyTorch source, and both compute the same
numbers from the same weights."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lampy
from tests.docs.markdown import blocks

PAGE = Path(__file__).resolve().parents[2] / "docs" / "coming-from-pytorch.md"

LAMPY_IMPORTS = (
    "import lampy as torch\nimport lampy.nn as nn\nfrom lampy.nn import functional as F\n"
)
TORCH_IMPORTS = "import torch\nimport torch.nn as nn\nfrom torch.nn import functional as F\n"


def _lampy_source() -> str:
    (code,) = [b.code for b in blocks(PAGE.read_text()) if b.title == "gpt.py"]
    return code


def _torch_source() -> str:
    return _lampy_source().replace(LAMPY_IMPORTS, TORCH_IMPORTS)


def _load(code: str, name: str, tmp_path: Path) -> ModuleType:
    """Import ``code`` as the module ``name`` (from a file, as a user's model.py)."""
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def _batch(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 32, (4, 16)), rng.integers(0, 32, (4, 16))


def test_the_lampy_source_is_the_pytorch_source_with_its_imports_swapped() -> None:
    """The block differs from PyTorch code only in the three import lines: nothing else
    in it names lampy, and swapping them leaves no lampy in the source."""
    source = _lampy_source()
    assert source.count(LAMPY_IMPORTS) == 1
    assert "lampy" not in source.replace(LAMPY_IMPORTS, "")
    assert "lampy" not in _torch_source()


def test_gpt_builds_trains_and_samples_on_lampy(tmp_path: Path) -> None:
    """The unchanged model builds (tied weights, PyTorch's counts), builds the same
    weights after the same manual_seed, trains with dropout through
    configure_optimizers' parameter groups, and samples."""
    gpt = _load(_lampy_source(), "_gpt_lampy", tmp_path)
    with lampy.Scope():
        lampy.manual_seed(0)
        model = gpt.GPT(gpt.GPTConfig(dropout=0.1))
        lampy.manual_seed(0)
        again = gpt.GPT(gpt.GPTConfig(dropout=0.1))
        a, b = model.state_dict(), again.state_dict()
        assert list(a) == list(b) and len(a) == 29
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
        assert model.lm_head.weight is model.transformer.wte.weight
        assert sum(p.numel() for p in model.parameters()) == 7360
        assert model.get_num_params() == 7360 - 16 * 16
        # The tied weight has nn.init.normal_(std=0.02)'s spread, c_proj the scaled one.
        assert 0.015 < float(model.lm_head.weight.value.std()) < 0.025
        c_proj = model.transformer.h[0].mlp.c_proj.weight.value
        assert 0.007 < float(c_proj.std()) < 0.013
        optimizer = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), "cpu")
        assert [len(g["params"]) for g in optimizer.param_groups] == [10, 18]
        data = np.arange(2000) % 32
        rng = np.random.default_rng(0)
        losses = []
        for _ in range(40):
            ix = rng.integers(0, len(data) - 17, 8)
            xb = np.stack([data[i : i + 16] for i in ix])
            yb = np.stack([data[i + 1 : i + 17] for i in ix])
            with lampy.Scope():
                _, loss = model(lampy.from_numpy(xb), lampy.from_numpy(yb))
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        assert losses[-1] < 0.5 * losses[0]
        with lampy.Scope(), lampy.nn.eval_mode(model):
            out = model.generate(lampy.tensor([[3, 4, 5]]), 4, temperature=0.01)
            assert out.tolist() == [[3, 4, 5, 6, 7, 8, 9]]


def test_top_k_line_raises_naming_masked_fill(tmp_path: Path) -> None:
    """generate's in-place top-k line (``logits[mask] = -inf``) is the one line lampy
    cannot run: it raises at once, naming masked_fill."""
    gpt = _load(_lampy_source(), "_gpt_lampy_topk", tmp_path)
    with lampy.Scope():
        model = gpt.GPT(gpt.GPTConfig())
        with pytest.raises(lampy.LampyTypeError, match="masked_fill"):
            model.generate(lampy.tensor([[1, 2]]), 1, top_k=3)


def test_gpt_matches_pytorch_from_the_same_weights(tmp_path: Path) -> None:
    """The PyTorch source under PyTorch and the same source under lampy, from lampy's
    weights: the same logits, loss and gradients, and over 20 steps of the AdamW that
    configure_optimizers makes (two parameter groups, weight decay) the same losses, to
    float32 rounding; then the same greedy samples."""
    torch = pytest.importorskip("torch")
    mine = _load(_lampy_source(), "_gpt_lampy_cmp", tmp_path)
    theirs = _load(_torch_source(), "_gpt_torch_cmp", tmp_path)
    x, y = _batch()
    tmodel = theirs.GPT(theirs.GPTConfig())
    with lampy.Scope():
        lampy.manual_seed(0)
        model = mine.GPT(mine.GPTConfig())
        assert list(model.state_dict()) == list(tmodel.state_dict())
        tmodel.load_state_dict({k: torch.tensor(v) for k, v in model.state_dict().items()})
        opt = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), "cpu")
        topt = tmodel.configure_optimizers(0.1, 1e-2, (0.9, 0.95), "cpu")
        for step in range(20):
            with lampy.Scope():
                logits, loss = model(lampy.from_numpy(x), lampy.from_numpy(y))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                got: Any = (logits.value, loss.item())
            tlogits, tloss = tmodel(torch.from_numpy(x), torch.from_numpy(y))
            topt.zero_grad(set_to_none=True)
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
        tmodel.eval()
        with lampy.Scope(), lampy.nn.eval_mode(model):
            start = np.array([[1, 2, 3], [4, 5, 6]])
            out = model.generate(lampy.tensor(start), 8, temperature=1e-4)
            tout = tmodel.generate(torch.tensor(start), 8, temperature=1e-4)
            assert out.tolist() == tout.tolist()
