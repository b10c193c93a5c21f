"""Whole training epochs on scikit-learn's digits in lampy and PyTorch CPU, and the
resident memory of a long lampy run.

Run ``python benchmarks/bench_train.py`` (``--quick`` for a smoke run, ``--json PATH`` to
save the figures, ``--only mlp,cnn,memory`` to pick parts). PyTorch is needed for the
comparison; without it only lampy's rows are printed.

Methodology
-----------
Data: the 1,797 8x8 digits of ``sklearn.datasets.load_digits``, scaled to [0, 1],
float32, split 80/20 stratified with seed 0 (``examples/digits_mlp.py``'s
``load_data``): 1,437 training images, 45 batches of 32 (the last one of 29).

(a) Epochs. One timed call is one full training epoch: iterate a shuffled
``lampy.data.Batches(x, y, batch_size=32, shuffle=True, rng=...)`` and, for every batch,
forward, cross-entropy (label smoothing 0.05, as in the example), backward,
``AdamW(lr=2e-3, weight_decay=1e-4).step()`` and ``zero_grad()``, and add the batch's
loss (as a float) to a running sum. No validation, no scheduler.

* Models: the digits MLP of ``examples/digits_mlp.py`` (``build_model``: 64-256-128-10,
  ReLU, dropout 0.2 after each hidden layer, in training mode), and a small CNN on
  1x8x8 images: conv3x3(1->16, padding 1), ReLU, conv3x3(16->32, padding 1), ReLU,
  MaxPool2d(2), Flatten, Linear(32*4*4 -> 10).
* The same model is built in PyTorch; its initial ``state_dict`` is loaded into every
  lampy copy. Before timing, the two libraries' losses and gradients on one batch are
  compared with dropout off (eval mode); dropout masks come from different generators,
  so training-mode losses differ by design.
* Same batches: each implementation owns a ``Batches`` whose generator is seeded
  identically, and every implementation runs the same number of epochs, so epoch k
  visits the same permutation everywhere. torch's epoch iterates those numpy batches and
  wraps them with ``torch.from_numpy`` (no copy). An extra row, ``torch (DataLoader)``,
  runs torch's idiomatic ``DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)``
  (other permutations, same batch sizes) to show what its loader costs.
* lampy: the whole run lives in one ``lampy.Scope()``; each step's forward and backward
  run in their own ``lampy.Scope()``, which exits before ``opt.step()``. ``lampy`` is
  that loop by hand; ``lampy (fit)`` is one call of
  ``lampy.train.fit(model, loss_fn, opt, batches, epochs=1, progress=False)``, which does
  the same work plus its bookkeeping (non-finite check, history, callbacks hooks).
* Single-threaded: ``OPENBLAS/OMP/MKL_NUM_THREADS=1`` before numpy is imported and
  ``torch.set_num_threads(1)``. Interleaved rounds (``bench_core.time_interleaved``): each
  round runs every implementation for one untimed epoch and a block of timed epochs, in
  a rotated order; GC stays on, ``gc.collect()`` before each block. The table shows the
  median and minimum epoch time and the ratio of medians to torch (hand loop with the
  same batches).

(b) Memory. In a fresh subprocess (so that the benchmark's earlier work does not shape
the heap), the digits MLP trains for 2,000 steps (44.5 epochs of the hand loop above,
each step in its own ``lampy.Scope()``). Every 100 steps the resident set size is read
from ``/proc/self/statm`` (resident pages x page size); the table gives RSS after step
100 and after step 2,000 and the relative growth (target: within 2%). A second
subprocess does the same under ``tracemalloc`` (which slows the steps and takes memory
of its own, hence the separate run) and reports the traced memory in use after step 100
and after step 2,000.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Iterable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))

import bench_core  # noqa: E402
import digits_mlp  # noqa: E402  (examples/digits_mlp.py: load_data, build_model, loss_fn)

import lampy  # noqa: E402
from lampy import nn, optim  # noqa: E402
from lampy.data import Batches  # noqa: E402
from lampy.train import fit  # noqa: E402

BATCH = 32
LR, WEIGHT_DECAY = 2e-3, 1e-4
LABEL_SMOOTHING = 0.05
SEED = 0
RSS_TARGET = 0.02

loss_fn = digits_mlp.loss_fn  # cross-entropy with label smoothing 0.05


# ------------------------------------------------------------------- models


def lampy_cnn(rng: np.random.Generator) -> nn.Sequential:
    return nn.Sequential.init(
        nn.Conv2d.init(1, 16, 3, padding=1, rng=rng),
        nn.ReLU.init(),
        nn.Conv2d.init(16, 32, 3, padding=1, rng=rng),
        nn.ReLU.init(),
        nn.MaxPool2d.init(2),
        nn.Flatten.init(),
        nn.Linear.init(32 * 4 * 4, 10, rng=rng),
    )


def torch_mlp(torch: Any) -> Any:
    tnn = torch.nn
    return tnn.Sequential(
        tnn.Linear(64, 256),
        tnn.ReLU(),
        tnn.Dropout(0.2),
        tnn.Linear(256, 128),
        tnn.ReLU(),
        tnn.Dropout(0.2),
        tnn.Linear(128, 10),
    )


def torch_cnn(torch: Any) -> Any:
    tnn = torch.nn
    return tnn.Sequential(
        tnn.Conv2d(1, 16, 3, padding=1),
        tnn.ReLU(),
        tnn.Conv2d(16, 32, 3, padding=1),
        tnn.ReLU(),
        tnn.MaxPool2d(2),
        tnn.Flatten(),
        tnn.Linear(32 * 4 * 4, 10),
    )


MODELS: dict[str, tuple[str, Callable[[np.random.Generator], Any], Callable[[Any], Any]]] = {
    "mlp": ("digits MLP 64-256-128-10, ReLU, dropout 0.2", digits_mlp.build_model, torch_mlp),
    "cnn": ("digits CNN conv3x3 16, conv3x3 32, maxpool 2, linear", lampy_cnn, torch_cnn),
}


def digits_data(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The training part of the example's split; images as (N, 1, 8, 8) for the CNN."""
    x_train, _x_test, y_train, _y_test = digits_mlp.load_data(SEED)
    if kind == "cnn":
        x_train = np.ascontiguousarray(x_train.reshape(-1, 1, 8, 8))
    return x_train, y_train


