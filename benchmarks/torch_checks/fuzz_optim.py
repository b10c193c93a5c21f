"""Randomized differential test of ``lampy.optim`` against ``torch.optim`` (needs torch).

Optimizers: random hyper-parameters (lr, momentum, dampening, nesterov, betas, eps,
weight_decay, amsgrad, maximize, decoupled_weight_decay, centered, lr_decay,
initial_accumulator_value, rho...), one to three param groups with their own overrides,
params of random shapes (0-d, size-1 and 0-size) in float32 or float64, a param that
never receives a gradient, zero gradients, and an lr change half-way. Both libraries take
30 steps on the same random gradients; the params are compared after every step and the
state (same keys, same arrays) at the end. torch's ``foreach`` is drawn at random (it must
not change the result). Invalid hyper-parameters: when torch raises, lampy must raise too.

Schedulers: every lr scheduler with random arguments (per-group lists, repeated
milestones, OneCycleLR's momentum cycling, ReduceLROnPlateau on a random metric with
plateaus, SequentialLR, two schedulers chained on one optimizer), 100 steps, the lrs (and
momenta / betas) of every group compared after every step.

Run: ``.venv/bin/python benchmarks/torch_checks/fuzz_optim.py [-n CASES] [-v]``. Prints a
summary table and the failing cases with their exact arguments; exits non-zero on
mismatches.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import lampy
import lampy.optim as LO
from lampy.optim import lr_scheduler as LS

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
STEPS = 30
SCHED_STEPS = 100
RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}


def _msg(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"


# ------------------------------------------------------------------- optimizers
def _pick(rng: np.random.Generator, seq: list[Any]) -> Any:
    return seq[int(rng.integers(len(seq)))]


def draw_hparams(name: str, rng: np.random.Generator, bad: bool) -> dict[str, Any]:
    """Random hyper-parameters of optimizer ``name`` (only some keys, the rest default)."""
    pk = lambda seq: _pick(rng, seq)
    h: dict[str, Any] = {}
    opts: dict[str, Callable[[], Any]] = {
        "lr": lambda: pk([1e-3, 0.01, 0.1, 0.5, 0.0] + ([-0.1] if bad else [])),
        "weight_decay": lambda: pk([0.0, 0.01, 0.1, 1.0] + ([-0.1] if bad else [])),
        "maximize": lambda: bool(rng.random() < 0.5),
    }
    if name == "SGD":
        opts |= {
            "momentum": lambda: pk([0.0, 0.5, 0.9, 1.0] + ([-0.5] if bad else [])),
            "dampening": lambda: pk([0.0, 0.0, 0.1, 0.5]),
            "nesterov": lambda: bool(rng.random() < 0.4),
        }
    if name in ("Adam", "AdamW"):
        opts |= {
            "betas": lambda: pk(
                [(0.9, 0.999), (0.5, 0.9), (0.0, 0.99), (0.9, 0.0)]
                + ([(1.0, 0.9), (0.9, -0.1)] if bad else [])
            ),
            "eps": lambda: pk([1e-8, 1e-3, 0.1] + ([-1e-8] if bad else [])),
            "amsgrad": lambda: bool(rng.random() < 0.5),
        }
        if name == "Adam":
            opts["decoupled_weight_decay"] = lambda: bool(rng.random() < 0.3)
    if name == "RMSprop":
        opts |= {
            # alpha=0 with centered=True is ill-conditioned (sqrt(g*g - g*g) is rounding
            # noise, NaN in torch when it rounds below 0), so 0 is not drawn.
            "alpha": lambda: pk([0.99, 0.9, 0.5, 0.1] + ([-0.1] if bad else [])),
            "eps": lambda: pk([1e-8, 1e-3, 0.1]),
            "momentum": lambda: pk([0.0, 0.5, 0.9]),
            "centered": lambda: bool(rng.random() < 0.5),
        }
    if name == "Adagrad":
        opts |= {
            "lr_decay": lambda: pk([0.0, 0.01, 0.5] + ([-0.1] if bad else [])),
            "initial_accumulator_value": lambda: pk([0.0, 0.1, 1.0] + ([-1.0] if bad else [])),
            "eps": lambda: pk([1e-10, 1e-3, 0.1]),
        }
    if name == "Adadelta":
        opts |= {
            "lr": lambda: pk([1.0, 0.5, 0.1, 0.0] + ([-0.1] if bad else [])),
            "rho": lambda: pk([0.9, 0.5, 0.0, 0.99] + ([1.1] if bad else [])),
            "eps": lambda: pk([1e-6, 1e-3, 0.1]),
        }
    for k, f in opts.items():
        if rng.random() < 0.6:
            h[k] = f()
    return h


class OptCase:
    def __init__(self, name: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.name, self.seed = name, seed
        self.dtype = np.dtype(np.float64 if seed % 2 == 0 else np.float32)
        bad = rng.random() < 0.1
        self.defaults = draw_hparams(name, rng, bad)
        n_groups = int(_pick(rng, [1, 1, 2, 3]))
        shapes_all = [(), (1,), (3,), (2, 3), (0,), (4, 1, 2)]
        self.groups: list[tuple[list[tuple[int, ...]], dict[str, Any]]] = []
        for _ in range(n_groups):
            shapes = [_pick(rng, shapes_all) for _ in range(int(rng.integers(1, 3)))]
            over = draw_hparams(name, rng, bad and rng.random() < 0.3) if rng.random() < 0.6 else {}
            self.groups.append((shapes, over))
        self.n_params = sum(len(s) for s, _ in self.groups)
        self.no_grad = int(rng.integers(self.n_params)) if rng.random() < 0.3 else -1
        self.zero_grad_steps = (
            {int(s) for s in rng.integers(0, STEPS, 3)} if rng.random() < 0.3 else set()
        )
        self.lr_change = rng.random() < 0.3
        self.foreach = _pick(rng, [None, False, True])
        self.init = [
            rng.standard_normal(s).astype(self.dtype) for shapes, _ in self.groups for s in shapes
        ]
        self.grads = [
            [rng.standard_normal(p.shape).astype(self.dtype) for p in self.init]
            for _ in range(STEPS)
        ]

    def describe(self) -> str:
        groups = ", ".join(
            "{params: "
            + repr([tuple(s) for s in shapes])
            + "".join(f", {k}={v!r}" for k, v in o.items())
            + "}"
            for shapes, o in self.groups
        )
        extra = []
        if self.no_grad >= 0:
            extra.append(f"param {self.no_grad} never gets a grad")
        if self.zero_grad_steps:
            extra.append(f"zero grads at steps {sorted(self.zero_grad_steps)}")
        if self.lr_change:
            extra.append("every group's lr halved after step 15")
        kw = ", ".join(f"{k}={v!r}" for k, v in self.defaults.items())
        return f"{self.name}([{groups}], {kw}) {self.dtype.name}, seed {self.seed}" + (
            f" [{'; '.join(extra)}]" if extra else ""
        )


def _grad_at(case: OptCase, step: int, i: int) -> Any:
    if i == case.no_grad:
        return None
    if step in case.zero_grad_steps:
        return np.zeros_like(case.init[i])
    return case.grads[step][i]


def run_torch_opt(
    case: OptCase, up: bool = False
) -> tuple[list[list[np.ndarray]], Any, str | None]:
    dt = torch.float64 if up else None
    params = [torch.tensor(a, dtype=dt) for a in case.init]
    groups, k = [], 0
    for shapes, over in case.groups:
        groups.append({"params": params[k : k + len(shapes)], **over})
        k += len(shapes)
    kw = dict(case.defaults)
    if case.foreach is not None:
        kw["foreach"] = case.foreach
    try:
        opt = getattr(torch.optim, case.name)(groups, **kw)
    except Exception as e:
        return [], None, _msg(e)
    hist = []
    try:
        for step in range(STEPS):
            if case.lr_change and step == STEPS // 2:
                for g in opt.param_groups:
                    g["lr"] = g["lr"] * 0.5
            for i, p in enumerate(params):
                g = _grad_at(case, step, i)
                p.grad = None if g is None else torch.tensor(g, dtype=dt)
            opt.step()
            hist.append([p.detach().numpy().copy() for p in params])
    except Exception as e:
        return hist, None, _msg(e)
    state = [
        {
            k: (v.numpy().copy() if isinstance(v, torch.Tensor) else v)
            for k, v in opt.state.get(p, {}).items()
        }
        for p in params
    ]
    return hist, state, None


def run_lampy_opt(case: OptCase) -> tuple[list[list[np.ndarray]], Any, str | None]:
    hist: list[list[np.ndarray]] = []
    with lampy.Scope():
        params = [lampy.param(a) for a in case.init]
        groups, k = [], 0
        for shapes, over in case.groups:
            groups.append({"params": params[k : k + len(shapes)], **over})
            k += len(shapes)
        try:
            opt = getattr(LO, case.name)(groups, **case.defaults)
        except Exception as e:
            return [], None, _msg(e)
        try:
            for step in range(STEPS):
                if case.lr_change and step == STEPS // 2:
                    for g in opt.param_groups:
                        g["lr"] = g["lr"] * 0.5
                for i, p in enumerate(params):
                    g = _grad_at(case, step, i)
                    if g is not None:
                        if p.grad is not None:
                            p.zero_grad()
                        p.backward(g)
                opt.step()
                hist.append([p.numpy() for p in params])
        except Exception as e:
            return hist, None, _msg(e)
        state = [
            {
                k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
                for k, v in opt.state.get(p, {}).items()
            }
            for p in params
        ]
    return hist, state, None


def _close(a: np.ndarray, b: np.ndarray, rtol: float, ref: np.ndarray | None) -> bool:
    if a.shape != b.shape:
        return False
    if a.size == 0:
        return True
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    bound = rtol * (np.abs(b64) + max(1.0, float(np.max(np.abs(b64)))))
    if ref is not None:
        bound = bound + 2 * np.abs(b64 - np.asarray(ref, np.float64))
    with np.errstate(invalid="ignore"):
        ok = (np.abs(a64 - b64) <= bound) | (np.isnan(a64) & np.isnan(b64)) | (a64 == b64)
    return bool(np.all(ok))


def _raises_with_defaults_only(case: OptCase, lib: str) -> bool:
    """Whether the constructor raises with the case's defaults and no group overrides."""
    try:
        if lib == "torch":
            getattr(torch.optim, case.name)([torch.zeros(1)], **case.defaults)
        else:
            with lampy.Scope():
                getattr(LO, case.name)([lampy.param(np.zeros(1))], **case.defaults)
    except Exception:
        return True
    return False


