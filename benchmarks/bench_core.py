"""Benchmarks of lampy's core against hand-written numpy and peer autodiff libraries.

Run ``python benchmarks/bench_core.py`` (``--quick`` for a smoke run of a few seconds,
``--json PATH`` to save the results, ``--profile`` to also print a cProfile of lampy's
per-op path). Peers (PyTorch, HIPS autograd, MyGrad) are optional: a missing one is
skipped with a note. See benchmarks/README.md.

Methodology
-----------
* Everyone runs single-threaded: OPENBLAS/OMP/MKL_NUM_THREADS=1 are set before numpy is
  imported and ``torch.set_num_threads(1)``. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are
  left as the environment sets them and printed in the header.
* Before timing, every implementation's result is checked against hand-written numpy
  (gradients of benchmark A, loss and gradients of benchmark B), so that all of them
  compute the same thing.
* Implementations are measured in interleaved rounds: each round runs every
  implementation for one untimed warm-up call and then a block of timed calls, so slow
  drift of the machine (frequency, noisy neighbours) is spread over all of them. Each
  call is timed on two clocks, wall (``time.perf_counter``) and process CPU time
  (``time.process_time``); ``--clock`` picks the one in the median/min columns and the
  targets, and the other one's median is shown next to it. We report the median and
  the minimum over all timed calls, and the minor page faults per call.
* The cyclic garbage collector stays on (as in real use), but ``gc.collect()`` runs
  before each block so no one pays for another's garbage.
* glibc's allocator is warmed up first (see :func:`warm_malloc`; recent lampy also fixes
  its thresholds at import): otherwise whether the large arrays of a step cost page
  faults depends on the process's history.
* A (per-op overhead): a chain of 1,000 elementwise ops on a float64 array of shape
  (10,), cycling through multiply, add, tanh, exp, subtract, log (scalar constants),
  then a sum and the backward pass. Reported as total time / 1,000 (µs per op); the
  leaf is created inside the timed call. The numpy baseline runs the same forward
  values and the hand-written backward of the same chain.
* B (MLP training step): batch 64, 784-256-256-10, tanh, float32, softmax cross-entropy
  from primitives (max-shift as a constant, exp, sum, log, subtract, one-hot multiply,
  sum, mean, negative), forward + backward + SGD ``w -= lr * grad``. numpy master
  weights are updated in place. lampy keeps numpy master weights and, each step, opens
  a ``lampy.Scope()`` and makes ``lampy.param(w)`` for each weight (param() copies; the
  copy is part of the measured step); the gradients are read from ``p.grad`` before the
  scope exits. ``lampy (value_and_grad)`` does the same through the functional API.
  Torch keeps leaf tensors and updates them under ``no_grad`` (grads set to None, as
  ``optimizer.zero_grad()``); MyGrad updates ``tensor.data`` in place; autograd uses
  ``value_and_grad`` over the list of numpy weights.
* C (memory): the tracemalloc peak (numpy reports its data buffers to tracemalloc)
  above the memory in use just before one forward + backward of the MLP, with the
  gradients alive at the end. For lampy we report it twice: the full step (param copies
  included) and the graph alone (params made before the peak is reset). We also report
  the traced bytes still in use after lampy steps (each in its own scope) minus those
  before, after one step and after many, with the number of Variables left alive, and,
  with psutil, the RSS growth over many steps. Torch allocates outside tracemalloc's
  view and is not measured here.
"""

from __future__ import annotations

import os

# Single-threaded BLAS and OpenMP for everyone; must happen before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Protocol  # noqa: E402

import numpy as np  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # also when imported, not run
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import _peers  # noqa: E402
from _peers import ADD_C, CHAIN_CYCLE, MUL_C, SUB_C  # noqa: E402

import lampy  # noqa: E402

CHAIN_LEN = 1_000
CHAIN_SIZE = 10
BATCH, SIZES, LR = 64, (784, 256, 256, 10), 0.01

