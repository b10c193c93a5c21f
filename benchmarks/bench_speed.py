"""The speed table of issue 11: lampy next to PyTorch CPU and hand-written numpy.

Run ``python benchmarks/bench_speed.py`` (``--quick`` for a smoke run, ``--json PATH`` to
save the figures, ``--only w1,w2,w3,kernels,scaling,cnn,transformer,gpt`` to pick rows).
PyTorch is optional: without it the table shows the numpy ratios only.

Methodology
-----------
* Single-threaded: OPENBLAS/OMP/MKL_NUM_THREADS=1 before numpy is imported,
  ``torch.set_num_threads(1)``; lampy's compiled kernels (layer_norm, gelu, softmax,
  log_softmax; Numba, the fast extra) are serial and start no threads.
  ``lampy.tune_malloc()`` is called once (it changes glibc's thresholds for the whole
  process, so for every implementation alike).
* Interleaved repetitions (``bench_core.time_interleaved``): each round runs every
  implementation of a row for one untimed call and a block of timed calls, in an order
  rotated from round to round; ``gc.collect()`` before each block, the cyclic GC on.
  The table gives each implementation's median and, for lampy against a peer, the
  median of the pairwise ratios (the k-th timed lampy call over the k-th timed call of
  the peer, which ran in the same round), steadier than a ratio of medians on a busy
  machine.
* Same result first: lampy's gradients are compared with the peer's before timing.
* Rows (the issue's):
  - W1: a chain of ``y = tanh(y * 0.9 + 0.1)`` (three primitive ops per step) on a
    float64 0-d leaf, then ``y.sum().backward()``; per-op = total / number of primitive
    ops. numpy: the same forward keeping what backward needs, then the hand-written
    backward. Also the Python memory blocks (``sys.getallocatedblocks``) and
    GC-tracked objects alive per op while the graph is held, the generation-2
    collections while building and backpropagating, and the per-op cost at 10^4,
    10^5 and 10^6 ops relative to 10^3. The same chain on float64 arrays of shape (1,)
    and (16,) (issue 24: most graphs hold arrays, not 0-d values).
  - W2: MLP 784-256-256-10, batch 64, float32, tanh, mean cross-entropy (class
    indices): forward + backward + zero_grad. W3: the same with 1024-1024-1024-10,
    batch 256. lampy: ``lampy.nn`` layers and ``F.cross_entropy``, the step's graph in
    a ``lampy.Scope()``; numpy: the hand-written forward and backward into gradient
    arrays; torch: ``nn.Sequential``, ``zero_grad()`` (set to None).
  - Kernels: float32 (256, 1024) forward + backward with a given output gradient of
    ``layer_norm`` (with weight and bias), ``softmax`` (dim 1), ``cross_entropy``
    (class indices, mean) and exact ``gelu``; the input is a fresh leaf per call in
    every library (lampy.param / tensor.clone).
  - digits CNN epoch: ``bench_train.py``'s digits CNN epoch (45 steps of batch 32,
    AdamW); transformer step: ``bench_nn.py``'s 2-layer encoder, d_model 128, 4 heads,
    feed-forward 512, sequences of 64, batch 32, Adam. lampy and torch only.
  - GPT (issue 24): ``examples/char_gpt.py``'s model (4 layers, 4 heads, width 128,
    context 64, batch 16) and the same model in PyTorch (nanoGPT's code) loaded from
    lampy's ``state_dict()``: the training step (zero_grad, forward, backward,
    clip_grad_norm_, AdamW over the same two param groups) and the ``no_grad`` forward.
    The losses must agree (rtol 1e-4) at the start, over three steps and after them.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core  # noqa: E402

import lampy  # noqa: E402
import lampy.nn.functional as F  # noqa: E402
from lampy import nn  # noqa: E402

TARGETS = {
    "W1 per-op fwd+bwd": ("torch", 0.6),
    "W1 per-op (1,) array": ("torch", 0.7),
    "W1 per-op (16,) array": ("torch", 0.7),
    "W2 MLP 784-256-256-10 b64": ("numpy", 1.10),
    "W3 MLP 1024-1024-1024-10 b256": ("numpy", 1.03),
    "layer_norm (256, 1024) f32": ("torch", 1.5),
    "softmax (256, 1024) f32": ("torch", 1.5),
    "cross_entropy (256, 1024) f32": ("torch", 1.5),
    "gelu exact (256, 1024) f32": ("torch", 2.0),
    "digits CNN epoch": ("torch", 1.0),
    "transformer step": ("torch", 1.0),
    "GPT step": ("torch", 0.9),
    "GPT no_grad forward": ("torch", 0.9),
}


# ------------------------------------------------------------------- W1


def _leaf(shape: tuple[int, ...]) -> np.ndarray:
    """W1's leaf: 0.5 everywhere, float64, of ``shape`` (() for the 0-d case)."""
    return np.full(shape, 0.5)


