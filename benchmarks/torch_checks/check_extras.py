"""Cross-check the corners the other torch checks do not reach (needs torch installed).

- ``lampy.nn.init``: ``calculate_gain`` for every nonlinearity PyTorch knows (and its
  errors), ``fan_in_and_fan_out`` for several weight shapes (formulas, not draws);
- ``clip_grad_norm_``: every ``norm_type`` (0, fractional, 1, 2, 3, ±inf), ``max_norm``
  0 and negative, non-finite gradients with and without ``error_if_nonfinite``;
- optimizer ``state_dict`` round trips both ways (torch's state loaded into lampy and
  lampy's into torch, mid-run), then more steps on both;
- LR schedulers resumed with ``last_epoch`` >= 0 and through ``state_dict`` /
  ``load_state_dict`` mid-schedule (OneCycleLR, ReduceLROnPlateau with NaN/inf metrics,
  SequentialLR...);
- losses' error cases PyTorch raises on (``binary_cross_entropy`` targets outside
  [0, 1]); ``normalize`` over several axes; convolutions' bias gradient on an empty
  batch;
- MultiheadAttention and transformer-layer options ``check_transformer.py`` does not
  build (bias=False, float key_padding_mask, ``is_causal``, evaluation mode with dropout,
  callable activations, every decoder mask);
- ``lampy.train.fit`` (gradient accumulation, clipping, per-epoch and per-step
  schedules) against the equivalent hand-written PyTorch loop.

Run: ``.venv/bin/python benchmarks/torch_checks/check_extras.py``; prints one line per
check and exits non-zero on a mismatch.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import lampy
import lampy.nn.functional as LF
import lampy.optim as LO
from lampy import nn
from lampy.data import Batches
from lampy.nn import init as linit
from lampy.optim import lr_scheduler as LS
from lampy.train import fit

sys.path.insert(0, str(Path(__file__).parent))
import check_transformer as CT

warnings.simplefilter("ignore")
torch.set_num_threads(1)
TF = torch.nn.functional
TS = torch.optim.lr_scheduler
BAD: list[str] = []


def report(name: str, ok: bool, detail: str = "") -> None:
    print(f"{'ok  ' if ok else 'DIFF'} {name}{'' if ok else '  ' + detail}")
    if not ok:
        BAD.append(name)


def _outcome(f: Callable[[], Any]) -> Any:
    try:
        return f()
    except Exception as e:
        return ("error", type(e).__name__)


def _same(a: Any, b: Any) -> bool:
    """Equal results, or both errors (of any type)."""
    if isinstance(a, tuple) and a and a[0] == "error":
        return isinstance(b, tuple) and bool(b) and b[0] == "error"
    if isinstance(b, tuple) and b and b[0] == "error":
        return False
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=0, equal_nan=True))


# ------------------------------------------------------------------------------- init
def check_init() -> None:
    names = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
        "tanh",
        "relu",
        "leaky_relu",
        "selu",
        "gelu",
        "swish",
    ]
    for nl in names:
        for param in (None, 0.2, 0, 1, -0.5, True, "0.2"):
            t = _outcome(lambda: torch.nn.init.calculate_gain(nl, param))  # type: ignore[arg-type]
            lp = _outcome(lambda: linit.calculate_gain(nl, param))  # type: ignore[arg-type]
            if not _same(lp, t):
                report(f"calculate_gain({nl!r}, {param!r})", False, f"lampy {lp} torch {t}")
    report("calculate_gain: every nonlinearity and slope", True)
    for shape in [(3, 4), (3, 4, 5), (5, 2, 3, 3), (4, 6, 2, 1, 3), (0, 3), (3, 0)]:
        t = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
        report(f"fan_in_and_fan_out{shape}", linit.fan_in_and_fan_out(shape) == t)


# --------------------------------------------------------------------------- clipping
def _clip(norm_type: float, max_norm: float, grads: list[np.ndarray], err: bool) -> None:
    def lam() -> Any:
        with lampy.Scope():
            ps = [lampy.param(np.zeros(g.shape)) for g in grads]
            for p, g in zip(ps, grads, strict=True):
                p.backward(g.copy())
            n = LO.clip_grad_norm_(ps, max_norm, norm_type, error_if_nonfinite=err)
            return np.concatenate([np.ravel(n), *[p.grad.ravel() for p in ps]])

    def tor() -> Any:
        ts = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
        for t, g in zip(ts, grads, strict=True):
            t.grad = torch.tensor(g.copy())
        n = torch.nn.utils.clip_grad_norm_(ts, max_norm, norm_type, error_if_nonfinite=err)
        return np.concatenate([np.ravel(n.numpy()), *[t.grad.numpy().ravel() for t in ts]])

    a, b = _outcome(lam), _outcome(tor)
    report(
        f"clip_grad_norm_(norm_type={norm_type}, max_norm={max_norm}, err={err})",
        _same(a, b),
        f"lampy {a} torch {b}",
    )


def check_clip() -> None:
    g = [np.array([3.0, -4.0]), np.array([[1.0, -2.0], [0.5, 7.0]]), np.array(2.0)]
    for nt in (2.0, 1.0, math.inf, -math.inf, 0.5, 3.0, 0.0):
        for mn in (1.0, 100.0, 0.0, -1.0):
            _clip(nt, mn, g, False)
    for bad in (np.array([np.inf, 1.0]), np.array([np.nan, 1.0])):
        _clip(2.0, 1.0, [bad], False)
        _clip(2.0, 1.0, [bad], True)
    _clip(2.0, 1.0, [np.zeros(0)], False)
    _clip(2.0, 1.0, [np.array([1e200, 1e200])], False)


# ------------------------------------------------------------------ optimizer state
_SHAPES = [(3,), (2, 2), ()]


def _grads(k: int) -> list[np.ndarray]:
    return [np.random.default_rng(100 * k + i).standard_normal(s) for i, s in enumerate(_SHAPES)]


def _t2np(sd: dict[str, Any]) -> dict[str, Any]:
    state = {
        k: {kk: vv.numpy().copy() if isinstance(vv, torch.Tensor) else vv for kk, vv in v.items()}
        for k, v in sd["state"].items()
    }
    return {"state": state, "param_groups": [dict(g) for g in sd["param_groups"]]}


def _np2t(sd: dict[str, Any]) -> dict[str, Any]:
    def conv(k: str, v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return torch.tensor(v)
        return torch.tensor(float(v)) if k == "step" else v

    state = {k: {kk: conv(kk, vv) for kk, vv in v.items()} for k, v in sd["state"].items()}
    return {"state": state, "param_groups": [dict(g) for g in sd["param_groups"]]}


def _opt_round_trip(name: str, kw: dict[str, Any], direction: str) -> None:
    init = [np.random.default_rng(7 + i).standard_normal(s) for i, s in enumerate(_SHAPES)]
    tps = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    to = getattr(torch.optim, name)(tps, **kw)
    with lampy.Scope():
        lps = [lampy.param(a.copy()) for a in init]
        lo = getattr(LO, name)(lps, **kw)

        def step(ps: list[Any], ts: list[Any], o_l: Any, o_t: Any, k: int) -> None:
            for p, t, g in zip(ps, ts, _grads(k), strict=True):
                if p.grad is not None:
                    p.zero_grad()
                p.backward(g.copy())
                t.grad = torch.tensor(g.copy())
            o_t.step()
            o_l.step()

        for k in range(4):
            step(lps, tps, lo, to, k)
        if direction == "torch->lampy":
            lps = [lampy.param(t.detach().numpy().copy()) for t in tps]
            lo = getattr(LO, name)(lps, **kw)
            lo.load_state_dict(_t2np(to.state_dict()))
        else:
            tps = [torch.tensor(p.value.copy(), requires_grad=True) for p in lps]
            to = getattr(torch.optim, name)(tps, **kw)
            to.load_state_dict(_np2t(lo.state_dict()))
        for k in range(4, 8):
            step(lps, tps, lo, to, k)
        d = max(
            float(np.abs(p.value - t.detach().numpy()).max()) for p, t in zip(lps, tps, strict=True)
        )
    report(f"{name}({kw}) state_dict {direction}", d < 1e-12, f"max|diff| {d:.2e}")


def check_opt_state() -> None:
    configs = [
        ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
        ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "maximize": True}),
        ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
        ("Adam", {"lr": 0.1, "decoupled_weight_decay": True, "weight_decay": 0.1}),
        ("AdamW", {"lr": 0.1, "amsgrad": True, "maximize": True}),
        ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "weight_decay": 0.1}),
        ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "initial_accumulator_value": 0.2}),
        ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1}),
    ]
    for direction in ("torch->lampy", "lampy->torch"):
        for name, kw in configs:
            _opt_round_trip(name, kw, direction)


# ------------------------------------------------------------------------ schedulers
_METRICS = [1.0, 0.9, 0.9, 0.9, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.7, 0.7, 0.7]


def _sched_run(
    lib: str,
    make: Callable[[Any, Any], Any],
    n: int,
    last_epoch: bool,
    resume_at: int | None,
    metric: bool,
    opt: str,
) -> Any:
    mod = TS if lib == "torch" else LS
    okw = {"momentum": 0.9} if opt == "SGD" else {}
    if lib == "torch":
        ps = [torch.zeros(2, requires_grad=True) for _ in range(2)]
        o = getattr(torch.optim, opt)(
            [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], **okw
        )
    else:
        ps = [lampy.param(np.zeros(2)) for _ in range(2)]
        o = getattr(LO, opt)(
            [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)], **okw
        )
    if last_epoch:
        for g in o.param_groups:
            g["initial_lr"] = g["lr"]
    s = make(mod, o)
    out = [[g["lr"] for g in o.param_groups]]
    for k in range(n):
        o.step()
        s.step(_METRICS[k % len(_METRICS)]) if metric else s.step()
        out.append([g["lr"] for g in o.param_groups])
        out.append([g.get("momentum", g.get("betas", [-1.0])[0]) for g in o.param_groups])
        if resume_at == k:
            sd = s.state_dict()
            s = make(mod, o)
            s.load_state_dict(sd)
    out.append(s.get_last_lr())
    return np.array(out, dtype=float)


def _sched(
    name: str,
    make: Callable[[Any, Any], Any],
    n: int = 12,
    last_epoch: bool = False,
    resume_at: int | None = None,
    metric: bool = False,
    opt: str = "SGD",
) -> None:
    with lampy.Scope():
        a = _outcome(lambda: _sched_run("lampy", make, n, last_epoch, resume_at, metric, opt))
    b = _outcome(lambda: _sched_run("torch", make, n, last_epoch, resume_at, metric, opt))
    report(name, _same(a, b), f"lampy {a} torch {b}")


def check_schedulers() -> None:
    for le in (0, 3, 7):
        _sched(
            f"StepLR last_epoch={le}",
            lambda m, o, le=le: m.StepLR(o, 3, 0.5, last_epoch=le),
            last_epoch=True,
        )
        _sched(
            f"MultiStepLR last_epoch={le}",
            lambda m, o, le=le: m.MultiStepLR(o, [2, 5, 5, 9], 0.5, last_epoch=le),
            last_epoch=True,
        )
        _sched(
            f"ExponentialLR last_epoch={le}",
            lambda m, o, le=le: m.ExponentialLR(o, 0.9, last_epoch=le),
            last_epoch=True,
        )
        _sched(
            f"LinearLR last_epoch={le}",
            lambda m, o, le=le: m.LinearLR(o, 0.2, 1.0, 6, last_epoch=le),
            last_epoch=True,
        )
        _sched(
            f"CosineAnnealingLR last_epoch={le}",
            lambda m, o, le=le: m.CosineAnnealingLR(o, 5, 0.01, last_epoch=le),
            last_epoch=True,
        )
        _sched(
            f"LambdaLR last_epoch={le}",
            lambda m, o, le=le: m.LambdaLR(o, lambda e: 0.9**e + 0.1, last_epoch=le),
            last_epoch=True,
        )
    for r in (0, 4, 8):
        _sched(f"StepLR resumed after {r}", lambda m, o: m.StepLR(o, 3, 0.5), resume_at=r)
        _sched(
            f"CosineAnnealingLR resumed after {r}",
            lambda m, o: m.CosineAnnealingLR(o, 5, 0.01),
            resume_at=r,
            n=20,
        )
        _sched(
            f"OneCycleLR three_phase resumed after {r}",
            lambda m, o: m.OneCycleLR(o, [1.0, 2.0], total_steps=30, three_phase=True),
            resume_at=r,
        )
        _sched(
            f"OneCycleLR Adam resumed after {r}",
            lambda m, o: m.OneCycleLR(o, [1.0, 2.0], total_steps=30),
            resume_at=r,
            opt="Adam",
        )
        _sched(
            f"ReduceLROnPlateau resumed after {r}",
            lambda m, o: m.ReduceLROnPlateau(o, patience=1, cooldown=1, min_lr=[0.0, 0.05]),
            resume_at=r,
            metric=True,
            n=14,
        )
        _sched(
            f"ReduceLROnPlateau max/abs resumed after {r}",
            lambda m, o: m.ReduceLROnPlateau(
                o, mode="max", patience=0, threshold=0.1, threshold_mode="abs"
            ),
            resume_at=r,
            metric=True,
            n=14,
        )
        _sched(
            f"SequentialLR resumed after {r}",
            lambda m, o: m.SequentialLR(
                o, [m.LinearLR(o, 0.1, total_iters=3), m.ExponentialLR(o, 0.8)], [4]
            ),
            resume_at=r,
        )
    _sched(
        "OneCycleLR on RMSprop",
        lambda m, o: m.OneCycleLR(o, 1.0, total_steps=10),
        n=9,
        opt="RMSprop",
    )
    _sched(
        "OneCycleLR Adagrad (no momentum)",
        lambda m, o: m.OneCycleLR(o, 1.0, total_steps=10),
        n=3,
        opt="Adagrad",
    )
    _sched(
        "OneCycleLR Adagrad cycle_momentum=False",
        lambda m, o: m.OneCycleLR(o, 1.0, total_steps=10, cycle_momentum=False),
        n=9,
        opt="Adagrad",
    )
    _sched("OneCycleLR stepped past the end", lambda m, o: m.OneCycleLR(o, 1.0, total_steps=5), n=6)
    _sched(
        "SequentialLR last_epoch=2",
        lambda m, o: m.SequentialLR(
            o, [m.StepLR(o, 2), m.ExponentialLR(o, 0.5)], [3], last_epoch=2
        ),
        n=6,
    )
    _sched(
        "SequentialLR equal milestones",
        lambda m, o: m.SequentialLR(
            o, [m.StepLR(o, 2), m.ExponentialLR(o, 0.5), m.LinearLR(o)], [3, 3]
        ),
        n=8,
    )
    for seq, kw in (
        ([1.0, math.nan, math.nan, 0.5, math.nan], {"patience": 1}),
        ([math.inf, 1.0, -math.inf, 0.8], {"patience": 0}),
        ([1.0] * 6, {"patience": 0, "cooldown": 2}),
        ([1.0, 0.99995, 0.9999, 0.9], {"patience": 0, "threshold": 1e-4}),
        ([-1.0, -0.99995, -0.9999, -0.9], {"patience": 0, "mode": "max"}),
        ([1.0] * 8, {"patience": 0, "factor": 0.5, "min_lr": 0.3, "eps": 0.2}),
    ):

        def make(m: Any, o: Any, kw: dict[str, Any] = kw) -> Any:
            return m.ReduceLROnPlateau(o, **kw)

        def run(lib: str, seq: list[float] = seq, make: Any = make) -> Any:
            mod = TS if lib == "torch" else LS
            p = torch.zeros(1, requires_grad=True) if lib == "torch" else lampy.param(np.zeros(1))
            o = (torch.optim if lib == "torch" else LO).SGD([p], lr=1.0)  # type: ignore[attr-defined]
            s = make(mod, o)
            out = []
            for v in seq:
                s.step(v)
                out.append([o.param_groups[0]["lr"], s.num_bad_epochs, s.cooldown_counter, s.best])
            return np.array(out, dtype=float)

        with lampy.Scope():
            a = _outcome(lambda run=run: run("lampy"))
        b = _outcome(lambda run=run: run("torch"))
        report(f"ReduceLROnPlateau({kw}) on {seq}", _same(a, b), f"lampy {a} torch {b}")


# ---------------------------------------------------------------- functional corners
def _fwd_grad(
    label: str, lf: Callable[..., Any], tf: Callable[..., Any], arrays: list[np.ndarray]
) -> None:
    g_seed = np.random.default_rng(0)

    def lam() -> Any:
        with lampy.Scope():
            ps = [lampy.param(a) for a in arrays]
            out = lf(*ps)
            g = g_seed.standard_normal(out.shape)
            out.backward(g)
            return np.concatenate([out.value.ravel(), *[p.grad.ravel() for p in ps]]), g

    def tor(g: np.ndarray) -> Any:
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        out = tf(*ts)
        out.backward(torch.tensor(g))
        return np.concatenate([out.detach().numpy().ravel(), *[t.grad.numpy().ravel() for t in ts]])

    a = _outcome(lam)
    if isinstance(a[0], str):  # lampy raised: torch must raise too
        b = _outcome(lambda: tor(np.ones(1)))
        report(f"{label} (raises)", _same(a, b), f"lampy {a} torch {b}")
        return
    b = _outcome(lambda: tor(a[1]))
    report(label, _same(a[0], b), f"lampy {a[0]} torch {b}")


def check_functional() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4))
    for dim in ((1, 2), [0, 2], None, (), (-1, 0)):
        for p in (2.0, 1.0, math.inf):
            _fwd_grad(
                f"normalize(dim={dim}, p={p})",
                lambda a, d=dim, p=p: LF.normalize(a, p=p, dim=d),
                lambda a, d=dim, p=p: TF.normalize(a, p=p, dim=d),
                [x],
            )
    for t in (1.5, -0.5, 1.0):
        tt = np.array([t, 0.0])
        _fwd_grad(
            f"binary_cross_entropy(target={tt.tolist()})",
            lambda a, tt=tt: LF.binary_cross_entropy(a, tt),
            lambda a, tt=tt: TF.binary_cross_entropy(a, torch.tensor(tt)),
            [np.array([0.3, 0.6])],
        )
    for name in ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"):
        nd = int(name[-2])
        w_shape = (2, 3, *(2,) * nd) if "transpose" in name else (3, 2, *(2,) * nd)
        _fwd_grad(
            f"{name} on an empty batch, with a bias",
            getattr(LF, name),
            getattr(TF, name),
            [np.zeros((0, 2, *(4,) * nd)), rng.standard_normal(w_shape), rng.standard_normal(3)],
        )


# ------------------------------------------------------------------ attention modules
def check_attention() -> None:
    from lampy.nn._attention import MultiheadAttention as LM
    from lampy.nn._transformer import TransformerDecoderLayer as LDL
    from lampy.nn._transformer import TransformerEncoderLayer as LEL

    cfgs: list[tuple[str, Any, Any, Any]] = []

    def add(
        name: str,
        cls: tuple[str, Any],
        tkw: dict[str, Any],
        case: Any,
        lkw: dict[str, Any] | None = None,
        evalmode: bool = False,
    ) -> None:
        args = (8, 2)

        def tb() -> Any:
            m = getattr(torch.nn, cls[0])(*args, **tkw)
            return m.eval() if evalmode else m

        def lb(dtype: Any, rng: Any) -> Any:
            m = cls[1].init(*args, **(tkw if lkw is None else lkw), dtype=dtype, rng=rng)
            return m.with_training(False) if evalmode else m

        cfgs.append((name, tb, lb, case))

    def mha_case(
        kpm: str | None = None,
        mask: str | None = None,
        extra: Any = None,
        self_attn: bool = False,
        bf: bool = False,
    ) -> Any:
        def case(rng: Any) -> Any:
            L, S, N = 5, 4, 2
            q = rng.normal(size=(N, L, 8) if bf else (L, N, 8))
            kv = q if self_attn else rng.normal(size=(N, S, 8) if bf else (S, N, 8))
            s = L if self_attn else S
            kw = dict(extra or {})
            if kpm == "bool":
                m = rng.random((N, s)) < 0.3
                m[:, 0] = False
                kw["key_padding_mask"] = m
            elif kpm == "float":
                kw["key_padding_mask"] = rng.normal(size=(N, s))
            if mask == "bool":
                kw["attn_mask"] = np.triu(np.ones((L, s), bool), 1)
            elif mask == "float":
                kw["attn_mask"] = rng.normal(size=(L, s))
            elif mask == "bool3":
                m = rng.random((N * 2, L, s)) < 0.3
                m[..., 0] = False
                kw["attn_mask"] = m
            return [q, kv, kv], kw, [0] if self_attn else [0, 1]

        return case

    mha = ("MultiheadAttention", LM)
    add(
        "MHA bias=False, float kpm, 3-d bool mask", mha, {"bias": False}, mha_case("float", "bool3")
    )
    add("MHA float kpm + bool mask", mha, {}, mha_case("float", "bool"))
    add(
        "MHA bool kpm + float mask, per-head weights",
        mha,
        {},
        mha_case("bool", "float", {"average_attn_weights": False}),
    )
    add(
        "MHA is_causal, need_weights=False",
        mha,
        {},
        mha_case(None, "bool", {"is_causal": True, "need_weights": False}, self_attn=True),
    )
    add(
        "MHA is_causal, need_weights=True",
        mha,
        {},
        mha_case(None, "bool", {"is_causal": True}, self_attn=True),
    )
    add(
        "MHA dropout 0.5 in eval, batch_first",
        mha,
        {"dropout": 0.5, "batch_first": True},
        mha_case("bool", None, None, self_attn=True, bf=True),
        evalmode=True,
    )

    def enc_case(kpm: str | None = None, mask: str | None = None, extra: Any = None) -> Any:
        def case(rng: Any) -> Any:
            kw = dict(extra or {})
            if mask == "bool":
                kw["src_mask"] = np.triu(np.ones((6, 6), bool), 1)
            elif mask == "float":
                kw["src_mask"] = rng.normal(size=(6, 6))
            if kpm == "bool":
                m = rng.random((3, 6)) < 0.3
                m[:, 0] = False
                kw["src_key_padding_mask"] = m
            elif kpm == "float":
                kw["src_key_padding_mask"] = rng.normal(size=(3, 6))
            return [rng.normal(size=(3, 6, 8))], kw, [0]

        return case

    enc = ("TransformerEncoderLayer", LEL)
    base = {"dim_feedforward": 16, "dropout": 0.0, "batch_first": True}
    add(
        "EncoderLayer bias=False, layer_norm_eps",
        enc,
        {**base, "bias": False, "layer_norm_eps": 1e-3},
        enc_case("bool", "bool"),
    )
    add("EncoderLayer float masks", enc, base, enc_case("float", "float"))
    add("EncoderLayer is_causal", enc, base, enc_case(None, "bool", {"is_causal": True}))
    add(
        "EncoderLayer dropout in eval, norm_first",
        enc,
        {**base, "dropout": 0.3, "norm_first": True},
        enc_case("bool"),
        evalmode=True,
    )
    add(
        "EncoderLayer callable activation",
        enc,
        {**base, "activation": TF.gelu},
        enc_case(),
        lkw={**base, "activation": LF.gelu},
    )
    add(
        "EncoderLayer activation module",
        enc,
        {**base, "activation": torch.nn.GELU("tanh")},
        enc_case(),
        lkw={**base, "activation": nn.GELU(approximate="tanh")},
    )

    def dec_case(kind: str = "bool", extra: Any = None) -> Any:
        def case(rng: Any) -> Any:
            tgt, mem = rng.normal(size=(5, 2, 8)), rng.normal(size=(4, 2, 8))
            kw = dict(extra or {})
            if kind == "bool":
                kw["tgt_mask"] = np.triu(np.ones((5, 5), bool), 1)
                mm = rng.random((5, 4)) < 0.3
                mm[:, 0] = False
                kw["memory_mask"] = mm
                kw["tgt_key_padding_mask"] = np.array([[0, 0, 1, 0, 0], [0, 0, 0, 0, 1]], bool)
                kw["memory_key_padding_mask"] = np.array([[0, 0, 1, 0], [0, 1, 0, 0]], bool)
            else:
                kw["tgt_mask"] = rng.normal(size=(5, 5))
                kw["memory_mask"] = rng.normal(size=(5, 4))
                kw["tgt_key_padding_mask"] = rng.normal(size=(2, 5))
                kw["memory_key_padding_mask"] = rng.normal(size=(2, 4))
            return [tgt, mem], kw, [0, 1]

        return case

    dec = ("TransformerDecoderLayer", LDL)
    dbase = {"dim_feedforward": 16, "dropout": 0.0}
    add("DecoderLayer every bool mask", dec, dbase, dec_case())
    add("DecoderLayer every float mask", dec, dbase, dec_case("float"))
    add(
        "DecoderLayer tgt_is_causal, norm_first, bias=False",
        dec,
        {**dbase, "norm_first": True, "bias": False},
        dec_case(extra={"tgt_is_causal": True}),
    )
    add(
        "DecoderLayer dropout in eval, gelu",
        dec,
        {**dbase, "dropout": 0.3, "activation": "gelu"},
        dec_case(),
        evalmode=True,
    )
    for name, tb, lb, case in cfgs:
        d = CT.check(name, tb, lb, case, np.float64)
        worst = max(d.values())
        report(name, worst <= 1e-9, f"{d}")


# -------------------------------------------------------------------------- fit loop
def check_fit() -> None:
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((10, 3)), rng.standard_normal((10, 2))
    scheds: dict[Any, tuple[Any, Any]] = {
        None: (lambda o: None, lambda o: None),
        "StepLR": (lambda o: TS.StepLR(o, 1, 0.5), lambda o: LS.StepLR(o, 1, 0.5)),
        "OneCycleLR": (
            lambda o: TS.OneCycleLR(o, 0.5, total_steps=50),
            lambda o: LS.OneCycleLR(o, 0.5, total_steps=50),
        ),
    }
    for acc in (1, 2, 3):
        for clip in (None, 0.1):
            for sched, (t_s, l_s) in scheds.items():
                tl = torch.nn.Linear(3, 2).double()
                w0 = {k: v.detach().numpy().copy() for k, v in tl.state_dict().items()}
                to = torch.optim.SGD(tl.parameters(), lr=0.1, momentum=0.9)
                ts = t_s(to)
                batches = [(X[i : i + 3], Y[i : i + 3]) for i in range(0, 10, 3)]
                for _ in range(3):
                    for k in range(0, len(batches), acc):
                        group = batches[k : k + acc]
                        to.zero_grad()
                        for xb, yb in group:
                            out = tl(torch.tensor(xb))
                            (TF.mse_loss(out, torch.tensor(yb)) / len(group)).backward()
                        if clip:
                            torch.nn.utils.clip_grad_norm_(tl.parameters(), clip)
                        to.step()
                        if sched == "OneCycleLR":
                            ts.step()
                    if sched == "StepLR":
                        ts.step()
                with lampy.Scope():
                    m = nn.Linear.init(3, 2, dtype=np.float64, rng=np.random.default_rng(0))
                    m.load_state_dict(w0)
                    o = LO.SGD(m.parameters(), lr=0.1, momentum=0.9)
                    fit(
                        m,
                        lambda mod, b: LF.mse_loss(mod(b[0]), b[1]),
                        o,
                        Batches(X, Y, batch_size=3, shuffle=False),
                        epochs=3,
                        scheduler=l_s(o),
                        grad_accumulation=acc,
                        clip_grad_norm=clip,
                        progress=False,
                    )
                    d = float(np.abs(m.weight.value - tl.weight.detach().numpy()).max())
                report(
                    f"fit(grad_accumulation={acc}, clip_grad_norm={clip}, scheduler={sched})",
                    d < 1e-12,
                    f"max|diff| {d:.2e}",
                )


def main() -> int:
    for section in (
        check_init,
        check_clip,
        check_opt_state,
        check_schedulers,
        check_functional,
        check_attention,
        check_fit,
    ):
        print(f"== {section.__name__}")
        section()
    print("all agree" if not BAD else f"{len(BAD)} mismatches: {BAD}")
    return 1 if BAD else 0


if __name__ == "__main__":
    sys.exit(main())
