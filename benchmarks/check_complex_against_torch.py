"""Cross-check lampy's complex values and gradients against PyTorch at awkward points.

Every op declared for complex values (``lampy.autograd._complex.complex_ops()``), the
real-valued ops of complex inputs (``abs``, ``var``, ``std``, ``norm``, ``eigvalsh``,
``svd``'s values, ``slogdet``'s log-modulus) and ``lampy.fft`` against ``torch.fft``:
each case runs the same mathematical function in lampy and in torch (CPU) and compares
the values and the gradients of a real loss. For a complex output the loss is
``sum(w * |out|**2) + Re(sum(conj(c) * out))`` (``w`` real, ``c`` complex, both fixed
and random), seeded as its gradient ``2 w out + c``; for a real output it is
``sum(w * out)``; for an output fixed only up to a gauge (eigenvectors, singular
vectors) the case composes a gauge-invariant function first. Where numpy's forward
semantics differ from torch's (numpy's vdot and correlate conjugate, numpy's pad and
split signatures...), the torch side spells out numpy's function.

Awkward points: complex with real operands broadcast both ways, real inputs of complex
results, 0-d and empty arrays, complex64, repeated indices, ``abs``/``angle`` at 0,
complex and integer exponents, ``sqrt``/``log`` just off the negative real axis,
reductions with axes and keepdims, batched matmul. Then second order: gradients of
gradients (``create_graph=True``) and ``lampy.hessian`` against ``torch.autograd.grad``.

A developer tool, not part of the test suite (which must not need torch):

    pip install torch==2.13.0 && python benchmarks/check_complex_against_torch.py

Prints one row per case (value ok/DIFF, gradient ok/DIFF, the largest relative
differences) and a summary; exits 1 if any case differs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

import lampy
from lampy import fft as lfft
from lampy import linalg as lla
from lampy.autograd._complex import complex_ops

torch.set_num_threads(1)
RNG = np.random.default_rng(0)
ROWS: list[tuple[str, bool, bool, float, float, str]] = []
COVERED: set[str] = set()


def cz(*shape: int, dtype: Any = np.complex128) -> np.ndarray:
    """A random complex array, parts standard normal."""
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def rz(*shape: int) -> np.ndarray:
    """A random real array."""
    return RNG.standard_normal(shape)


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (list, tuple)):
        return [o for x in out for o in _flat(x)]
    return [out]


def _seed(v: np.ndarray, gauge: bool) -> np.ndarray:
    """The gradient of the case's real loss with respect to an output of value ``v``."""
    w = RNG.uniform(0.5, 1.5, v.shape)
    if v.dtype.kind != "c":
        return w.astype(v.dtype)
    g = 2 * w * v
    if not gauge:
        g = g + (RNG.standard_normal(v.shape) + 1j * RNG.standard_normal(v.shape))
    return g.astype(v.dtype)


def _tensor(a: np.ndarray, grad: bool) -> torch.Tensor:
    t = torch.tensor(np.asarray(a))
    if grad and (t.is_floating_point() or t.is_complex()):
        t.requires_grad_(True)
    return t


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().resolve_conj().resolve_neg().numpy()


def _rel(a: Any, b: Any) -> float:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return np.inf
    if a.size == 0:
        return 0.0
    scale = max(1.0, float(np.max(np.abs(b))))
    return float(np.max(np.abs(a - b))) / scale


def case(
    name: str,
    lf: Callable[..., Any],
    tf: Callable[..., Any],
    *arrays: Any,
    ops: Sequence[str] = (),
    gauge: bool = False,
    tol: float | None = None,
    diff: bool = True,
    project: Callable[[np.ndarray], np.ndarray] | None = None,
) -> None:
    """Compare ``lf(*params)`` with ``tf(*tensors)``: values and the gradient of every
    input (floating or complex arrays are differentiated; others are passed as they are)."""
    COVERED.update(ops)
    arrs = [np.asarray(a) for a in arrays]
    grads_of = [diff and a.dtype.kind in "fc" for a in arrs]
    single = any(a.dtype in (np.complex64, np.float32) for a in arrs)
    tol = tol if tol is not None else (2e-5 if single else 1e-9)
    note = ""
    try:
        with lampy.Scope():
            ps = [lampy.param(a) if d else a for a, d in zip(arrs, grads_of, strict=True)]
            louts = _flat(lf(*ps))
            lvals = [np.asarray(getattr(o, "value", o)).copy() for o in louts]
            seeds = [_seed(v, gauge) for v in lvals]
            live = [i for i, o in enumerate(louts) if getattr(o, "needs_grad", False)]
            if live:  # (an output may be a constant: angle of a real input)
                lampy.backward([louts[i] for i in live], [seeds[i] for i in live])
            lgrads = [
                (p.grad if p.grad is not None else np.zeros(p.shape, p.dtype)) if d else None
                for p, d in zip(ps, grads_of, strict=True)
            ]
    except Exception as e:
        ROWS.append((name, False, False, np.inf, np.inf, f"lampy: {type(e).__name__}: {e}"))
        return
    ts = [_tensor(a, d) for a, d in zip(arrs, grads_of, strict=True)]
    try:
        touts = _flat(tf(*ts))
    except Exception as e:
        ROWS.append((name, False, False, np.inf, np.inf, f"torch: {type(e).__name__}: {e}"))
        return
    kinds = [
        (np.asarray(v).dtype.kind, _np(o).dtype.kind) for v, o in zip(lvals, touts, strict=True)
    ]
    if any(("c" in k) and k[0] != k[1] for k in kinds):
        ROWS.append((name, False, False, np.inf, np.inf, f"value kinds lampy/torch: {kinds}"))
        return
    tvals = [_np(o) for o in touts]
    roots = [
        (o, torch.tensor(s.astype(_np(o).dtype) if s.dtype.kind == "c" == _np(o).dtype.kind else s))
        for o, s in zip(touts, seeds, strict=True)
        if o.requires_grad
    ]
    if roots:
        torch.autograd.backward([r[0] for r in roots], [r[1] for r in roots])
    dv = max([_rel(a, b) for a, b in zip(lvals, tvals, strict=True)] or [0.0])
    dg = 0.0
    for lg, t, d in zip(lgrads, ts, grads_of, strict=True):
        if not d:
            continue
        tg = _np(t.grad) if t.grad is not None else np.zeros(t.shape, lg.dtype)
        if project is not None:
            lg, tg = project(lg), project(tg)
        if lg.dtype != tg.dtype:
            note += f" grad dtype {lg.dtype} vs {tg.dtype};"
            dg = max(dg, _rel(lg, tg) if lg.dtype.kind == tg.dtype.kind else np.inf)
        else:
            dg = max(dg, _rel(lg, tg))
    for lv, tv in zip(lvals, tvals, strict=True):
        if lv.dtype != tv.dtype:
            note += f" value dtype {lv.dtype} vs {tv.dtype};"
    ROWS.append((name, dv <= tol, dg <= tol and "grad dtype" not in note, dv, dg, note))


def second(name: str, loss: Callable[[Any, Any], Any], z: np.ndarray, tol: float = 1e-9) -> None:
    """Second order: ``g = dL/dz`` recorded, then the gradient of the real
    ``M = sum(w |g|^2) + Re(sum(conj(c) g))``, in lampy and in torch."""
    w = RNG.uniform(0.5, 1.5, z.shape)
    c = RNG.standard_normal(z.shape) + 1j * RNG.standard_normal(z.shape)
    try:
        with lampy.Scope():
            p = lampy.param(z)
            (g,) = lampy.gradients(loss(lampy, p), [p], create_graph=True)
            m = (w * (lampy.real(g) ** 2 + lampy.imag(g) ** 2)).sum() + lampy.real(
                lampy.conj(c) * g
            ).sum()
            lampy.backward(m)
            lg1, lg2 = np.asarray(g.value).copy(), p.grad.copy()
    except Exception as e:
        ROWS.append((name, False, False, np.inf, np.inf, f"lampy: {type(e).__name__}: {e}"))
        return
    t = torch.tensor(z, requires_grad=True)
    (tg,) = torch.autograd.grad(loss(torch, t), [t], create_graph=True)
    tm = (torch.tensor(w) * tg.abs() ** 2).sum() + (torch.tensor(c).conj() * tg).real.sum()
    (tg2,) = torch.autograd.grad(tm, [t])
    d1, d2 = _rel(lg1, _np(tg)), _rel(lg2, _np(tg2))
    ROWS.append((name, d1 <= tol, d2 <= tol, d1, d2, "value = first gradient"))


