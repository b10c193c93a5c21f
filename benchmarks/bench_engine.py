"""Concurrent backward: serial against ``workers=2``, in the same run.

Run ``python benchmarks/bench_engine.py`` (``--quick`` for a smoke run). Workloads:

* (a) 4 independent branches, each a chain of 4 float64 512x512 matmuls with its own
  weights, summed: backward only (the graph is built once; each timed call is one
  backward pass with the gradients set back to None).
* (b) a multi-head attention block built from lampy ops, 8 heads, d=512, sequence 256,
  float64: per-head scores, softmax and weighted values, heads concatenated, output
  projection; backward only.
* (c) W1: a 1,000-op scalar chain ``y = tanh(y * 0.9 + 0.1)`` (float64, 0-d), forward and
  backward (the graph is small: it must stay serial and not slow down).
* (d) the MLP step: 784-256-256-10, batch 64, float32, tanh, mean cross-entropy,
  forward and backward.

BLAS runs single-threaded (OPENBLAS/OMP/MKL_NUM_THREADS=1 before numpy is imported), so
``workers=2`` is the only source of parallelism. Each round times both settings back
to back in a rotated order; we report medians and the median of the per-round ratios
(serial time / concurrent time: above 1 is a speed-up). Targets (this 2-core machine):
(a) >= 1.6, (b) >= 1.3, (c) and (d) >= 0.97.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import itertools  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import lampy  # noqa: E402
import lampy.nn.functional as F  # noqa: E402

TARGETS = {"a": 1.6, "b": 1.3, "c": 0.97, "d": 0.97}


def _reset(params: list[lampy.Variable]) -> None:
    for p in params:
        p.node.grad = None  # a fresh pass: as opt.zero_grad(set_to_none=True)


def branches(rng: np.random.Generator) -> tuple[Callable[[int], None], Any]:
    """(a): 4 branches of 4 chained 512x512 matmuls each."""
    scope = lampy.Scope()
    scope.__enter__()
    x = lampy.const(rng.normal(size=(512, 512)) / 23)
    params = [lampy.param(rng.normal(size=(512, 512)) / 23) for _ in range(16)]
    outs = []
    for b in range(4):
        h = x
        for k in range(4):
            h = h @ params[4 * b + k]
        outs.append(h.sum())
    loss = outs[0] + outs[1] + outs[2] + outs[3]

    def run(workers: int) -> None:
        _reset(params)
        loss.backward(workers=workers)

    return run, scope


def attention(rng: np.random.Generator) -> tuple[Callable[[int], None], Any]:
    """(b): one multi-head self-attention block from lampy ops, 8 heads of 64."""
    scope = lampy.Scope()
    scope.__enter__()
    seq, d, heads = 256, 512, 8
    hd = d // heads
    x = lampy.const(rng.normal(size=(seq, d)))
    wq, wk, wv, wo = (lampy.param(rng.normal(size=(d, d)) / np.sqrt(d)) for _ in range(4))
    q, k, v = x @ wq, x @ wk, x @ wv
    outs = []
    for h in range(heads):
        cols = slice(h * hd, (h + 1) * hd)
        scores = (q[:, cols] @ k[:, cols].T) * (1.0 / np.sqrt(hd))
        outs.append(F.softmax(scores, dim=-1) @ v[:, cols])
    loss = (lampy.concatenate(outs, axis=1) @ wo).sum()
    params = [wq, wk, wv, wo]

    def run(workers: int) -> None:
        _reset(params)
        loss.backward(workers=workers)

    return run, None if scope is None else scope


def chain(rng: np.random.Generator) -> tuple[Callable[[int], None], Any]:
    """(c): W1, forward and backward of a 1,000-op scalar chain."""
    x0 = float(rng.normal())

    def run(workers: int) -> None:
        with lampy.Scope():
            x = lampy.param(x0)
            y = x
            for _ in range(333):
                y = lampy.tanh(y * 0.9 + 0.1)
            y.sum().backward(workers=workers)

    return run, None


def mlp(rng: np.random.Generator) -> tuple[Callable[[int], None], Any]:
    """(d): W2, an MLP training step's forward and backward."""
    scope = lampy.Scope()
    scope.__enter__()
    sizes = (784, 256, 256, 10)
    ws = [
        lampy.param((rng.normal(size=(i, o)) / np.sqrt(i)).astype(np.float32))
        for i, o in itertools.pairwise(sizes)
    ]
    bs = [lampy.param(np.zeros(o, np.float32)) for o in sizes[1:]]
    xb = rng.normal(size=(64, 784)).astype(np.float32)
    yb = rng.integers(0, 10, 64)
    params = ws + bs

    def run(workers: int) -> None:
        _reset(params)
        with lampy.Scope():
            h = lampy.tanh(xb @ ws[0] + bs[0])
            h = lampy.tanh(h @ ws[1] + bs[1])
            F.cross_entropy(h @ ws[2] + bs[2], yb).backward(workers=workers)

    return run, scope


WORKLOADS = {
    "a": ("(a) 4 branches of 512x512 f64 matmul chains, backward", branches),
    "b": ("(b) multi-head attention, 8 heads, d=512, seq 256, backward", attention),
    "c": ("(c) W1: 1,000-op scalar chain, fwd+bwd", chain),
    "d": ("(d) MLP 784-256-256-10 b64 f32 step, fwd+bwd", mlp),
}


def measure(run: Callable[[int], None], rounds: int, block: int) -> dict[str, Any]:
    times: dict[int, list[float]] = {1: [], 2: []}
    ratios: list[float] = []
    for r in range(rounds):
        order = (1, 2) if r % 2 == 0 else (2, 1)
        med: dict[int, float] = {}
        for workers in order:
            gc.collect()
            run(workers)  # warm-up
            block_times = []
            for _ in range(block):
                t0 = time.perf_counter()
                run(workers)
                block_times.append(time.perf_counter() - t0)
            times[workers].extend(block_times)
            med[workers] = statistics.median(block_times)
        ratios.append(med[1] / med[2])
    return {
        "serial_ms": 1e3 * statistics.median(times[1]),
        "workers2_ms": 1e3 * statistics.median(times[2]),
        "speedup": statistics.median(ratios),
    }


def check_equal(run_grads: Callable[[int], list[bytes]]) -> None:
    assert run_grads(1) == run_grads(2), "workers=2 gradients differ from serial"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke run)")
    parser.add_argument("--only", default="abcd", help="workloads to run, e.g. 'ab'")
    args = parser.parse_args(argv)
    rounds, block = (2, 2) if args.quick else (10, 5)
    print(
        f"lampy {lampy.__version__}, numpy {np.__version__}, cores {os.cpu_count()}, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(f"{'workload':64} {'serial ms':>10} {'workers=2':>10} {'speed-up':>9} {'target':>7}")
    rng = np.random.default_rng(0)
    for key in args.only:
        title, make = WORKLOADS[key]
        run, scope = make(rng)
        try:
            res = measure(run, rounds, block)
        finally:
            if scope is not None:
                scope.__exit__(None, None, None)
        ok = "met" if res["speedup"] >= TARGETS[key] else "NOT met"
        print(
            f"{title:64} {res['serial_ms']:10.2f} {res['workers2_ms']:10.2f} "
            f"{res['speedup']:8.2f}x {TARGETS[key]:6.2f}x {ok}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
