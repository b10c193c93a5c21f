"""Memory-bounded training: a budget, the error past it, recomputation, data on disk.

A deep MLP (32 hidden Linear+ReLU layers of width 256, batch 256, float32) needs about
8 MiB of activations for one training step. The script:

1. runs a step inside ``lampy.Scope(budget=...)`` with a budget below that: the step
   fails with ``lampy.MemoryBudgetError``, which says which op asked for how much, what
   the scope already owns, and its largest owners; the scope is left intact;
2. trains the same model within the same budget with ``lampy.nn.remat_sequential``
   (sqrt(n) segments: only segment boundaries are kept, each segment is recomputed in
   backward), printing the step's peak with and without recomputation;
3. profiles one step of each with ``lampy.memory_profile()``, prints the top ops and saves
   a plot of live memory over the steps (needs matplotlib: ``pip install "lampy[plot]"``);
4. trains an epoch over a ``.npy`` file on disk read through a memory map, and prints the
   process's resident memory: it stays at about one batch, not the file's size.

    python examples/memory_bounded.py [--steps N] [--plot PATH] [--data-mb N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

import lampy
import lampy.nn.functional as F
from lampy import nn, optim
from lampy.data import Batches

DEPTH, WIDTH, BATCH = 32, 256, 256
BUDGET = "6 MiB"  # below what the plain step's activations need


def mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB"


def rss_bytes() -> int:
    """The resident set size now (Linux), else -1."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return -1


def make_layers(rng: np.random.Generator) -> list[nn.Module]:
    layers: list[nn.Module] = []
    for i in range(DEPTH):
        layers += [nn.Linear.init(64 if i == 0 else WIDTH, WIDTH, rng=rng), nn.ReLU.init()]
    return [*layers, nn.Linear.init(WIDTH, 1, rng=rng)]


def step(layers: list[nn.Module], x: np.ndarray, y: np.ndarray, remat: bool) -> float:
    """Forward and backward of one batch; the loss."""
    if remat:
        out = nn.remat_sequential(layers, x)
    else:
        out = x
        for m in layers:
            out = m(out)
    loss = F.mse_loss(out, y)
    loss.backward()
    return float(loss.value)


def budgets(steps: int, plot: str | None) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 64)).astype(np.float32)
    y = np.tanh(x[:, :1]).astype(np.float32)
    with lampy.Scope():
        layers = make_layers(rng)
        params = [p for m in layers for p in m.parameters()]
        opt = optim.SGD(params, lr=1e-3)
        print(f"model: {DEPTH} hidden layers of {WIDTH}, batch {BATCH}; budget {BUDGET}")

        # 1. The plain step does not fit the budget.
        try:
            with lampy.Scope(budget=BUDGET):
                step(layers, x, y, remat=False)
        except lampy.MemoryBudgetError as e:
            print(f"plain step: MemoryBudgetError: {e}\n")
        opt.zero_grad()

        # The budget bounds what a step allocates. The parameters' gradients (8 MiB)
        # live with the model: made once (a step without budget) and kept, zero-filled
        # between steps (set_to_none=False); each step's pass adds into them.
        with lampy.Scope():
            step(layers, x, y, remat=True)
        opt.zero_grad(set_to_none=False)

        # 2. Peaks with and without recomputation (no budget), then training within it.
        peaks = {}
        profiles = {}
        for remat in (False, True):
            with lampy.memory_profile() as prof, lampy.Scope() as s:
                step(layers, x, y, remat)
                peaks[remat] = s.memory.peak_bytes
            profiles[remat] = prof
            opt.zero_grad(set_to_none=False)
        print(
            f"step peak: plain {mib(peaks[False])}, remat_sequential {mib(peaks[True])} "
            f"({peaks[True] / peaks[False]:.2f}x)"
        )
        for i in range(1, steps + 1):
            with lampy.Scope(budget=BUDGET) as s:
                loss = step(layers, x, y, remat=True)
                peak = s.memory.peak_bytes
            opt.step()
            opt.zero_grad(set_to_none=False)
            if i == 1 or i == steps:
                print(
                    f"step {i} within {BUDGET} with remat_sequential (peak {mib(peak)}): "
                    f"loss {loss:.5f}"
                )

    # 3. The memory profile of the remat step.
    print("\nremat step, top ops by contribution to the peak:")
    print(profiles[True].table(top=6))
    if plot:
        try:
            profiles[True].plot(plot, title="remat_sequential step")
            print(f"memory plot saved to {plot}")
        except lampy.LampyError as e:
            print(f"no plot: {e}")


def larger_than_memory(data_mb: int) -> None:
    """4. One epoch over a file read through a memory map."""
    rows = data_mb * 2**20 // (64 * 4)
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.npy"
        header = {"descr": "<f4", "fortran_order": False, "shape": (rows, 64)}
        with path.open("wb") as f:  # written in chunks: never whole in memory
            np.lib.format.write_array_header_1_0(f, header)
            for start in range(0, rows, 16384):
                n = min(16384, rows - start)
                f.write(rng.standard_normal((n, 64), dtype=np.float32).tobytes())
        data = np.load(path, mmap_mode="r")
        before = rss_bytes()
        with lampy.Scope():
            model = nn.Sequential.init(
                nn.Linear.init(64, 64, rng=rng), nn.ReLU.init(), nn.Linear.init(64, 1, rng=rng)
            )
            opt = optim.Adam(model.parameters(), lr=1e-3)
            most = before
            for (xb,) in Batches(data, batch_size=1024, prefetch=2):
                with lampy.Scope():
                    F.mse_loss(model(xb), xb[:, :1] - xb[:, 1:2]).backward()
                opt.step()
                opt.zero_grad()
                most = max(most, rss_bytes())
        del data
    if before >= 0:
        print(
            f"\none epoch over a {data_mb} MiB file on disk: resident memory grew by at "
            f"most {mib(most - before)} (batch: {mib(1024 * 64 * 4)})"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20, help="training steps within the budget")
    ap.add_argument("--plot", default="memory_profile.png", help="where to save the plot")
    ap.add_argument("--data-mb", type=int, default=256, help="size of the file on disk")
    args = ap.parse_args()
    lampy.tune_malloc()
    budgets(args.steps, args.plot)
    larger_than_memory(args.data_mb)