def check_opt(case: OptCase) -> list[tuple[str, str]]:
    th, ts, te = run_torch_opt(case)
    lh, ls, le = run_lampy_opt(case)
    if te and le:
        return []
    if te or le:
        kind = "torch raises, lampy does not" if te else "lampy raises, torch does not"
        if _raises_with_defaults_only(case, "torch") == _raises_with_defaults_only(case, "lampy"):
            # torch validates only the constructor's arguments, lampy every param group
            kind += " (group overrides; cosmetic: torch validates constructor args only)"
        return [(kind, te or le or "")]
    ref = run_torch_opt(case, up=True)[0] if case.dtype == np.float32 else None
    rtol = RTOL[case.dtype] * (8 if case.dtype == np.float32 else 1)
    for step, (t, lv) in enumerate(zip(th, lh, strict=False)):
        for i, (a, b) in enumerate(zip(lv, t, strict=False)):
            r = ref[step][i] if ref is not None else None
            if not _close(a, b, rtol, r):
                d = np.abs(a.astype(np.float64) - b.astype(np.float64))
                j = np.unravel_index(int(np.argmax(d)), d.shape) if d.size else ()
                kind = "param values"
                iav = case.defaults.get("initial_accumulator_value", 0.0)
                if case.name == "Adagrad" and any(
                    o.get("initial_accumulator_value", iav) != iav for _, o in case.groups
                ):
                    kind += " (torch ignores a param group's initial_accumulator_value)"
                return [
                    (
                        kind,
                        f"after step {step + 1}, param {i}{list(j)}: lampy {float(a[j])!r} "
                        f"torch {float(b[j])!r}",
                    )
                ]
    problems = []
    for i, (tsd, lsd) in enumerate(zip(ts, ls, strict=False)):
        if set(tsd) != set(lsd):
            problems.append(
                ("state keys (cosmetic)", f"param {i}: lampy {sorted(lsd)} torch {sorted(tsd)}")
            )
        for k in set(tsd) & set(lsd):
            tv, lv = np.asarray(tsd[k], np.float64), np.asarray(lsd[k], np.float64)
            if k == "step":
                if float(tv) != float(lv):
                    problems.append(("state", f"param {i} step: lampy {lv} torch {tv}"))
                continue
            if not _close(lv, tv, rtol * 10, None):
                if k == "sum" and case.name == "Adagrad":
                    continue  # reported with the param values (initial_accumulator_value)
                problems.append(
                    ("state", f"param {i} {k!r} differs (max {np.max(np.abs(lv - tv)):.3g})")
                )
    return problems


