"""Where W1's time per op goes: forward, backward and the scope's exit, against numpy.

Run ``PYTHONPATH=. python benchmarks/w1_split.py`` from the repository root. W1 is
``bench_speed.py``'s chain ``y = tanh(y * 0.9 + 0.1)`` (three primitive ops a step, 999
ops) on float64 values of shape ``()``, ``(1,)`` and ``(16,)``. Two tables:

1. **Time per op** (medians over ``--rounds`` chains, process CPU time): lampy's forward
   (the ops), its ``backward()``, and the scope's exit; beside them the hand-written
   numpy floor of the same chain, forward (the three ufunc calls) and backward (the
   chain rule, ``g * (1 - t * t) * 0.9``). Bookkeeping is lampy's time minus the
   numpy floor's: what the engine does around the arithmetic.
2. **Bytecodes per op by function** (``sys.settrace`` opcode events over one chain):
   the interpreter's work, which does not depend on the machine's load, split by the
   function that runs it (``op``, the backward loop ``_visit``, ``_plan``, ``Node``...).
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lampy

STEPS = 333  # three ops each: 999 ops


def lampy_phases(shape: tuple[int, ...]) -> tuple[float, float, float]:
    """(forward, backward, exit) seconds of one chain."""
    start = np.full(shape, 0.5)
    t0 = time.process_time()
    with lampy.Scope():
        x = lampy.param(start[()] if start.ndim == 0 else start)
        y = x
        for _ in range(STEPS):
            y = lampy.tanh(y * 0.9 + 0.1)
        loss = y.sum() if shape else y
        t1 = time.process_time()
        loss.backward()
        t2 = time.process_time()
    t3 = time.process_time()
    return t1 - t0, t2 - t1, t3 - t2


def numpy_phases(shape: tuple[int, ...]) -> tuple[float, float, float]:
    """(forward, backward, 0) seconds of the hand-written chain."""
    start = np.full(shape, 0.5)
    y: Any = start[()] if start.ndim == 0 else start
    t0 = time.process_time()
    saved = []
    for _ in range(STEPS):
        y = np.tanh(y * 0.9 + 0.1)
        saved.append(y)
    t1 = time.process_time()
    g: Any = np.ones_like(y)
    for t in reversed(saved):
        g = g * (1 - t * t) * 0.9
    t2 = time.process_time()
    return t1 - t0, t2 - t1, 0.0


def medians(run: Callable[[], tuple[float, float, float]], rounds: int) -> list[float]:
    run()  # warm-up
    samples = [run() for _ in range(rounds)]
    return [statistics.median(s[k] for s in samples) / (3 * STEPS) * 1e6 for k in range(3)]


def bytecodes(shape: tuple[int, ...]) -> tuple[float, list[tuple[str, float]]]:
    """Opcodes executed per op over one chain, in total and by function."""
    counts: collections.Counter[str] = collections.Counter()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            where = code.co_filename.split("/lampy/")[-1] if "/lampy/" in code.co_filename else ""
            counts[f"{where}:{code.co_name}" if where else code.co_name] += 1
        return tracer

    lampy_phases(shape)  # warm-up (imports, caches)
    sys.settrace(tracer)
    try:
        lampy_phases(shape)
    finally:
        sys.settrace(None)
    per_op = 3 * STEPS
    total = sum(counts.values()) / per_op
    top = [(name, n / per_op) for name, n in counts.most_common(12)]
    return total, top


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="chains per median")
    args = parser.parse_args()
    print(f"lampy {lampy.__file__}; numpy {np.__version__}; Python {sys.version.split()[0]}")
    print("\n1. µs per op (medians, process CPU time)")
    print(f"{'shape':>6} {'':>6} {'forward':>8} {'backward':>9} {'exit':>6} {'total':>7}")
    for shape in [(), (1,), (16,)]:
        lam = medians(lambda s=shape: lampy_phases(s), args.rounds)
        num = medians(lambda s=shape: numpy_phases(s), args.rounds)
        book = [a - b for a, b in zip(lam, num, strict=True)]
        for label, row in (("lampy", lam), ("numpy", num), ("extra", book)):
            print(
                f"{shape!s:>6} {label:>6} {row[0]:8.3f} {row[1]:9.3f} {row[2]:6.3f} {sum(row):7.3f}"
            )
    for shape in [(), (16,)]:
        total, top = bytecodes(shape)
        print(f"\n2. bytecodes per op, shape {shape}: {total:.1f}")
        for name, n in top:
            print(f"   {n:7.1f}  {name}")


if __name__ == "__main__":
    main()
