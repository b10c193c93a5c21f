"""Train for thousands of steps and watch the resident memory stay flat.

Every Variable belongs to the ``lampy.Scope`` that was open when it was made, and is
released when that scope's ``with`` block exits. This script's loop has two:

- the outer scope, around the whole run, owns the model's parameters, their gradient
  buffers and the optimizer's state: made once, updated in place;
- a scope per step owns that step's graph: the activations, the loss, and the
  intermediate gradients of the backward pass. Its exit releases all of them before the
  next step starts, so step 2,000 reuses the memory step 1,999 gave back.

Nothing accumulates, so the resident set size (RSS) of the process stops growing once
the first steps have warmed up the allocator. The script trains a digits MLP with a
hand-written loop (what ``lampy.train.fit`` does for you), prints the RSS, the bytes the
outer scope holds and the bytes of the step's graph every ``--every`` steps, and at the
end the change in RSS between step 100 and the last step.

``--no-step-scope`` runs the same loop without the per-step scope, for contrast: every
step's graph then belongs to the outer scope, which keeps it until the run ends, and the
memory grows by the graph's size at every step (try it with ``--steps 500``).

    python examples/memory_bounded.py [--steps N] [--every N] [--no-step-scope]
"""

from __future__ import annotations

import argparse
import contextlib
import os

import numpy as np
from sklearn.datasets import load_digits

import lampy
import lampy.nn.functional as F
from lampy import nn, optim
from lampy.data import Batches

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """The process's resident set size now: /proc/self/statm (Linux), else psutil, else
    the peak RSS from ``resource`` (which can only grow, so it still shows a leak)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        pass
    try:
        import psutil
    except ImportError:
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB, bytes on macOS
        return peak if sys.platform == "darwin" else peak * 1024
    return int(psutil.Process().memory_info().rss)


def mib(n: float) -> str:
    """Bytes as mebibytes, for printing."""
    return f"{n / 2**20:.1f} MiB"


def main(
    steps: int, every: int, step_scope: bool = True, batch_size: int = 64, seed: int = 0
) -> float:
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    batches = Batches(x, y, batch_size=batch_size, shuffle=True, rng=rng, drop_last=True)
    rss: dict[int, int] = {}
    with lampy.Scope() as run:  # parameters, gradients, optimizer state
        model = nn.Sequential.init(
            nn.Linear.init(64, 256, rng=rng),
            nn.ReLU.init(),
            nn.Dropout.init(0.1, rng=rng),
            nn.Linear.init(256, 128, rng=rng),
            nn.ReLU.init(),
            nn.Linear.init(128, 10, rng=rng),
        )  # in training mode: dropout on
        opt = optim.Adam(model.parameters(), lr=1e-3)
        print(f"model: {model.num_parameters():,} parameters; {steps} steps of {batch_size}")
        step = 0
        while step < steps:
            for xb, yb in batches:  # one epoch; numpy data stays out of the scopes
                step += 1
                # This step's graph goes in its own scope (or, for contrast, in the run's).
                with lampy.Scope() if step_scope else contextlib.nullcontext(run) as graph:
                    loss = F.cross_entropy(model(xb), yb)
                    loss.backward()  # gradients accumulate into the parameters'
                    loss_value = float(loss.value)  # read before the scope releases it
                    graph_bytes, graph_vars = graph.nbytes, len(graph)
                opt.step()  # in place on the parameters' buffers
                opt.zero_grad()
                if step == 100 or step == steps or step % every == 0:
                    rss[step] = rss_bytes()
                if step % every == 0 or step == steps:
                    graph_note = (
                        f"  step scope {graph_vars} Variables, {mib(graph_bytes)} (released)"
                        if step_scope
                        else ""
                    )
                    print(
                        f"step {step:5d}  loss {loss_value:.4f}  RSS {mib(rss[step])}  "
                        f"run scope {len(run)} Variables, {mib(run.nbytes)}{graph_note}"
                    )
                if step == steps:
                    break
    first, last = rss[min(100, steps)], rss[steps]
    growth = (last - first) / first
    print(
        f"RSS at step {min(100, steps)}: {mib(first)}, at step {steps}: {mib(last)}; "
        f"growth {mib(last - first)} ({growth:+.2%})"
    )
    return growth


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--every", type=int, default=250, help="steps between memory reports")
    ap.add_argument(
        "--no-step-scope",
        dest="step_scope",
        action="store_false",
        help="leave every step's graph in the run's scope, to see memory grow",
    )
    args = ap.parse_args()
    main(args.steps, args.every, args.step_scope)
