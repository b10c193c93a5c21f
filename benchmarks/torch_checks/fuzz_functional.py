"""Randomized differential test of ``lampy.nn.functional`` against ``torch.nn.functional``.

For every op that both have, draw many random argument combinations (seeded: each case
has its own seed, so any case can be replayed alone), call both libraries, and compare

- the outputs (values, shapes, dtypes; integer outputs such as pooling indices exactly),
- the gradients with respect to every float input, for the same random cotangent,
- in-place side effects on constant arrays (``batch_norm``'s running statistics),
- errors: when torch raises, lampy must raise too (any exception); the reverse (lampy
  raises where torch works) is reported separately.

Shapes include size-1 and 0-size dims, unbatched inputs; arguments cover strides,
paddings (ints, tuples, ``'same'``/``'valid'``), dilations, groups, ceil_mode,
count_include_pad, return_indices, align_corners, modes, reductions, class weights,
ignore_index, label smoothing with probability targets, pos_weight broadcasting, eps,
p-norms, negative dims, keepdim; float32 and float64. Some inputs are drawn with
"special" values (kinks, ties, zeros) where conventions are easiest to get wrong.

Tolerance: ``|lampy - torch| <= rtol * (|torch| + max(1, max|torch|))`` elementwise,
with rtol 1e-10 (float64) and 1e-5 (float32; reductions over many terms are scaled by
``sqrt`` of the reduced size through ``FP32_SLACK``).

Run: ``.venv/bin/python benchmarks/torch_checks/fuzz_functional.py [-n CASES] [--op NAME]
[--case I] [-v]``. Prints a summary table and, for each failure kind, minimal
reproductions (exact arguments); exits non-zero on mismatches.
"""

from __future__ import annotations

import argparse
import inspect
import math
import sys
import traceback
import warnings
import zlib
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import lampy
import lampy.nn.functional as LF

TF = torch.nn.functional
RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}
# float32 slack for ops whose outputs are sums of many rounded terms (both libraries
# round differently; the float64 run is the precise check).
FP32_SLACK = 8.0
# Documented, known differences: (op, what) -> float64 tolerance.
KNOWN_TOL64 = {
    ("hardsigmoid", "grad"): 1e-7,  # torch uses the float32 1/6 in the gradient
    ("hardswish", "grad"): 1e-7,
}

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


