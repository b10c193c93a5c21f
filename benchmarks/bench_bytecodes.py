"""Bytecodes the interpreter runs for W1 and W2: an engine change's cost, machine-independent.

Run ``PYTHONPATH=. python benchmarks/bench_bytecodes.py`` from the repository root (point
``PYTHONPATH`` at another checkout to measure that one: the script imports whichever
``lampy`` it finds). Counts ``sys.settrace`` opcode events, which the machine's load does
not change, so two checkouts can be compared on a busy machine where wall-clock time
cannot (issue 29 measures the array-namespace seams against main with it):

- **W1 (16,)**: 33 steps of ``bench_speed.py``'s chain ``y = tanh(y * 0.9 + 0.1)`` on a
  float64 array of shape (16,) (99 ops), then ``y.sum().backward()``, inside one scope
  (its exit counted); also the same on a 0-d value.
- **W2**: one step of ``bench_speed.py``'s MLP 784-256-256-10, batch 64, float32, tanh,
  mean cross-entropy: ``zero_grad()``, forward, ``backward()``, the scope's exit.

Each workload runs twice untraced (imports, caches) and then once traced; the counts
are deterministic for one Python and numpy version.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from collections.abc import Callable
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

import lampy  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_speed import MLPData, lampy_mlp  # noqa: E402

STEPS = 33  # three ops each: 99 ops, and the sum


def w1(shape: tuple[int, ...]) -> Callable[[], None]:
    start = np.full(shape, 0.5)

    def run() -> None:
        with lampy.Scope():
            x = lampy.param(start[()] if start.ndim == 0 else start)
            y = x
            for _ in range(STEPS):
                y = lampy.tanh(y * 0.9 + 0.1)
            y.sum().backward()

    return run


def w2() -> Callable[[], object]:
    step, _ = lampy_mlp(MLPData((784, 256, 256, 10), 64))
    return step


def count(run: Callable[[], object], top: int) -> tuple[int, list[tuple[str, int]]]:
    """Opcodes executed by one call of ``run``, in total and by function."""
    counts: collections.Counter[str] = collections.Counter()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            name = code.co_filename.split("/lampy/")[-1]
            counts[f"{name}:{code.co_name}"] += 1
        return tracer

    run()
    run()
    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return sum(counts.values()), counts.most_common(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=0, help="also list the N busiest functions")
    args = parser.parse_args()
    print(f"lampy {lampy.__file__}; numpy {np.__version__}; Python {sys.version.split()[0]}")
    with lampy.Scope():  # the MLP's parameters
        for label, run in (("W1 (16,)", w1((16,))), ("W1 ()", w1(())), ("W2 step", w2())):
            total, busiest = count(run, args.top)
            print(f"{label:10} {total:8d} bytecodes")
            for name, n in busiest:
                print(f"    {n:7d}  {name}")


if __name__ == "__main__":
    main()
