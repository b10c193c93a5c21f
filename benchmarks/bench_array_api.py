"""What ``lampy.experimental.array_api``'s dispatch costs, next to lampy's numpy path.

Run ``PYTHONPATH=. python benchmarks/bench_array_api.py`` from the repository root (needs
``array_api_strict``, in the ``dev`` extra). Single-threaded BLAS; times are the minimum
over ``--rounds`` calls (the steadiest figure on a shared machine), wall clock.

- **W1 (16,)**: ``bench_speed.py``'s chain ``y = tanh(y * 0.9 + 0.1)`` (33 steps, 99 ops,
  then the sum and ``backward()``) on a float64 array of shape (16,), per op: lampy's numpy
  ops; the prototype's ops on numpy arrays (the namespace read and checked per op, then
  ``lampy.op``); the same chain written by hand on ``array_api_strict`` (forward and the
  chain rule: the namespace's own floor, no lampy); the prototype on ``array_api_strict``.
  Also the bytecodes per op of the first two (``sys.settrace``; load-independent).
- **W2**: one step of the MLP 784-256-256-10, batch 64, float32 (tanh, mean
  cross-entropy): lampy's ``nn.functional`` on numpy; the prototype on numpy; the
  prototype on ``array_api_strict``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import array_api_strict as strict  # noqa: E402
import numpy as np  # noqa: E402

import lampy  # noqa: E402
import lampy.experimental.array_api as lx  # noqa: E402
import lampy.nn.functional as F  # noqa: E402

STEPS = 33
OPS = 3 * STEPS


def chain(ops: Any, start: Any) -> Callable[[], None]:
    """W1 with ``ops`` = (tanh, multiply, add, sum, param) from one library."""
    tanh, multiply, add, total, param = ops

    def run() -> None:
        with lampy.Scope():
            x = param(start)
            y = x
            for _ in range(STEPS):
                y = tanh(add(multiply(y, 0.9), 0.1))
            total(y).backward()

    return run


def by_hand(xp: Any, start: Any) -> Callable[[], None]:
    """W1's forward and backward written directly in namespace ``xp``, no lampy."""

    def run() -> None:
        y, saved = start, []
        for _ in range(STEPS):
            y = xp.tanh(y * 0.9 + 0.1)
            saved.append(y)
        g = xp.ones_like(y)
        for t in reversed(saved):
            g = g * (1 - t * t) * 0.9

    return run


def mlp(ops: Any, asarray: Callable[[Any], Any]) -> Callable[[], None]:
    """One step of W2 (zero_grad, forward, backward) with ``ops`` = (linear, tanh,
    cross_entropy, param)."""
    linear, tanh, cross_entropy, param = ops
    rng = np.random.default_rng(0)
    sizes = (784, 256, 256, 10)
    weights = []
    for n_in, n_out in itertools.pairwise(sizes):
        bound = 1 / np.sqrt(n_in)
        weights += [
            rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32),
            rng.uniform(-bound, bound, n_out).astype(np.float32),
        ]
    params = [param(asarray(w)) for w in weights]
    x = asarray(rng.normal(size=(64, 784)).astype(np.float32))
    y = asarray(rng.integers(0, 10, 64))

    def step() -> None:
        lampy.autograd.zero_grads(params)
        with lampy.Scope():
            h = x
            for i in range(0, 6, 2):
                h = linear(h, params[i], params[i + 1])
                if i < 4:
                    h = tanh(h)
            cross_entropy(h, y).backward()

    return step


def best(run: Callable[[], None], rounds: int) -> float:
    run()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return min(times)


def bytecodes(run: Callable[[], None]) -> int:
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return tracer

    run()
    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="calls per figure")
    args = parser.parse_args()
    print(f"lampy {lampy.__file__}; numpy {np.__version__}; array_api_strict {strict.__version__}")
    lampy_ops = (lampy.tanh, lampy.multiply, lampy.add, lampy.sum, lampy.param)
    lx_ops = (lx.tanh, lx.multiply, lx.add, lx.sum, lx.param)
    start = np.full(16, 0.5)
    rows = [
        ("lampy, numpy", chain(lampy_ops, start)),
        ("prototype, numpy", chain(lx_ops, start)),
        ("by hand, array_api_strict", by_hand(strict, strict.asarray(start))),
        ("prototype, array_api_strict", chain(lx_ops, strict.asarray(start))),
    ]
    print(f"\nW1 (16,): µs per op (min of {args.rounds}), bytecodes per op")
    for label, run in rows:
        codes = f"{bytecodes(run) / OPS:8.0f}" if label.endswith(", numpy") else ""
        print(f"  {label:30} {best(run, args.rounds) / OPS * 1e6:7.2f} {codes}")
    numpy_nn = (F.linear, lampy.tanh, F.cross_entropy, lampy.param)
    lx_nn = (lx.linear, lx.tanh, lx.cross_entropy, lx.param)
    with lampy.Scope():
        steps = [
            ("lampy nn.functional, numpy", mlp(numpy_nn, np.asarray)),
            ("prototype, numpy", mlp(lx_nn, np.asarray)),
            ("prototype, array_api_strict", mlp(lx_nn, strict.asarray)),
        ]
        print(f"\nW2 step: ms (min of {args.rounds // 4})")
        for label, run in steps:
            print(f"  {label:30} {best(run, args.rounds // 4) * 1e3:7.3f}")


if __name__ == "__main__":
    main()