class C:
    """A float array passed as a constant (no gradient) to both libraries."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a


# ----------------------------------------------------------------------------- drawing
class Draw:
    """Random helpers over one numpy Generator."""

    def __init__(self, rng: np.random.Generator, dtype: Any) -> None:
        self.rng, self.dt = rng, np.dtype(dtype)

    def pick(self, seq: Any) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def p(self, prob: float) -> bool:
        return bool(self.rng.random() < prob)

    def dim(self, sizes: tuple[int, ...] = (1, 2, 3, 4), zero: float = 0.05) -> int:
        return 0 if self.p(zero) else int(self.pick(sizes))

    def shape(self, lo: int = 0, hi: int = 4, zero: float = 0.05) -> tuple[int, ...]:
        nd = int(self.rng.integers(lo, hi + 1))
        return tuple(self.dim(zero=zero) for _ in range(nd))

    def randn(self, shape: Any, special: tuple[float, ...] = (), p_special: float = 0.3) -> Any:
        a = np.array(self.rng.standard_normal(shape) * self.pick([1.0, 1.0, 3.0]))
        if special and self.p(p_special) and a.size:
            m = np.asarray(self.rng.random(a.shape) < 0.4)
            a[m] = self.rng.choice(np.asarray(special, dtype=float), size=int(m.sum()))
        if self.p(0.1):
            a = np.round(a)  # ties
        return np.asarray(a, dtype=self.dt)

    def uniform(self, shape: Any, lo: float, hi: float) -> Any:
        return np.array(self.rng.uniform(lo, hi, shape), dtype=self.dt)

    def size(self, nd: int, choices: Any, p_tuple: float = 0.4) -> Any:
        """An int or a tuple of ``nd`` ints."""
        if self.p(p_tuple):
            return tuple(int(self.pick(choices)) for _ in range(nd))
        return int(self.pick(choices))

    def reduction(self, extra: tuple[str, ...] = ()) -> str:
        return str(self.pick(("mean", "sum", "none", *extra)))

    def axis(self, nd: int) -> int:
        n = max(nd, 1)
        return int(self.rng.integers(-n, n))


Gen = Callable[[Draw], tuple[list[Any], dict[str, Any]]]
GENS: dict[str, Gen] = {}


def gen(*names: str) -> Callable[[Gen], Gen]:
    def deco(f: Gen) -> Gen:
        for n in names:
            GENS[n] = f
        return f

    return deco


# -------------------------------------------------------------------- activations
def _elementwise(name: str, special: tuple[float, ...], kw: Callable[[Draw], dict[str, Any]]):
    def g(d: Draw) -> tuple[list[Any], dict[str, Any]]:
        k = kw(d)
        extra = tuple(v for v in k.values() if isinstance(v, float))
        x = d.randn(d.shape(0, 4), special + extra)
        return [x], k

    GENS[name] = g


_KINKS = (0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 20.0, -20.0, 40.0, -40.0)
_elementwise("relu", _KINKS, lambda d: {})
_elementwise("relu6", _KINKS, lambda d: {})
_elementwise("sigmoid", (0.0, 30.0, -30.0, 100.0, -100.0), lambda d: {})
_elementwise("log_sigmoid", (0.0, 30.0, -30.0, 100.0, -100.0, -800.0), lambda d: {})
_elementwise("silu", (0.0, -100.0, 100.0), lambda d: {})
_elementwise("mish", (0.0, -100.0, 100.0, 25.0), lambda d: {})
_elementwise("selu", _KINKS, lambda d: {})
_elementwise("softsign", _KINKS, lambda d: {})
_elementwise("hardsigmoid", _KINKS, lambda d: {})
_elementwise("hardswish", _KINKS, lambda d: {})
_elementwise("elu", _KINKS, lambda d: {"alpha": float(d.pick([1.0, 0.5, 2.0, 0.0, -1.0]))})
_elementwise("celu", _KINKS, lambda d: {"alpha": float(d.pick([1.0, 0.5, 2.0, 0.0]))})
_elementwise(
    "leaky_relu", _KINKS, lambda d: {"negative_slope": float(d.pick([0.01, 0.2, -0.5, 1.5, 0.0]))}
)
_elementwise("gelu", _KINKS, lambda d: {"approximate": d.pick(["none", "tanh"])})
_elementwise(
    "softplus",
    _KINKS,
    lambda d: {
        "beta": float(d.pick([1.0, 2.0, 0.5, -1.0])),
        "threshold": float(d.pick([20.0, 1.0, 0.0, 5.0])),
    },
)


@gen("hardtanh")
def _hardtanh(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    lo = float(d.pick([-1.0, -2.0, 0.0, 0.5]))
    hi = float(d.pick([1.0, 2.0, 0.0, 0.5]))
    x = d.randn(d.shape(0, 4), (lo, hi, 0.0))
    return [x], {"min_val": lo, "max_val": hi}


@gen("softmax", "log_softmax")
def _softmax(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(0, 4)
    x = d.randn(s, (50.0, -50.0, 0.0, 1e3))
    return [x], {"dim": d.axis(len(s))}


@gen("glu")
def _glu(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = list(d.shape(1, 4))
    ax = d.axis(len(s))
    if not d.p(0.1):
        s[ax] = int(d.pick([2, 4, 6, 0]))
    return [d.randn(tuple(s))], {"dim": ax}


# ------------------------------------------------------------------------ linear
@gen("linear")
def _linear(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    fin, fout = d.dim(), d.dim()
    lead = d.shape(0, 3)
    x = d.randn((*lead, fin if not d.p(0.05) else fin + 1))
    w = d.randn((fout, fin)) if not d.p(0.1) else d.randn((fin,))
    b = None if d.p(0.3) else d.randn((fout,) if not d.p(0.1) else ())
    return [x, w, b], {}


@gen("bilinear")
def _bilinear(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    a, b, o = d.dim(), d.dim(), d.dim()
    lead = d.shape(0, 2) if not d.p(0.3) else ()
    x1, x2 = d.randn((*lead, a)), d.randn((*lead, b))
    w = d.randn((o, a, b))
    bias = None if d.p(0.3) else d.randn((o,))
    return [x1, x2, w, bias], {}


# -------------------------------------------------------------------- convolution
def _conv(d: Draw, nd: int, transpose: bool) -> tuple[list[Any], dict[str, Any]]:
    groups = int(d.pick([1, 1, 2, 3]))
    cin, cout = groups * int(d.pick([1, 2])), groups * int(d.pick([1, 2]))
    if d.p(0.05):
        cin += 1
    k = tuple(int(d.pick([1, 2, 3])) for _ in range(nd))
    spatial = tuple(int(d.pick([1, 2, 3, 5, 7])) for _ in range(nd))
    batch = d.pick([None, 1, 2, 2, 0])
    xs = (cin, *spatial) if batch is None else (batch, cin, *spatial)
    ws = (cin, cout // groups, *k) if transpose else (cout, cin // groups, *k)
    if not transpose and d.p(0.05):
        ws = (cout, cin, *k)  # wrong for groups > 1
    x, w = d.randn(xs), d.randn(ws)
    b = None if d.p(0.4) else d.randn((cout,))
    kw: dict[str, Any] = {}
    if d.p(0.7):
        kw["stride"] = d.size(nd, [1, 1, 2, 3])
    if d.p(0.6):
        kw["dilation"] = d.size(nd, [1, 1, 2])
    if d.p(0.7):
        if not transpose and d.p(0.35):
            kw["padding"] = d.pick(["same", "valid"])
        else:
            kw["padding"] = d.size(nd, [0, 1, 2])
    if transpose and d.p(0.5):
        kw["output_padding"] = d.size(nd, [0, 1, 2])
    if groups > 1 or d.p(0.1):
        kw["groups"] = groups
    if d.p(0.05) and "stride" in kw:
        kw["stride"] = 0 if nd == 1 else (1, 0)
    return [x, w, b], kw


GENS["conv1d"] = lambda d: _conv(d, 1, False)
GENS["conv2d"] = lambda d: _conv(d, 2, False)
GENS["conv_transpose1d"] = lambda d: _conv(d, 1, True)
GENS["conv_transpose2d"] = lambda d: _conv(d, 2, True)


# -------------------------------------------------------------------------- pools
def _pool(d: Draw, nd: int, kind: str) -> tuple[list[Any], dict[str, Any]]:
    c = d.dim((1, 2, 3))
    spatial = tuple(d.dim((1, 2, 3, 4, 5, 7), zero=0.03) for _ in range(nd))
    batch = d.pick([None, 1, 2, 0])
    shape = (c, *spatial) if batch is None else (batch, c, *spatial)
    x = d.randn(shape)
    k = d.size(nd, [1, 2, 3])
    kw: dict[str, Any] = {}
    if d.p(0.7):
        kw["stride"] = d.size(nd, [1, 2, 3]) if not d.p(0.1) else None
    if d.p(0.6):
        kw["padding"] = d.size(nd, [0, 1, 1, 2])
    if d.p(0.5):
        kw["ceil_mode"] = d.p(0.6)
    if kind == "max":
        if d.p(0.4):
            kw["dilation"] = d.size(nd, [1, 2])
        if d.p(0.4):
            kw["return_indices"] = True
    else:
        if d.p(0.5):
            kw["count_include_pad"] = d.p(0.5)
        if nd == 2 and d.p(0.25):
            kw["divisor_override"] = int(d.pick([1, 3, 0]))
    return [x, k], kw


GENS["max_pool1d"] = lambda d: _pool(d, 1, "max")
GENS["max_pool2d"] = lambda d: _pool(d, 2, "max")
GENS["avg_pool1d"] = lambda d: _pool(d, 1, "avg")
GENS["avg_pool2d"] = lambda d: _pool(d, 2, "avg")


def _adaptive(d: Draw, nd: int, kind: str) -> tuple[list[Any], dict[str, Any]]:
    c = d.dim((1, 2, 3))
    spatial = tuple(d.dim((1, 2, 3, 5, 7), zero=0.03) for _ in range(nd))
    batch = d.pick([None, 1, 2, 0])
    shape = (c, *spatial) if batch is None else (batch, c, *spatial)
    x = d.randn(shape)
    if nd == 1:
        out: Any = int(d.pick([1, 2, 3, 4, 8])) if not d.p(0.2) else (int(d.pick([1, 3])),)
    else:
        out = (
            int(d.pick([1, 2, 3, 5]))
            if d.p(0.3)
            else tuple(d.pick([1, 2, 3, 4, 6, None]) for _ in range(2))
        )
    kw = {"return_indices": True} if kind == "max" and d.p(0.4) else {}
    return [x, out], kw


GENS["adaptive_avg_pool1d"] = lambda d: _adaptive(d, 1, "avg")
GENS["adaptive_avg_pool2d"] = lambda d: _adaptive(d, 2, "avg")
GENS["adaptive_max_pool1d"] = lambda d: _adaptive(d, 1, "max")
GENS["adaptive_max_pool2d"] = lambda d: _adaptive(d, 2, "max")


# ------------------------------------------------------------------ normalization
@gen("batch_norm")
def _batch_norm(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    c = d.dim((1, 2, 3))
    n = d.dim((1, 2, 3), zero=0.05)
    x = d.randn((n, c, *d.shape(0, 2, zero=0.02)))
    training = d.p(0.6)
    rm = None if training and d.p(0.3) else C(d.randn((c,)))
    rv = None if rm is None else C(d.uniform((c,), 0.2, 2.0))
    if not training and rm is None:
        rm, rv = C(d.randn((c,))), C(d.uniform((c,), 0.2, 2.0))
    w = None if d.p(0.3) else d.randn((c,))
    b = None if d.p(0.3) else d.randn((c,))
    kw: dict[str, Any] = {"training": training}
    if d.p(0.5):
        kw["momentum"] = float(d.pick([0.1, 0.0, 1.0, 0.5]))
    if d.p(0.5):
        kw["eps"] = float(d.pick([1e-5, 1e-3, 0.0, 1.0]))
    return [x, rm, rv, w, b], kw


@gen("group_norm")
def _group_norm(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    g = int(d.pick([1, 2, 3]))
    c = g * int(d.pick([1, 2])) + (1 if d.p(0.05) else 0)
    n = d.dim((1, 2, 3), zero=0.05)
    x = d.randn((n, c, *d.shape(0, 2, zero=0.02)))
    w = None if d.p(0.3) else d.randn((c,))
    b = None if d.p(0.3) else d.randn((c,))
    kw = {"eps": float(d.pick([1e-5, 1e-2, 1.0]))} if d.p(0.4) else {}
    return [x, g, w, b], kw


def _layer_norm(d: Draw, bias: bool) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(1, 4, zero=0.03)
    k = int(d.rng.integers(1, len(s) + 1))
    ns = s[len(s) - k :]
    norm_shape: Any = d.pick([tuple(ns), list(ns)]) if (k > 1 or d.p(0.5)) else ns[0]
    x = d.randn(s, (0.0, 100.0))
    if d.p(0.2):
        x = np.full(s, 2.5, dtype=d.dt)  # zero variance
    w = None if d.p(0.3) else d.randn(ns)
    args = [x, norm_shape, w]
    kw: dict[str, Any] = {}
    if d.p(0.4):
        kw["eps"] = float(d.pick([1e-5, 1e-2, 1.0]))
    if d.p(0.05) or (not bias and d.p(0.2)):
        kw["eps"] = None
    if bias and d.p(0.6):
        kw["bias"] = d.randn(ns)
    return args, kw


GENS["layer_norm"] = lambda d: _layer_norm(d, True)
GENS["rms_norm"] = lambda d: _layer_norm(d, False)


@gen("normalize")
def _normalize(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(1, 4, zero=0.03)
    x = d.randn(s, (0.0,), p_special=0.5)
    if d.p(0.15):
        x = np.zeros(s, dtype=d.dt)
    kw: dict[str, Any] = {"dim": d.axis(len(s))}
    if d.p(0.3):  # several axes normalised together; None and () mean all of them
        axes = [a for a in range(-len(s), 0) if d.p(0.6)]
        kw["dim"] = d.pick([tuple(axes), tuple(axes), None])
    if d.p(0.8):
        kw["p"] = float(d.pick([1.0, 2.0, 3.0, 0.5, math.inf, 4.0]))
    if d.p(0.3):
        kw["eps"] = float(d.pick([1e-12, 1e-3, 1.0]))
    return [x], kw


# ------------------------------------------------------------------------- losses
def _pair(d: Draw, special: tuple[float, ...] = ()) -> tuple[Any, Any]:
    s = d.shape(0, 3)
    x = d.randn(s, special)
    ts = s
    if d.p(0.07) and len(s) > 0:
        ts = s[1:]  # broadcasting (torch warns)
    y = d.randn(ts, special)
    if d.p(0.2) and x.shape == y.shape:
        y = x.copy()  # |x - y| = 0: the kink
    return x, y


@gen("mse_loss", "l1_loss")
def _mse(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    x, y = _pair(d)
    return [x, y], {"reduction": d.reduction()}


@gen("smooth_l1_loss")
def _smooth_l1(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    beta = float(d.pick([1.0, 0.5, 0.0, 2.0, -1.0]))
    x, y = _pair(d, (beta, -beta, 0.0))
    return [x, y], {"reduction": d.reduction(), "beta": beta}


@gen("huber_loss")
def _huber(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    delta = float(d.pick([1.0, 0.5, 2.0, 0.0, -1.0]))
    x, y = _pair(d, (delta, -delta, 0.0))
    return [x, y], {"reduction": d.reduction(), "delta": delta}


@gen("kl_div")
def _kl_div(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(0, 3)
    x = d.randn(s)
    log_target = d.p(0.5)
    if log_target:
        t = d.randn(s, (-np.inf,))
    else:
        t = np.array(d.uniform(s, 0.0, 1.0))
        if d.p(0.4) and t.size:
            t[d.rng.random(s) < 0.4] = 0.0
    kw: dict[str, Any] = {"reduction": d.reduction(("batchmean",)), "log_target": log_target}
    return [x, t], kw


@gen("binary_cross_entropy")
def _bce(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(0, 3)
    x = d.uniform(s, 0.01, 0.99)
    if d.p(0.2) and x.size:
        x[d.rng.random(s) < 0.3] = d.pick([0.0, 1.0])
    t = d.uniform(s, 0.0, 1.0) if d.p(0.5) else np.asarray(np.round(d.uniform(s, 0.0, 1.0)))
    w = None
    if d.p(0.4):
        w = C(d.uniform(d.pick([s, s[-1:], ()]) if s else (), 0.1, 2.0))
    return [x, t, w], {"reduction": d.reduction()}


@gen("binary_cross_entropy_with_logits")
def _bcel(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(0, 3)
    x = d.randn(s, (0.0, 50.0, -50.0, 200.0, -200.0))
    t = d.uniform(s, 0.0, 1.0)
    w = C(d.uniform(d.pick([s, s[-1:], ()]), 0.1, 2.0)) if d.p(0.4) else None
    pw = None
    if d.p(0.5):
        ps = d.pick([s[-1:], s, (), (1,) * len(s)])
        pw = C(d.uniform(ps, 0.1, 3.0))
    return [x, t, w], {"reduction": d.reduction(), "pos_weight": pw}


def _classification(d: Draw, probs: bool) -> tuple[Any, Any, int, int]:
    c = d.dim((1, 2, 3, 5), zero=0.0)
    form = d.pick(["C", "NC", "NC", "NCd", "NCdd"])
    n = d.dim((1, 2, 4), zero=0.05)
    extra = tuple(d.dim((1, 2, 3), zero=0.03) for _ in range(form.count("d")))
    xs = (c,) if form == "C" else (n, c, *extra)
    ts = () if form == "C" else (n, *extra)
    x = d.randn(xs, (30.0, -30.0))
    ignore = int(d.pick([-100, -100, 1, 0, -1]))
    if probs:
        t = d.uniform(xs, 0.0, 1.0)
        if d.p(0.5) and t.size:
            t = t / t.sum(axis=0 if form == "C" else 1, keepdims=True)
    else:
        t = d.rng.integers(0, c, ts).astype(np.int64)
        if d.p(0.3) and t.size:
            t[d.rng.random(ts) < 0.3] = ignore
    return x, t, c, ignore


@gen("cross_entropy")
def _cross_entropy(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    probs = d.p(0.35)
    x, t, c, ignore = _classification(d, probs)
    w = C(d.uniform((c,), 0.1, 2.0)) if d.p(0.4) else None
    kw: dict[str, Any] = {"reduction": d.reduction()}
    if d.p(0.5) and not probs:
        kw["ignore_index"] = ignore
    if d.p(0.5):
        kw["label_smoothing"] = float(d.pick([0.1, 0.5, 1.0, 0.0, 1.5]))
    return [x, t, w], kw


@gen("nll_loss")
def _nll(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    x, t, c, ignore = _classification(d, False)
    w = C(d.uniform((c,), 0.1, 2.0)) if d.p(0.4) else None
    kw: dict[str, Any] = {"reduction": d.reduction()}
    if d.p(0.6):
        kw["ignore_index"] = ignore
    return [x, t, w], kw


def _pm1(d: Draw, shape: Any) -> Any:
    t = np.where(d.rng.random(shape) < 0.5, -1.0, 1.0).astype(d.dt)
    return t


@gen("soft_margin_loss")
def _soft_margin(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(0, 3)
    return [d.randn(s, (0.0, 50.0, -50.0)), C(_pm1(d, s))], {"reduction": d.reduction()}


@gen("hinge_embedding_loss")
def _hinge(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(0, 3)
    margin = float(d.pick([1.0, 0.5, 0.0, -1.0]))
    x = d.randn(s, (margin, 0.0))
    return [x, C(_pm1(d, s))], {"margin": margin, "reduction": d.reduction()}


@gen("margin_ranking_loss")
def _margin_ranking(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.pick([(), (d.dim(),), (d.dim(),), (2, 3)])
    x1, x2 = d.randn(s), d.randn(s)
    if d.p(0.2):
        x2 = x1.copy()
    ts = s if not d.p(0.1) else ()
    margin = float(d.pick([0.0, 0.5, -0.5]))
    return [x1, x2, C(_pm1(d, ts))], {"margin": margin, "reduction": d.reduction()}


@gen("cosine_embedding_loss")
def _cosine_embedding(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    dd = d.dim((1, 2, 3, 5), zero=0.0)
    n = d.dim((1, 2, 4))
    s = (dd,) if d.p(0.25) else (n, dd)
    x1, x2 = d.randn(s), d.randn(s)
    if d.p(0.15):
        x2 = np.zeros_like(x2)
    ts = s[:-1]
    margin = float(d.pick([0.0, 0.5, -0.5]))
    return [x1, x2, C(_pm1(d, ts))], {"margin": margin, "reduction": d.reduction()}


@gen("cosine_similarity")
def _cosine_similarity(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    s = d.shape(1, 3, zero=0.03)
    s2 = tuple(1 if d.p(0.2) else v for v in s)
    x1, x2 = d.randn(s), d.randn(s2)
    if d.p(0.15):
        x1 = np.zeros_like(x1)
    kw: dict[str, Any] = {"dim": d.axis(len(s))}
    if d.p(0.3):
        kw["eps"] = float(d.pick([1e-8, 1e-3, 1.0]))
    return [x1, x2], kw


@gen("pairwise_distance")
def _pairwise(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    dd = d.dim((1, 2, 3, 5), zero=0.03)
    n = d.dim((1, 2, 4))
    s1 = d.pick([(dd,), (n, dd), (n, dd)])
    s2 = d.pick([s1, s1, (dd,), (1, dd)])
    x1, x2 = d.randn(s1), d.randn(s2)
    if d.p(0.15) and s1 == s2:
        x2 = x1.copy()
    kw: dict[str, Any] = {}
    if d.p(0.8):
        kw["p"] = float(d.pick([1.0, 2.0, 3.0, 0.5, math.inf, 0.0]))
    if d.p(0.3):
        kw["eps"] = float(d.pick([1e-6, 0.0, 0.1]))
    if d.p(0.4):
        kw["keepdim"] = d.p(0.5)
    return [x1, x2], kw


@gen("triplet_margin_loss")
def _triplet(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    dd = d.dim((1, 2, 3, 5), zero=0.0)
    n = d.dim((1, 2, 4))
    s = (dd,) if d.p(0.2) else (n, dd)
    a, p, ng = d.randn(s), d.randn(s), d.randn(s)
    kw: dict[str, Any] = {"reduction": d.reduction()}
    if d.p(0.6):
        kw["p"] = float(d.pick([1.0, 2.0, 3.0, 0.5]))
    if d.p(0.4):
        kw["swap"] = True
    if d.p(0.4):
        kw["margin"] = float(d.pick([1.0, 0.0, 5.0]))
    if d.p(0.3):
        kw["eps"] = float(d.pick([1e-6, 0.1]))
    return [a, p, ng], kw


# -------------------------------------------------------------------------- misc
@gen("embedding")
def _embedding(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    v, e = d.dim((1, 2, 5), zero=0.0), d.dim((1, 2, 3), zero=0.03)
    s = d.shape(0, 3)
    idx = d.rng.integers(0, v, s).astype(np.int64)
    if d.p(0.05) and idx.size:
        idx.flat[0] = v  # out of range
    w = d.randn((v, e))
    kw: dict[str, Any] = {}
    if d.p(0.4):
        kw["padding_idx"] = int(d.rng.integers(-v, v)) if not d.p(0.05) else v
    if d.p(0.3):
        kw["scale_grad_by_freq"] = True
    return [idx, w], kw


def _unfold_params(d: Draw) -> dict[str, Any]:
    kw: dict[str, Any] = {"kernel_size": d.size(2, [1, 2, 3])}
    for key, ch in (("dilation", [1, 2]), ("padding", [0, 1]), ("stride", [1, 2, 3])):
        if d.p(0.5):
            kw[key] = d.size(2, ch)
    return kw


def _pair2(v: Any) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)  # type: ignore[return-value]


@gen("unfold")
def _unfold(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    c = d.dim((1, 2, 3))
    hw = (d.dim((1, 2, 3, 5)), d.dim((1, 2, 4, 5)))
    batch = d.pick([None, 1, 2, 0])
    x = d.randn((c, *hw) if batch is None else (batch, c, *hw))
    return [x], _unfold_params(d)


@gen("fold")
def _fold(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    c = d.dim((1, 2), zero=0.0)
    kw = _unfold_params(d)
    out = (d.dim((2, 3, 5), zero=0.0), d.dim((2, 4, 5), zero=0.0))
    k, dl, pd, st = (
        _pair2(kw["kernel_size"]),
        _pair2(kw.get("dilation", 1)),
        _pair2(kw.get("padding", 0)),
        _pair2(kw.get("stride", 1)),
    )
    blocks = 1
    for i in range(2):
        blocks *= max((out[i] + 2 * pd[i] - dl[i] * (k[i] - 1) - 1) // st[i] + 1, 0)
    if d.p(0.07):
        blocks += 1
    batch = d.pick([None, 1, 2])
    s = (c * k[0] * k[1], blocks)
    x = d.randn(s if batch is None else (batch, *s))
    return [x, out if d.p(0.7) else out[0] if out[0] == out[1] else out], kw


@gen("pad")
def _pad(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    mode = str(d.pick(["constant", "constant", "reflect", "replicate", "circular"]))
    nd = int(d.rng.integers(1, 6)) if mode == "constant" else int(d.rng.integers(2, 6))
    s = tuple(d.dim((1, 2, 3, 4), zero=0.03) for _ in range(nd))
    npairs = int(d.rng.integers(1, min(nd, 3) + 1))
    lo = -1 if d.p(0.3) else 0
    pads = [int(d.rng.integers(lo, 3)) for _ in range(2 * npairs)]
    if d.p(0.05):
        pads = pads[:-1]
    kw: dict[str, Any] = {"mode": mode}
    if mode == "constant" and d.p(0.5):
        kw["value"] = float(d.pick([0.0, 1.5, -2.0]))
    return [d.randn(s), pads], kw


@gen("interpolate")
def _interpolate(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    mode = str(d.pick(["nearest", "nearest-exact", "linear", "bilinear", "area", "trilinear"]))
    nd = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode, int(d.pick([1, 2])))
    if d.p(0.05):
        nd = 2 if nd == 1 else 1  # wrong rank for the mode
    c, n = d.dim((1, 2)), d.dim((1, 2), zero=0.02)
    spatial = tuple(d.dim((1, 2, 3, 5), zero=0.0) for _ in range(nd))
    x = d.randn((n, c, *spatial))
    kw: dict[str, Any] = {"mode": mode}
    if d.p(0.5):
        kw["size"] = d.size(nd, [1, 2, 3, 4, 7], p_tuple=0.6)
    else:
        if d.p(0.5):
            kw["scale_factor"] = float(d.pick([2.0, 0.5, 1.5, 0.7, 3.0, 1.0, 2.3]))
        else:
            kw["scale_factor"] = tuple(
                float(d.pick([2.0, 0.5, 1.5, 0.7, 3.0, 1.0, 2.3])) for _ in range(nd)
            )
        if d.p(0.4):
            kw["recompute_scale_factor"] = d.p(0.5)
    if mode in ("linear", "bilinear", "trilinear") and d.p(0.6):
        kw["align_corners"] = d.p(0.5)
    elif d.p(0.05):
        kw["align_corners"] = True
    return [x], kw


@gen("scaled_dot_product_attention")
def _sdpa(d: Draw) -> tuple[list[Any], dict[str, Any]]:
    lead = d.pick([(), (2,), (1, 2), (2, 3)])
    L, S, E, Ev = d.dim((1, 2, 3)), d.dim((1, 2, 4)), d.dim((1, 2, 4), zero=0.0), d.dim((1, 3))
    gqa = len(lead) >= 1 and d.p(0.2)
    kv_lead = lead
    if gqa:
        h = lead[-1] * 2
        lead = (*lead[:-1], h)
    q, k, v = d.randn((*lead, L, E)), d.randn((*kv_lead, S, E)), d.randn((*kv_lead, S, Ev))
    kw: dict[str, Any] = {}
    if gqa:
        kw["enable_gqa"] = True
    if d.p(0.4):
        ms = d.pick([(L, S), (1, L, S), (*lead, L, S), (L, 1), (S,)])
        if d.p(0.5):
            m = d.rng.random(ms) < 0.7
            kw["attn_mask"] = m
        else:
            kw["attn_mask"] = C(d.randn(ms))
    if d.p(0.3):
        kw["is_causal"] = True
    if d.p(0.3):
        kw["scale"] = float(d.pick([0.5, 1.0, 2.0]))
    return [q, k, v], kw


def _dropout_like(nd_lo: int, nd_hi: int, default_training: bool) -> Gen:
    def g(d: Draw) -> tuple[list[Any], dict[str, Any]]:
        x = d.randn(tuple(d.dim() for _ in range(int(d.rng.integers(nd_lo, nd_hi + 1)))))
        # deterministic configurations only: evaluation mode, or p = 0.
        p = float(d.pick([0.0, 0.5, 0.3, 1.0, -0.1, 1.1]))
        kw: dict[str, Any] = {"p": p}
        if p not in (0.0,) or not default_training:
            kw["training"] = False
        if p == 0.0 and d.p(0.5):
            kw["training"] = True
        return [x], kw

    return g


GENS["dropout"] = _dropout_like(0, 4, True)
GENS["dropout1d"] = _dropout_like(2, 3, True)
GENS["dropout2d"] = _dropout_like(3, 4, True)
GENS["dropout3d"] = _dropout_like(4, 5, True)
GENS["alpha_dropout"] = _dropout_like(0, 4, False)


# ------------------------------------------------------------------------ running
def _fmt_arg(a: Any) -> str:
    if isinstance(a, C):
        return "C:" + _fmt_arg(a.a)
    if isinstance(a, np.ndarray):
        if 0 < a.size <= 4:
            return f"np.array({a.tolist()!r}, {a.dtype.name})"
        return f"<{a.dtype.name}{tuple(a.shape)}>"
    return repr(a)


def fmt_call(op: str, args: list[Any], kw: dict[str, Any]) -> str:
    parts = [_fmt_arg(a) for a in args] + [f"{k}={_fmt_arg(v)}" for k, v in kw.items()]
    return f"F.{op}({', '.join(parts)})"


def _conv_arg(a: Any, up: bool) -> tuple[Any, str]:
    """(value, kind): kind is 'diff' (float input), 'const' (C), or '' (anything else)."""
    if isinstance(a, C):
        return (a.a.astype(np.float64) if up else a.a.copy()), "const"
    if isinstance(a, np.ndarray):
        if a.dtype.kind == "f":
            return (a.astype(np.float64) if up else a.copy()), "diff"
        return a.copy(), ""
    return a, ""


class Side:
    """One library's results: outputs, gradients, constants after the call, or an error."""

    def __init__(self) -> None:
        self.err: str | None = None
        self.grad_err: str | None = None
        self.outs: list[np.ndarray] = []
        self.grads: list[np.ndarray] = []
        self.consts: list[np.ndarray] = []


