"""What `lampy.tune_malloc()` buys: minor page faults and time per training step.

Run ``python benchmarks/bench_malloc.py``. Each configuration runs in a fresh child
process (malloc's thresholds are process-wide and cannot be reset), once with
``lampy.tune_malloc()`` called at the start and once without:

* MLP: 784-256-256-10, batch 64, float32, Adam.
* CNN: 28x28 inputs, conv 3x3 (1->16) + ReLU + max-pool 2, conv 3x3 (16->32) + ReLU +
  max-pool 2, linear to 10, batch 64, float32, Adam.

Reported: the median step time and minor page faults per step over the timed steps
(after a warm-up), single-threaded BLAS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r"""
import os, sys, json, time, resource, statistics
for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
import numpy as np
import lampy
from lampy import nn, optim
import lampy.nn.functional as F

kind, tune = sys.argv[1], sys.argv[2] == "1"
if tune:
    assert lampy.tune_malloc()
rng = np.random.default_rng(0)
with lampy.Scope():
    if kind == "mlp":
        model = nn.Sequential.init(
            nn.Linear.init(784, 256, rng=rng), nn.Tanh.init(),
            nn.Linear.init(256, 256, rng=rng), nn.Tanh.init(),
            nn.Linear.init(256, 10, rng=rng),
        )
        x = rng.normal(size=(64, 784)).astype(np.float32)
    else:
        model = nn.Sequential.init(
            nn.Conv2d.init(1, 16, 3, padding=1, rng=rng), nn.ReLU.init(), nn.MaxPool2d.init(2),
            nn.Conv2d.init(16, 32, 3, padding=1, rng=rng), nn.ReLU.init(), nn.MaxPool2d.init(2),
            nn.Flatten.init(), nn.Linear.init(32 * 7 * 7, 10, rng=rng),
        )
        x = rng.normal(size=(64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    opt = optim.Adam(model.parameters(), lr=1e-3)

    def step():
        with lampy.Scope():
            F.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad()

    for _ in range(20):
        step()
    times, faults = [], []
    for _ in range(200):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
print(json.dumps({"ms": 1e3 * statistics.median(times), "faults": statistics.mean(faults)}))
"""


def run(kind: str, tune: bool) -> dict[str, float]:
    env = dict(os.environ, LAMPY_TUNE_MALLOC="1")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind, "1" if tune else "0"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    print(f"load {os.getloadavg()[0]:.2f}")
    print(f"{'workload':8} {'malloc':10} {'ms/step':>9} {'faults/step':>12}")
    for kind in ("mlp", "cnn"):
        for tune in (False, True, False, True):
            r = run(kind, tune)
            label = "tuned" if tune else "default"
            print(f"{kind:8} {label:10} {r['ms']:9.2f} {r['faults']:12.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
