"""Shared by the scripts run under mpirun: small float64 models, data, reports."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import attrs
import numpy as np

import lampy
import lampy.distributed as dist
import lampy.nn.functional as F
from lampy import nn

F64 = np.float64


@attrs.frozen(eq=False, repr=False)
class Twisted(nn.Module):
    """The mlp with its layers registered last first: the order its gradients become
    final (head, then body) is not the reverse of its parameters' order."""

    head: nn.Linear
    body: nn.Linear

    def forward(self, x: np.ndarray) -> lampy.Variable:
        return self.head(lampy.tanh(self.body(x)))


def build(kind: str, seed: int) -> nn.Module:
    """A small float64 model: "mlp" (6-16-tanh-3), "twisted" (the same, registered head
    first) or "cnn" (conv 3x3 - relu - linear)."""
    rng = np.random.default_rng(seed)
    if kind == "twisted":
        body = nn.Linear.init(6, 16, rng=rng, dtype=F64)
        return Twisted(nn.Linear.init(16, 3, rng=rng, dtype=F64), body)
    if kind == "mlp":
        return nn.Sequential.init(
            nn.Linear.init(6, 16, rng=rng, dtype=F64),
            nn.Tanh.init(),
            nn.Linear.init(16, 3, rng=rng, dtype=F64),
        )
    return nn.Sequential.init(
        nn.Conv2d.init(1, 4, 3, padding=1, rng=rng, dtype=F64),
        nn.ReLU.init(),
        nn.Flatten.init(),
        nn.Linear.init(4 * 3 * 2, 3, rng=rng, dtype=F64),
    )


def data(kind: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` samples for ``kind``'s model, with labels 0-2 (the same on every rank)."""
    rng = np.random.default_rng(12345)
    shape = (n, 1, 3, 2) if kind == "cnn" else (n, 6)
    x = rng.normal(size=shape)
    return x, rng.integers(0, 3, n)


def loss_fn(model: Any, batch: tuple[np.ndarray, ...]) -> lampy.Variable:
    return F.cross_entropy(model(batch[0]), batch[1])


def params(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: np.array(v) for k, v in model.state_dict().items()}


def parser(doc: str | None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--out", type=Path, required=True)
    return ap


def report(out: Path, **numbers: Any) -> None:
    """Write this rank's report to ``<out>/rank<r>.json``."""
    r = dist.rank() if dist.is_initialized() else 0
    out.mkdir(parents=True, exist_ok=True)
    (out / f"rank{r}.json").write_text(json.dumps({"rank": r, **numbers}))


def max_rel_err(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> float:
    """max over entries of max|a - b| / max|b|."""
    return max(float(np.abs(a[k] - b[k]).max() / max(np.abs(b[k]).max(), 1e-300)) for k in b)