def _msg(e: BaseException) -> str:
    text = str(e).splitlines()[0][:160] if str(e) else ""
    return f"{type(e).__name__}: {text}"


def run_torch(op: str, args: list[Any], kw: dict[str, Any], g: Any, up: bool = False) -> Side:
    """Call torch (inputs upcast to float64 when ``up``); ``g`` is the cotangent."""
    side = Side()
    diff: list[Any] = []
    consts: list[Any] = []

    def conv(a: Any) -> Any:
        v, kind = _conv_arg(a, up)
        if not isinstance(v, np.ndarray):
            return v
        t = torch.from_numpy(v)
        if kind == "diff":
            t.requires_grad_(True)
            diff.append(t)
        elif kind == "const":
            consts.append(t)
        return t

    try:
        targs = [conv(a) for a in args]
        tkw = {k: conv(v) for k, v in kw.items()}
        out = getattr(TF, op)(*targs, **tkw)
    except Exception as e:
        side.err = _msg(e)
        return side
    outs = list(out) if isinstance(out, tuple) else [out]
    side.outs = [o.detach().numpy().copy() for o in outs]
    side.consts = [c.numpy().copy() for c in consts]
    o0 = outs[0]
    if op.startswith("max_pool") and bool(torch.isneginf(o0).any()):
        # A window entirely in the padding: torch returns -inf with an index past the end
        # of the input, and its backward writes out of bounds (heap corruption, abort).
        side.grad_err = "a window lies entirely in the padding (torch's backward corrupts memory)"
        return side
    if g is not None and diff and o0.requires_grad:
        try:
            gt = torch.from_numpy(np.asarray(g, dtype=np.float64 if up else g.dtype))
            grads = torch.autograd.grad(o0, diff, gt, allow_unused=True)
            side.grads = [
                np.zeros(t.shape, t.numpy(force=True).dtype) if gr is None else gr.numpy()
                for t, gr in zip(diff, grads, strict=False)
            ]
        except Exception as e:
            side.grad_err = _msg(e)
    elif g is not None and diff:
        side.grads = [np.zeros(t.shape, t.detach().numpy().dtype) for t in diff]
    return side