def batches(x: np.ndarray, y: np.ndarray) -> Batches:
    return Batches(x, y, batch_size=BATCH, shuffle=True, rng=np.random.default_rng(SEED))


# ------------------------------------------------------------------- epochs


def lampy_epoch(model: Any, data: Batches) -> Callable[[], float]:
    """One epoch by hand: a Scope per step, AdamW after the scope exits."""
    model = model.with_training(True)
    opt = optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)

    def epoch() -> float:
        total = 0.0
        for batch in data:
            with lampy.Scope():
                loss = loss_fn(model, batch)
                loss.backward()
                total += float(loss.value)
            opt.step()
            opt.zero_grad()
        return total

    return epoch


def lampy_fit_epoch(model: Any, data: Batches) -> Callable[[], float]:
    """One epoch through lampy.train.fit."""
    opt = optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)

    def epoch() -> float:
        history = fit(model, loss_fn, opt, data, epochs=1, progress=False)
        return history["loss"][-1]

    return epoch


def torch_epoch(torch: Any, model: Any, data: Iterable[Any], wrap: bool) -> Callable[[], float]:
    """One torch epoch over numpy batches (``wrap``: torch.from_numpy) or a DataLoader."""
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    ce = torch.nn.functional.cross_entropy
    from_numpy = torch.from_numpy

    def epoch() -> float:
        total = 0.0
        for xb, yb in data:
            if wrap:
                xb, yb = from_numpy(xb), from_numpy(yb)
            loss = ce(model(xb), yb, label_smoothing=LABEL_SMOOTHING)
            loss.backward()
            total += float(loss.detach())
            opt.step()
            opt.zero_grad()
        return total

    return epoch


def check_same(kind: str, lm: Any, tm: Any, torch: Any, x: np.ndarray, y: np.ndarray) -> None:
    """Loss and gradients of one batch agree (eval mode: dropout off)."""
    xb, yb = x[:BATCH], y[:BATCH]
    le = lm.with_training(False)
    with lampy.Scope():
        loss = loss_fn(le, (xb, yb))
        loss.backward()
        l_loss = float(loss.value)
    l_grads = {n: np.array(p.grad) for n, p in le.named_parameters()}
    for p in le.parameters():
        p.zero_grad()
    tm.eval()
    t_loss_v = torch.nn.functional.cross_entropy(
        tm(torch.from_numpy(xb)), torch.from_numpy(yb), label_smoothing=LABEL_SMOOTHING
    )
    t_loss_v.backward()
    t_loss = t_loss_v.item()
    t_grads = {n: p.grad.numpy().copy() for n, p in tm.named_parameters()}
    tm.zero_grad()
    tm.train()
    if not np.isclose(l_loss, t_loss, rtol=1e-5, atol=1e-6):
        raise SystemExit(f"{kind}: losses differ: lampy {l_loss}, torch {t_loss}")
    for name, g in t_grads.items():
        if not np.allclose(l_grads[name], g, rtol=1e-3, atol=1e-5):
            err = float(np.max(np.abs(l_grads[name] - g)))
            raise SystemExit(f"{kind}: gradient of {name} differs (max abs error {err:.3g})")