def lampy_chain(steps: int, shape: tuple[int, ...] = ()) -> Callable[[], float]:
    start = _leaf(shape)

    def run() -> float:
        with lampy.Scope():
            x = lampy.param(start[()] if start.ndim == 0 else start)
            y = x
            for _ in range(steps):
                y = lampy.tanh(y * 0.9 + 0.1)
            y.sum().backward()
            assert x.grad is not None
            return float(np.sum(x.grad))

    return run


def torch_chain(torch: Any, steps: int, shape: tuple[int, ...] = ()) -> Callable[[], float]:
    start = torch.from_numpy(_leaf(shape))

    def run() -> float:
        x = start.clone().requires_grad_()
        y = x
        for _ in range(steps):
            y = torch.tanh(y * 0.9 + 0.1)
        y.sum().backward()
        return float(x.grad.sum())

    return run


def numpy_chain(steps: int, shape: tuple[int, ...] = ()) -> Callable[[], float]:
    start = _leaf(shape)

    def run() -> float:
        y = start[()] if start.ndim == 0 else start
        saved = []
        for _ in range(steps):
            y = np.tanh(y * 0.9 + 0.1)
            saved.append(y)
        g = np.ones_like(y)
        for t in reversed(saved):
            g = g * (1 - t * t) * 0.9
        return float(np.sum(g))

    return run


def chain_objects(steps: int) -> dict[str, float]:
    """Python memory blocks and GC-tracked objects alive per primitive op while a W1
    graph is held, and generation-2 collections while building and backpropagating."""
    full = [0]

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full[0] += 1

    gc.collect()
    gc.callbacks.append(count)
    try:
        with lampy.Scope():
            x = lampy.param(np.float64(0.5))
            blocks0, objects0 = sys.getallocatedblocks(), len(gc.get_objects())
            y = x
            for _ in range(steps):
                y = lampy.tanh(y * 0.9 + 0.1)
            blocks1, objects1 = sys.getallocatedblocks(), len(gc.get_objects())
            y.sum().backward()
    finally:
        gc.callbacks.remove(count)
    n = 3 * steps
    return {
        "blocks_per_op": (blocks1 - blocks0) / n,
        "gc_objects_per_op": (objects1 - objects0) / n,
        "gen2_collections": full[0],
        "ops": n,
    }


# ------------------------------------------------------------------- W2, W3


class MLPData:
    """Weights (torch's nn.Linear layout: (out, in)), a batch and class targets."""

    def __init__(self, sizes: tuple[int, ...], batch: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.sizes = sizes
        self.weights = []
        for n_in, n_out in itertools.pairwise(sizes):
            bound = 1 / np.sqrt(n_in)
            w = rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32)
            b = rng.uniform(-bound, bound, n_out).astype(np.float32)
            self.weights += [w, b]
        self.x = rng.normal(size=(batch, sizes[0])).astype(np.float32)
        self.y = rng.integers(0, sizes[-1], batch)


def lampy_mlp(d: MLPData) -> tuple[Callable[[], float], Callable[[], list[np.ndarray]]]:
    layers: list[Any] = []
    rng = np.random.default_rng(0)  # overwritten by d's weights
    for i in range(0, len(d.weights), 2):
        lin = nn.Linear.init(*d.weights[i].shape[::-1], rng=rng, dtype=np.float32)
        lin.load_state_dict({"weight": d.weights[i], "bias": d.weights[i + 1]})
        layers += [lin, nn.Tanh.init()]
    model = nn.Sequential.init(*layers[:-1])
    x, y = d.x, d.y

    def step() -> float:
        model.zero_grad()
        with lampy.Scope():
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return float(loss.value)

    def grads() -> list[np.ndarray]:
        step()
        return [np.array(p.grad) for p in model.parameters()]

    return step, grads