def run_lampy(op: str, args: list[Any], kw: dict[str, Any], g: Any) -> Side:
    side = Side()
    with lampy.Scope():
        diff: list[Any] = []
        consts: list[np.ndarray] = []

        def conv(a: Any) -> Any:
            v, kind = _conv_arg(a, False)
            if kind == "diff":
                p = lampy.param(v)
                diff.append(p)
                return p
            if kind == "const":
                consts.append(v)
            return v

        try:
            largs = [conv(a) for a in args]
            lkw = {k: conv(v) for k, v in kw.items()}
            out = getattr(LF, op)(*largs, **lkw)
        except Exception as e:
            side.err = _msg(e)
            return side
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        side.outs = [_np(o) for o in outs]
        side.consts = [c.copy() for c in consts]
        o0 = outs[0]
        if g is not None and diff:
            try:
                if isinstance(o0, lampy.Variable) and o0.needs_grad:
                    o0.backward(g)
                side.grads = [
                    p.grad.copy() if p.grad is not None else np.zeros(p.shape, p.dtype)
                    for p in diff
                ]
            except Exception as e:
                side.grad_err = _msg(e)
    return side


def _np(v: Any) -> np.ndarray:
    if isinstance(v, torch.Tensor):
        return v.detach().numpy()
    if isinstance(v, lampy.Variable):
        return v.numpy()
    return np.asarray(v)