# Targets: key -> (description, limit); a measured value <= limit meets the target.
TARGETS = {
    "A": ("A: lampy per-op overhead (µs/op)", 8.0),
    "B": ("B: lampy MLP step / numpy", 1.3),
    "C": ("C: lampy peak memory / numpy (full step)", 1.2),
    "C-graph": ("C: lampy peak memory / numpy (graph only)", 1.2),
    "C-shared": ("C: lampy peak memory / numpy (full step, param copy=False)", 1.2),
    # tracemalloc also sees CPython's free lists: up to ~1 KiB of small blocks come and go.
    "C-exit": ("C: bytes left after a lampy step's scope exits", 1024.0),
    "C-leak": ("C: bytes left after many lampy steps", 4096.0),
    "C-vars": ("C: Variables left alive after those steps", 0.0),
}


@dataclass(frozen=True)
class Plan:
    """How many repetitions each benchmark runs."""

    chain_rounds: int  # A: interleaved rounds ...
    chain_block: int  # ... of this many timed calls per implementation
    mlp_rounds: int  # B: the same for training steps
    mlp_block: int
    mem_repeats: int  # C: tracemalloc peaks measured per implementation
    leak_steps: int  # C: steps run to look for memory left behind
    rss_steps: int  # C: steps over which RSS growth is measured


FULL = Plan(10, 10, 10, 40, 3, 200, 300)
QUICK = Plan(1, 3, 1, 5, 1, 10, 20)


@dataclass
class Row:
    """One line of the results table."""

    benchmark: str
    impl: str
    unit: str
    median: float
    min: float
    samples: int
    vs_numpy: float | None = None
    vs_lampy: float | None = None
    other_clock_median: float | None = None  # the median on the other clock (see CLOCKS)
    faults: float | None = None  # minor page faults per timed call


@dataclass
class Results:
    """Everything a run measured, as printed and as written by --json."""

    meta: dict[str, Any] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    targets: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------- timing


def minor_faults() -> int:
    """Minor page faults of this process so far (0 where getrusage is unavailable)."""
    try:
        import resource
    except ImportError:  # not on Unix
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@dataclass
class Timing:
    """Per implementation: seconds per timed call on the chosen clock and on the other
    one, and minor page faults per timed call."""

    times: dict[str, list[float]]
    other: dict[str, list[float]] = field(default_factory=dict)
    faults: dict[str, float] = field(default_factory=dict)


# The clock of the median and min columns (--clock); the other one is also recorded. The
# CPU clock (process CPU time) leaves out the time the process waits for a core, so
# wall/cpu well above 1 means the machine was busy with other work during the run.
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = "wall"


def time_interleaved(fns: dict[str, Callable[[], object]], rounds: int, block: int) -> Timing:
    """Time each function over ``rounds`` x ``block`` calls, on both clocks.

    Each round visits every function (in a rotated order) for one warm-up call and a
    block of ``block`` timed calls. Page faults are counted over the whole block.
    """
    names = list(fns)
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    faults = dict.fromkeys(names, 0)
    wall_clock, cpu_clock = time.perf_counter, time.process_time
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            fn = fns[name]
            gc.collect()
            fn()
            f0 = minor_faults()
            for _ in range(block):
                c0, t0 = cpu_clock(), wall_clock()
                fn()
                t1, c1 = wall_clock(), cpu_clock()
                wall[name].append(t1 - t0)
                cpu[name].append(c1 - c0)
            faults[name] += minor_faults() - f0
    per_call = {n: faults[n] / len(wall[n]) for n in names}
    if CLOCK == "cpu":
        return Timing(cpu, wall, per_call)
    return Timing(wall, cpu, per_call)


def add_rows(res: Results, bench: str, unit: str, scale: float, timing: Timing) -> None:
    """Append one Row per implementation, with ratios to numpy and to lampy."""
    times = timing.times
    med = {n: statistics.median(t) * scale for n, t in times.items()}
    base_np, base_lp = med.get("numpy"), med.get("lampy")
    for name, t in times.items():
        m = med[name]
        other = timing.other.get(name)
        res.rows.append(
            Row(
                bench,
                name,
                unit,
                m,
                min(t) * scale,
                len(t),
                None if not base_np else m / base_np,
                None if not base_lp else m / base_lp,
                None if not other else statistics.median(other) * scale,
                timing.faults.get(name),
            )
        )


# -------------------------------------------------------------------- benchmark A


def chain_ops(n: int) -> list[str]:
    """The op sequence of benchmark A: ``CHAIN_CYCLE`` repeated to length ``n``."""
    return [CHAIN_CYCLE[i % len(CHAIN_CYCLE)] for i in range(n)]