def numpy_mlp(d: MLPData) -> tuple[Callable[[], float], Callable[[], list[np.ndarray]]]:
    ws = d.weights
    x, y = d.x, d.y
    grads = [np.zeros_like(w) for w in ws]
    n = len(y)
    rows = np.arange(n)

    def step() -> float:
        for g in grads:  # zero_grad
            g.fill(0)
        hs = [x]
        h = x
        n_layers = len(ws) // 2
        for i in range(n_layers):
            z = h @ ws[2 * i].T
            z += ws[2 * i + 1]
            h = np.tanh(z, out=z) if i < n_layers - 1 else z
            hs.append(h)
        z = h - h.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - z[rows, y]))
        dz = e / s
        dz[rows, y] -= 1
        dz /= n
        for i in reversed(range(n_layers)):
            grads[2 * i] += dz.T @ hs[i]
            grads[2 * i + 1] += dz.sum(axis=0)
            if i:
                dh = dz @ ws[2 * i]
                t = hs[i]
                dh *= 1 - t * t
                dz = dh
        return loss

    def get() -> list[np.ndarray]:
        step()
        return [g.copy() for g in grads]

    return step, get


def torch_mlp(torch: Any, d: MLPData) -> tuple[Callable[[], float], Callable[[], list[Any]]]:
    tnn = torch.nn
    layers: list[Any] = []
    for i in range(0, len(d.weights), 2):
        lin = tnn.Linear(d.weights[i].shape[1], d.weights[i].shape[0])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(d.weights[i]))
            lin.bias.copy_(torch.from_numpy(d.weights[i + 1]))
        layers += [lin, tnn.Tanh()]
    model = tnn.Sequential(*layers[:-1])
    x, y = torch.from_numpy(d.x), torch.from_numpy(d.y)
    ce = torch.nn.functional.cross_entropy

    def step() -> float:
        model.zero_grad()
        loss = ce(model(x), y)
        loss.backward()
        return float(loss.detach())

    def grads() -> list[np.ndarray]:
        step()
        return [p.grad.numpy().copy() for p in model.parameters()]

    return step, grads


# ------------------------------------------------------------------- kernels

SHAPE = (256, 1024)


def kernel_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    arrays = {
        "x": rng.normal(size=SHAPE).astype(np.float32),
        "w": rng.normal(size=SHAPE[1]).astype(np.float32),
        "b": rng.normal(size=SHAPE[1]).astype(np.float32),
        "g": rng.normal(size=SHAPE).astype(np.float32),
        "t": rng.integers(0, SHAPE[1], SHAPE[0]),
    }
    for a in arrays.values():
        a.flags.writeable = False
    return arrays


def lampy_kernel(kind: str, a: dict[str, np.ndarray]) -> Callable[[], Any]:
    x, w, b, g, t = a["x"], a["w"], a["b"], a["g"], a["t"]

    def run() -> Any:
        with lampy.Scope():
            p = lampy.param(x)
            if kind == "layer_norm":
                pw, pb = lampy.param(w), lampy.param(b)
                F.layer_norm(p, (SHAPE[1],), pw, pb).backward(g)
            elif kind == "softmax":
                F.softmax(p, 1).backward(g)
            elif kind == "cross_entropy":
                F.cross_entropy(p, t).backward()
            else:
                F.gelu(p).backward(g)
            # The gradient array itself, no copy (torch's side returns p.grad.numpy(),
            # a view): it outlives the scope, which only drops its references.
            return p.grad

    return run


def torch_kernel(torch: Any, kind: str, a: dict[str, np.ndarray]) -> Callable[[], Any]:
    tf = torch.nn.functional
    x, w, b, g = (torch.from_numpy(a[k].copy()) for k in "xwbg")
    t = torch.from_numpy(a["t"].copy())

    def run() -> Any:
        p = x.clone().requires_grad_()
        if kind == "layer_norm":
            pw, pb = w.clone().requires_grad_(), b.clone().requires_grad_()
            tf.layer_norm(p, (SHAPE[1],), pw, pb).backward(g)
        elif kind == "softmax":
            torch.softmax(p, 1).backward(g)
        elif kind == "cross_entropy":
            tf.cross_entropy(p, t).backward()
        else:
            tf.gelu(p).backward(g)
        return p.grad.numpy()

    return run