# ------------------------------------------------------------------- schedulers
_LAMBDAS: list[tuple[str, Callable[[int], float]]] = [
    ("lambda e: 0.95 ** e", lambda e: 0.95**e),
    ("lambda e: 1 / (e + 1)", lambda e: 1 / (e + 1)),
    ("lambda e: min(1.0, (e + 1) / 10)", lambda e: min(1.0, (e + 1) / 10)),
    ("lambda e: 0.5 if e % 7 else 2.0", lambda e: 0.5 if e % 7 else 2.0),
]


def draw_sched(rng: np.random.Generator, name: str, n_groups: int) -> tuple[dict[str, Any], str]:
    """Random constructor kwargs of scheduler ``name`` (callables are described in text)."""
    pk = lambda seq: _pick(rng, seq)
    kw: dict[str, Any] = {}
    text: dict[str, str] = {}
    if name == "LambdaLR":
        if n_groups > 1 and rng.random() < 0.5:
            fs = [pk(_LAMBDAS) for _ in range(n_groups)]
            kw["lr_lambda"] = [f for _, f in fs]
            text["lr_lambda"] = "[" + ", ".join(t for t, _ in fs) + "]"
        else:
            t, f = pk(_LAMBDAS)
            kw["lr_lambda"], text["lr_lambda"] = f, t
    elif name == "StepLR":
        kw["step_size"] = pk([1, 3, 10, 30, 0])
        if rng.random() < 0.7:
            kw["gamma"] = pk([0.1, 0.5, 0.9, 1.5])
    elif name == "MultiStepLR":
        kw["milestones"] = sorted(int(x) for x in rng.integers(0, 60, int(rng.integers(1, 5))))
        if rng.random() < 0.2:
            kw["milestones"] = kw["milestones"] + [kw["milestones"][0]]  # repeated
        if rng.random() < 0.1:
            kw["milestones"] = kw["milestones"][::-1]
        if rng.random() < 0.7:
            kw["gamma"] = pk([0.1, 0.5, 0.9, 2.0])
    elif name == "ExponentialLR":
        kw["gamma"] = pk([0.9, 0.99, 0.5, 1.0, 1.05])
    elif name == "LinearLR":
        if rng.random() < 0.7:
            kw["start_factor"] = pk([1 / 3, 0.1, 1.0, 0.5, 0.0, 1.5])
        if rng.random() < 0.7:
            kw["end_factor"] = pk([1.0, 0.5, 0.1, 0.0, 1.5])
        if rng.random() < 0.7:
            kw["total_iters"] = pk([5, 1, 20, 50, 0, 150])
    elif name == "CosineAnnealingLR":
        kw["T_max"] = pk([10, 1, 30, 50, 100, 200])
        if rng.random() < 0.6:
            kw["eta_min"] = pk([0.0, 1e-3, 0.05, 1.0])
    elif name == "OneCycleLR":
        kw["max_lr"] = (
            pk([0.1, 1.0, 0.01])
            if rng.random() < 0.7 or n_groups == 1
            else [pk([0.1, 1.0, 0.01]) for _ in range(n_groups)]
        )
        if rng.random() < 0.6:
            kw["total_steps"] = pk([SCHED_STEPS + 1, SCHED_STEPS + 20, 200])
        else:
            kw["epochs"], kw["steps_per_epoch"] = pk([(11, 10), (21, 5), (101, 1)])
            if rng.random() < 0.1:
                kw["total_steps"] = 150
        for key, ch in (
            ("pct_start", [0.3, 0.1, 0.5, 0.9]),
            ("anneal_strategy", ["cos", "linear"]),
            ("cycle_momentum", [True, False]),
            ("base_momentum", [0.85, 0.5]),
            ("max_momentum", [0.95, 0.9]),
            ("div_factor", [25.0, 10.0, 1.0]),
            ("final_div_factor", [1e4, 10.0]),
            ("three_phase", [True, False]),
        ):
            if rng.random() < 0.4:
                kw[key] = pk(ch)
    elif name == "ReduceLROnPlateau":
        for key, ch in (
            ("mode", ["min", "max"]),
            ("factor", [0.1, 0.5, 0.9]),
            ("patience", [0, 1, 3, 10]),
            ("threshold", [1e-4, 0.0, 0.1]),
            ("threshold_mode", ["rel", "abs"]),
            ("cooldown", [0, 2, 5]),
            ("min_lr", [0.0, 1e-3, 0.05]),
            ("eps", [1e-8, 1e-3]),
        ):
            if rng.random() < 0.5:
                kw[key] = pk(ch)
        if n_groups > 1 and rng.random() < 0.3:
            kw["min_lr"] = [pk([0.0, 1e-3, 0.02]) for _ in range(n_groups)]
    desc = ", ".join(f"{k}={text.get(k, repr(v))}" for k, v in kw.items())
    return kw, desc