def bench_epochs(kind: str, torch: Any, rounds: int, block: int) -> dict[str, Any]:
    """Time the epochs of one model; its lampy parameters live in one outer Scope."""
    with lampy.Scope():
        return _bench_epochs(kind, torch, rounds, block)


def _bench_epochs(kind: str, torch: Any, rounds: int, block: int) -> dict[str, Any]:
    desc, build_lampy, build_torch = MODELS[kind]
    x, y = digits_data(kind)
    fns: dict[str, Callable[[], float]] = {}
    state = None
    if torch is not None:
        torch.manual_seed(SEED)
        tm = build_torch(torch)
        state = {k: v.detach().numpy().copy() for k, v in tm.state_dict().items()}
    models = []
    for _ in range(2):  # hand loop, fit
        m = build_lampy(np.random.default_rng(SEED))
        if state is not None:
            m.load_state_dict(state)
        models.append(m)
    if torch is not None:
        check_same(kind, models[0], tm, torch, x, y)
    fns["lampy"] = lampy_epoch(models[0], batches(x, y))
    fns["lampy (fit)"] = lampy_fit_epoch(models[1], batches(x, y))
    if torch is not None:
        fns["torch"] = torch_epoch(torch, tm, batches(x, y), wrap=True)
        tm2 = build_torch(torch)
        tm2.load_state_dict(tm.state_dict())
        loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
            batch_size=BATCH,
            shuffle=True,
            generator=torch.Generator().manual_seed(SEED),
        )
        fns["torch (DataLoader)"] = torch_epoch(torch, tm2, loader, wrap=False)
    timing = bench_core.time_interleaved(fns, rounds, block)
    med = {n: statistics.median(t) * 1e3 for n, t in timing.times.items()}
    low = {n: min(t) * 1e3 for n, t in timing.times.items()}
    other = {n: statistics.median(t) * 1e3 for n, t in timing.other.items()}
    base = med.get("torch")
    rows = [
        {
            "workload": kind,
            "implementation": name,
            "median_ms": med[name],
            "min_ms": low[name],
            "vs_torch": None if base is None else med[name] / base,
            f"{'cpu' if bench_core.CLOCK == 'wall' else 'wall'}_median_ms": other[name],
            "per_step_us": med[name] * 1e3 / len(batches(x, y)),
            "epochs": len(timing.times[name]),
        }
        for name in fns
    ]
    return {
        "workload": kind,
        "description": desc,
        "train_images": len(x),
        "steps_per_epoch": len(batches(x, y)),
        "rows": rows,
        "fit_overhead": med["lampy (fit)"] / med["lampy"] - 1.0,
    }


# ------------------------------------------------------------------- memory


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory_child(steps: int, every: int, trace: bool) -> dict[str, Any]:
    """Train the digits MLP for ``steps`` steps, sampling memory every ``every`` steps."""
    import tracemalloc

    x, y = digits_data("mlp")
    if trace:
        tracemalloc.start()
    samples: list[dict[str, int]] = []
    with lampy.Scope():
        model = digits_mlp.build_model(np.random.default_rng(SEED)).with_training(True)
        opt = optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
        data = batches(x, y)
        step = 0
        while step < steps:
            for batch in data:
                with lampy.Scope():
                    loss = loss_fn(model, batch)
                    loss.backward()
                    float(loss.value)
                opt.step()
                opt.zero_grad()
                step += 1
                if step % every == 0:
                    s = {"step": step, "rss": rss_bytes()}
                    if trace:
                        s["traced"] = tracemalloc.get_traced_memory()[0]
                        gc.collect()  # a full collection also empties CPython's free lists
                        s["traced_collected"] = tracemalloc.get_traced_memory()[0]
                    samples.append(s)
                if step == steps:
                    break
    return {"samples": samples}


def run_memory_child(steps: int, every: int, trace: bool) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--memory-child", f"--steps={steps}", f"--every={every}"]
    if trace:
        cmd.append("--trace")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_memory(steps: int, every: int) -> dict[str, Any]:
    plain = run_memory_child(steps, every, trace=False)["samples"]
    traced = run_memory_child(steps, every, trace=True)["samples"]
    first, last = plain[0], plain[-1]
    rss = [s["rss"] for s in plain]
    return {
        "steps": steps,
        "every": every,
        "rss_first_step": first["step"],
        "rss_first": first["rss"],
        "rss_last": last["rss"],
        "rss_growth": last["rss"] / first["rss"] - 1.0,
        "rss_max": max(rss),
        "rss_min": min(rss),
        "rss_target": RSS_TARGET,
        "traced_first": traced[0]["traced"],
        "traced_last": traced[-1]["traced"],
        "traced_max": max(s["traced"] for s in traced),
        "traced_collected_first": traced[0]["traced_collected"],
        "traced_collected_last": traced[-1]["traced_collected"],
        "rss_samples": plain,
        "traced_samples": traced,
    }