def numpy_kernel(kind: str, a: dict[str, np.ndarray]) -> Callable[[], Any]:
    """Hand-written numpy forward and backward of each kernel (float32 throughout)."""
    x, w, b, g, t = a["x"], a["w"], a["b"], a["g"], a["t"]
    erf = _erf()

    def run() -> Any:
        if kind == "layer_norm":
            xc = x - x.mean(axis=1, keepdims=True)
            rstd = 1 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + np.float32(1e-5))
            xhat = xc * rstd
            _y = xhat * w + b
            dxhat = g * w
            dx = rstd * (
                dxhat
                - dxhat.mean(axis=1, keepdims=True)
                - xhat * (dxhat * xhat).mean(axis=1, keepdims=True)
            )
            _dw, _db = (g * xhat).sum(axis=0), g.sum(axis=0)
            return dx
        if kind == "softmax":
            e = np.exp(x - x.max(axis=1, keepdims=True))
            y = e / e.sum(axis=1, keepdims=True)
            return y * (g - (g * y).sum(axis=1, keepdims=True))
        if kind == "cross_entropy":
            e = np.exp(x - x.max(axis=1, keepdims=True))
            p = e / e.sum(axis=1, keepdims=True)
            _loss = -np.log(p[np.arange(len(t)), t]).mean()
            p[np.arange(len(t)), t] -= 1
            return p * np.float32(1 / len(t))
        cdf = np.float32(0.5) * (1 + erf(x * np.float32(1 / np.sqrt(2))))
        _y = x * cdf
        pdf = np.exp(np.float32(-0.5) * x * x) * np.float32(1 / np.sqrt(2 * np.pi))
        return g * (cdf + x * pdf)

    return run


def _erf() -> Callable[[Any], Any]:
    """The erf a numpy user would take: SciPy's when installed, else lampy's numpy one."""
    try:
        from scipy.special import erf
    except ImportError:
        from lampy.nn.functional._erf import erf_numpy as erf
    return erf  # type: ignore[no-any-return]


# ------------------------------------------------------------------- GPT


def _char_gpt() -> Any:
    """``examples/char_gpt.py`` as a module (the model is the example's)."""
    import importlib.util

    path = HERE.parent / "examples" / "char_gpt.py"
    spec = importlib.util.spec_from_file_location("char_gpt", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["char_gpt"] = module  # attrs resolves the records' annotations through it
    spec.loader.exec_module(module)
    return module


GPT_CONFIG = {"n_layer": 4, "n_head": 4, "n_embd": 128, "block_size": 64, "batch_size": 16}


class GPTData:
    """The example's model (lampy, in the current scope), its text and one batch."""

    def __init__(self) -> None:
        cg = _char_gpt()
        c = GPT_CONFIG
        rng = np.random.default_rng(0)
        corpus = cg.Corpus.from_text(cg.load_text())
        self.vocab = len(corpus.chars)
        self.model = cg.GPT.init(
            self.vocab, c["block_size"], c["n_layer"], c["n_head"], c["n_embd"], rng=rng
        )
        self.x, self.y = cg.get_batch(corpus.train, c["block_size"], c["batch_size"], rng)
        self.opt = cg.configure_optimizer(self.model, 1e-3)


def lampy_gpt(d: GPTData) -> tuple[Callable[[], float], Callable[[], float]]:
    """The training step (zero_grad, forward, backward, clip_grad_norm_, AdamW) and the
    ``no_grad`` forward (the loss)."""
    model, opt, x, y = d.model, d.opt, d.x, d.y
    params = model.parameters()

    def step() -> float:
        model.zero_grad()
        with lampy.Scope():
            loss = model.loss(x, y)
            loss.backward()
            value = float(loss.value)
        lampy.optim.clip_grad_norm_(params, 1.0)
        opt.step()
        return value

    def forward() -> float:
        with lampy.Scope(), lampy.no_grad():
            return float(model.loss(x, y).value)

    return step, forward


def torch_gpt(torch: Any, d: GPTData) -> tuple[Callable[[], float], Callable[[], float]]:
    """The same model in PyTorch (nanoGPT's code), loaded from lampy's state_dict, with
    torch.optim.AdamW over the same two groups."""
    tnn, tf = torch.nn, torch.nn.functional
    c = GPT_CONFIG
    n_embd, n_head = c["n_embd"], c["n_head"]

    class Attention(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = tnn.Linear(n_embd, 3 * n_embd)
            self.c_proj = tnn.Linear(n_embd, n_embd)

        def forward(self, x: Any) -> Any:
            b, t, ch = x.shape
            q, k, v = self.c_attn(x).split(ch, dim=2)
            q, k, v = (z.view(b, t, n_head, ch // n_head).transpose(1, 2) for z in (q, k, v))
            y = tf.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, ch))

    class MLP(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_fc = tnn.Linear(n_embd, 4 * n_embd)
            self.c_proj = tnn.Linear(4 * n_embd, n_embd)

        def forward(self, x: Any) -> Any:
            return self.c_proj(tf.gelu(self.c_fc(x)))

    class Block(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1, self.attn = tnn.LayerNorm(n_embd), Attention()
            self.ln_2, self.mlp = tnn.LayerNorm(n_embd), MLP()

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = tnn.Embedding(d.vocab, n_embd)
            self.wpe = tnn.Embedding(c["block_size"], n_embd)
            self.h = tnn.ModuleList([Block() for _ in range(c["n_layer"])])
            self.ln_f = tnn.LayerNorm(n_embd)

        def forward(self, idx: Any, targets: Any) -> Any:
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for block in self.h:
                x = block(x)
            logits = tf.linear(self.ln_f(x), self.wte.weight)  # tied weights
            return tf.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    model = GPT()
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in d.model.state_dict().items()})
    params = list(model.parameters())
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.99))
    x, y = torch.from_numpy(d.x), torch.from_numpy(d.y)

    def step() -> float:
        opt.zero_grad()
        loss = model(x, y)
        loss.backward()
        tnn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        return float(loss.detach())

    def forward() -> float:
        with torch.no_grad():
            return float(model(x, y))

    return step, forward


