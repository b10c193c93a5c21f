"""A steady training step keeps memory flat: RSS and traced memory over 10,000 steps.

An MLP 784-256-256-10 (ReLU), batch 64, float32, Adam (lr 1e-3), cross-entropy on
random data (one fixed pool of 64 batches, cycled), each step in its own
``lampy.Scope``. Printed at step 100 (after warm-up: Adam's state and the gradient
buffers exist), 1000, 5000 and the last step:

- RSS: ``VmRSS`` from ``/proc/self/status`` (Linux), the process's resident memory now;
- traced: ``tracemalloc``'s current and peak traced bytes (numpy reports its array
  allocations to tracemalloc, so this counts arrays and Python objects alike), with the
  peak reset at step 100;
- the scope around the loop: ``scope.memory`` (what lampy owns: params, gradients).

tracemalloc slows Python code down (each allocation is traced); pass ``--no-trace`` to
measure RSS alone at full speed. ``lampy.tune_malloc()`` is called, as ``fit`` does.

    python benchmarks/bench_flat_memory.py [--steps 10000] [--no-trace]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import lampy
import lampy.nn.functional as F
from lampy import nn, optim

MIB = 2**20


def rss_bytes() -> int:
    """The resident set size now (Linux: VmRSS), or -1 elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--no-trace", action="store_true", help="RSS only, without tracemalloc")
    args = ap.parse_args()
    lampy.tune_malloc()
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 64, 784)).astype(np.float32)
    ys = rng.integers(0, 10, size=(64, 64))
    marks = sorted({m for m in (100, 1000, 5000) if m < args.steps} | {args.steps})
    if not args.no_trace:
        tracemalloc.start()
    rows = []
    with lampy.Scope() as outer:
        model = nn.Sequential.init(
            nn.Linear.init(784, 256, rng=rng),
            nn.ReLU.init(),
            nn.Linear.init(256, 256, rng=rng),
            nn.ReLU.init(),
            nn.Linear.init(256, 10, rng=rng),
        )
        opt = optim.Adam(model.parameters(), lr=1e-3)
        start = time.perf_counter()
        for step in range(1, args.steps + 1):
            with lampy.Scope():
                loss = F.cross_entropy(model(xs[step % 64]), ys[step % 64])
                loss.backward()
            opt.step()
            opt.zero_grad()
            if step in marks:
                traced, peak = tracemalloc.get_traced_memory() if not args.no_trace else (-1, -1)
                rows.append((step, rss_bytes(), traced, peak, outer.memory.live_bytes))
                if not args.no_trace and step == 100:
                    tracemalloc.reset_peak()
        elapsed = time.perf_counter() - start
    print(
        f"{'step':>6} {'RSS MiB':>9} {'traced MiB':>11} {'traced peak MiB':>16} {'lampy MiB':>10}"
    )
    for step, rss, traced, peak, owned in rows:
        print(
            f"{step:>6} {rss / MIB:>9.2f} {traced / MIB:>11.3f} {peak / MIB:>16.3f} "
            f"{owned / MIB:>10.3f}"
        )
    (s0, r0, t0, _, _), (s1, r1, t1, _, _) = rows[0], rows[-1]
    print(
        f"growth from step {s0} to {s1}: RSS {(r1 - r0) / MIB:+.2f} MiB, traced "
        f"{(t1 - t0) / 2**10:+.1f} KiB; {elapsed / args.steps * 1e3:.2f} ms/step"
    )


if __name__ == "__main__":
    main()