def hessian(name: str, loss: Callable[[Any, Any], Any], z: np.ndarray) -> None:
    """``lampy.hessian`` of a real loss of a complex ``z`` against torch: row ``k`` is the
    gradient of ``Re(g_k)`` (a reverse-mode Jacobian's row seeded with a real 1)."""
    try:
        lh = np.asarray(lampy.hessian(lambda v: loss(lampy, v))(z))
    except Exception as e:
        ROWS.append((name, False, False, np.inf, np.inf, f"lampy: {type(e).__name__}: {e}"))
        return
    t = torch.tensor(z, requires_grad=True)
    (tg,) = torch.autograd.grad(loss(torch, t), [t], create_graph=True)
    rows = [
        torch.autograd.grad(tg.reshape(-1)[k].real, [t], retain_graph=True)[0]
        for k in range(z.size)
    ]
    th = torch.stack(rows).reshape(z.shape + z.shape)
    th = _np(th)
    d = _rel(lh, th)
    ROWS.append((name, True, d <= 1e-9, 0.0, d, "rows: grad of Re(g_k)"))


# --------------------------------------------------------------------------------------
# the namespaces, so that one lambda serves both sides where the names agree
T = torch


def P(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` with its tensor arguments promoted to one dtype (torch's matmul, dot, outer...
    want one; numpy promotes, and the real input's gradient is the real part)."""

    def call(*ts: Any) -> Any:
        dt = ts[0].dtype
        for t in ts[1:]:
            dt = torch.promote_types(dt, t.dtype)
        return f(*[t.to(dt) for t in ts])

    return call


def both(fn: Callable[..., Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``fn(np_like_module, *args)`` as a lampy function and a torch function."""
    return (lambda *a: fn(lampy, *a)), (lambda *a: fn(torch, *a))


# ----------------------------------------------------------------------- elementwise
Z = cz(5)
Z_NEAR_CUT = np.array([-2 + 1e-3j, -2 - 1e-3j, -0.5 + 0.01j, -3 - 0.02j, 1 + 1j])
UNARY: dict[str, Callable[..., Any]] = {
    "square": torch.square,
    "reciprocal": torch.reciprocal,
    "sqrt": torch.sqrt,
    "exp": torch.exp,
    "exp2": lambda t: torch.pow(2.0, t),
    "expm1": torch.expm1,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "log1p": torch.log1p,
    "sin": torch.sin,
    "cos": torch.cos,
    "tan": torch.tan,
    "arcsin": torch.asin,
    "arccos": torch.acos,
    "arctan": torch.atan,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "tanh": torch.tanh,
    "arcsinh": torch.asinh,
    "arccosh": torch.acosh,
    "arctanh": torch.atanh,
    "sinc": torch.sinc,
    "negative": torch.negative,
    "positive": lambda t: +t,
    "conj": lambda t: torch.conj(t) * 1,
    "real": lambda t: torch.real(t) * 1,
    "imag": lambda t: torch.imag(t) * 1,
    "abs": torch.abs,
    "angle": torch.angle,
}
for op, tfn in UNARY.items():
    lfn = getattr(lampy, op)
    case(op, lfn, tfn, Z, ops=[op])
    case(f"{op} complex64", lfn, tfn, cz(4, dtype=np.complex64), ops=[op])
    case(f"{op} 0-d", lfn, tfn, cz()[()] if False else np.array(0.3 - 0.7j), ops=[op])
    case(f"{op} empty", lfn, tfn, cz(0, 3), ops=[op])
for op in ("sqrt", "log", "log2", "log10", "arcsin", "arccos", "arccosh", "arctanh"):
    case(f"{op} near the negative axis", getattr(lampy, op), UNARY[op], Z_NEAR_CUT)
case("abs at 0", lampy.abs, torch.abs, np.array([0j, 1 + 1j, -2j]))
case("angle at 0", lampy.angle, torch.angle, np.array([0j, 1 + 1j, -2j]))
case("angle of a real input", lampy.angle, torch.angle, np.array([-1.0, 0.0, 2.0]))
case("abs**2 at 0", lambda v: lampy.abs(v) ** 2, lambda t: t.abs() ** 2, np.array([0j, 1j]))
case("real of a real input", lampy.real, lambda t: torch.real(t) * 1, rz(3))
case(
    "real_if_close (imag 0)",
    lampy.real_if_close,
    lambda t: t.real * 1,
    rz(3) + 0j,
    ops=["real_if_close"],
)
case(
    "real_if_close (stays complex)", lampy.real_if_close, lambda t: t * 1, Z, ops=["real_if_close"]
)
case(
    "Variable .real .imag .conj() .angle()",
    lambda v: v.real * v.imag + v.conj() * v.angle(),
    lambda t: t.real * t.imag + t.conj() * t.angle(),
    Z,
)

# binary, with broadcasting both ways and real operands
BINARY: dict[str, Callable[..., Any]] = {
    "add": torch.add,
    "subtract": torch.subtract,
    "multiply": torch.multiply,
    "divide": torch.divide,
    "power": torch.pow,
}
for op, tfn in BINARY.items():
    lfn = getattr(lampy, op)
    case(f"{op} c,c", lfn, tfn, cz(2, 3), cz(2, 3), ops=[op])
    case(f"{op} c(2,3),r(3)", lfn, tfn, cz(2, 3), rz(3) + 2, ops=[op])
    case(f"{op} r(2,1),c(3)", lfn, tfn, rz(2, 1) + 2, cz(3), ops=[op])
    case(f"{op} c(),c(4)", lfn, tfn, np.array(0.5 + 1j), cz(4), ops=[op])
    case(f"{op} c64,c64", lfn, tfn, cz(3, dtype=np.complex64), cz(3, dtype=np.complex64), ops=[op])
    case(f"{op} empty", lfn, tfn, cz(0), cz(1), ops=[op])
case("power c ** int 3", lambda v: v**3, lambda t: t**3, Z)
case("power c ** int -2", lambda v: v**-2, lambda t: t**-2, Z)
case("power c ** 0.5", lambda v: v**0.5, lambda t: t**0.5, Z)
case("power c ** complex const", lambda v: v ** (1 + 2j), lambda t: t ** (1 + 2j), Z)
case("power 2 ** c", lambda v: 2.0**v, lambda t: 2.0**t, Z)
case("power real ** complex", lampy.power, torch.pow, rz(3) ** 2 + 0.5, cz(3))
case("power c ** 2 at 0", lambda v: v**2, lambda t: t**2, np.array([0j, 1j]))
case("divide real by complex", lampy.divide, torch.divide, rz(4), cz(4))
case("divide 1/c", lambda v: 1 / v, lambda t: 1 / t, Z)
case("real * complex const", lambda v: v * (1 + 2j), lambda t: t * (1 + 2j), rz(3))
case(
    "astype real->complex",
    lambda v: v.astype(np.complex128) * (1 - 1j),
    lambda t: t.to(torch.complex128) * (1 - 1j),
    rz(3),
    ops=["astype"],
)
case(
    "astype c128->c64",
    lambda v: lampy.astype(v, np.complex64),
    lambda t: t.to(torch.complex64),
    Z,
    ops=["astype"],
    tol=1e-6,
)
case("copy", lampy.copy, torch.clone, Z, ops=["copy"])


# ------------------------------------------------------------------------ reductions
A23 = cz(2, 3)
A234 = cz(2, 3, 4)
for kw, tkw in (
    ({}, {}),
    ({"axis": 1}, {"dim": 1}),
    ({"axis": (0, 2), "keepdims": True}, {"dim": (0, 2), "keepdim": True}),
):
    tag = " ".join(f"{k}={v}" for k, v in kw.items()) or "all"
    case(
        f"sum {tag}",
        lambda v, kw=kw: lampy.sum(v, **kw),
        lambda t, tkw=tkw: torch.sum(t, **tkw),
        A234,
        ops=["sum"],
    )
    case(
        f"nansum {tag}",
        lambda v, kw=kw: lampy.nansum(v, **kw),
        lambda t, tkw=tkw: torch.sum(t, **tkw),
        A234,
        ops=["nansum"],
    )
    case(
        f"mean {tag}",
        lambda v, kw=kw: lampy.mean(v, **kw),
        lambda t, tkw=tkw: torch.mean(t, **tkw),
        A234,
        ops=["mean"],
    )
    case(
        f"nanmean {tag}",
        lambda v, kw=kw: lampy.nanmean(v, **kw),
        lambda t, tkw=tkw: torch.mean(t, **tkw),
        A234,
        ops=["nanmean"],
    )
    for ddof in (0, 1):
        case(
            f"var ddof={ddof} {tag}",
            lambda v, kw=kw, d=ddof: lampy.var(v, ddof=d, **kw),
            lambda t, tkw=tkw, d=ddof: torch.var(t, correction=d, **tkw),
            A234,
        )
        case(
            f"std ddof={ddof} {tag}",
            lambda v, kw=kw, d=ddof: lampy.std(v, ddof=d, **kw),
            lambda t, tkw=tkw, d=ddof: torch.std(t, correction=d, **tkw),
            A234,
        )
case(
    "sum of a mixed real*complex",
    lambda a, b: lampy.sum(a * b, axis=0),
    lambda a, b: torch.sum(a * b, 0),
    rz(3, 2),
    cz(2),
    ops=["sum"],
)
case("sum empty", lambda v: lampy.sum(v, axis=0), lambda t: t.sum(0), cz(0, 3), ops=["sum"])
case("mean 0-d", lampy.mean, torch.mean, np.array(1 - 2j), ops=["mean"])
case(
    "var real of complex64",
    lambda v: lampy.var(v, axis=0),
    lambda t: t.var(0, correction=0),
    cz(4, 2, dtype=np.complex64),
)
case("prod all", lampy.prod, torch.prod, cz(5), ops=["prod"])
case(
    "prod axis=1 keepdims",
    lambda v: lampy.prod(v, axis=1, keepdims=True),
    lambda t: torch.prod(t, 1, keepdim=True),
    A23,
    ops=["prod"],
)
case("prod with a zero", lampy.prod, torch.prod, np.array([1 + 1j, 0j, 2 - 1j]), ops=["prod"])
case("prod with two zeros", lampy.prod, torch.prod, np.array([1 + 1j, 0j, 0j]), ops=["prod"])
case("prod empty", lampy.prod, torch.prod, cz(0), ops=["prod"])
case(
    "nanprod axis=0",
    lambda v: lampy.nanprod(v, axis=0),
    lambda t: torch.prod(t, 0),
    A23,
    ops=["nanprod"],
)
case(
    "cumsum axis=1",
    lambda v: lampy.cumsum(v, axis=1),
    lambda t: torch.cumsum(t, 1),
    A23,
    ops=["cumsum"],
)
case("cumsum flat", lampy.cumsum, lambda t: torch.cumsum(t.reshape(-1), 0), A23, ops=["cumsum"])
case(
    "nancumsum axis=0",
    lambda v: lampy.nancumsum(v, axis=0),
    lambda t: torch.cumsum(t, 0),
    A23,
    ops=["nancumsum"],
)
case(
    "cumprod axis=1",
    lambda v: lampy.cumprod(v, axis=1),
    lambda t: torch.cumprod(t, 1),
    A23,
    ops=["cumprod"],
)
case(
    "cumprod with zero",
    lampy.cumprod,
    lambda t: torch.cumprod(t, 0),
    np.array([1 + 1j, 0j, 2 - 1j, 0.5j]),
    ops=["cumprod"],
)
case(
    "nancumprod axis=0",
    lambda v: lampy.nancumprod(v, axis=0),
    lambda t: torch.cumprod(t, 0),
    A23,
    ops=["nancumprod"],
)
case("trace", lampy.trace, torch.trace, cz(3, 3), ops=["trace"])
case(
    "average weights real",
    lambda v: lampy.average(v, axis=1, weights=np.array([1.0, 2, 3])),
    lambda t: (t * torch.tensor([1.0, 2, 3])).sum(1) / 6,
    A23,
    ops=["average"],
)
case(
    "average weights complex (param)",
    lambda v, w: lampy.average(v, axis=1, weights=w),
    lambda t, w: (t * w).sum(1) / w.sum(),
    A23,
    cz(3),
    ops=["average"],
)
case(
    "average real a, complex weights",
    lambda v, w: lampy.average(v, weights=w),
    lambda t, w: (t * w).sum() / w.sum(),
    rz(3),
    cz(3),
    ops=["average"],
)
case("average plain", lampy.average, torch.mean, A23, ops=["average"])

# -------------------------------------------------------------------------- products
case("matmul batched", lampy.matmul, torch.matmul, cz(2, 3, 4), cz(4, 2), ops=["matmul"])
case("matmul c @ r batched", lampy.matmul, P(torch.matmul), cz(3, 4), rz(2, 4, 2), ops=["matmul"])
case("matmul r @ c", lampy.matmul, P(torch.matmul), rz(3, 4), cz(4), ops=["matmul"])
case("matmul 1d@1d", lampy.matmul, torch.matmul, cz(4), cz(4), ops=["matmul"])
case(
    "matmul @ operator c64",
    lambda a, b: a @ b,
    lambda a, b: a @ b,
    cz(3, 3, dtype=np.complex64),
    cz(3, 2, dtype=np.complex64),
    ops=["matmul"],
)
case("matmul empty inner", lampy.matmul, torch.matmul, cz(2, 0), cz(0, 3), ops=["matmul"])
case("dot 1d", lampy.dot, torch.dot, cz(4), cz(4), ops=["dot"])
case("dot 2d r,c", lampy.dot, P(torch.matmul), rz(2, 3), cz(3, 2), ops=["dot"])
case("inner", lampy.inner, torch.inner, cz(2, 3), cz(4, 3), ops=["inner"])
case("outer", lampy.outer, P(torch.outer), cz(3), rz(2), ops=["outer"])
case("vdot (numpy's: conj first)", lampy.vdot, torch.vdot, cz(4), cz(4), ops=["vdot"])
case(
    "vdot 2d flattens",
    lampy.vdot,
    lambda a, b: torch.vdot(a.reshape(-1), b.reshape(-1)),
    cz(2, 2),
    cz(2, 2),
    ops=["vdot"],
)
case(
    "vdot real, complex",
    lampy.vdot,
    lambda a, b: torch.vdot(a.to(b.dtype), b),
    rz(3),
    cz(3),
    ops=["vdot"],
)
case(
    "vdot complex, real",
    lampy.vdot,
    lambda a, b: torch.vdot(a, b.to(a.dtype)),
    cz(3),
    rz(3),
    ops=["vdot"],
)
case(
    "tensordot axes=2",
    lambda a, b: lampy.tensordot(a, b, axes=2),
    lambda a, b: torch.tensordot(a, b, dims=2),
    cz(2, 3, 4),
    cz(3, 4, 2),
    ops=["tensordot"],
)
case(
    "tensordot axes lists",
    lambda a, b: lampy.tensordot(a, b, axes=([0], [1])),
    P(lambda a, b: torch.tensordot(a, b, dims=([0], [1]))),
    cz(3, 2),
    rz(4, 3),
    ops=["tensordot"],
)
for spec, shapes in (
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ii->", [(3, 3)]),
    ("ij->j", [(3, 2)]),
    ("i,i->", [(4,), (4,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
):
    arrs = [cz(*s) for s in shapes]
    case(
        f"einsum {spec}",
        lambda *v, s=spec: lampy.einsum(s, *v),
        lambda *t, s=spec: torch.einsum(s, *t),
        *arrs,
        ops=["einsum"],
    )
case(
    "einsum r,c",
    lambda a, b: lampy.einsum("ij,jk->ik", a, b),
    lambda a, b: torch.einsum("ij,jk->ik", a.to(b.dtype), b),
    rz(2, 3),
    cz(3, 2),
    ops=["einsum"],
)
case("kron", lampy.kron, torch.kron, cz(2, 2), cz(2, 3), ops=["kron"])
case("kron r,c", lampy.kron, lambda a, b: torch.kron(a.to(b.dtype), b), rz(2), cz(3), ops=["kron"])
case("cross", lampy.cross, lambda a, b: torch.linalg.cross(a, b), cz(2, 3), cz(2, 3), ops=["cross"])
case(
    "cross c,r",
    lampy.cross,
    lambda a, b: torch.linalg.cross(a, b.to(a.dtype)),
    cz(3),
    rz(3),
    ops=["cross"],
)


def _t_polyval(p: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    y = torch.zeros_like(x * p[0])
    for k in range(p.shape[0]):
        y = y * x + p[k]
    return y


case("polyval c p, c x", lampy.polyval, _t_polyval, cz(4), cz(3), ops=["polyval"])
case("polyval r p, c x", lampy.polyval, _t_polyval, rz(3), cz(3), ops=["polyval"])
case("polyval c p, r x", lampy.polyval, _t_polyval, cz(3), rz(3), ops=["polyval"])


def _t_conv_full(a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    n, m = a.shape[0], v.shape[0]
    dt = (a.reshape(-1)[:1] * v.reshape(-1)[:1]).dtype if n and m else a.dtype
    i = (torch.arange(n)[:, None] + torch.arange(m)[None, :]).reshape(-1)
    out = torch.zeros(n + m - 1, dtype=dt)
    return out.index_add(0, i, (a[:, None] * v[None, :]).reshape(-1))


def _t_conv(a: torch.Tensor, v: torch.Tensor, mode: str) -> torch.Tensor:
    full = _t_conv_full(a, v)
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return full
    if mode == "same":
        length = max(n, m)
        start = (min(n, m) - 1) // 2
        return full[start : start + length]
    return full[min(n, m) - 1 : max(n, m)]


def _t_corr(a: torch.Tensor, v: torch.Tensor, mode: str) -> torch.Tensor:
    # numpy: c[k] = sum_n a[n + k] conj(v[n]) = convolve(a, conj(v[::-1]))
    return _t_conv(a, torch.flip(v, [0]).conj(), mode)


def _t_conv2(a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    (n1, n2), (m1, m2) = a.shape, v.shape
    out = torch.zeros(n1 + m1 - 1, n2 + m2 - 1, dtype=a.dtype)
    for k in range(m1):
        for j in range(m2):
            out = out + torch.nn.functional.pad(a * v[k, j], (j, m2 - 1 - j, k, m1 - 1 - k))
    return out


for mode in ("full", "same", "valid"):
    case(
        f"convolve {mode}",
        lambda a, v, m=mode: lampy.convolve(a, v, m),
        lambda a, v, m=mode: _t_conv(a, v, m),
        cz(5),
        cz(3),
        ops=["convolve"],
    )
    case(
        f"convolve {mode} r,c",
        lambda a, v, m=mode: lampy.convolve(a, v, m),
        lambda a, v, m=mode: _t_conv(a.to(v.dtype), v, m),
        rz(4),
        cz(3),
        ops=["convolve"],
    )
    case(
        f"correlate {mode}",
        lambda a, v, m=mode: lampy.correlate(a, v, m),
        lambda a, v, m=mode: _t_corr(a, v, m),
        cz(5),
        cz(3),
        ops=["correlate"],
    )
    case(
        f"correlate {mode} c,r",
        lambda a, v, m=mode: lampy.correlate(a, v, m),
        lambda a, v, m=mode: _t_corr(a, v.to(a.dtype), m),
        cz(5),
        rz(2),
        ops=["correlate"],
    )
    case(
        f"signal.convolve {mode}",
        lambda a, v, m=mode: lampy.signal.convolve(a, v, m),
        lambda a, v, m=mode: _t_conv(a, v, m),
        cz(6),
        cz(3),
        ops=["signal.convolve"],
    )
case(
    "correlate short a (numpy swaps)",
    lambda a, v: lampy.correlate(a, v, "full"),
    lambda a, v: _t_corr(a, v, "full"),
    cz(2),
    cz(4),
    ops=["correlate"],
)
case(
    "signal.convolve 2-d",
    lambda a, v: lampy.signal.convolve(a, v),
    lambda a, v: _t_conv2(a, v),
    cz(3, 4),
    cz(2, 2),
    ops=["signal.convolve"],
)


# ------------------------------------------------------------------- shapes, joining
B = cz(2, 3, 4)
SHAPES: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    ("reshape", lambda v: lampy.reshape(v, (4, 6)), lambda t: t.reshape(4, 6)),
    ("ravel", lampy.ravel, lambda t: t.reshape(-1)),
    ("transpose", lampy.transpose, lambda t: t.permute(2, 1, 0)),
    ("permute_dims", lambda v: lampy.permute_dims(v, (1, 0, 2)), lambda t: t.permute(1, 0, 2)),
    ("matrix_transpose", lampy.matrix_transpose, lambda t: t.transpose(-1, -2)),
    ("swapaxes", lambda v: lampy.swapaxes(v, 0, 2), lambda t: t.transpose(0, 2)),
    ("moveaxis", lambda v: lampy.moveaxis(v, 0, -1), lambda t: torch.movedim(t, 0, -1)),
    ("rollaxis", lambda v: lampy.rollaxis(v, 2), lambda t: torch.movedim(t, 2, 0)),
    ("squeeze", lambda v: lampy.squeeze(v[:1]), lambda t: t[:1].squeeze(0)),
    ("expand_dims", lambda v: lampy.expand_dims(v, 1), lambda t: t.unsqueeze(1)),
    (
        "broadcast_to",
        lambda v: lampy.broadcast_to(v[:, :1], (3, 2, 3, 4)),
        lambda t: torch.broadcast_to(t[:, :1], (3, 2, 3, 4)),
    ),
    (
        "broadcast_arrays",
        lambda v: lampy.broadcast_arrays(v, v[0, :, :1])[1],
        lambda t: torch.broadcast_tensors(t, t[0, :, :1])[1],
    ),
    ("atleast_1d", lambda v: lampy.atleast_1d(v[0, 0, 0]), lambda t: t[0, 0, 0].reshape(1)),
    ("atleast_2d", lambda v: lampy.atleast_2d(v[0, 0]), lambda t: t[0, 0][None]),
    ("atleast_3d", lambda v: lampy.atleast_3d(v[0]), lambda t: t[0][:, :, None]),
    ("diagonal", lambda v: lampy.diagonal(v, 1, 1, 2), lambda t: torch.diagonal(t, 1, 1, 2)),
    ("diag", lambda v: lampy.diag(v[0]), lambda t: torch.diag(t[0])),
    ("diag of 1-d", lambda v: lampy.diag(v[0, 0], 1), lambda t: torch.diag(t[0, 0], 1)),
    ("tril", lambda v: lampy.tril(v, -1), lambda t: torch.tril(t, -1)),
    ("triu", lambda v: lampy.triu(v, 1), lambda t: torch.triu(t, 1)),
    ("flip", lambda v: lampy.flip(v, 1), lambda t: torch.flip(t, [1])),
    ("fliplr", lampy.fliplr, lambda t: torch.flip(t, [1])),
    ("flipud", lampy.flipud, lambda t: torch.flip(t, [0])),
    ("rot90", lambda v: lampy.rot90(v, 1, (1, 2)), lambda t: torch.rot90(t, 1, (1, 2))),
    ("roll", lambda v: lampy.roll(v, 2, 2), lambda t: torch.roll(t, 2, 2)),
    ("tile", lambda v: lampy.tile(v, (2, 1, 1)), lambda t: torch.tile(t, (2, 1, 1))),
    ("repeat", lambda v: lampy.repeat(v, 2, 1), lambda t: torch.repeat_interleave(t, 2, 1)),
    (
        "repeat counts",
        lambda v: lampy.repeat(v, [1, 0, 3], 1),
        lambda t: torch.repeat_interleave(t, torch.tensor([1, 0, 3]), 1),
    ),
    ("getitem slices", lambda v: v[:, ::-2, 1], lambda t: torch.flip(t, [1])[:, ::2, 1]),
    ("getitem repeats", lambda v: v[[0, 0, 1], :, [1, 1, 3]], lambda t: t[[0, 0, 1], :, [1, 1, 3]]),
    ("getitem mask", lambda v: v[B.real > 0], lambda t: t[torch.tensor(B.real > 0)]),
    (
        "take repeats",
        lambda v: lampy.take(v, [0, 0, 5, 5, 23]),
        lambda t: t.reshape(-1)[[0, 0, 5, 5, 23]],
    ),
    (
        "take axis=2 repeats",
        lambda v: lampy.take(v, [3, 3, 0], axis=2),
        lambda t: t[:, :, [3, 3, 0]],
    ),
    (
        "take_along_axis",
        lambda v: lampy.take_along_axis(v, np.zeros((2, 3, 5), int) + 1, 2),
        lambda t: torch.take_along_dim(t, torch.ones(2, 3, 5, dtype=torch.long), 2),
    ),
    ("compress", lambda v: lampy.compress([True, False, True], v, axis=1), lambda t: t[:, [0, 2]]),
    (
        "index_select repeats",
        lambda v: lampy.index_select(v, 1, [2, 2, 0]),
        lambda t: torch.index_select(t, 1, torch.tensor([2, 2, 0])),
    ),
    (
        "gather repeats",
        lambda v: lampy.gather(v, 2, np.zeros((2, 3, 2), int)),
        lambda t: torch.gather(t, 2, torch.zeros(2, 3, 2, dtype=torch.long)),
    ),
    (
        "fft.fftshift",
        lambda v: lfft.fftshift(v, axes=(1, 2)),
        lambda t: torch.fft.fftshift(t, dim=(1, 2)),
    ),
    ("fft.ifftshift", lfft.ifftshift, torch.fft.ifftshift),
]
for label, lfn, tfn in SHAPES:
    op = label.split()[0]
    case(label, lfn, tfn, B, ops=[op])
case("ravel 0-d", lampy.ravel, lambda t: t.reshape(-1), np.array(1 + 1j), ops=["ravel"])
case(
    "reshape empty",
    lambda v: lampy.reshape(v, (3, 0)),
    lambda t: t.reshape(3, 0),
    cz(0, 3),
    ops=["reshape"],
)
JOIN: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    (
        "concatenate",
        lambda a, b: lampy.concatenate([a, b], 1),
        P(lambda a, b: torch.cat([a, b], 1)),
    ),
    ("stack", lambda a, b: lampy.stack([a, b], 2), P(lambda a, b: torch.stack([a, b], 2))),
    ("hstack", lambda a, b: lampy.hstack([a, b]), P(lambda a, b: torch.hstack([a, b]))),
    ("vstack", lambda a, b: lampy.vstack([a, b]), P(lambda a, b: torch.vstack([a, b]))),
    (
        "column_stack",
        lambda a, b: lampy.column_stack([a, b]),
        P(lambda a, b: torch.column_stack([a, b])),
    ),
    ("append", lampy.append, P(lambda a, b: torch.cat([a.reshape(-1), b.reshape(-1)]))),
]
for label, lfn, tfn in JOIN:
    case(f"{label} c,c", lfn, tfn, cz(2, 3), cz(2, 3), ops=[label])
    case(f"{label} c,r", lfn, tfn, cz(2, 3), rz(2, 3), ops=[label])
SPLITS: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    ("split", lambda v: lampy.split(v, 2, 2), lambda t: torch.tensor_split(t, 2, 2)),
    ("split at", lambda v: lampy.split(v, [1, 3], 2), lambda t: torch.tensor_split(t, [1, 3], 2)),
    ("array_split", lambda v: lampy.array_split(v, 3, 2), lambda t: torch.tensor_split(t, 3, 2)),
    ("hsplit", lambda v: lampy.hsplit(v, 3), lambda t: torch.tensor_split(t, 3, 1)),
    ("vsplit", lambda v: lampy.vsplit(v, 2), lambda t: torch.tensor_split(t, 2, 0)),
    ("dsplit", lambda v: lampy.dsplit(v, 2), lambda t: torch.tensor_split(t, 2, 2)),
]
for label, lfn, tfn in SPLITS:
    case(label, lfn, tfn, B, ops=[label.split()[0]])
case(
    "split one part used",
    lambda v: lampy.split(v, 2, 2)[1],
    lambda t: torch.tensor_split(t, 2, 2)[1],
    B,
    ops=["split"],
)

# ------------------------------------------------------- selection, scatter, padding
COND = np.array([[True, False, True], [False, False, True]])
case(
    "where c,c",
    lambda a, b: lampy.where(COND, a, b),
    lambda a, b: torch.where(torch.tensor(COND), a, b),
    cz(2, 3),
    cz(3),
    ops=["where"],
)
case(
    "where c,r",
    lambda a, b: lampy.where(COND, a, b),
    P(lambda a, b: torch.where(torch.tensor(COND), a, b)),
    cz(2, 3),
    rz(2, 1),
    ops=["where"],
)
case(
    "where c, complex const",
    lambda a: lampy.where(COND, a, 2 - 1j),
    lambda a: torch.where(torch.tensor(COND), a.to(torch.complex128), 2 - 1j),
    rz(2, 3),
    ops=["where"],
)
case(
    "select",
    lambda a, b: lampy.select([COND, ~COND], [a, b], 1j),
    lambda a, b: torch.where(torch.tensor(COND), a, b),
    cz(2, 3),
    cz(2, 3),
    ops=["select"],
)
case(
    "select with default param",
    lambda a, d: lampy.select([COND], [a], d),
    lambda a, d: torch.where(torch.tensor(COND), a, d),
    cz(2, 3),
    cz(3),
    ops=["select"],
)
case(
    "masked_fill complex value",
    lambda a: lampy.masked_fill(a, COND, 1 + 2j),
    lambda a: a.masked_fill(torch.tensor(COND), 1 + 2j),
    cz(2, 3),
    ops=["masked_fill"],
)
case(
    "masked_fill complex param value",
    lambda a, v: lampy.masked_fill(a, COND, v),
    lambda a, v: torch.where(torch.tensor(COND), v, a),
    cz(2, 3),
    np.array(0.5 - 1j),
    ops=["masked_fill"],
)
# numpy's assignment semantics: a real array keeps its dtype, the value's real part
case(
    "masked_fill real x, complex value",
    lambda a, v: lampy.masked_fill(a, COND, v),
    lambda a, v: torch.where(torch.tensor(COND), v.real, a),
    rz(2, 3),
    np.array(0.5 - 1j),
    ops=["masked_fill"],
)
IDX = np.array([0, 2, 0, 0])
case(
    "index_add repeats",
    lambda x, s: lampy.index_add(x, 0, IDX, s),
    lambda x, s: x.index_add(0, torch.tensor(IDX), s),
    cz(3, 2),
    cz(4, 2),
    ops=["index_add"],
)
case(
    "index_add alpha",
    lambda x, s: lampy.index_add(x, 0, IDX, s, alpha=2.5),
    lambda x, s: x.index_add(0, torch.tensor(IDX), s, alpha=2.5),
    cz(3, 2),
    cz(4, 2),
    ops=["index_add"],
)
case(
    "index_add real x, complex src",
    lambda x, s: lampy.index_add(x, 0, IDX, s),
    P(lambda x, s: x.index_add(0, torch.tensor(IDX), s)),
    rz(3, 2),
    cz(4, 2),
    ops=["index_add"],
)
SIDX = np.array([[0, 0], [1, 0], [0, 0]])
case(
    "scatter_add repeats",
    lambda x, s: lampy.scatter_add(x, 0, SIDX, s),
    lambda x, s: x.scatter_add(0, torch.tensor(SIDX), s),
    cz(2, 2),
    cz(3, 2),
    ops=["scatter_add"],
)
case(
    "scatter_add complex x, real src",
    lambda x, s: lampy.scatter_add(x, 0, SIDX, s),
    P(lambda x, s: x.scatter_add(0, torch.tensor(SIDX), s)),
    cz(2, 2),
    rz(3, 2),
    ops=["scatter_add"],
)
PIDX = np.array([[2], [0]])
case(
    "put_along_axis",
    lambda a, v: lampy.put_along_axis(a, PIDX, v, 1),
    lambda a, v: a.scatter(1, torch.tensor(PIDX), v),
    cz(2, 3),
    cz(2, 1),
    ops=["put_along_axis"],
)
case(
    "put_along_axis real a, complex v",
    lambda a, v: lampy.put_along_axis(a, PIDX, v, 1),
    lambda a, v: a.scatter(1, torch.tensor(PIDX), v.real),
    rz(2, 3),
    cz(2, 1),
    ops=["put_along_axis"],
)
case(
    "pad constant 0",
    lambda a: lampy.pad(a, ((1, 0), (0, 2))),
    lambda a: torch.nn.functional.pad(a, (0, 2, 1, 0)),
    cz(2, 3),
    ops=["pad"],
)
case(
    "pad complex constant",
    lambda a: lampy.pad(a, 1, constant_values=1 - 1j),
    lambda a: torch.nn.functional.pad(a - (1 - 1j), (1, 1, 1, 1)) + (1 - 1j),
    cz(2, 3),
    ops=["pad"],
)
case(
    "pad real with complex constant",
    lambda a: lampy.pad(a, 1, constant_values=2j),
    lambda a: torch.nn.functional.pad(a, (1, 1)),
    rz(3),
    ops=["pad"],
)
case(
    "diff", lambda a: lampy.diff(a, axis=0), lambda a: torch.diff(a, dim=0), cz(3, 2), ops=["diff"]
)
case("diff n=2", lambda a: lampy.diff(a, 2), lambda a: torch.diff(a, 2), cz(5), ops=["diff"])
case(
    "diff prepend complex",
    lambda a, p: lampy.diff(a, prepend=p),
    P(lambda a, p: torch.diff(a, prepend=p)),
    rz(4),
    cz(1),
    ops=["diff"],
)


def _t_gradient(f: torch.Tensor) -> torch.Tensor:  # numpy.gradient, unit spacing, edge 1
    mid = (f[2:] - f[:-2]) / 2
    return torch.cat([f[1:2] - f[:1], mid, f[-1:] - f[-2:-1]])


case("gradient", lampy.gradient, _t_gradient, cz(5), ops=["gradient"])
case(
    "gradient spacing",
    lambda f: lampy.gradient(f, 0.5),
    lambda t: _t_gradient(t) / 0.5,
    cz(4),
    ops=["gradient"],
)
case(
    "linspace complex ends",
    lambda a, b: lampy.linspace(a, b, 5),
    lambda a, b: a + (b - a) * torch.linspace(0, 1, 5, dtype=torch.float64),
    np.array(1 + 1j),
    np.array(-2 + 3j),
    ops=["linspace"],
)
case(
    "linspace real start, complex stop",
    lambda a, b: lampy.linspace(a, b, 4, endpoint=False),
    lambda a, b: a + (b - a) * torch.arange(4, dtype=torch.float64) / 4,
    np.array(1.0),
    np.array(-2 + 3j),
    ops=["linspace"],
)
case(
    "full complex fill",
    lambda v: lampy.full((2, 3), v),
    lambda v: v * torch.ones(2, 3, dtype=torch.float64),
    np.array(1 - 2j),
    ops=["full"],
)
case(
    "full of a real fill cast first",
    lambda v: lampy.full((2,), v.astype(complex)) * 1j,
    lambda v: v.to(torch.complex128) * torch.ones(2, dtype=torch.float64) * 1j,
    np.array(1.5),
    ops=["full"],
)


# ----------------------------------------------------------------------- linear algebra
def _herm(n: int, dtype: Any = np.complex128) -> np.ndarray:
    a = cz(n, n)
    return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


def _recompose(res: Any) -> Any:  # V diag(w) V^H, lampy
    w, v = res
    return lampy.matmul(v * w, lampy.conj(lampy.matrix_transpose(v)))


def _t_recompose(res: Any) -> Any:
    w, v = res
    return (v * w) @ v.mH


def _eig_inv(res: Any) -> Any:  # free of the eigenvectors' phases and of their order
    w, v = res
    return ((v.real**2 + v.imag**2) * w).sum(1)


def _svd_rec(res: Any) -> Any:
    u, s, vh = res
    return (u * s) @ vh


def _svd_abs(res: Any) -> Any:
    u, s, _ = res
    return ((u.real**2 + u.imag**2) * s).sum(1)


def _t_sqrtm(a: torch.Tensor) -> torch.Tensor:  # V sqrt(L) V^-1 (principal branch)
    w, v = torch.linalg.eig(a)
    return (v * torch.sqrt(w)) @ torch.linalg.inv(v)


def _t_sylvester(a: torch.Tensor, b: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    # a x + x b = q, vectorised by columns: (I (x) a + b^T (x) I) vec(x) = vec(q)
    n, m = a.shape[0], b.shape[0]
    k = torch.kron(torch.eye(m, dtype=a.dtype), a) + torch.kron(
        b.T.contiguous(), torch.eye(n, dtype=a.dtype)
    )
    return torch.linalg.solve(k, q.T.contiguous().reshape(-1)).reshape(m, n).T


M = cz(3, 3) + 3 * np.eye(3)
M_BATCH = cz(2, 3, 3) + 3 * np.eye(3)
H = _herm(3)
LIN: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = [
    ("inv", lla.inv, torch.linalg.inv, (M,)),
    ("inv batched", lla.inv, torch.linalg.inv, (M_BATCH,)),
    ("det", lla.det, torch.linalg.det, (M,)),
    ("det batched", lla.det, torch.linalg.det, (M_BATCH,)),
    ("solve", lla.solve, torch.linalg.solve, (M, cz(3, 2))),
    (
        "solve real a, complex b",
        lla.solve,
        P(torch.linalg.solve),
        (rz(3, 3) + 3 * np.eye(3), cz(3, 2)),
    ),
    ("solve complex a, real b", lla.solve, P(torch.linalg.solve), (M, rz(3))),
    (
        "matrix_power 3",
        lambda a: lla.matrix_power(a, 3),
        lambda a: torch.linalg.matrix_power(a, 3),
        (M,),
    ),
    (
        "matrix_power -2",
        lambda a: lla.matrix_power(a, -2),
        lambda a: torch.linalg.matrix_power(a, -2),
        (M,),
    ),
    (
        "matrix_power 0",
        lambda a: lla.matrix_power(a, 0) * a,
        lambda a: torch.linalg.matrix_power(a, 0) * a,
        (M,),
    ),
    (
        "multi_dot",
        lambda a, b, c: lla.multi_dot([a, b, c]),
        P(lambda a, b, c: torch.linalg.multi_dot([a, b, c])),
        (cz(2, 3), rz(3, 4), cz(4, 2)),
    ),
    ("slogdet logabsdet", lambda a: lla.slogdet(a)[1], lambda a: torch.linalg.slogdet(a)[1], (M,)),
    # lampy's sign is a constant numpy array (documented): for a complex matrix its
    # gradient (through the phase of det) is dropped, where torch's is not
    (
        "slogdet sign (lampy: a constant)",
        lambda a: lla.slogdet(a)[0],
        lambda a: torch.linalg.slogdet(a)[0],
        (M,),
    ),
    (
        "slogdet both (lampy: sign a constant)",
        lambda a: list(lla.slogdet(a)),
        lambda a: list(torch.linalg.slogdet(a)),
        (M_BATCH,),
    ),
    ("eigvalsh", lla.eigvalsh, torch.linalg.eigvalsh, (H,)),
    ("eigh values", lambda a: lla.eigh(a)[0], lambda a: torch.linalg.eigh(a)[0], (H,)),
    (
        "eigh |vectors|^2 (gauge-free)",
        lambda a: lampy.abs(lla.eigh(a)[1]) ** 2,
        lambda a: torch.linalg.eigh(a)[1].abs() ** 2,
        (H,),
    ),
    (
        "eigh V diag(w) V^H",
        lambda a: _recompose(lla.eigh(a)),
        lambda a: _t_recompose(torch.linalg.eigh(a)),
        (H,),
    ),
    (
        "eigvals sym. poly",
        lambda a: (lla.eigvals(a) ** 3).sum(),
        lambda a: (torch.linalg.eigvals(a) ** 3).sum(),
        (M,),
    ),
    (
        "eigvals of a real matrix",
        lambda a: (lla.eigvals(a) ** 2 * 1j).sum() + lla.eigvals(a).prod(),
        lambda a: (torch.linalg.eigvals(a) ** 2 * 1j).sum() + torch.linalg.eigvals(a).prod(),
        (rz(4, 4),),
    ),
    (
        "eig |V|^2 weighted by w",
        lambda a: _eig_inv(lla.eig(a)),
        lambda a: _eig_inv(torch.linalg.eig(a)),
        (M,),
    ),
    ("svd values", lambda a: lla.svd(a, compute_uv=False), torch.linalg.svdvals, (cz(3, 2),)),
    (
        "svd values batched c64",
        lambda a: lla.svd(a, compute_uv=False),
        torch.linalg.svdvals,
        (cz(2, 2, 3, dtype=np.complex64),),
    ),
    (
        "svd U diag(s) Vh",
        lambda a: _svd_rec(lla.svd(a, full_matrices=False)),
        lambda a: _svd_rec(torch.linalg.svd(a, full_matrices=False)),
        (cz(4, 3),),
    ),
    (
        "svd |U|^2 s",
        lambda a: _svd_abs(lla.svd(a, full_matrices=False)),
        lambda a: _svd_abs(torch.linalg.svd(a, full_matrices=False)),
        (cz(3, 4),),
    ),
    ("qr R", lambda a: lla.qr(a)[1], lambda a: torch.linalg.qr(a)[1], (cz(4, 3),)),
    ("qr Q", lambda a: lla.qr(a)[0], lambda a: torch.linalg.qr(a)[0], (cz(4, 3),)),
    ("pinv", lla.pinv, torch.linalg.pinv, (cz(4, 3),)),
    ("pinv wide", lla.pinv, torch.linalg.pinv, (cz(2, 3),)),
    (
        "lstsq",
        lambda a, b: lla.lstsq(a, b)[0],
        lambda a, b: torch.linalg.lstsq(a, b, driver="gelsd")[0],
        (cz(5, 3), cz(5, 2)),
    ),
    ("norm vector 2", lla.norm, torch.linalg.vector_norm, (cz(5),)),
    ("norm vector 2 at 0", lla.norm, torch.linalg.vector_norm, (np.zeros(3, complex),)),
    ("norm vector 1", lambda a: lla.norm(a, 1), lambda a: torch.linalg.vector_norm(a, 1), (cz(5),)),
    (
        "norm vector inf",
        lambda a: lla.norm(a, np.inf),
        lambda a: torch.linalg.vector_norm(a, np.inf),
        (cz(5),),
    ),
    ("norm vector 3", lambda a: lla.norm(a, 3), lambda a: torch.linalg.vector_norm(a, 3), (cz(5),)),
    ("norm fro", lla.norm, torch.linalg.matrix_norm, (cz(3, 4),)),
    (
        "norm fro axis keepdims",
        lambda a: lla.norm(a, axis=(1, 2), keepdims=True),
        lambda a: torch.linalg.matrix_norm(a, keepdim=True),
        (cz(2, 3, 4),),
    ),
    (
        "norm axis=1",
        lambda a: lla.norm(a, axis=1),
        lambda a: torch.linalg.vector_norm(a, dim=1),
        (cz(3, 4),),
    ),
    (
        "norm nuc",
        lambda a: lla.norm(a, "nuc"),
        lambda a: torch.linalg.matrix_norm(a, "nuc"),
        (cz(3, 4),),
    ),
    (
        "norm 2 (matrix)",
        lambda a: lla.norm(a, 2),
        lambda a: torch.linalg.matrix_norm(a, 2),
        (cz(3, 4),),
    ),
    (
        "norm -2 (matrix)",
        lambda a: lla.norm(a, -2),
        lambda a: torch.linalg.matrix_norm(a, -2),
        (cz(3, 4),),
    ),
    (
        "norm 1 (matrix)",
        lambda a: lla.norm(a, 1),
        lambda a: torch.linalg.matrix_norm(a, 1),
        (cz(3, 4),),
    ),
    (
        "norm inf (matrix)",
        lambda a: lla.norm(a, np.inf),
        lambda a: torch.linalg.matrix_norm(a, np.inf),
        (cz(3, 4),),
    ),
    ("sqrtm", lla.sqrtm, _t_sqrtm, (H,)),
    ("sqrtm non-normal", lla.sqrtm, _t_sqrtm, (M,)),
    ("solve_sylvester", lla.solve_sylvester, _t_sylvester, (M, cz(2, 2) + 2 * np.eye(2), cz(3, 2))),
    (
        "solve_sylvester real a",
        lla.solve_sylvester,
        P(_t_sylvester),
        (rz(3, 3) + 3 * np.eye(3), cz(2, 2), rz(3, 2)),
    ),
]
for label, lfn, tfn, args in LIN:
    case(label, lfn, tfn, *args, ops=[label.split()[0]])


def _herm_part(g: np.ndarray) -> np.ndarray:
    return (g + np.conj(np.swapaxes(g, -1, -2))) / 2


# lampy's cholesky rule is PyTorch's made Hermitian (documented: they differ by a
# skew-Hermitian term that no Hermitian perturbation of the input sees)
case(
    "cholesky (Hermitian part of grad)",
    lla.cholesky,
    torch.linalg.cholesky,
    H,
    project=_herm_part,
    ops=["cholesky"],
)
case(
    "cholesky complex64 (Hermitian part)",
    lla.cholesky,
    torch.linalg.cholesky,
    _herm(3, np.complex64),
    project=_herm_part,
)

# ----------------------------------------------------------------------------- fft
X = cz(6, 5)
XR = rz(6, 5)
FFT: list[tuple[str, Callable[..., Any], Callable[..., Any], Any]] = [
    ("fft", lambda v: lfft.fft(v), lambda t: torch.fft.fft(t), X),
    ("fft real input", lambda v: lfft.fft(v), lambda t: torch.fft.fft(t), XR),
    (
        "fft n=8 ortho axis=0",
        lambda v: lfft.fft(v, 8, 0, "ortho"),
        lambda t: torch.fft.fft(t, 8, 0, "ortho"),
        X,
    ),
    (
        "fft n=3 forward (cut)",
        lambda v: lfft.fft(v, 3, norm="forward"),
        lambda t: torch.fft.fft(t, 3, norm="forward"),
        X,
    ),
    ("fft complex64", lambda v: lfft.fft(v), lambda t: torch.fft.fft(t), cz(4, dtype=np.complex64)),
    ("ifft", lambda v: lfft.ifft(v), lambda t: torch.fft.ifft(t), X),
    (
        "ifft n=7 ortho",
        lambda v: lfft.ifft(v, 7, norm="ortho"),
        lambda t: torch.fft.ifft(t, 7, norm="ortho"),
        X,
    ),
    ("ifft real input", lambda v: lfft.ifft(v, axis=0), lambda t: torch.fft.ifft(t, dim=0), XR),
    ("fft2", lambda v: lfft.fft2(v), lambda t: torch.fft.fft2(t), X),
    ("fft2 s=(4,7)", lambda v: lfft.fft2(v, (4, 7)), lambda t: torch.fft.fft2(t, (4, 7)), X),
    (
        "ifft2 forward",
        lambda v: lfft.ifft2(v, norm="forward"),
        lambda t: torch.fft.ifft2(t, norm="forward"),
        X,
    ),
    ("fftn", lambda v: lfft.fftn(v), lambda t: torch.fft.fftn(t), cz(2, 3, 4)),
    (
        "fftn axes=(0,2) s",
        lambda v: lfft.fftn(v, (3, 5), (0, 2)),
        lambda t: torch.fft.fftn(t, (3, 5), (0, 2)),
        cz(2, 3, 4),
    ),
    ("ifftn", lambda v: lfft.ifftn(v), lambda t: torch.fft.ifftn(t), cz(2, 3, 4)),
    ("rfft", lambda v: lfft.rfft(v), lambda t: torch.fft.rfft(t), XR),
    (
        "rfft n=7 ortho",
        lambda v: lfft.rfft(v, 7, norm="ortho"),
        lambda t: torch.fft.rfft(t, 7, norm="ortho"),
        XR,
    ),
    ("rfft n=4 (cut) axis=0", lambda v: lfft.rfft(v, 4, 0), lambda t: torch.fft.rfft(t, 4, 0), XR),
    ("rfft2", lambda v: lfft.rfft2(v), lambda t: torch.fft.rfft2(t), XR),
    ("rfftn", lambda v: lfft.rfftn(v), lambda t: torch.fft.rfftn(t), rz(2, 3, 4)),
    ("irfft (even n)", lambda v: lfft.irfft(v), lambda t: torch.fft.irfft(t), cz(5)),
    ("irfft n=9 (odd)", lambda v: lfft.irfft(v, 9), lambda t: torch.fft.irfft(t, 9), cz(5)),
    (
        "irfft n=4 (cut) ortho",
        lambda v: lfft.irfft(v, 4, norm="ortho"),
        lambda t: torch.fft.irfft(t, 4, norm="ortho"),
        cz(5),
    ),
    ("irfft n=12 (padded)", lambda v: lfft.irfft(v, 12), lambda t: torch.fft.irfft(t, 12), cz(5)),
    ("irfft real input", lambda v: lfft.irfft(v), lambda t: torch.fft.irfft(t), rz(5)),
    ("irfft2", lambda v: lfft.irfft2(v), lambda t: torch.fft.irfft2(t), cz(4, 3)),
    (
        "irfft2 s=(4,5)",
        lambda v: lfft.irfft2(v, (4, 5)),
        lambda t: torch.fft.irfft2(t, (4, 5)),
        cz(4, 3),
    ),
    ("irfftn", lambda v: lfft.irfftn(v), lambda t: torch.fft.irfftn(t), cz(2, 3, 3)),
    (
        "irfft(rfft(x)) round trip",
        lambda v: lfft.irfft(lfft.rfft(v), 5),
        lambda t: torch.fft.irfft(torch.fft.rfft(t), 5),
        rz(5),
    ),
]
for label, lfn, tfn, arr in FFT:
    case(label, lfn, tfn, arr, ops=["fft." + label.split()[0]])
case("fft of an empty batch", lambda v: lfft.fft(v), lambda t: t * 1, cz(0, 4), ops=["fft.fft"])

# --------------------------------------------------------------------- second order
Z3 = cz(3)
SECOND: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("|z|^4 sum", lambda m, z: (m.abs(z) ** 4).sum()),
    ("Re(exp(z) * conj(z))", lambda m, z: m.real(m.exp(z) * m.conj(z)).sum()),
    ("|log(z)|^2", lambda m, z: (m.abs(m.log(z)) ** 2).sum()),
    ("Im(z^3) + |z|", lambda m, z: m.imag(z**3).sum() + m.abs(z).sum()),
    ("angle(z) * |sin z|^2", lambda m, z: (m.angle(z) * m.abs(m.sin(z)) ** 2).sum()),
    ("|fft(z)|^2 weighted", lambda m, z: (m.abs(m.fft.fft(z)) ** 2 * m.arange(3.0)).sum()),
    ("|z z^T|^2 (outer)", lambda m, z: (m.abs(m.outer(z, z)) ** 2).sum()),
]
for label, fn in SECOND:
    second(f"2nd order {label}", fn, Z3)
    hessian(f"hessian {label}", fn, Z3)
second("2nd order |det(Z)|^2", lambda m, z: m.abs(m.linalg.det(z)) ** 2, cz(2, 2) + 2 * np.eye(2))
second(
    "2nd order Re(tr inv(Z))",
    lambda m, z: m.real(m.trace(m.linalg.inv(z))),
    cz(2, 2) + 2 * np.eye(2),
)


# ---------------------------------------------------------------------------- table
def main() -> int:
    width = max(len(r[0]) for r in ROWS) + 2
    print(f"{'case':{width}s} value grad   max rel diff (value, grad)")
    for name, okv, okg, dv, dg, note in ROWS:
        mark = lambda ok: "ok  " if ok else "DIFF"
        print(f"{name:{width}s} {mark(okv)}  {mark(okg)}   {dv:9.2e} {dg:9.2e}  {note}".rstrip())
    bad = [r[0] for r in ROWS if not (r[1] and r[2])]
    finite = [r for r in ROWS if np.isfinite(r[3]) and np.isfinite(r[4])]
    declared = set(complex_ops()) - {"saved", "sum_to"}  # (internal: the engine's own)
    missing = sorted(declared - COVERED)
    print(
        f"\n{len(ROWS)} cases, {len(ROWS) - len(bad)} agree, {len(bad)} differ; "
        f"max rel diff: value {max(r[3] for r in finite):.1e}, grad {max(r[4] for r in finite):.1e}"
    )
    print(f"declared complex ops covered: {len(declared) - len(missing)} of {len(declared)}")
    if missing:
        print("not covered:", ", ".join(missing))
    if bad:
        print("differ:", ", ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