SCHEDS = [
    "LambdaLR",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "LinearLR",
    "CosineAnnealingLR",
    "OneCycleLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "chained",
]


class SchedCase:
    def __init__(self, name: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.name, self.seed = name, seed
        self.n_groups = int(_pick(rng, [1, 1, 2, 3]))
        self.lrs = [float(_pick(rng, [0.1, 0.01, 1.0, 0.05])) for _ in range(self.n_groups)]
        self.opt = _pick(rng, ["SGD", "Adam"]) if name == "OneCycleLR" else "SGD"
        self.subs: list[tuple[str, dict[str, Any], str]] = []
        self.milestones: list[int] = []
        simple = ["StepLR", "MultiStepLR", "ExponentialLR", "LinearLR", "CosineAnnealingLR"]
        if name == "SequentialLR":
            k = int(rng.integers(2, 4))
            for _ in range(k):
                sub = _pick(rng, [*simple, "LambdaLR"])
                kw, desc = draw_sched(rng, sub, self.n_groups)
                self.subs.append((sub, kw, desc))
            self.milestones = sorted(int(x) for x in rng.integers(1, 60, k - 1))
        elif name == "chained":
            for _ in range(2):
                sub = _pick(rng, [*simple, "LambdaLR"])
                kw, desc = draw_sched(rng, sub, self.n_groups)
                self.subs.append((sub, kw, desc))
        else:
            kw, desc = draw_sched(rng, name, self.n_groups)
            self.subs.append((name, kw, desc))
        # a metric with plateaus for ReduceLROnPlateau
        walk = np.cumsum(rng.standard_normal(SCHED_STEPS))
        self.metrics = np.round(walk * float(_pick(rng, [1.0, 0.1, 0.01])), 2).tolist()

    def describe(self) -> str:
        opt = f"{self.opt}(groups with lr={self.lrs}" + (
            ", momentum=0.9)" if self.opt == "SGD" else ")"
        )
        parts = [f"{n}(opt, {d})" for n, _, d in self.subs]
        if self.name == "SequentialLR":
            return f"{opt}; SequentialLR(opt, [{', '.join(parts)}], milestones={self.milestones})"
        if self.name == "chained":
            return f"{opt}; chained: {'; '.join(parts)} (both stepped each epoch)"
        return f"{opt}; {parts[0]}" + (
            " metrics=random walk" if self.name == "ReduceLROnPlateau" else ""
        )


def _run_sched(case: SchedCase, lib: str) -> tuple[list[list[float]], str | None]:
    out: list[list[float]] = []

    def body(params: list[Any], optmod: Any, schedmod: Any) -> str | None:
        groups = [{"params": [p], "lr": lr} for p, lr in zip(params, case.lrs, strict=False)]
        okw = {"momentum": 0.9} if case.opt == "SGD" else {}
        opt = getattr(optmod, case.opt)(groups, **okw)
        try:
            scheds = [getattr(schedmod, n)(opt, **kw) for n, kw, _ in case.subs]
            if case.name == "SequentialLR":
                scheds = [schedmod.SequentialLR(opt, scheds, milestones=case.milestones)]
        except Exception as e:
            return "construct: " + _msg(e)

        def snap() -> list[float]:
            vals = [float(g["lr"]) for g in opt.param_groups]
            if case.name == "OneCycleLR":
                for g in opt.param_groups:
                    vals.append(float(g["momentum"] if "momentum" in g else g["betas"][0]))
            return vals

        out.append(snap())
        try:
            for step in range(SCHED_STEPS):
                opt.step()
                for s in scheds:
                    if case.name == "ReduceLROnPlateau":
                        s.step(case.metrics[step])
                    else:
                        s.step()
                out.append(snap())
        except Exception as e:
            return f"step {len(out)}: " + _msg(e)
        return None

    if lib == "torch":
        params = [torch.zeros(2, requires_grad=True) for _ in case.lrs]
        return out, body(params, torch.optim, torch.optim.lr_scheduler)
    with lampy.Scope():
        params = [lampy.param(np.zeros(2)) for _ in case.lrs]
        return out, body(params, LO, LS)


def check_sched(case: SchedCase) -> list[tuple[str, str]]:
    tl, te = _run_sched(case, "torch")
    ll, le = _run_sched(case, "lampy")
    if te and le:
        if te.split(":")[0] != le.split(":")[0]:
            return [("both raise, at different points (cosmetic)", f"torch {te} | lampy {le}")]
        return []
    if te and not le:
        return [("torch raises, lampy does not", te)]
    if le and not te:
        return [("lampy raises, torch does not", le)]
    for step, (t, lv) in enumerate(zip(tl, ll, strict=False)):
        for j, (a, b) in enumerate(zip(lv, t, strict=False)):
            if not (abs(a - b) <= 1e-12 * max(1.0, abs(b)) or (math.isnan(a) and math.isnan(b))):
                what = "lr" if j < case.n_groups else "momentum"
                g = j % case.n_groups
                return [
                    (
                        "lr values",
                        f"after {step} steps, group {g} {what}: lampy {a!r} torch {b!r} "
                        f"(torch lrs before: {[round(v, 6) for v in tl[max(step - 1, 0)]]})",
                    )
                ]
    return []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=120, help="cases per optimizer / scheduler")
    ap.add_argument("--only", action="append")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    optims = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta"]
    skipped = [n for n in ("Lion",) if not hasattr(torch.optim, n)]
    table: dict[str, dict[str, int]] = {}
    fails: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name in optims + SCHEDS:
        if a.only and name not in a.only:
            continue
        stats: dict[str, int] = {"cases": 0, "ok": 0}
        for i in range(a.n):
            seed = 1000 * (optims + SCHEDS).index(name) + i
            if name in optims:
                case: Any = OptCase(name, seed)
                res = check_opt(case)
            else:
                case = SchedCase(name, seed)
                res = check_sched(case)
            stats["cases"] += 1
            if a.v:
                print(case.describe(), res)
            if not res:
                stats["ok"] += 1
            for kind, detail in res:
                stats[kind] = stats.get(kind, 0) + 1
                fails[(name, kind)].append(f"{case.describe()}\n      -> {detail}")
        table[name] = stats
    print(f"{'optimizer / scheduler':24s} {'cases':>6s} {'ok':>6s}  problems")
    for name, s in table.items():
        probs = ", ".join(f"{k}: {v}" for k, v in s.items() if k not in ("cases", "ok"))
        print(f"{name:24s} {s['cases']:6d} {s['ok']:6d}  {probs}")
    if skipped:
        print(f"not compared (torch has no such optimizer): {', '.join(skipped)}")
    hard = 0
    for (name, kind), lst in sorted(fails.items()):
        if "cosmetic" not in kind:
            hard += len(lst)
        print(f"\n== {name}: {kind} ({len(lst)} cases); shortest:")
        for line in sorted(lst, key=len)[:4]:
            print("  " + line)
    print(f"\n{hard} problems")
    return 1 if hard else 0


if __name__ == "__main__":
    sys.exit(main())
