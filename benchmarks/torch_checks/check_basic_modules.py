"""Cross-check lampy's basic modules against PyTorch (needs torch installed).

Linear and shape modules, Embedding, convolutions, pooling, normalisation, activation
modules, Dropout (evaluation mode) and MLP (against the ``nn.Sequential`` that
``torchvision.ops.MLP`` builds, written out here so torchvision is not needed).

For each configuration, in float64 and float32: build the torch module, copy its
state_dict into the lampy module with ``load_state_dict``, check that the state_dict
keys, shapes and parameter counts agree, run the forward pass(es) and a backward pass
with the same random cotangent, compare outputs, input gradients, every parameter's
gradient and the state after the step (BatchNorm's running statistics and
``num_batches_tracked``), then load lampy's state_dict back into a fresh torch module.
Prints a table of the largest absolute differences and exits non-zero on a mismatch.

Run: ``.venv/bin/python benchmarks/torch_checks/check_basic_modules.py``
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import lampy
from lampy.nn import _activation_modules as act
from lampy.nn._composite import MLP
from lampy.nn._conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from lampy.nn._dropout import Dropout
from lampy.nn._embedding import Embedding
from lampy.nn._linear import Bilinear, Flatten, Identity, Linear, Unflatten
from lampy.nn._normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm
from lampy.nn._pooling import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d

TOL = {np.float64: 1e-9, np.float32: 3e-4}

LAMPY: dict[str, Any] = {
    c.__name__: c
    for c in (
        Linear, Bilinear, Identity, Flatten, Unflatten, Embedding, Dropout,
        Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d,
        MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool2d,
        BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm, RMSNorm,
    )
}  # fmt: skip
LAMPY.update({n: getattr(act, n) for n in act.__all__})


def torch_mlp(in_channels: int, hidden: list[int], norm: Any, dropout: float) -> Any:
    """``torchvision.ops.MLP``'s layers, as torchvision 0.2x builds them."""
    layers: list[Any] = []
    n = in_channels
    for h in hidden[:-1]:
        layers.append(torch.nn.Linear(n, h))
        if norm is not None:
            layers.append(norm(h))
        layers += [torch.nn.ReLU(), torch.nn.Dropout(dropout)]
        n = h
    layers += [torch.nn.Linear(n, hidden[-1]), torch.nn.Dropout(dropout)]
    return torch.nn.Sequential(*layers)