def row_gpt(torch: Any, rounds: int, block: int) -> dict[str, dict[str, Any]]:
    """The GPT training step and its no_grad forward, lampy against torch. Before timing,
    the two start from the same weights and must give the same loss at the start and
    after three steps (the optimizers agree too)."""
    d = GPTData()
    lstep, lfwd = lampy_gpt(d)
    fns_step, fns_fwd = {"lampy": lstep}, {"lampy": lfwd}
    if torch is not None:
        tstep, tfwd = torch_gpt(torch, d)
        for what, a, b in (
            ("forward", lfwd, tfwd),
            *(("step", lstep, tstep),) * 3,
            ("forward", lfwd, tfwd),
        ):
            la, lb = a(), b()
            if not np.isclose(la, lb, rtol=1e-4):
                raise SystemExit(f"GPT {what}: lampy's loss {la} differs from torch's {lb}")
        fns_step["torch"], fns_fwd["torch"] = tstep, tfwd
    return {
        "GPT step": {"unit": "ms/step", **measure(fns_step, rounds, block, 1e3)},
        "GPT no_grad forward": {"unit": "ms", **measure(fns_fwd, rounds, block, 1e3)},
    }


# ------------------------------------------------------------------- timing


def measure(
    fns: dict[str, Callable[[], Any]], rounds: int, block: int, scale: float
) -> dict[str, Any]:
    """Medians (times ``scale``) and lampy's median pairwise ratio to each peer."""
    timing = bench_core.time_interleaved(fns, rounds, block)
    times = timing.times
    out: dict[str, Any] = {n: statistics.median(t) * scale for n, t in times.items()}
    for peer in ("torch", "numpy"):
        if peer in times and "lampy" in times:
            pairs = [a / b for a, b in zip(times["lampy"], times[peer], strict=True)]
            out[f"lampy/{peer}"] = statistics.median(pairs)
    out["samples"] = len(times["lampy"])
    return out


def check_close(name: str, ours: Any, theirs: Any, rtol: float = 2e-3) -> None:
    for a, b in zip(ours, theirs, strict=True):
        if not np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-5):
            raise SystemExit(f"{name}: lampy's gradients differ from the peer's")


def row_w1(torch: Any, rounds: int, block: int, shape: tuple[int, ...] = ()) -> dict[str, Any]:
    steps = 333  # 999 primitive ops
    fns = {"lampy": lampy_chain(steps, shape), "numpy": numpy_chain(steps, shape)}
    if torch is not None:
        fns["torch"] = torch_chain(torch, steps, shape)
    ref = fns["numpy"]()
    for f in fns.values():
        if not np.isclose(f(), ref, rtol=1e-12):
            raise SystemExit(f"W1 {shape}: gradients differ")
    res = measure(fns, rounds, block, 1e6 / (3 * steps))
    if not shape:
        res.update(chain_objects(steps))
    return res