# ------------------------------------------------------------------- report


def print_epochs(results: list[dict[str, Any]]) -> None:
    other = "cpu" if bench_core.CLOCK == "wall" else "wall"
    head = (
        f"{'workload':<8} {'implementation':<19} {'median ms':>10} {'min ms':>9} "
        f"{'µs/step':>8} {'vs torch':>9} {other + ' median':>11} {'epochs':>7}"
    )
    print(head)
    print("-" * len(head))
    for res in results:
        for r in res["rows"]:
            vs = "-" if r["vs_torch"] is None else f"{r['vs_torch']:.2f}x"
            print(
                f"{r['workload']:<8} {r['implementation']:<19} {r['median_ms']:10.2f} "
                f"{r['min_ms']:9.2f} {r['per_step_us']:8.0f} {vs:>9} "
                f"{r[other + '_median_ms']:11.2f} {r['epochs']:>7}"
            )
        print()
    for res in results:
        print(
            f"{res['workload']}: {res['description']}; {res['train_images']} images, "
            f"{res['steps_per_epoch']} steps an epoch; fit overhead "
            f"{res['fit_overhead'] * 100:+.1f}% of the hand loop's median"
        )


def print_memory(m: dict[str, Any]) -> None:
    mib = 2**20
    met = "met" if abs(m["rss_growth"]) <= m["rss_target"] else "NOT met"
    print(
        f"memory: digits MLP, {m['steps']} steps (a Scope each), sampled every {m['every']}, "
        "fresh subprocess"
    )
    print(
        f"  RSS after step {m['rss_first_step']}: {m['rss_first'] / mib:.2f} MiB; after step "
        f"{m['steps']}: {m['rss_last'] / mib:.2f} MiB; growth {m['rss_growth'] * 100:+.2f}% "
        f"(target within {m['rss_target'] * 100:.0f}%: {met}); "
        f"range {m['rss_min'] / mib:.2f} to {m['rss_max'] / mib:.2f} MiB"
    )
    print(
        f"  tracemalloc (separate run): {m['traced_first'] / 1024:.1f} KiB in use after step "
        f"{m['rss_first_step']}, {m['traced_last'] / 1024:.1f} KiB after step {m['steps']} "
        f"({m['traced_last'] - m['traced_first']:+,} B); max {m['traced_max'] / 1024:.1f} KiB"
    )
    print(
        f"  tracemalloc right after gc.collect(): {m['traced_collected_first'] / 1024:.1f} KiB "
        f"after step {m['rss_first_step']}, {m['traced_collected_last'] / 1024:.1f} KiB after "
        f"step {m['steps']} ({m['traced_collected_last'] - m['traced_collected_first']:+,} B)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="few repetitions (smoke run)")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--only", default="", help="comma-separated: mlp,cnn,memory")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    ap.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=2000, help=argparse.SUPPRESS)
    ap.add_argument("--every", type=int, default=100, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.memory_child:
        print(json.dumps(memory_child(args.steps, args.every, args.trace)))
        return 0
    bench_core.CLOCK = args.clock
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    bench_core.warm_malloc()
    only = {s for s in args.only.split(",") if s} or {"mlp", "cnn", "memory"}
    meta = {
        "date": f"{datetime.datetime.now():%Y-%m-%d %H:%M}",
        "numpy": np.__version__,
        "torch": getattr(torch, "__version__", None),
        "lampy": bench_core.lampy_source(),
        "cpu": bench_core.cpu_model(),
        "clock": args.clock,
        "loadavg_start": os.getloadavg(),
        "quick": args.quick,
    }
    print(f"lampy training benchmarks — {meta['date']}")
    print(f"numpy {meta['numpy']}, torch {meta['torch'] or 'not installed'}; {meta['cpu']}")
    print(f"lampy: {meta['lampy']}")
    print(f"clock: {args.clock}; load average {meta['loadavg_start']}")
    for line in bench_core.blas_info():
        print(f"blas/openmp: {line}")
    print()
    rounds, block = (2, 1) if args.quick else (8, 3)
    epochs = [bench_epochs(k, torch, rounds, block) for k in ("mlp", "cnn") if k in only]
    memory = None
    if "memory" in only:
        memory = bench_memory(300, 100) if args.quick else bench_memory(2000, 100)
    meta["loadavg_end"] = os.getloadavg()
    if epochs:
        print_epochs(epochs)
        print()
    if memory is not None:
        print_memory(memory)
        print()
    print(f"load average at the end: {meta['loadavg_end']}")
    if args.json:
        figures = {"meta": meta, "epochs": epochs, "memory": memory}
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
