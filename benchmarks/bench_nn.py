"""Training-step benchmarks of lampy.nn + lampy.optim next to PyTorch CPU, in one run.

Run ``python benchmarks/bench_nn.py`` (``--quick`` for a smoke run, ``--json PATH`` to
save the figures, ``--only mlp,cnn`` to pick workloads). PyTorch is required for the
comparison; without it only lampy's times are printed.

Methodology
-----------
* Both run single-threaded (BLAS/OpenMP thread variables set to 1 before numpy is
  imported, ``torch.set_num_threads(1)``), float32, the same architecture, the same
  initial weights (torch's state dict loaded into the lampy model) and the same batch.
* One timed call is one training step: forward, loss, backward, ``Adam.step()`` and
  ``zero_grad()``. lampy runs the forward and backward inside a ``lampy.Scope()`` that
  exits before the optimizer step, so each step's graph is released; torch's
  ``zero_grad`` sets gradients to None (its default).
* Before timing, both compute the loss in eval mode (dropout off) and must agree to
  float32 accuracy; then both train for a few steps to warm up.
* Steps are timed in interleaved rounds (``bench_core.time_interleaved``); the table
  shows the median and minimum per step and the ratio of medians lampy / torch.
* Workloads (the issue's): an MLP 784-512-512-10 (ReLU, cross-entropy, batch 128); a
  small CNN (conv3x3 1->16, ReLU, max-pool 2, conv3x3 16->32, ReLU, max-pool 2, linear
  1568->10, cross-entropy) on 1x28x28, batch 64; a 2-layer post-norm transformer encoder
  (d_model 128, 4 heads, batch-first, dropout 0.1, mean-squared error to a random
  target) on sequences of 64, batch 32, with dim_feedforward 512 and with PyTorch's
  default 2048.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_core  # noqa: E402

import lampy  # noqa: E402
import lampy.nn.functional as F  # noqa: E402
from lampy import nn, optim  # noqa: E402

TARGETS = {"mlp": 1.2, "cnn": 2.0, "transformer-512": 1.5, "transformer-2048": 1.5}


@dataclass
class Workload:
    """One model and batch, built in both libraries with the same weights."""

    name: str
    description: str
    lampy_model: Any
    lampy_loss: Callable[[Any], Any]
    torch_model: Any
    torch_loss: Callable[[Any], Any]


# ------------------------------------------------------------------- models


def _mlp(rng: np.random.Generator) -> Any:
    return nn.Sequential.init(
        nn.Linear.init(784, 512, rng=rng),
        nn.ReLU.init(),
        nn.Linear.init(512, 512, rng=rng),
        nn.ReLU.init(),
        nn.Linear.init(512, 10, rng=rng),
    )


def _torch_mlp(torch: Any) -> Any:
    tnn = torch.nn
    return tnn.Sequential(
        tnn.Linear(784, 512), tnn.ReLU(), tnn.Linear(512, 512), tnn.ReLU(), tnn.Linear(512, 10)
    )


def _cnn(rng: np.random.Generator) -> Any:
    return nn.Sequential.init(
        nn.Conv2d.init(1, 16, 3, padding=1, rng=rng),
        nn.ReLU.init(),
        nn.MaxPool2d.init(2),
        nn.Conv2d.init(16, 32, 3, padding=1, rng=rng),
        nn.ReLU.init(),
        nn.MaxPool2d.init(2),
        nn.Flatten.init(),
        nn.Linear.init(32 * 7 * 7, 10, rng=rng),
    )


def _torch_cnn(torch: Any) -> Any:
    tnn = torch.nn
    return tnn.Sequential(
        tnn.Conv2d(1, 16, 3, padding=1),
        tnn.ReLU(),
        tnn.MaxPool2d(2),
        tnn.Conv2d(16, 32, 3, padding=1),
        tnn.ReLU(),
        tnn.MaxPool2d(2),
        tnn.Flatten(),
        tnn.Linear(32 * 7 * 7, 10),
    )


def _encoder(rng: np.random.Generator, ff: int) -> Any:
    layer = nn.TransformerEncoderLayer.init(128, 4, ff, batch_first=True, rng=rng)
    return nn.TransformerEncoder.init(layer, 2)


def _torch_encoder(torch: Any, ff: int) -> Any:
    tnn = torch.nn
    layer = tnn.TransformerEncoderLayer(128, 4, ff, batch_first=True)
    return tnn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def workloads(torch: Any, only: set[str]) -> list[Workload]:
    """The workloads, with torch's initial weights copied into lampy's models."""
    rng = np.random.default_rng(0)
    out: list[Workload] = []

    def add(
        name: str, desc: str, lm: Any, tm: Any, x: np.ndarray, y: np.ndarray, kind: str
    ) -> None:
        if only and name.split("-")[0] not in only:
            return
        if tm is not None:
            lm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
            tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        if kind == "ce":
            lloss = lambda m: F.cross_entropy(m(x), y)
            tloss = None if tm is None else (lambda m: torch.nn.functional.cross_entropy(m(tx), ty))
        else:
            lloss = lambda m: F.mse_loss(m(x), y)
            tloss = None if tm is None else (lambda m: torch.nn.functional.mse_loss(m(tx), ty))
        out.append(Workload(name, desc, lm, lloss, tm, tloss))

    x = rng.normal(size=(128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    add("mlp", "MLP 784-512-512-10, batch 128", _mlp(rng), torch and _torch_mlp(torch), x, y, "ce")
    x = rng.normal(size=(64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    add(
        "cnn",
        "CNN 2x(conv3x3+pool), 1x28x28, batch 64",
        _cnn(rng),
        torch and _torch_cnn(torch),
        x,
        y,
        "ce",
    )
    x = rng.normal(size=(32, 64, 128)).astype(np.float32)
    y = rng.normal(size=(32, 64, 128)).astype(np.float32)
    for ff in (512, 2048):
        add(
            f"transformer-{ff}",
            f"2-layer encoder d128 h4 ff{ff}, seq 64, batch 32",
            _encoder(rng, ff),
            torch and _torch_encoder(torch, ff),
            x,
            y,
            "mse",
        )
    return out


# ------------------------------------------------------------------- steps


def lampy_step(w: Workload) -> Callable[[], float]:
    model = w.lampy_model
    opt = optim.Adam(model.parameters(), lr=1e-4)

    def step() -> float:
        with lampy.Scope():
            loss = w.lampy_loss(model)
            loss.backward()
            value = float(loss.value)
        opt.step()
        opt.zero_grad()
        return value

    return step


def torch_step(w: Workload, torch: Any) -> Callable[[], float]:
    model = w.torch_model
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)

    def step() -> float:
        loss = w.torch_loss(model)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return float(loss.detach())

    return step


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="few repetitions (smoke run)")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--only", default="", help="comma-separated: mlp,cnn,transformer")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    args = ap.parse_args(argv)
    bench_core.CLOCK = args.clock
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    bench_core.warm_malloc()
    only = {s for s in args.only.split(",") if s}
    print(f"lampy nn benchmarks — {datetime.datetime.now():%Y-%m-%d %H:%M}")
    print(f"numpy {np.__version__}, torch {getattr(torch, '__version__', 'not installed')}")
    print(f"clock: {args.clock}; load average {os.getloadavg()}")
    for line in bench_core.blas_info():
        print(f"blas/openmp: {line}")
    print()
    rounds, block = (2, 2) if args.quick else (8, 5)
    rows: list[dict[str, Any]] = []
    with lampy.Scope():  # the models' parameters live here
        run_all(torch, only, rounds, block, rows)
    if rows is None:
        return 1
    print_rows(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


def run_all(
    torch: Any, only: set[str], rounds: int, block: int, rows: list[dict[str, Any]]
) -> None:
    """Measure every workload, appending one row each to ``rows``."""
    for w in workloads(torch, only):
        if torch is not None:  # same weights, same data: the same loss (dropout off)
            with lampy.Scope(), lampy.no_grad():
                ours = float(w.lampy_loss(w.lampy_model.with_training(False)).value)
            w.torch_model.eval()
            with torch.no_grad():
                theirs = float(w.torch_loss(w.torch_model))
            w.torch_model.train()
            if not np.isclose(ours, theirs, rtol=1e-4, atol=1e-5):
                raise SystemExit(f"{w.name}: losses differ: lampy {ours}, torch {theirs}")
        fns = {"lampy": lampy_step(w)}
        if torch is not None:
            fns["torch"] = torch_step(w, torch)
        for fn in fns.values():
            for _ in range(2):
                fn()
        timing = bench_core.time_interleaved(fns, rounds, block)
        med = {n: statistics.median(t) * 1e3 for n, t in timing.times.items()}
        low = {n: min(t) * 1e3 for n, t in timing.times.items()}
        ratio = med["lampy"] / med["torch"] if "torch" in med else None
        rows.append(
            {
                "workload": w.name,
                "description": w.description,
                "lampy_ms": med["lampy"],
                "lampy_min_ms": low["lampy"],
                "torch_ms": med.get("torch"),
                "torch_min_ms": low.get("torch"),
                "ratio": ratio,
                "target": TARGETS[w.name],
                "samples": len(timing.times["lampy"]),
            }
        )


def print_rows(rows: list[dict[str, Any]]) -> None:
    """The table: medians, minimums, ratio lampy / torch and the target."""
    cols = ("lampy ms", 9), ("(min)", 8), ("torch ms", 9), ("(min)", 8), ("ratio", 7), ("target", 7)
    head = f"{'workload':<18} " + " ".join(f"{c:>{w}}" for c, w in cols)
    print(head)
    print("-" * len(head))
    for r in rows:
        t = "-" if r["torch_ms"] is None else f"{r['torch_ms']:9.2f}"
        tm = "-" if r["torch_min_ms"] is None else f"{r['torch_min_ms']:8.2f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        met = "" if r["ratio"] is None else (" met" if r["ratio"] <= r["target"] else " NOT met")
        print(
            f"{r['workload']:<18} {r['lampy_ms']:9.2f} {r['lampy_min_ms']:8.2f} {t:>9} {tm:>8} "
            f"{ratio:>7} {r['target']:>6.1f}x{met}"
        )
    print()
    for r in rows:
        print(f"{r['workload']}: {r['description']} ({r['samples']} timed steps each)")


if __name__ == "__main__":
    sys.exit(main())