def row_scaling(torch: Any, quick: bool) -> dict[str, Any]:
    """lampy's (and torch's) per-op W1 cost at 10^3 ... 10^6 ops, relative to 10^3."""
    sizes = [10**3, 10**4, 10**5] if quick else [10**3, 10**4, 10**5, 10**6]
    out: dict[str, Any] = {}
    for n in sizes:
        steps = n // 3
        fns = {"lampy": lampy_chain(steps)}
        if torch is not None:
            fns["torch"] = torch_chain(torch, steps)
        reps = max(1, min(9, 3 * 10**5 // n)) if not quick else 1
        res = measure(fns, reps, 1 if n >= 10**5 else 3, 1e6 / (3 * steps))
        res["gen2_collections"] = chain_objects(steps)["gen2_collections"]
        out[str(n)] = res
    base = out[str(sizes[0])]
    for n in sizes:
        for lib in ("lampy", "torch"):
            if lib in out[str(n)]:
                out[str(n)][f"{lib}_vs_1e3"] = out[str(n)][lib] / base[lib]
    return out


def row_mlp(torch: Any, sizes: tuple[int, ...], batch: int, rounds: int, block: int) -> Any:
    d = MLPData(sizes, batch)
    lstep, lgrads = lampy_mlp(d)
    nstep, ngrads = numpy_mlp(d)
    check_close("MLP", lgrads(), ngrads())
    fns = {"lampy": lstep, "numpy": nstep}
    if torch is not None:
        tstep, _ = torch_mlp(torch, d)
        fns["torch"] = tstep
    return measure(fns, rounds, block, 1e3)


def row_kernel(torch: Any, kind: str, rounds: int, block: int) -> dict[str, Any]:
    a = kernel_inputs()
    fns = {"lampy": lampy_kernel(kind, a), "numpy": numpy_kernel(kind, a)}
    if torch is not None:
        fns["torch"] = torch_kernel(torch, kind, a)
    ref = fns["numpy"]()
    for f in fns.values():
        check_close(kind, [f()], [ref])
    return measure(fns, rounds, block, 1e3)


def row_cnn(torch: Any, rounds: int, block: int) -> dict[str, Any]:
    import bench_train

    res = bench_train.bench_epochs("cnn", torch, rounds, block)
    rows = {r["implementation"]: r for r in res["rows"]}
    out = {"lampy": rows["lampy"]["median_ms"], "samples": rows["lampy"]["epochs"]}
    if "torch" in rows:
        out["torch"] = rows["torch"]["median_ms"]
        out["lampy/torch"] = out["lampy"] / out["torch"]  # ratio of medians
    return out


def row_transformer(torch: Any, rounds: int, block: int) -> dict[str, Any]:
    import bench_nn

    with lampy.Scope():  # the models' parameters
        w = next(x for x in bench_nn.workloads(torch, {"transformer"}) if x.name.endswith("512"))
        fns = {"lampy": bench_nn.lampy_step(w)}
        if torch is not None:
            fns["torch"] = bench_nn.torch_step(w, torch)
        return measure(fns, rounds, block, 1e3)


# ------------------------------------------------------------------- report


def _fmt(v: Any, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def print_table(rows: dict[str, dict[str, Any]]) -> None:
    head = (
        f"{'workload':<31} {'unit':<8} {'lampy':>9} {'torch':>9} {'numpy':>9} "
        f"{'lampy/torch':>11} {'lampy/numpy':>11}  target"
    )
    print(head)
    print("-" * len(head))
    for name, r in rows.items():
        if name.startswith("_"):
            continue
        peer, limit = TARGETS[name]
        ratio = r.get(f"lampy/{peer}")
        verdict = "" if ratio is None else (" met" if ratio <= limit else " NOT met")
        print(
            f"{name:<31} {r['unit']:<8} {_fmt(r.get('lampy')):>9} {_fmt(r.get('torch')):>9} "
            f"{_fmt(r.get('numpy')):>9} {_fmt(r.get('lampy/torch'), '.2f'):>11} "
            f"{_fmt(r.get('lampy/numpy'), '.2f'):>11}  <= {limit}x {peer}{verdict}"
        )


def print_extras(rows: dict[str, dict[str, Any]]) -> None:
    w1 = rows.get("W1 per-op fwd+bwd")
    if w1:
        print(
            f"\nW1 ({w1['ops']} ops) while the graph is held: {w1['blocks_per_op']:.1f} Python "
            f"memory blocks and {w1['gc_objects_per_op']:.1f} GC-tracked objects per op; "
            f"{w1['gen2_collections']} generation-2 collections during build + backward"
        )
    scaling = rows.get("_scaling")
    if scaling:
        print("\nW1 per-op cost by chain length (µs/op; relative to 10^3; gen-2 collections):")
        for n, r in scaling.items():
            parts = [f"lampy {r['lampy']:.3f} ({r['lampy_vs_1e3']:.2f}x)"]
            if "torch" in r:
                parts.append(f"torch {r['torch']:.3f} ({r['torch_vs_1e3']:.2f}x)")
            parts.append(f"gen-2 collections {r['gen2_collections']}")
            verdict = "met" if r["lampy_vs_1e3"] <= 1.2 else "NOT met"
            print(f"  10^{len(n) - 1}: " + ", ".join(parts) + f"  (target <= 1.2x: {verdict})")


def measure_rows(torch: Any, only: set[str], q: bool, rows: dict[str, dict[str, Any]]) -> None:
    """Measure the selected rows into ``rows`` (``q``: the quick smoke run)."""
    if "w1" in only:
        rows["W1 per-op fwd+bwd"] = {"unit": "µs/op", **row_w1(torch, *((2, 2) if q else (10, 5)))}
        for shape in ((1,), (16,)):
            r = row_w1(torch, *((2, 2) if q else (10, 5)), shape=shape)
            rows[f"W1 per-op {shape} array"] = {"unit": "µs/op", **r}
    if "w2" in only:
        r = row_mlp(torch, (784, 256, 256, 10), 64, *((2, 3) if q else (10, 20)))
        rows["W2 MLP 784-256-256-10 b64"] = {"unit": "ms/step", **r}
    if "w3" in only:
        r = row_mlp(torch, (1024, 1024, 1024, 10), 256, *((2, 2) if q else (10, 5)))
        rows["W3 MLP 1024-1024-1024-10 b256"] = {"unit": "ms/step", **r}
    if "kernels" in only:
        for kind, label in (
            ("layer_norm", "layer_norm (256, 1024) f32"),
            ("softmax", "softmax (256, 1024) f32"),
            ("cross_entropy", "cross_entropy (256, 1024) f32"),
            ("gelu", "gelu exact (256, 1024) f32"),
        ):
            r = row_kernel(torch, kind, *((2, 3) if q else (10, 10)))
            rows[label] = {"unit": "ms", **r}
    if "cnn" in only:
        rows["digits CNN epoch"] = {"unit": "ms", **row_cnn(torch, *((2, 1) if q else (6, 2)))}
    if "transformer" in only:
        r = row_transformer(torch, *((2, 1) if q else (6, 3)))
        rows["transformer step"] = {"unit": "ms/step", **r}
    if "gpt" in only:
        rows.update(row_gpt(torch, *((2, 1) if q else (8, 3))))
    if "scaling" in only:
        rows["_scaling"] = row_scaling(torch, q)


ROWS = ("w1", "scaling", "w2", "w3", "kernels", "cnn", "transformer", "gpt")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="few repetitions (smoke run)")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--only", default="", help="comma-separated: " + ",".join(ROWS))
    ap.add_argument("--no-torch", action="store_true", help="measure without PyTorch")
    args = ap.parse_args(argv)
    only = {s for s in args.only.split(",") if s} or set(ROWS)
    torch: Any = None
    if not args.no_torch:
        try:
            import torch

            torch.set_num_threads(1)
        except ImportError:
            torch = None
    lampy.tune_malloc()
    print(f"lampy speed table (issue 11) — {datetime.datetime.now():%Y-%m-%d %H:%M}")
    print(f"numpy {np.__version__}, torch {getattr(torch, '__version__', 'not installed')}")
    print(f"lampy: {bench_core.lampy_source()}; {bench_core.cpu_model()}")
    print(f"numpy's BLAS: {bench_core.blas_kernels()}")
    print(f"load average at the start {os.getloadavg()}")
    print()
    rows: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    with lampy.Scope():  # the models' parameters live here
        measure_rows(torch, only, args.quick, rows)
    print()
    print_table(rows)
    print_extras(rows)
    print(
        f"\nload average at the end {os.getloadavg()}; {time.perf_counter() - t0:.0f} s. "
        "Ratios are medians of pairwise ratios from interleaved runs (CNN epoch: ratio of "
        "medians, from bench_train.py)."
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