def numpy_chain(x0: np.ndarray, ops: Sequence[str]) -> np.ndarray:
    """Hand-written numpy: forward keeping what the backward needs, then the backward."""
    tanh, exp, log = np.tanh, np.exp, np.log
    saved: list[np.ndarray | None] = []
    x = x0
    for code in ops:
        if code == "mul":
            x = x * MUL_C
            saved.append(None)
        elif code == "add":
            x = x + ADD_C
            saved.append(None)
        elif code == "tanh":
            x = tanh(x)
            saved.append(x)  # dx = g * (1 - y^2)
        elif code == "exp":
            x = exp(x)
            saved.append(x)  # dx = g * y
        elif code == "sub":
            x = x - SUB_C
            saved.append(None)
        else:
            saved.append(x)  # dx = g / x
            x = log(x)
    g = np.ones_like(x)  # d sum(x) / dx
    for code, s in zip(reversed(ops), reversed(saved), strict=True):
        if code == "mul":
            g = g * MUL_C
        elif code == "tanh":
            g = g * (1 - s * s)
        elif code == "exp":
            g = g * s
        elif code == "log":
            g = g / s
        # add and sub pass g through unchanged
    return g


def lampy_chain(x0: np.ndarray, ops: Sequence[str]) -> np.ndarray:
    """lampy: the chain with operators and lampy ops inside a scope."""
    with lampy.Scope():
        leaf = lampy.param(x0)
        x = _peers.run_chain(leaf, ops, lampy.tanh, lampy.exp, lampy.log)
        lampy.sum(x).backward()
        g = leaf.grad
        assert g is not None
        return np.array(g, copy=True)


def bench_chain(res: Results, peers: _peers.Peers, rounds: int, block: int) -> None:
    x0 = np.linspace(-1.0, 1.0, CHAIN_SIZE)
    ops = chain_ops(CHAIN_LEN)
    impls: dict[str, Callable[[np.ndarray, Sequence[str]], np.ndarray]] = {
        "numpy": numpy_chain,
        "lampy": lampy_chain,
    }
    for name, fn in _peers.CHAINS.items():
        if name in peers.modules:
            impls[name] = fn
    expected = numpy_chain(x0, ops)
    for name, fn in impls.items():
        got = fn(x0, ops)
        if not np.allclose(got, expected, rtol=1e-9, atol=0):
            raise AssertionError(f"A: {name} gradient differs from numpy: {got} vs {expected}")
    calls: dict[str, Callable[[], object]] = {
        n: functools.partial(fn, x0, ops) for n, fn in impls.items()
    }
    times = time_interleaved(calls, rounds, block)
    add_rows(res, "A per-op", "µs/op", 1e6 / CHAIN_LEN, times)


# -------------------------------------------------------------------- benchmark B


class MLP(Protocol):
    def loss_and_grads(self) -> tuple[float, list[np.ndarray]]: ...

    def step(self) -> float: ...