# (name, args, kwargs, input shapes, options). Options: "ids" (integer input of that
# many ids), "mode" ("train", "eval" or "train_eval": a training step first),
# "steps" (training forward passes before the checked one), "fwd" (forward kwargs),
# "renorm" (Embedding max_norm: PyTorch renormalises its weight in place, lampy only the
# output, as lampy.nn.functional.embedding documents; so the weight's gradient and the
# weight after the step are not compared), "tol64" (a float64 tolerance: PyTorch's
# hardsigmoid gradient uses the float32 1/6, ~2e-8 off in float64).
CASES: list[tuple[str, tuple[Any, ...], dict[str, Any], list[tuple[int, ...]], dict[str, Any]]] = [
    ("Linear", (3, 4), {}, [(2, 5, 3)], {}),
    ("Linear", (3, 4), {"bias": False}, [(3,)], {}),
    ("Bilinear", (2, 3, 4), {}, [(5, 2), (5, 3)], {}),
    ("Identity", (), {}, [(2, 3)], {}),
    ("Flatten", (), {}, [(2, 3, 4, 5)], {}),
    ("Flatten", (0, 2), {}, [(2, 3, 4, 5)], {}),
    ("Unflatten", (1, (2, 3)), {}, [(4, 6, 2)], {}),
    ("Embedding", (10, 3), {"padding_idx": 0}, [(4, 5)], {"ids": 10}),
    ("Embedding", (10, 3), {"scale_grad_by_freq": True, "padding_idx": -2}, [(6, 5)], {"ids": 10}),
    ("Embedding", (10, 3), {"max_norm": 1.0}, [(4, 5)], {"ids": 10, "renorm": True}),
    ("Conv1d", (4, 6, 3), {"groups": 2, "padding": 1}, [(2, 4, 9)], {}),
    ("Conv1d", (3, 4, 3), {"stride": 2, "dilation": 2, "padding": 2, "padding_mode": "circular"},
     [(2, 3, 9)], {}),
    ("Conv1d", (3, 4, 4), {"padding": "same", "padding_mode": "replicate"}, [(3, 7)], {}),
    ("Conv2d", (3, 8, (3, 5)), {"padding": "same", "padding_mode": "reflect"}, [(2, 3, 7, 8)], {}),
    ("Conv2d", (3, 4, 3), {"stride": 2, "padding": 1, "padding_mode": "replicate"},
     [(2, 3, 7, 6)], {}),
    ("Conv2d", (4, 4, 3), {"groups": 4, "bias": False, "dilation": (2, 1)}, [(2, 4, 7, 6)], {}),
    ("Conv2d", (3, 4, 2), {"padding": "valid", "stride": (1, 2)}, [(3, 5, 6)], {}),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
     [(2, 4, 5)], {}),
    ("ConvTranspose2d", (3, 8, (3, 5)), {"stride": 2, "dilation": (1, 2)}, [(2, 3, 4, 3)], {}),
    ("ConvTranspose2d", (3, 2, 3), {"stride": 3, "padding": 1, "bias": False}, [(3, 4, 3)],
     {"fwd": {"output_size": (11, 8)}}),
    ("MaxPool1d", (3, 2, 1), {}, [(2, 3, 9)], {}),
    ("MaxPool2d", (2,), {}, [(2, 3, 6, 7)], {}),
    ("MaxPool2d", (3, 2, 1), {"ceil_mode": True, "dilation": (1, 2)}, [(2, 3, 8, 9)], {}),
    ("AvgPool1d", (3, 2, 1), {"count_include_pad": False, "ceil_mode": True}, [(2, 3, 8)], {}),
    ("AvgPool2d", (3, 2, 1), {}, [(2, 3, 7, 6)], {}),
    ("AvgPool2d", (2,), {"divisor_override": 3}, [(3, 6, 4)], {}),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, [(2, 3, 7, 5)], {}),
    ("AdaptiveAvgPool2d", (1,), {}, [(2, 3, 4, 4)], {}),
    ("BatchNorm1d", (5,), {}, [(8, 5)], {"steps": 2}),
    ("BatchNorm1d", (5,), {}, [(4, 5, 6)], {"mode": "train_eval"}),
    ("BatchNorm2d", (3,), {}, [(4, 3, 5, 5)], {"steps": 1}),
    ("BatchNorm2d", (3,), {"momentum": None}, [(4, 3, 5, 5)], {"steps": 2}),
    ("BatchNorm2d", (3,), {"affine": False, "eps": 1e-3}, [(4, 3, 2, 2)], {"mode": "train_eval"}),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, [(4, 3, 2, 2)], {"mode": "eval"}),
    ("LayerNorm", ((5, 6),), {}, [(2, 5, 6)], {}),
    ("LayerNorm", (6,), {"bias": False}, [(3, 6)], {}),
    ("LayerNorm", (6,), {"elementwise_affine": False, "eps": 1e-3}, [(2, 3, 6)], {}),
    ("GroupNorm", (2, 6), {}, [(3, 6, 4)], {}),
    ("GroupNorm", (3, 6), {"affine": False}, [(3, 6, 2, 2)], {}),
    ("RMSNorm", ((5, 6),), {}, [(2, 5, 6)], {}),
    ("RMSNorm", (6,), {"eps": 1e-3}, [(3, 6)], {}),
    ("Dropout", (0.3,), {}, [(3, 6)], {"mode": "eval"}),
    ("Dropout", (0.0,), {}, [(3, 6)], {}),
    ("ReLU", (), {}, [(3, 7)], {}),
    ("ReLU6", (), {}, [(3, 7)], {}),
    ("LeakyReLU", (0.2,), {}, [(3, 7)], {}),
    ("ELU", (), {"alpha": 0.5}, [(3, 7)], {}),
    ("SELU", (), {}, [(3, 7)], {}),
    ("CELU", (2.0,), {}, [(3, 7)], {}),
    ("GELU", (), {}, [(3, 7)], {}),
    ("GELU", (), {"approximate": "tanh"}, [(3, 7)], {}),
    ("SiLU", (), {}, [(3, 7)], {}),
    ("Mish", (), {}, [(3, 7)], {}),
    ("Softplus", (), {"beta": 2.0, "threshold": 1.0}, [(3, 7)], {}),
    ("Sigmoid", (), {}, [(3, 7)], {}),
    ("LogSigmoid", (), {}, [(3, 7)], {}),
    ("Tanh", (), {}, [(3, 7)], {}),
    ("Hardtanh", (-2.0, 1.5), {}, [(3, 7)], {}),
    ("Hardsigmoid", (), {}, [(3, 7)], {"tol64": 3e-8}),
    ("Hardswish", (), {}, [(3, 7)], {}),
    ("Softsign", (), {}, [(3, 7)], {}),
    ("Softmax", (), {"dim": 1}, [(3, 7, 2)], {}),
    ("LogSoftmax", (), {"dim": -1}, [(3, 7)], {}),
    ("GLU", (), {}, [(3, 8)], {}),
    ("GLU", (0,), {}, [(4, 3)], {}),
]  # fmt: skip


def _max_diff(a: Any, b: Any) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def _lampy_init(cls: Any, args: Any, kw: dict[str, Any], dtype: Any) -> Any:
    params = inspect.signature(cls.init).parameters
    extra: dict[str, Any] = {}
    if "dtype" in params:
        extra["dtype"] = dtype
    if "rng" in params:
        extra["rng"] = np.random.default_rng(1)
    return cls.init(*args, **kw, **extra)


def _inputs(shapes: Any, opts: dict[str, Any], dtype: Any, rng: Any) -> list[np.ndarray]:
    if "ids" in opts:
        return [rng.integers(0, opts["ids"], size=s) for s in shapes]
    return [(rng.normal(size=s) * 2).astype(dtype) for s in shapes]


