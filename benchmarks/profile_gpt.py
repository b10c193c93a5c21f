"""Where the GPT training step of ``bench_speed.py`` spends its time, per op family.

Run ``PYTHONPATH=. python benchmarks/profile_gpt.py`` from the repository root (so that
the tree's lampy is imported). Two measurements, both single-threaded:

1. **Phases** (wall clock, no profiler): the medians over ``--steps`` steps of the
   forward pass (``model.loss``), ``backward()``, the scope's exit, ``zero_grad``,
   ``clip_grad_norm_`` and ``AdamW.step``.
2. **Families** (cProfile): the self time of every function, each built-in (a numpy
   call) charged to the Python function that called it, summed by the file the function
   lives in; each phase (forward, backward, optimizer) is profiled on its own. A file of
   ``lampy/autograd`` or ``lampy/_memory.py`` is the engine (Variable and Node creation,
   ``op``, the backward loop, the ledger); a file of ``lampy/ops`` or
   ``lampy/nn/functional`` is the op family that holds the forward value and its
   closures. The profiler adds a fixed cost per call, so Python-heavy code looks slower
   than it is: read the shares with the phases' wall times beside them.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_speed  # noqa: E402

import lampy  # noqa: E402


def family(filename: str) -> str:
    """A short name for the file a function lives in: ``engine``, an op family, ..."""
    path = Path(filename)
    parts = path.parts
    if "lampy" not in parts:
        return "numpy/python" if filename.startswith("~") or "numpy" in parts else path.stem
    rel = parts[parts.index("lampy") + 1 :]
    if rel[0] == "autograd" or rel[-1] == "_memory.py":
        return "engine"
    if rel[0] in ("ops", "nn", "optim"):
        stem = Path(rel[-1]).stem.lstrip("_")
        return f"{rel[0]}/{stem}" if rel[0] != "nn" or len(rel) == 2 else f"F/{stem}"
    return "/".join(rel)


def self_times(stats: pstats.Stats) -> dict[str, float]:
    """Self time by family, each built-in's time charged to its callers' families (in
    proportion to the time it spent under each)."""
    out: dict[str, float] = defaultdict(float)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, _line, _name), (_cc, _nc, tt, _ct, callers) in raw.items():
        if filename == "~" and callers:
            total = sum(c[2] for c in callers.values()) or 1.0
            for (cfile, _l, _n), c in callers.items():
                out[family(cfile)] += tt * c[2] / total
        else:
            out[family(filename)] += tt
    return out


def profile(fn: Callable[[], Any], n: int) -> dict[str, float]:
    """ms per call of ``fn`` by family, over ``n`` profiled calls."""
    prof = cProfile.Profile()
    for _ in range(n):
        prof.enable()
        fn()
        prof.disable()
    return {k: v * 1e3 / n for k, v in self_times(pstats.Stats(prof)).items()}


def phases(d: Any, steps: int) -> dict[str, float]:
    """Median ms of each phase of the training step, over ``steps`` steps."""
    model, opt, x, y = d.model, d.opt, d.x, d.y
    params = model.parameters()
    times: dict[str, list[float]] = defaultdict(list)
    clock = time.perf_counter
    for _ in range(steps):
        t0 = clock()
        model.zero_grad()
        t1 = clock()
        scope = lampy.Scope()
        scope.__enter__()
        loss = model.loss(x, y)
        t2 = clock()
        loss.backward()
        t3 = clock()
        del loss
        scope.__exit__(None, None, None)
        t4 = clock()
        lampy.optim.clip_grad_norm_(params, 1.0)
        t5 = clock()
        opt.step()
        t6 = clock()
        with lampy.Scope(), lampy.no_grad():
            model.loss(x, y)
        t7 = clock()
        for name, a, b in (
            ("zero_grad", t0, t1),
            ("forward", t1, t2),
            ("backward", t2, t3),
            ("scope exit", t3, t4),
            ("clip_grad_norm_", t4, t5),
            ("AdamW.step", t5, t6),
            ("step (sum)", t0, t6),
            ("no_grad forward", t6, t7),
        ):
            times[name].append((b - a) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20, help="timed steps for the phases")
    ap.add_argument("--profiled", type=int, default=5, help="profiled steps per phase")
    args = ap.parse_args(argv)
    lampy.tune_malloc()
    with lampy.Scope():
        d = bench_speed.GPTData()
        print(f"lampy from {Path(lampy.__file__).parent}; GPT {bench_speed.GPT_CONFIG}")
        print("\nphases, median ms over", args.steps, "steps:")
        for k, v in phases(d, args.steps).items():
            print(f"  {k:<16} {v:8.2f}")

        model, x, y = d.model, d.x, d.y
        holder: dict[str, Any] = {}

        def forward() -> None:
            holder["scope"] = scope = lampy.Scope()
            scope.__enter__()
            holder["loss"] = model.loss(x, y)

        def backward() -> None:
            holder.pop("loss").backward()
            holder.pop("scope").__exit__(None, None, None)

        prof: dict[str, dict[str, float]] = {"forward": {}, "backward+exit": {}}
        for _ in range(args.profiled):
            model.zero_grad()
            for phase, fn in (("forward", forward), ("backward+exit", backward)):
                for k, v in profile(fn, 1).items():
                    prof[phase][k] = prof[phase].get(k, 0.0) + v / args.profiled

        def optimizer() -> None:
            lampy.optim.clip_grad_norm_(d.model.parameters(), 1.0)
            d.opt.step()

        prof["optimizer"] = profile(optimizer, args.profiled)

        def no_grad_forward() -> None:
            with lampy.Scope(), lampy.no_grad():
                model.loss(x, y)

        prof["no_grad forward"] = profile(no_grad_forward, args.profiled)
    print("\ncProfile self time by family, ms per step (profiler overhead included):")
    names = sorted(
        {k for p in prof.values() for k in p},
        key=lambda k: -sum(p.get(k, 0) for p in prof.values()),
    )
    print(f"  {'family':<24}" + "".join(f"{p:>17}" for p in prof))
    for k in names:
        print(f"  {k:<24}" + "".join(f"{prof[p].get(k, 0.0):17.2f}" for p in prof))
    print(f"  {'total':<24}" + "".join(f"{sum(prof[p].values()):17.2f}" for p in prof))
    return 0


if __name__ == "__main__":
    sys.exit(main())