def mlp_data(seed: int = 0) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Initial weights [W1, b1, W2, b2, W3, b3], inputs X and one-hot labels Y (float32).

    X and Y are read-only; the weights are writable (each implementation copies them).
    """
    rng = np.random.default_rng(seed)
    weights: list[np.ndarray] = []
    for n_in, n_out in itertools.pairwise(SIZES):
        weights.append((rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32))
        weights.append(np.zeros(n_out, np.float32))
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
    # The data are constants: read-only, so that lampy uses them without its defensive
    # copy of writable operands (a writable array passed to an op is copied every step).
    x.flags.writeable = False
    y.flags.writeable = False
    return weights, x, y


class NumpyMLP:
    """Hand-written numpy: forward, hand-derived backward, in-place SGD."""

    def __init__(self, weights: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float):
        self.weights = [w.copy() for w in weights]
        self.x, self.y, self.lr = x, y, lr

    def loss_and_grads(self) -> tuple[float, list[np.ndarray]]:
        x, y = self.x, self.y
        w1, b1, w2, b2, w3, b3 = self.weights
        h1 = np.tanh(x @ w1 + b1)
        h2 = np.tanh(h1 @ w2 + b2)
        logits = h2 @ w3 + b3
        z = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        logp = z - np.log(s)
        loss = -(logp * y).sum(axis=1).mean()
        # backward: d loss / d logits = (softmax - Y) / batch
        d3 = (e / s - y) * np.float32(1.0 / x.shape[0])
        dw3, db3 = h2.T @ d3, d3.sum(axis=0)
        d2 = (d3 @ w3.T) * (1 - h2 * h2)
        dw2, db2 = h1.T @ d2, d2.sum(axis=0)
        d1 = (d2 @ w2.T) * (1 - h1 * h1)
        dw1, db1 = x.T @ d1, d1.sum(axis=0)
        return float(loss), [dw1, db1, dw2, db2, dw3, db3]

    def step(self) -> float:
        loss, grads = self.loss_and_grads()
        for w, g in zip(self.weights, grads, strict=True):
            w -= self.lr * g
        return loss


def lampy_mlp_loss(params: Sequence[Any], x: np.ndarray, y: np.ndarray) -> lampy.Variable:
    """The MLP loss on lampy Variables (x and y are plain arrays, i.e. constants)."""
    w1, b1, w2, b2, w3, b3 = params
    h1 = lampy.tanh(lampy.matmul(x, w1) + b1)
    h2 = lampy.tanh(lampy.matmul(h1, w2) + b2)
    logits = lampy.matmul(h2, w3) + b3
    z = logits - logits.value.max(axis=1, keepdims=True)  # max-shift as a constant
    logp = z - lampy.log(lampy.sum(lampy.exp(z), axis=1, keepdims=True))
    return -lampy.mean(lampy.sum(logp * y, axis=1))


class LampyMLP:
    """lampy: numpy master weights; each step a Scope with fresh params (param copies)."""

    COPY = True  # lampy.param(w, copy=COPY)

    def __init__(self, weights: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float):
        self.weights = [w.copy() for w in weights]
        self.x, self.y, self.lr = x, y, lr

    def loss_and_grads(self) -> tuple[float, list[np.ndarray]]:
        with lampy.Scope():
            params = [lampy.param(w, copy=self.COPY) for w in self.weights]
            loss = lampy_mlp_loss(params, self.x, self.y)
            loss.backward()
            # The gradient buffers are plain arrays: they outlive the scope, no copy needed.
            return float(loss.item()), [p.grad for p in params]  # type: ignore[misc]

    def step(self) -> float:
        lr = self.lr
        with lampy.Scope():
            params = [lampy.param(w, copy=self.COPY) for w in self.weights]
            loss = lampy_mlp_loss(params, self.x, self.y)
            loss.backward()
            value = float(loss.item())
            grads = [p.grad for p in params]
        # The update runs after the scope: the gradient arrays outlive it, and the
        # weights are not changed while params may still read them (copy=False).
        for w, g in zip(self.weights, grads, strict=True):
            w -= lr * g  # type: ignore[operator]
        return value


class LampySharedMLP(LampyMLP):
    """lampy with ``param(w, copy=False)``: the params read the master weights in place
    (the weights are only updated after the step's scope has used them)."""

    COPY = False


class LampyFunctionalMLP:
    """lampy through ``lampy.value_and_grad`` (which makes the params and the scope)."""

    def __init__(self, weights: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float):
        self.weights = [w.copy() for w in weights]
        self.x, self.y, self.lr = x, y, lr
        self._vg = lampy.value_and_grad(
            lambda *ws: lampy_mlp_loss(ws, x, y), argnums=tuple(range(len(weights)))
        )

    def loss_and_grads(self) -> tuple[float, list[np.ndarray]]:
        value, grads = self._vg(*self.weights)
        return float(value), list(grads)

    def step(self) -> float:
        value, grads = self._vg(*self.weights)
        for w, g in zip(self.weights, grads, strict=True):
            w -= self.lr * g
        return float(value)


MLPFactory = Callable[[Sequence[np.ndarray], np.ndarray, np.ndarray, float], MLP]


def mlp_impls(peers: _peers.Peers) -> dict[str, MLPFactory]:
    impls: dict[str, MLPFactory] = {
        "numpy": NumpyMLP,
        "lampy": LampyMLP,
        "lampy (param copy=False)": LampySharedMLP,
        "lampy (value_and_grad)": LampyFunctionalMLP,
    }
    for name, cls in _peers.MLPS.items():
        if name in peers.modules:
            impls[name] = cls
    return impls


def check_mlp(impls: dict[str, MLPFactory]) -> None:
    """Every implementation gives numpy's loss and gradients from the same weights."""
    weights, x, y = mlp_data()
    loss0, grads0 = NumpyMLP(weights, x, y, LR).loss_and_grads()
    for name, make in impls.items():
        model = make(weights, x, y, LR)
        for _ in range(2):  # twice: gradients must not accumulate between calls
            loss, grads = model.loss_and_grads()
        if not np.isclose(loss, loss0, rtol=1e-5):
            raise AssertionError(f"B: {name} loss {loss} differs from numpy's {loss0}")
        for i, (g, g0) in enumerate(zip(grads, grads0, strict=True)):
            err = float(np.max(np.abs(g - g0))) / float(np.max(np.abs(g0)))
            if err > 1e-4:
                raise AssertionError(f"B: {name} gradient {i} differs from numpy's ({err:.2e})")


def bench_mlp(res: Results, peers: _peers.Peers, rounds: int, block: int) -> None:
    impls = mlp_impls(peers)
    check_mlp(impls)
    weights, x, y = mlp_data()
    models = {name: make(weights, x, y, LR) for name, make in impls.items()}
    times = time_interleaved({n: m.step for n, m in models.items()}, rounds, block)
    add_rows(res, "B MLP step", "ms/step", 1e3, times)
    # The cost of the per-step param copies, timed alone (part of lampy's step above).
    ws = models["lampy"].weights  # type: ignore[attr-defined]

    def make_params() -> None:
        with lampy.Scope():
            for w in ws:
                lampy.param(w)

    t = time_interleaved({"param copies": make_params}, rounds, block).times["param copies"]
    res.extra["B_lampy_param_copies_ms"] = statistics.median(t) * 1e3


# -------------------------------------------------------------------- benchmark C


def traced_peak(fn: Callable[[], object]) -> int:
    """Peak bytes traced during ``fn()`` above those in use when it starts."""
    gc.collect()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    result = fn()
    peak = tracemalloc.get_traced_memory()[1] - before
    del result
    return peak


def lampy_graph_peak(model: LampyMLP) -> int:
    """Peak of lampy's forward + backward with the params already made (graph only)."""
    with lampy.Scope():
        params = [lampy.param(w) for w in model.weights]
        gc.collect()
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        loss = lampy_mlp_loss(params, model.x, model.y)
        loss.backward()
        return tracemalloc.get_traced_memory()[1] - before


def live_variables() -> int:
    """Number of lampy Variables alive (released or not) in the process."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is lampy.Variable)


def scope_exit_leftover(model: LampyMLP, steps: int) -> tuple[int, int, int]:
    """What lampy training steps (each one scope) leave behind once their scope exits.

    Returns the traced bytes in use after one step minus before it, the same after
    ``steps`` more steps, and the growth in the number of live Variables. Warm-up steps
    run first: CPython keeps freed small tuples and other objects on free lists (up to
    a bound), and tracemalloc counts those as allocated until the lists are full.
    """
    for _ in range(50):
        model.step()
    n_vars = live_variables()
    before = tracemalloc.get_traced_memory()[0]
    model.step()
    gc.collect()
    one = tracemalloc.get_traced_memory()[0] - before
    for _ in range(steps):
        model.step()
    gc.collect()
    many = tracemalloc.get_traced_memory()[0] - before
    return one, many, live_variables() - n_vars


def rss_growth(step: Callable[[], object], steps: int) -> float:
    """Growth of the resident set size (MiB) over ``steps`` steps, after a warm-up."""
    import psutil

    proc = psutil.Process()
    for _ in range(max(3, steps // 10)):
        step()
    gc.collect()
    before = proc.memory_info().rss
    for _ in range(steps):
        step()
    gc.collect()
    return float(proc.memory_info().rss - before) / 2**20


def bench_memory(
    res: Results, peers: _peers.Peers, repeats: int, leak_steps: int, rss_steps: int
) -> None:
    weights, x, y = mlp_data()
    impls = {n: m for n, m in mlp_impls(peers).items() if n not in ("torch",)}
    models = {name: make(weights, x, y, LR) for name, make in impls.items()}
    lampy_model = models["lampy"]
    assert isinstance(lampy_model, LampyMLP)
    tracemalloc.start()
    try:
        for m in models.values():  # warm-up, outside the measurements
            m.loss_and_grads()
        peaks: dict[str, list[float]] = {}
        for name, m in models.items():
            peaks[name] = [traced_peak(m.loss_and_grads) for _ in range(repeats)]
        peaks["lampy (graph only)"] = [lampy_graph_peak(lampy_model) for _ in range(repeats)]
        leftover = scope_exit_leftover(lampy_model, leak_steps)
    finally:
        tracemalloc.stop()
    order = ["numpy", "lampy", "lampy (graph only)"] + [
        n for n in peaks if n not in ("numpy", "lampy", "lampy (graph only)")
    ]
    add_rows(res, "C peak memory", "MiB", 1 / 2**20, Timing({n: peaks[n] for n in order}))
    res.extra["C_scope_exit_bytes_1_step"] = leftover[0]
    res.extra["C_scope_exit_bytes_n_steps"] = leftover[1]
    res.extra["C_scope_exit_live_variables"] = leftover[2]
    res.extra["C_scope_exit_n_steps"] = leak_steps + 1
    try:
        import psutil  # noqa: F401
    except ImportError:
        res.notes.append("psutil is not installed: RSS growth not measured.")
        return
    res.extra["C_rss_growth_MiB"] = {
        name: rss_growth(models[name].step, rss_steps) for name in ("numpy", "lampy")
    }
    res.extra["C_rss_steps"] = rss_steps


# ---------------------------------------------------------------------- allocator


def warm_malloc() -> bool:
    """Raise glibc's dynamic mmap and trim thresholds, as a program's first big free does.

    glibc serves large blocks with mmap until a block that large is freed; it then
    raises the mmap threshold to that size and the trim threshold to twice it. Until
    then (or when the freed top of the heap exceeds the trim threshold) every step's
    large arrays come back from the kernel as fresh pages, one page fault per 4 KiB,
    which here costs more than the arithmetic. Which regime a benchmark runs in then
    depends on what happened earlier in the process (importing torch frees big blocks;
    loading a data set does too). Freeing one 30 MiB block up front puts every
    implementation in the same, steady regime. Returns whether it was done (glibc only).

    Recent lampy fixes both thresholds itself at import (``lampy._memory.tune_malloc``),
    which turns glibc's dynamic adjustment off; this is then a harmless no-op.
    """
    if platform.libc_ver()[0] != "glibc":
        return False
    block = np.empty(30 * 2**20, np.uint8)  # above the initial 128 KiB threshold: mmap
    del block  # freeing it raises the thresholds (to 30 MiB and 60 MiB)
    return True


# ---------------------------------------------------------------------- reporting


def blas_info() -> list[str]:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ["threadpoolctl not installed (BLAS details unavailable)"]
    return [
        f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture', '-')}), "
        f"threads={i.get('num_threads')}, {Path(i.get('filepath', '')).name}"
        for i in threadpool_info()
    ]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def blas_kernels() -> str:
    """Which kernels numpy's OpenBLAS runs (its core, as ``OPENBLAS_VERBOSE=2`` prints it
    when numpy loads), whether the CPU has AVX-512, and ``OPENBLAS_CORETYPE`` if set: the
    matrix products of the GPT, transformer and CNN rows depend on it."""
    import ctypes
    import re

    core = "?"
    try:
        maps = Path("/proc/self/maps").read_text()
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "OpenBLAS core unknown"
    for path in sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", maps))):
        lib = ctypes.CDLL(path)
        for name in ("openblas_get_corename", "scipy_openblas_get_corename64_"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                core = fn().decode()
                break
    avx512 = "AVX-512" if " avx512f" in flags else "no AVX-512"
    forced = os.environ.get("OPENBLAS_CORETYPE")
    return f"OpenBLAS core {core} (CPU with {avx512}; OPENBLAS_CORETYPE={forced or 'unset'})"


def lampy_source() -> str:
    """Where lampy was imported from, with the git commit of that tree if there is one."""
    import subprocess

    where = Path(lampy.__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(where), "describe", "--always", "--dirty", "--abbrev=10"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return str(where)
    return f"{where} (git {out.stdout.strip()})"


def collect_meta(peers: _peers.Peers, quick: bool) -> dict[str, Any]:
    env = {
        k: os.environ.get(k, "(unset)")
        for k in (
            "OPENBLAS_NUM_THREADS",
            "OMP_NUM_THREADS",
            "MKL_NUM_THREADS",
            "OPENBLAS_CORETYPE",
            "OPENBLAS_L2_SIZE",
        )
    }
    torch = peers.modules.get("torch")
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()]
        if hasattr(os, "getloadavg")
        else None,
        "numpy": np.__version__,
        "lampy": lampy.__version__,
        "lampy_source": lampy_source(),
        "peers": peers.versions,
        "torch_threads": None if torch is None else torch.get_num_threads(),
        "env": env,
        "blas": blas_info(),
        "quick": quick,
    }


def print_header(meta: dict[str, Any], peers: _peers.Peers) -> None:
    print(f"lampy core benchmarks — {meta['date']}{'  [--quick]' if meta['quick'] else ''}")
    print(f"python {meta['python']}, {meta['platform']}")
    print(f"cpu: {meta['cpu']} ({meta['cpu_count']} logical cores), load {meta['load_average']}")
    print(f"numpy {meta['numpy']}, lampy {meta['lampy']} from {meta['lampy_source']}")
    print("env: " + ", ".join(f"{k}={v}" for k, v in meta["env"].items()))
    print(f"clock of median/min: {meta['clock']} (the other clock's median is shown too)")
    print(
        f"glibc malloc: thresholds fixed by lampy at import: {meta['malloc_tuned_by_lampy']}; "
        f"raised up front by this script (warm_malloc): {meta['malloc_warmed']}"
    )
    for line in meta["blas"]:
        print(f"blas/openmp: {line}")
    for name, version in peers.versions.items():
        extra = f" (threads={meta['torch_threads']})" if name == "torch" else ""
        print(f"peer: {name} {version}{extra}")
    for name, why in peers.missing.items():
        print(f"peer: {name} SKIPPED ({why})")
    print()


def _ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


def print_table(res: Results) -> None:
    head = (
        "benchmark",
        "implementation",
        "median",
        "min",
        "unit",
        "vs numpy",
        "vs lampy",
        f"{'cpu' if CLOCK == 'wall' else 'wall'} median",
        "faults/call",
    )
    lines = [
        (
            r.benchmark,
            r.impl,
            f"{r.median:.3f}",
            f"{r.min:.3f}",
            r.unit,
            _ratio(r.vs_numpy),
            _ratio(r.vs_lampy),
            "-" if r.other_clock_median is None else f"{r.other_clock_median:.3f}",
            "-" if r.faults is None else f"{r.faults:.0f}",
        )
        for r in res.rows
    ]
    widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
    right = {2, 3, 5, 6, 7, 8}

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    print(fmt(head))
    print("  ".join("-" * w for w in widths))
    last = None
    for r, line in zip(res.rows, lines, strict=True):
        if last is not None and r.benchmark != last:
            print()
        last = r.benchmark
        print(fmt(line))
    print()
    counts = {r.benchmark: r.samples for r in res.rows}
    print("samples per implementation: " + ", ".join(f"{b}: {n}" for b, n in counts.items()))
    ex = res.extra
    if "B_lampy_param_copies_ms" in ex:
        print(
            f"B: of lampy's step, making the 6 params (copies of the weights) takes "
            f"{ex['B_lampy_param_copies_ms']:.3f} ms (median)"
        )
    if "C_scope_exit_bytes_1_step" in ex:
        print(
            "C: bytes still allocated after lampy steps (scope exited) minus before: "
            f"{ex['C_scope_exit_bytes_1_step']} B after 1 step, "
            f"{ex['C_scope_exit_bytes_n_steps']} B after {ex['C_scope_exit_n_steps']} steps; "
            f"live Variables {ex['C_scope_exit_live_variables']:+d}"
        )
    if "C_rss_growth_MiB" in ex:
        growth = ", ".join(f"{n} {v:+.2f} MiB" for n, v in ex["C_rss_growth_MiB"].items())
        print(f"C: RSS growth over {ex['C_rss_steps']} training steps: {growth}")
    for note in res.notes:
        print(f"note: {note}")
    print()


def evaluate_targets(res: Results) -> None:
    def get(bench: str, impl: str) -> Row | None:
        return next((r for r in res.rows if r.benchmark == bench and r.impl == impl), None)

    def check(key: str, value: float | None) -> None:
        desc, limit = TARGETS[key]
        ok = value is not None and value <= limit
        res.targets.append({"target": desc, "limit": limit, "value": value, "met": ok})

    a = get("A per-op", "lampy")
    check("A", None if a is None else a.median)
    b = get("B MLP step", "lampy")
    check("B", None if b is None else b.vs_numpy)
    c = get("C peak memory", "lampy")
    check("C", None if c is None else c.vs_numpy)
    cg = get("C peak memory", "lampy (graph only)")
    check("C-graph", None if cg is None else cg.vs_numpy)
    cs = get("C peak memory", "lampy (param copy=False)")
    check("C-shared", None if cs is None else cs.vs_numpy)
    one = res.extra.get("C_scope_exit_bytes_1_step")
    check("C-exit", None if one is None else float(one))
    many = res.extra.get("C_scope_exit_bytes_n_steps")
    check("C-leak", None if many is None else float(many))
    live = res.extra.get("C_scope_exit_live_variables")
    check("C-vars", None if live is None else float(live))


def print_targets(res: Results) -> None:
    print("targets:")
    for t in res.targets:
        value = "n/a" if t["value"] is None else f"{t['value']:.3g}"
        status = "MET" if t["met"] else "NOT MET"
        print(f"  [{status:>7}] {t['target']}: {value} (target <= {t['limit']:g})")


def profile_lampy_chain() -> None:
    """cProfile of benchmark A's lampy chain: where the per-op time goes."""
    import cProfile
    import pstats

    x0 = np.linspace(-1.0, 1.0, CHAIN_SIZE)
    ops = chain_ops(CHAIN_LEN)
    lampy_chain(x0, ops)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(20):
        lampy_chain(x0, ops)
    prof.disable()
    print("cProfile of 20 runs of the lampy chain (A), by own time:")
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)