def run(
    make_torch: Callable[[], Any],
    make_lampy: Callable[[], Any],
    shapes: list[tuple[int, ...]],
    opts: dict[str, Any],
    dtype: Any,
    rng: Any,
) -> float:
    """Largest difference between lampy and torch over all compared quantities."""
    tdt = torch.float64 if dtype == np.float64 else torch.float32
    tm = make_torch().to(tdt)
    mode = opts.get("mode", "train")
    steps = opts.get("steps", 0) + (mode == "train_eval")
    warmups = [_inputs(shapes, opts, dtype, rng) for _ in range(steps)]
    xs = _inputs(shapes, opts, dtype, rng)
    diffs = []
    with lampy.Scope():
        lm = make_lampy()
        lm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
        assert list(lm.state_dict()) == list(tm.state_dict()), (
            list(lm.state_dict()),
            list(tm.state_dict()),
        )
        for k, v in tm.state_dict().items():
            assert lm.state_dict()[k].shape == tuple(v.shape), k
        assert lm.num_parameters() == sum(p.numel() for p in tm.parameters())
        for w in warmups:  # training steps (BatchNorm statistics)
            with lampy.Scope(), torch.no_grad():
                lm(*w)
                tm(*[torch.tensor(a) for a in w])
        if mode in ("eval", "train_eval"):
            tm.eval()
            lm = lm.with_training(False)
        txs = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in xs]
        t_out = tm(*txs, **opts.get("fwd", {}))
        cot = rng.normal(size=tuple(t_out.shape)).astype(dtype)
        (t_out * torch.tensor(cot)).sum().backward()
        with lampy.Scope():
            lxs = [lampy.param(a) if a.dtype.kind == "f" else a for a in xs]
            l_out = lm(*lxs, **opts.get("fwd", {}))
            assert l_out.dtype == dtype, (l_out.dtype, dtype)
            diffs.append(_max_diff(l_out.value, t_out.detach().numpy()))
            if l_out.needs_grad:
                lampy.sum(l_out * cot).backward()
            for lx, tx in zip(lxs, txs, strict=True):
                if isinstance(lx, lampy.Variable):
                    diffs.append(_max_diff(lx.grad, tx.grad.numpy()))
        tgrads = dict(tm.named_parameters())
        for k, p in lm.named_parameters():
            if opts.get("renorm") and k == "weight":
                continue
            g = np.zeros(p.shape) if p.grad is None else p.grad
            diffs.append(_max_diff(g, tgrads[k].grad.numpy()))
        for k, v in tm.state_dict().items():  # running statistics after the step
            if not opts.get("renorm"):
                diffs.append(_max_diff(lm.state_dict()[k], v.numpy()))
        back = make_torch().to(tdt)
        back.load_state_dict({k: torch.tensor(np.array(v)) for k, v in lm.state_dict().items()})
        for k, v in back.state_dict().items():  # lampy's state_dict loaded into torch
            diffs.append(_max_diff(v.numpy(), lm.state_dict()[k]))
    return max(diffs)


def main() -> int:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    bad = 0
    print(f"{'module':<18} {'config':<66} {'dtype':<8} max|diff|")
    rows: list[tuple[str, str, Callable[[], Any], Callable[[Any], Any], Any, dict[str, Any]]] = []
    for name, args, kw, shapes, opts in CASES:
        rows.append((
            name,
            f"{args} {kw}",
            lambda name=name, args=args, kw=kw: getattr(torch.nn, name)(*args, **kw),
            lambda dt, name=name, args=args, kw=kw: _lampy_init(LAMPY[name], args, kw, dt),
            shapes,
            opts,
        ))  # fmt: skip
    for norm, lnorm in ((None, None), (torch.nn.LayerNorm, LayerNorm)):
        rows.append((
            "MLP",
            f"(4, [8, 6, 3]) norm_layer={lnorm and lnorm.__name__}",
            lambda norm=norm: torch_mlp(4, [8, 6, 3], norm, 0.0),
            lambda dt, lnorm=lnorm: MLP.init(
                4, [8, 6, 3], lnorm, dtype=dt, rng=np.random.default_rng(1)
            ),
            [(5, 4)],
            {},
        ))  # fmt: skip
    for name, config, make_t, make_l, shapes, opts in rows:
        for dtype in (np.float64, np.float32):
            try:
                d = run(
                    make_t, lambda dt=dtype, make_l=make_l: make_l(dt), shapes, opts, dtype, rng
                )
            except Exception as e:  # report and go on
                print(f"{name:<18} {config:<66} ERROR {type(e).__name__}: {e}")
                bad += 1
                continue
            ok = d <= (opts.get("tol64", TOL[dtype]) if dtype == np.float64 else TOL[dtype])
            bad += not ok
            flag = "" if ok else "  MISMATCH"
            print(f"{name:<18} {config:<66} {np.dtype(dtype).name:<8} {d:.2e}{flag}")
    print("all match" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
