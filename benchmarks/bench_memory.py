"""Memory of a training step: lampy against PyTorch, and recomputation (remat).

Two measurements of an MLP of ``L`` hidden Linear+ReLU layers (width 512, batch 256,
float32) followed by a Linear to 10 outputs and a mean-square loss:

1. **Memory per layer.** The peak memory of one training step (forward and
   backward, the parameters' gradient buffers already allocated by a warm-up step)
   above the memory before it, at ``L = 8`` and ``L = 32``; the slope between the two
   is the memory a layer adds. lampy against PyTorch, same process layout.
2. **Recomputation.** ``L = 64``: the step's peak and time, plain and with
   ``lampy.nn.remat_sequential`` (sqrt(64) = 8 segments), against PyTorch plain and
   with ``torch.utils.checkpoint.checkpoint_sequential`` (8 segments).
3. **The cost of accounting.** The time per op of a chain of 999 small ops (``y =
   tanh(y * 0.9 + 0.1)``, forward and backward) in a step scope inside a model scope, no
   budget set, with lampy's memory accounting as it is and with its two per-op hooks
   (charging a new value when its node is registered, and ``Variable.__del__``,
   ``lampy.autograd._ledger.variable_gone``, which drops a dead Variable's value and refunds it
   if it is freed) replaced by ones that do only what lampy needs without accounting
   (the charge does nothing; the death only drops the value). Twice: on float64 values
   of shape ``(16,)``, where every op's value is an array the ledger counts (the figure
   the target is about), and on W1's 0-d chain of ``bench_speed.py``, whose values the
   engine holds as numpy scalars, which are not counted. The variants take turns, 40
   rounds, process CPU time; the figure is the median of the per-round differences.
   ``Scope.register`` runs in both, so the figure is the accounting's own work per op.
   A third variant checks with a weak reference whether a dead Variable's value was
   freed, as every refund did before values recorded who else may hold them
   (``Node.held``): what the check alone costs.

How peak memory is measured: each configuration runs in a fresh subprocess with
``MALLOC_MMAP_THRESHOLD_=65536``, so every array of 64 KiB or more gets its own mapping
and returns to the kernel when freed: the resident set size then follows the live
arrays (to a page) for numpy and for PyTorch alike. The child resets the peak RSS
(``/proc/self/clear_refs``), runs the step and reads ``VmHWM`` from
``/proc/self/status``. Linux only. The compared quantity is that RSS peak, for both
frameworks: every array either one allocates in the step (activations, temporaries,
gradient buffers), nothing allocated before it (parameters, their ``.grad``, the input
batch). For lampy the step scope's own count (``scope.memory.peak_bytes``: the values
it owns, without the backward pass's gradient buffers) is printed too, as a cross-check.

Modes. lampy's step calls ``backward()`` as the README does: a pass frees each node's
closures and saved values once they have run, a param whose ``.grad`` is None takes the
pass's buffer at its end, and one whose ``.grad`` exists takes its gradient as soon as
it is final. Section 1 measures both ways of resetting gradients between steps, against
PyTorch's: ``zero_grad()`` (set to None: the step allocates the gradients) and
``zero_grad(set_to_none=False)`` (kept: the step adds into them), and lampy's
``backward(atomic=True)`` beside them (all or nothing for every param, at the cost of a
second copy of the accumulated gradients). Section 2 keeps the gradients (as
``checkpoint_sequential`` is usually measured: the activations are what it saves).

How time is measured: the plain and the rematerialised step take turns in one process
(same environment), and each one's median is taken, so that a load that changes on a
shared machine weighs on both alike; the ratio is what to read.

PyTorch is optional: ``pip install torch`` (a CPU build is enough); without it the torch
columns are skipped. One BLAS thread everywhere.

    python benchmarks/bench_memory.py [--steps N] [--quick] [--only layers,remat,accounting]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

WIDTH, BATCH, OUT = 512, 256, 10
MIB = 2**20

_CHILD_ENV = {
    "MALLOC_MMAP_THRESHOLD_": "65536",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "LAMPY_TUNE_MALLOC": "0",
}


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _measure(
    step: Callable[[], dict[str, float] | None], reset: Callable[[], object] = lambda: None
) -> dict[str, float]:
    """Warm up, ``reset`` the gradients (to None, or zero-filled), then the RSS peak of
    one step above the RSS before it."""
    step()  # warm-up: allocates the parameters' gradients
    reset()
    before = _status("VmRSS")
    _reset_peak()
    extra = step()
    peak = _status("VmHWM") - before
    return {"peak": peak, **(extra or {})}


def _interleaved(steps: dict[str, Callable[[], object]], n: int) -> dict[str, float]:
    """The median time of each kind of step, the kinds taking turns (n steps each), so
    that a changing load on a shared machine weighs on all of them alike."""
    for step in steps.values():
        step()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(n):
        for name, step in steps.items():
            t = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t)
    return {name: sorted(ts)[len(ts) // 2] for name, ts in times.items()}


def child_lampy(layers: int, mode: str, steps: int, grads: str = "none") -> dict[str, float]:
    """``mode`` "plain" or "remat": the step's peak; "time": both steps' times.

    ``grads``: "none" sets every ``.grad`` to None between steps (``zero_grad()``, the
    README's loop and ``fit``), so the step allocates them; "kept" keeps them
    (``zero_grad(set_to_none=False)``, gradient accumulation), so the pass adds into
    them; "kept-atomic" is "kept" with ``backward(atomic=True)`` (all or nothing for
    every param, holding a second copy of the accumulated gradients)."""
    import numpy as np

    import lampy
    from lampy import nn

    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    atomic = True if grads == "kept-atomic" else None
    with lampy.Scope():
        mods: list[nn.Module] = []
        for _ in range(layers):
            mods += [nn.Linear.init(WIDTH, WIDTH, rng=rng, dtype=np.float32), nn.ReLU.init()]
        mods.append(nn.Linear.init(WIDTH, OUT, rng=rng, dtype=np.float32))
        model = nn.Sequential.init(*mods)
        segments = round(layers**0.5)

        def reset() -> None:
            model.zero_grad(set_to_none=grads == "none")

        def step(remat: bool) -> dict[str, float]:
            with lampy.Scope() as s:
                y = nn.remat_sequential(mods, x, segments=segments) if remat else model(x)
                loss = (y * y).mean()
                del y
                loss.backward(atomic=atomic)
                return {"owned_peak": s.memory.peak_bytes}

        def timed(remat: bool) -> None:
            reset()
            step(remat)

        if mode == "time":
            return _interleaved(
                {"plain": lambda: timed(False), "remat": lambda: timed(True)}, steps
            )
        return _measure(lambda: step(mode == "remat"), reset)


def child_accounting(rounds: int, mode: str, steps: int) -> dict[str, float]:
    """Section 3: µs per op of a 999-op chain with accounting and without (see above),
    on float64 values of shape ``(16,)`` (``mode == "array"``: every value an array the
    ledger counts) or 0-d (``mode == "0-d"``, W1 itself: values held as numpy scalars,
    which are not counted)."""
    del steps
    import numpy as np

    import lampy

    n_steps = 333  # three ops each
    start = np.full(16, 0.5) if mode == "array" else np.float64(0.5)

    def chain() -> None:
        with lampy.Scope():
            x = lampy.param(start)
            y = x
            for _ in range(n_steps):
                y = lampy.tanh(y * 0.9 + 0.1)
            y.sum().backward()

    real_register = lampy.Scope.register

    def no_charge(scope: Any, node: Any, n: int = -1) -> None:
        node.charged = 0  # owned, not counted (op's fast path set it; nothing charged)
        real_register(scope, node, 0)

    def marked(scope: Any, node: Any, n: int = -1) -> None:
        v = node.value
        node.charged = 0
        real_register(scope, node, 0)
        if type(v) is np.ndarray and v.base is None:
            node.charged = 1  # dies as a counted value would

    def gone_off(v: Any) -> None:
        # what the Variable's death does without accounting: the node drops the value
        node = v.node
        scope = node.scope
        if scope is not None and not scope.keep_values:
            node.value = None

    def gone_weak(v: Any) -> None:
        # and what any exact refund needs first when something else may hold the
        # value: whether dropping the node's reference freed it
        node = v.node
        scope = node.scope
        if scope is not None and not scope.keep_values:
            value = node.value
            node.value = None
            if node.charged:
                r = weakref.ref(value)
                del value
                r()

    variable = lampy.Variable
    real = (real_register, variable.__del__)
    kinds = {"on": real, "off": (no_charge, gone_off), "weak": (marked, gone_weak)}
    per_op: dict[str, list[float]] = {k: [] for k in kinds}
    order = list(kinds)
    with lampy.Scope():  # the model's scope: the chain runs one level below it
        for r in range(rounds):
            for kind in order[r % 3 :] + order[: r % 3]:
                lampy.Scope.register, variable.__del__ = kinds[kind]  # type: ignore[method-assign]
                chain()  # warm-up
                t = time.process_time()
                for _ in range(5):
                    chain()
                per_op[kind].append((time.process_time() - t) / 5 / (3 * n_steps) * 1e6)
        lampy.Scope.register, variable.__del__ = real  # type: ignore[method-assign]

    def median_diff(kind: str) -> float:
        diffs = sorted(a - b for a, b in zip(per_op[kind], per_op["off"], strict=True))
        return diffs[rounds // 2]

    return {
        "on": sorted(per_op["on"])[rounds // 2],
        "off": sorted(per_op["off"])[rounds // 2],
        "cost": median_diff("on"),
        "weak": median_diff("weak"),
    }


def child_torch(layers: int, mode: str, steps: int, grads: str = "none") -> dict[str, float]:
    """``mode`` "plain" or "remat": the step's peak; "time": both steps' times.
    ``grads`` "none": ``zero_grad()`` (set_to_none, PyTorch's default); "kept":
    ``zero_grad(set_to_none=False)``."""
    import torch
    from torch.utils.checkpoint import checkpoint_sequential

    torch.set_num_threads(1)
    torch.manual_seed(0)
    mods: list[torch.nn.Module] = []
    for _ in range(layers):
        mods += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    mods.append(torch.nn.Linear(WIDTH, OUT))
    model = torch.nn.Sequential(*mods)
    x = torch.randn(BATCH, WIDTH)
    segments = round(layers**0.5)

    def reset() -> None:
        model.zero_grad(set_to_none=grads == "none")

    def step(remat: bool) -> None:
        y = checkpoint_sequential(model, segments, x, use_reentrant=False) if remat else model(x)
        loss = (y * y).mean()
        del y
        loss.backward()

    def timed(remat: bool) -> None:
        reset()
        step(remat)

    if mode == "time":
        return _interleaved({"plain": lambda: timed(False), "remat": lambda: timed(True)}, steps)
    return _measure(lambda: step(mode == "remat"), reset)


def child_gpt(framework: str, mode: str, steps: int) -> dict[str, float]:
    """Section 4: the peak of one training step of ``examples/char_gpt.py``'s model
    (``bench_speed.py``'s configuration: 4 layers, 4 heads, width 128, block 64, batch
    16, AdamW, clipping), gradients set to None between steps (both libraries'
    ``zero_grad()``), in lampy or in PyTorch from the same weights."""
    del mode, steps
    import bench_speed

    import lampy

    with lampy.Scope():
        data = bench_speed.GPTData()
        if framework == "torch":
            import torch

            torch.set_num_threads(1)
            step, _ = bench_speed.torch_gpt(torch, data)

            def measured_torch() -> None:
                step()

            return _measure(measured_torch)
        lstep, _ = bench_speed.lampy_gpt(data)
        owned: dict[str, float] = {}

        def measured() -> dict[str, float]:
            data.model.zero_grad()
            with lampy.Scope() as s:
                data.model.loss(data.x, data.y).backward()
                owned["owned_peak"] = s.memory.peak_bytes
            lampy.optim.clip_grad_norm_(data.model.parameters(), 1.0)
            data.opt.step()
            return owned

        lstep()  # the optimizer's state, made once
        return _measure(measured)


def run(
    framework: str, layers: int, mode: str, steps: int, grads: str = "none"
) -> dict[str, float] | None:
    """One configuration in a fresh subprocess; None if the framework is missing."""
    env = {**os.environ, **_CHILD_ENV}
    here = os.path.dirname(os.path.abspath(__file__))
    if framework.startswith("gpt-"):
        call = f"b.child_gpt({framework[4:]!r}, {mode!r}, {steps})"
    else:
        extra = "" if framework == "accounting" else f", {grads!r}"
        call = f"b.child_{framework}({layers}, {mode!r}, {steps}{extra})"
    code = (
        f"import json, sys; sys.path.insert(0, {here!r}); import bench_memory as b; "
        f"print(json.dumps({call}))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        if "No module named 'torch'" in proc.stderr:
            return None
        raise RuntimeError(f"{framework} {layers} {mode} failed:\n{proc.stderr}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--steps", type=int, default=5, help="timed steps of each kind (plain and remat take turns)"
    )
    ap.add_argument("--quick", action="store_true", help="fewer layers (a smoke run)")
    ap.add_argument(
        "--only",
        default="layers,remat,gpt,accounting",
        help="comma-separated sections: layers, remat, gpt, accounting",
    )
    args = ap.parse_args()
    only = set(args.only.split(","))
    if not os.path.exists("/proc/self/clear_refs"):
        sys.exit("bench_memory.py needs Linux (/proc/self/clear_refs and VmHWM).")
    small, large, deep = (2, 6, 16) if args.quick else (8, 32, 64)

    print(f"MLP width {WIDTH}, batch {BATCH}, float32; peak RSS of one training step")
    if "layers" in only:
        section_layers(small, large)
    if "remat" in only:
        section_remat(deep, args.steps)
    if "gpt" in only:
        section_gpt()
    if "accounting" in only:
        rounds = 8 if args.quick else 40
        for mode, what in (("array", "values of shape (16,), float64"), ("0-d", "W1, 0-d")):
            acc = run("accounting", rounds, mode, 0)
            assert acc is not None
            print(
                f"\n3. accounting, no budget, chain of {what}: {acc['cost']:.3f} µs per op "
                f"(median of {rounds} paired rounds; chain {acc['on']:.3f} µs per op with it, "
                f"{acc['off']:.3f} without; target <= 0.2)"
            )
            print(
                f"   of which the weak-reference check at a Variable's death alone: "
                f"{acc['weak']:.3f} µs per op (median of paired rounds)"
            )


def section_layers(small: int, large: int) -> None:
    """Section 1: memory per layer of the default step, lampy against torch, in both
    zero_grad modes (and lampy's all-or-nothing mode beside them)."""
    print(
        "\n1. a training step's peak per layer (slope of the step's peak between "
        f"L={small} and L={large}); default backward() in lampy"
    )
    print(
        f"{'':26s} {'L=' + str(small):>12s} {'L=' + str(large):>12s} {'per layer':>12s}"
        f" {'ledger/RSS':>11s}"
    )
    rows = (
        ("none", "lampy", "lampy, grads None"),
        ("none", "torch", "torch, zero_grad()"),
        ("kept", "lampy", "lampy, grads kept"),
        ("kept", "torch", "torch, set_to_none=False"),
        ("kept-atomic", "lampy", "lampy, kept, atomic=True"),
    )
    per_layer: dict[tuple[str, str], float] = {}
    for grads, fw, label in rows:
        a = run(fw, small, "plain", 0, grads)
        b = run(fw, large, "plain", 0, grads)
        if a is None or b is None:
            print(f"{label:26s} skipped: not installed")
            continue
        per_layer[grads, fw] = (b["peak"] - a["peak"]) / (large - small)
        ledger = f"{b['owned_peak'] / b['peak']:10.2f}x" if "owned_peak" in b else ""
        print(
            f"{label:26s} {a['peak'] / MIB:8.2f} MiB {b['peak'] / MIB:8.2f} MiB "
            f"{per_layer[grads, fw] / MIB:8.3f} MiB {ledger}"
        )
    for grads in ("none", "kept"):
        if (grads, "lampy") in per_layer and (grads, "torch") in per_layer:
            ratio = per_layer[grads, "lampy"] / per_layer[grads, "torch"]
            print(f"lampy / torch per layer, grads {grads}: {ratio:.2f}")


def section_remat(deep: int, steps: int) -> None:
    """Section 2: recomputation against the plain step, lampy and torch."""
    segs = round(deep**0.5)
    print(
        f"\n2. recomputation, L={deep}, {segs} segments (peaks: one step each in a fresh "
        f"process; times: median of {steps} steps each, plain and remat taking turns "
        "in one process)"
    )
    print(f"{'':22s} {'peak':>12s} {'vs plain':>9s} {'step time':>10s} {'vs plain':>9s}")
    for fw, label in (("lampy", "remat_sequential"), ("torch", "checkpoint_sequential")):
        plain = run(fw, deep, "plain", 0, "kept")
        remat = run(fw, deep, "remat", 0, "kept")
        times = run(fw, deep, "time", steps, "kept")
        if plain is None or remat is None or times is None:
            print(f"{fw} skipped: not installed")
            continue
        for name, r, t in ((f"{fw} plain", plain, "plain"), (f"{fw} {label}", remat, "remat")):
            print(
                f"{name:22s} {r['peak'] / MIB:8.1f} MiB {r['peak'] / plain['peak']:8.2f}x "
                f"{times[t] * 1e3:7.1f} ms {times[t] / times['plain']:8.2f}x"
            )


def section_gpt() -> None:
    """Section 4: a GPT-style training step (examples/char_gpt.py's model), lampy's
    default backward() against PyTorch, gradients set to None between steps."""
    print(
        "\n4. GPT-style training step (examples/char_gpt.py: 4 layers, 4 heads, width 128, "
        "block 64, batch 16, AdamW, clipping; zero_grad() to None), peak RSS above the "
        "memory before the step"
    )
    peaks: dict[str, float] = {}
    for fw in ("lampy", "torch"):
        r = run(f"gpt-{fw}", 0, "plain", 0)
        if r is None:
            print(f"{fw:8s} skipped: not installed")
            continue
        peaks[fw] = r["peak"]
        ledger = f" (ledger: {r['owned_peak'] / MIB:.2f} MiB)" if "owned_peak" in r else ""
        print(f"{fw:8s} {r['peak'] / MIB:8.2f} MiB{ledger}")
    if len(peaks) == 2:
        print(f"lampy / torch: {peaks['lampy'] / peaks['torch']:.2f}")


if __name__ == "__main__":
    main()