def _err(a: np.ndarray, b: np.ndarray, rtol: float, ref: np.ndarray | None = None) -> float:
    """Largest violation ratio (> 1 fails) of ``|a-b| <= rtol*(|b| + max(1, max|b|))``.

    With ``ref`` (torch's float64 result for a float32 case) the bound also grows by
    ``2*|b - ref|``: torch's own float32 rounding error.
    """
    if a.shape != b.shape:
        return math.inf
    if a.size == 0:
        return 0.0
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    same_nonfinite = (~np.isfinite(b64)) & ((a64 == b64) | (np.isnan(a64) & np.isnan(b64)))
    if np.any(~np.isfinite(b64) & ~same_nonfinite) or np.any(~np.isfinite(a64) & np.isfinite(b64)):
        return math.inf
    fin = np.isfinite(b64)
    if not fin.any():
        return 0.0
    scale = max(1.0, float(np.max(np.abs(b64[fin]))))
    bound = rtol * (np.abs(b64[fin]) + scale)
    if ref is not None and ref.shape == b.shape:
        with np.errstate(all="ignore"):
            extra = 2 * np.abs(b64[fin] - ref.astype(np.float64)[fin])
        bound = bound + np.where(np.isfinite(extra), extra, 0.0)
    return float(np.max(np.abs(a64[fin] - b64[fin]) / bound))


