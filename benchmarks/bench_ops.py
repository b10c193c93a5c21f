"""Per-op timings: lampy next to plain numpy, PyTorch CPU and MyGrad, on the same inputs.

Every case in ``benchmarks/op_cases/<family>.py`` runs one op forward and backward on
inputs of 10^5 elements or more (seeded with a fixed cotangent ``g``):

* **numpy**: the case's plain-numpy forward followed by its hand-written gradient; the
  baseline. The target is lampy within 2x of it for every op.
* **lampy**: params are made from the inputs (not timed), then the op and
  ``lampy.backward(out, g)`` run, and the time includes the scope's exit, which
  releases everything.
* **torch** / **mygrad**: leaf tensors made beforehand (not timed), then the op and
  ``backward(g)``.

All BLAS libraries are limited to one thread, and each figure is the median of
repeated runs (at least ``--min-runs``, for at least ``--min-time`` seconds).

    python benchmarks/bench_ops.py [--family elementwise] [--quick] [--json PATH]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import pkgutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import lampy  # noqa: E402
from benchmarks.op_cases._case import Case  # noqa: E402

TARGET = 2.0


def load_cases() -> list[Case]:
    """Every ``CASES`` list in benchmarks/op_cases, in module order."""
    import benchmarks.op_cases as pkg

    cases: list[Case] = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"benchmarks.op_cases.{info.name}")
        cases.extend(getattr(module, "CASES", []))
    return cases


def median_time(run: Callable[[], Any], min_runs: int, min_time: float) -> float:
    """Median seconds of ``run()`` over at least ``min_runs`` runs and ``min_time`` seconds."""
    run()  # warm-up
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < min_time:
        times.append(run())
        if len(times) >= 500:
            break
    return statistics.median(times)


def time_lampy(case: Case, inputs: list[np.ndarray], g: np.ndarray) -> Callable[[], float]:
    seeds: dict[np.dtype[Any], np.ndarray] = {}

    def run() -> float:
        with lampy.Scope():
            ps = [lampy.param(a) for a in inputs]
            t0 = time.perf_counter()
            with lampy.Scope():
                out = case.lampy_fn(*ps)
                seed = seeds.get(out.dtype)
                if seed is None:  # the seed in the output's dtype, made once, not timed
                    t1 = time.perf_counter()
                    seed = seeds[out.dtype] = g.astype(out.dtype)
                    t0 += time.perf_counter() - t1
                lampy.backward(out, [seed])
        return time.perf_counter() - t0

    return run


def time_numpy(case: Case, inputs: list[np.ndarray], g: np.ndarray) -> Callable[[], float]:
    def run() -> float:
        t0 = time.perf_counter()
        case.numpy_fwd_bwd(inputs, g)
        return time.perf_counter() - t0

    return run


def time_torch(case: Case, inputs: list[np.ndarray], g: np.ndarray) -> Callable[[], float] | None:
    if case.torch_fn is None:
        return None
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    gt = torch.from_numpy(g)

    def run() -> float:
        ts = [torch.tensor(a, requires_grad=True) for a in inputs]
        t0 = time.perf_counter()
        out = case.torch_fn(*ts)  # type: ignore[misc]
        out.backward(gt.to(out.dtype))
        return time.perf_counter() - t0

    return run


def time_mygrad(case: Case, inputs: list[np.ndarray], g: np.ndarray) -> Callable[[], float] | None:
    if case.mygrad_fn is None:
        return None
    try:
        import mygrad
    except ImportError:
        return None

    def run() -> float:
        ts = [mygrad.tensor(a.copy()) for a in inputs]
        t0 = time.perf_counter()
        out = case.mygrad_fn(*ts)  # type: ignore[misc]
        out.backward(g)
        return time.perf_counter() - t0

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", help="only cases of this family")
    parser.add_argument("--quick", action="store_true", help="few runs, for a smoke test")
    parser.add_argument("--min-runs", type=int, default=15)
    parser.add_argument("--min-time", type=float, default=0.3)
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    min_runs, min_time = (2, 0.0) if args.quick else (args.min_runs, args.min_time)

    cases = [c for c in load_cases() if args.family in (None, c.family)]
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    print(f"numpy {np.__version__}, lampy {lampy.__version__}; medians in ms; single thread")
    header = (
        f"{'family':<12} {'case':<34} {'numpy':>8} {'lampy':>8} {'ratio':>6} "
        f"{'torch':>8} {'mygrad':>8}"
    )
    print(header)
    print("-" * len(header))
    for case in cases:
        inputs = case.make_inputs(rng)
        with lampy.Scope():
            out_shape = case.lampy_fn(*[lampy.param(a) for a in inputs]).shape
        g = rng.uniform(0.5, 1.5, size=out_shape)
        row: dict[str, Any] = {"family": case.family, "case": case.name}
        for name, make in (
            ("numpy", time_numpy),
            ("lampy", time_lampy),
            ("torch", time_torch),
            ("mygrad", time_mygrad),
        ):
            run = make(case, inputs, g)
            try:
                row[name] = None if run is None else median_time(run, min_runs, min_time) * 1e3
            except Exception as e:  # a peer without this op: leave its cell empty
                if name in ("numpy", "lampy"):
                    raise
                row[name] = None
                row[f"{name}_error"] = f"{type(e).__name__}: {e}"[:120]
        row["ratio"] = row["lampy"] / row["numpy"]
        rows.append(row)

        def fmt(v: float | None) -> str:
            return f"{v:8.3f}" if v is not None else f"{'-':>8}"

        flag = " !" if row["ratio"] > TARGET else ""
        print(
            f"{case.family:<12} {case.name[:34]:<34} {fmt(row['numpy'])} {fmt(row['lampy'])} "
            f"{row['ratio']:6.2f} {fmt(row['torch'])} {fmt(row['mygrad'])}{flag}"
        )
    over = [r for r in rows if r["ratio"] > TARGET]
    ratios = [r["ratio"] for r in rows]
    print()
    print(
        f"{len(rows)} cases; lampy/numpy median ratio {statistics.median(ratios):.2f}, "
        f"worst {max(ratios):.2f}; {len(over)} above the {TARGET}x target"
        + (": " + ", ".join(r["case"] for r in over) if over else "")
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