# ---------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    parser.add_argument("--json", metavar="PATH", type=Path, help="write the results as JSON")
    parser.add_argument("--profile", action="store_true", help="cProfile lampy's chain (A)")
    parser.add_argument(
        "--peers",
        default=",".join(_peers.ALL_PEERS),
        help="comma-separated peers to measure (default: %(default)s; '' for none)",
    )
    parser.add_argument(
        "--cold-malloc",
        action="store_true",
        help="skip the glibc allocator warm-up (see warm_malloc); with LAMPY_TUNE_MALLOC=0 "
        "in the environment too, results then depend on the process's allocation history",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="clock of the median/min columns and the targets: wall (perf_counter, the "
        "default) or cpu (process_time; steadier on a shared, busy machine)",
    )
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = args.clock

    peers = _peers.load_peers([p.strip() for p in args.peers.split(",") if p.strip()])
    res = Results(meta=collect_meta(peers, args.quick))
    res.meta["malloc_warmed"] = False if args.cold_malloc else warm_malloc()
    # lampy may set fixed glibc malloc thresholds itself at import (LAMPY_TUNE_MALLOC=0
    # turns that off); it is process-wide, so it applies to every implementation here.
    memory_module = sys.modules.get("lampy._memory")
    res.meta["malloc_tuned_by_lampy"] = getattr(memory_module, "MALLOC_TUNED", None)
    res.meta["clock"] = CLOCK
    for name, why in peers.missing.items():
        res.notes.append(f"{name} skipped ({why}).")
    print_header(res.meta, peers)

    plan = QUICK if args.quick else FULL
    bench_chain(res, peers, plan.chain_rounds, plan.chain_block)
    bench_mlp(res, peers, plan.mlp_rounds, plan.mlp_block)
    bench_memory(res, peers, plan.mem_repeats, plan.leak_steps, plan.rss_steps)
    if "torch" in peers.modules:
        res.notes.append("C: torch allocates outside tracemalloc; it has no memory row.")
    evaluate_targets(res)

    print_table(res)
    print_targets(res)
    if args.profile:
        print()
        profile_lampy_chain()
    if args.json is not None:
        payload = {
            "meta": res.meta,
            "rows": [asdict(r) for r in res.rows],
            "extra": res.extra,
            "targets": res.targets,
            "notes": res.notes,
        }
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