class Result:
    def __init__(self, kind: str, detail: str = "", err: float = 0.0) -> None:
        self.kind, self.detail, self.err = kind, detail, err


def _diff_names(args: list[Any], kw: dict[str, Any]) -> list[str]:
    names = [
        f"arg{i}" for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
    ]
    names += [k for k, v in kw.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    return names


def run_case(op: str, args: list[Any], kw: dict[str, Any], seed: int) -> list[Result]:
    """Run one case in both libraries; return the problems (empty when they agree)."""
    probe = run_torch(op, args, kw, None)
    lam0 = None
    if probe.err is not None:
        lam0 = run_lampy(op, args, kw, None)
        if lam0.err is not None:
            return []
        return [Result("torch raises, lampy does not", probe.err)]
    o0 = probe.outs[0]
    dt = np.dtype(o0.dtype)
    g = np.random.default_rng(seed + 1).standard_normal(o0.shape).astype(dt)
    if dt.kind != "f":
        g = None
    tor = run_torch(op, args, kw, g)
    lam = run_lampy(op, args, kw, g)
    if lam.err is not None:
        return [Result("lampy raises, torch does not", lam.err)]
    ref = run_torch(op, args, kw, g, up=True) if dt == np.float32 else None
    if ref is not None and ref.err is not None:
        ref = None
    rtol = RTOL.get(dt, 1e-5)
    slack = FP32_SLACK if dt == np.float32 else 1.0
    problems: list[Result] = []
    if len(tor.outs) != len(lam.outs):
        return [Result("output structure", f"torch {len(tor.outs)} outputs, lampy {len(lam.outs)}")]
    for i, (tn, ln) in enumerate(zip(tor.outs, lam.outs, strict=False)):
        if tn.shape != ln.shape:
            return [Result("shape", f"out[{i}] lampy {ln.shape} vs torch {tn.shape}")]
        if tn.dtype != ln.dtype:
            problems.append(Result("dtype", f"out[{i}] lampy {ln.dtype} vs torch {tn.dtype}"))
        if tn.dtype.kind in "iub":
            if not np.array_equal(tn, ln):
                bad = tuple(np.argwhere(tn != ln)[:3].T)
                problems.append(
                    Result(
                        "integer output", f"out[{i}] lampy {ln[bad]} vs torch {tn[bad]} at {bad}"
                    )
                )
            continue
        r = ref.outs[i] if ref is not None else None
        e = _err(ln, tn, rtol * slack, r)
        if e > 1:
            problems.append(Result("value", _diff_detail(ln, tn, r), e))
    for j, (tc, lc) in enumerate(zip(tor.consts, lam.consts, strict=False)):
        r = ref.consts[j] if ref is not None else None
        e = _err(lc, tc, rtol * slack, r)
        if e > 1:
            problems.append(Result("in-place state", f"const {j}: {_diff_detail(lc, tc, r)}", e))
    if g is None:
        return problems
    if tor.grad_err is not None:
        problems.append(Result("torch backward raises or is unsafe (skipped)", tor.grad_err))
        return problems
    if lam.grad_err is not None:
        problems.append(Result("lampy backward raises", lam.grad_err))
        return problems
    names = _diff_names(args, kw)
    for j, (name, tgn, lgn) in enumerate(zip(names, tor.grads, lam.grads, strict=False)):
        tol = KNOWN_TOL64.get((op, "grad"), rtol) if dt == np.float64 else rtol * slack
        r = ref.grads[j] if ref is not None and ref.grads else None
        e = _err(lgn, tgn, tol, r)
        if e > 1:
            kind = f"grad[{name}]"
            if _torch_nearest_bug(op, kw):
                kind += " (skipped: torch's nearest backward ignores the scale factor)"
            problems.append(Result(kind, _diff_detail(lgn, tgn, r), e))
    return problems


def _torch_nearest_bug(op: str, kw: dict[str, Any]) -> bool:
    """torch's 'nearest' backward with a non-integer scale_factor and no recompute maps
    output to input with out/in sizes while its forward uses 1/scale_factor, so its
    gradient is not the adjoint of its forward (checked by hand: interpolate(arange(3),
    scale_factor=2.3) forwards [0,0,0,1,1,2], and torch's gradient of sum(g*y) is not
    [g0+g1+g2, g3+g4, g5])."""
    sf = kw.get("scale_factor")
    if op != "interpolate" or kw.get("mode") != "nearest" or sf is None:
        return False
    if kw.get("recompute_scale_factor"):
        return False
    sfs = sf if isinstance(sf, tuple) else (sf,)
    return any(float(v) != int(v) for v in sfs)


def _diff_detail(a: np.ndarray, b: np.ndarray, ref: np.ndarray | None = None) -> str:
    if a.shape != b.shape:
        return f"shape lampy {a.shape} vs torch {b.shape}"
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        d = np.array(np.abs(a64 - b64))
        d[np.isnan(a64) != np.isnan(b64)] = np.inf
        d[np.isnan(d)] = 0
    i = np.unravel_index(int(np.argmax(d)), d.shape) if d.size else ()
    s = (
        f"max|diff|={float(d.max()) if d.size else 0:.3g} at {tuple(int(v) for v in i)}: "
        f"lampy {float(a64[i])!r} torch {float(b64[i])!r}"
    )
    if ref is not None and ref.shape == a.shape and a.size:
        s += f" (torch float64: {float(ref[i])!r})"
    return s


def signature_diffs(ops: list[str]) -> list[str]:
    """Parameters of torch's function that lampy's lacks, or whose defaults differ."""
    out = []
    for op in ops:
        try:
            ts = inspect.signature(getattr(TF, op))
        except (TypeError, ValueError):
            continue
        ls = inspect.signature(getattr(LF, op))
        for name, tp in ts.parameters.items():
            if tp.kind in (tp.VAR_POSITIONAL, tp.VAR_KEYWORD):
                continue
            lp = ls.parameters.get(name)
            if lp is None:
                out.append(f"F.{op}: torch parameter {name}={tp.default!r} is missing in lampy")
            elif tp.default is not tp.empty and lp.default != tp.default:
                out.append(
                    f"F.{op}: default of {name}: lampy {lp.default!r} vs torch {tp.default!r}"
                )
            elif tp.kind != lp.kind and not (
                tp.kind == tp.POSITIONAL_OR_KEYWORD and lp.kind == lp.POSITIONAL_OR_KEYWORD
            ):
                out.append(f"F.{op}: {name} is {lp.kind.name} in lampy, {tp.kind.name} in torch")
    return out


def case_seed(op: str, i: int, base: int) -> int:
    return (zlib.crc32(op.encode()) * 1000003 + i * 7919 + base) % (2**32)


def make_case(op: str, i: int, base: int) -> tuple[list[Any], dict[str, Any], int]:
    seed = case_seed(op, i, base)
    rng = np.random.default_rng(seed)
    dtype = np.float64 if i % 2 == 0 else np.float32
    args, kw = GENS[op](Draw(rng, dtype))
    # torch takes None positionally; drop trailing Nones for readability
    return args, kw, seed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=300, help="cases per op")
    ap.add_argument("--op", action="append", help="only these ops")
    ap.add_argument("--case", type=int, help="replay one case index")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()

    ops = sorted(n for n in GENS if hasattr(TF, n) and hasattr(LF, n))
    missing = sorted(
        n for n in dir(LF) if not n.startswith("_") and hasattr(TF, n) and n not in GENS
    )
    if a.op:
        ops = [o for o in ops if o in a.op]
    table: dict[str, dict[str, int]] = {}
    fails: dict[tuple[str, str], list[tuple[int, str, str, float]]] = defaultdict(list)
    for op in ops:
        stats = {"cases": 0, "ok": 0, "both raise": 0}
        idxs = [a.case] if a.case is not None else range(a.n)
        for i in idxs:
            args, kw, seed = make_case(op, i, a.seed)
            stats["cases"] += 1
            call = fmt_call(op, args, kw)
            try:
                res = run_case(op, args, kw, seed)
            except Exception:
                res = [Result("harness error", traceback.format_exc().splitlines()[-1])]
            if a.v:
                print(i, call, [(r.kind, r.detail) for r in res])
            if not res:
                stats["ok"] += 1
                continue
            for r in res:
                stats[r.kind] = stats.get(r.kind, 0) + 1
                size = sum(x.size for x in args if isinstance(x, np.ndarray))
                fails[(op, r.kind)].append((size, f"[case {i}] {call}", r.detail, r.err))
        table[op] = stats

    kinds = sorted({k for s in table.values() for k in s} - {"cases", "ok", "both raise"})
    print(f"{'op':34s} {'cases':>6s} {'ok':>6s}  problems")
    for op, s in table.items():
        probs = ", ".join(f"{k}: {s[k]}" for k in kinds if s.get(k))
        print(f"{op:34s} {s['cases']:6d} {s['ok']:6d}  {probs}")
    if missing:
        print("\nnot covered (no generator):", ", ".join(missing))
    sig = signature_diffs(ops)
    if sig:
        print("\nsignature differences (cosmetic; not counted as failures):")
        for line in sig:
            print("  " + line)
    hard = 0
    for (op, kind), lst in sorted(fails.items()):
        if "skipped" in kind:
            print(f"\n== {op}: {kind} ({len(lst)} cases; not counted)")
            continue
        hard += len(lst)
        print(f"\n== {op}: {kind} ({len(lst)} cases); smallest:")
        for _size, call, detail, _err in sorted(lst, key=lambda t: (t[0], t[1]))[:4]:
            print(f"  {call}\n      -> {detail}")
    print(f"\n{hard} problems; replay one with: .venv/bin/python {sys.argv[0]} --op OP --case I -v")
    return 1 if hard else 0


if __name__ == "__main__":
    sys.exit(main())
