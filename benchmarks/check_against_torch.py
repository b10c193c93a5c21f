"""Cross-check lampy's values and gradients against PyTorch at awkward points.

Ties, zeros, kinks, -inf, repeated indices, decompositions: each case runs the same
function in lampy and in torch (CPU, float64 unless stated) with the same cotangent and
prints whether the values and the gradients agree. A developer tool, not part of the
test suite (which must not need torch):

    pip install torch==2.13.0 && python benchmarks/check_against_torch.py
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import lampy

torch.set_num_threads(1)
FAILED: list[str] = []


def cmp(name: str, lf: Any, tf: Any, *arrays: np.ndarray, g: np.ndarray | None = None) -> None:
    with lampy.Scope():
        ps = [lampy.param(a) for a in arrays]
        out = lf(*ps)
        gg = np.ones(out.shape) if g is None else g
        lampy.backward(out, [gg.astype(out.dtype)])
        lg = [p.grad if p.grad is not None else np.zeros(p.shape) for p in ps]
        lv = out.value.copy()
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    to = tf(*ts)
    to.backward(torch.tensor(gg, dtype=to.dtype))
    tg = [t.grad.numpy() if t.grad is not None else np.zeros(t.shape) for t in ts]
    okv = np.allclose(lv, to.detach().numpy(), equal_nan=True)
    okg = all(np.allclose(a, b, equal_nan=True, atol=1e-12) for a, b in zip(lg, tg, strict=True))
    print(f"{name:28s} value {'ok' if okv else 'DIFF'} grad {'ok' if okg else 'DIFF'}")
    if not (okv and okg):
        FAILED.append(name)


z = np.array([0.0, 1.0, -2.0, 4.0])
cmp("abs at 0", lampy.abs, torch.abs, z)
cmp("sqrt at 0", lampy.sqrt, torch.sqrt, np.array([0.0, 4.0]))
cmp(
    "relu-ish maximum(x,0) tie",
    lambda x: lampy.maximum(x, 0.0),
    lambda x: torch.maximum(x, torch.tensor(0.0, dtype=x.dtype)),
    z,
)
cmp("maximum ties", lampy.maximum, torch.maximum, np.array([1.0, 2.0]), np.array([1.0, 3.0]))
cmp(
    "clip at bounds",
    lambda x: lampy.clip(x, 0.0, 1.0),
    lambda x: torch.clamp(x, 0.0, 1.0),
    np.array([0.0, 0.5, 1.0, 2.0, -1.0]),
)
cmp(
    "amax ties",
    lambda x: lampy.amax(x, axis=0),
    lambda x: torch.amax(x, dim=0),
    np.array([[1.0, 2.0], [1.0, 0.0]]),
)
cmp("max (all) ties", lambda x: lampy.max(x), lambda x: torch.amax(x), np.array([3.0, 3.0, 1.0]))
cmp("pow 0**0, 0**2", lampy.power, torch.pow, np.array([0.0, 0.0, 2.0]), np.array([0.0, 2.0, 3.0]))
cmp("prod with zero", lambda x: lampy.prod(x), torch.prod, np.array([2.0, 0.0, 3.0]))
cmp("prod two zeros", lambda x: lampy.prod(x), torch.prod, np.array([2.0, 0.0, 0.0]))
cmp(
    "cumprod zeros",
    lambda x: lampy.cumprod(x),
    lambda x: torch.cumprod(x, 0),
    np.array([1.0, 2.0, 0.0, 3.0, 0.0]),
)
cmp(
    "logsumexp",
    lambda x: lampy.logsumexp(x, axis=1),
    lambda x: torch.logsumexp(x, 1),
    np.array([[1.0, 2.0, -np.inf], [0.0, 0.0, 0.0]]),
)
cmp("std", lambda x: lampy.std(x, ddof=1), lambda x: torch.std(x), np.array([1.0, 2.0, 4.0]))
cmp(
    "std constant",
    lambda x: lampy.std(x),
    lambda x: torch.std(x, correction=0),
    np.array([2.0, 2.0, 2.0]),
)
cmp("norm at 0", lambda x: lampy.norm(x), torch.linalg.vector_norm, np.zeros(3))
cmp(
    "norm ord 1",
    lambda x: lampy.norm(x, 1),
    lambda x: torch.linalg.vector_norm(x, 1),
    np.array([0.0, -1.0, 2.0]),
)
cmp(
    "sort",
    lambda x: lampy.sort(x),
    lambda x: torch.sort(x).values,
    np.array([3.0, 1.0, 2.0]),
    g=np.array([1.0, 2.0, 3.0]),
)
cmp(
    "topk",
    lambda x: lampy.topk(x, 2).values,
    lambda x: torch.topk(x, 2).values,
    np.array([1.0, 5.0, 3.0, 4.0]),
    g=np.array([1.0, 2.0]),
)
cmp("sign", lampy.sign, torch.sign, z)
cmp("tanh", lampy.tanh, torch.tanh, z)
cmp("log1p", lampy.log1p, torch.log1p, np.array([0.0, 1.0]))
cmp("arctan2 origin", lampy.arctan2, torch.atan2, np.array([0.0, 1.0]), np.array([0.0, 2.0]))
cmp("hypot", lampy.hypot, torch.hypot, np.array([3.0, 1.0]), np.array([4.0, 2.0]))
cmp(
    "where",
    lambda a, b: lampy.where(np.array([True, False]), a, b),
    lambda a, b: torch.where(torch.tensor([True, False]), a, b),
    np.array([1.0, 2.0]),
    np.array([3.0, 4.0]),
)
cmp(
    "var axis",
    lambda x: lampy.var(x, axis=0),
    lambda x: torch.var(x, 0, correction=0),
    np.array([[1.0, 2.0], [3.0, 5.0]]),
)
cmp(
    "einsum trace",
    lambda x: lampy.einsum("ii->", x),
    lambda x: torch.einsum("ii->", x),
    np.arange(9.0).reshape(3, 3),
)
cmp("det", lampy.linalg.det, torch.linalg.det, np.array([[2.0, 1.0], [1.0, 3.0]]))
cmp("inv", lampy.linalg.inv, torch.linalg.inv, np.array([[2.0, 1.0], [1.0, 3.0]]))
cmp("getitem repeats", lambda x: x[[0, 0, 1]], lambda x: x[[0, 0, 1]], np.array([1.0, 2.0]))
cmp(
    "mean",
    lambda x: lampy.mean(x, axis=1),
    lambda x: torch.mean(x, 1),
    np.arange(6.0).reshape(2, 3),
)
cmp("logaddexp", lampy.logaddexp, torch.logaddexp, np.array([1.0, -np.inf]), np.array([2.0, 0.0]))
rng = np.random.default_rng(0)
A = rng.standard_normal((3, 3))
S = A @ A.T + 3 * np.eye(3)
cmp("cholesky", lampy.linalg.cholesky, torch.linalg.cholesky, S)
cmp("solve", lampy.linalg.solve, torch.linalg.solve, S, rng.standard_normal((3, 2)))
cmp("slogdet", lambda x: lampy.linalg.slogdet(x)[1], lambda x: torch.linalg.slogdet(x)[1], A)
cmp("eigvalsh", lampy.linalg.eigvalsh, torch.linalg.eigvalsh, S)
cmp("svdvals", lambda x: lampy.linalg.svd(x, compute_uv=False), torch.linalg.svdvals, A)
cmp("pinv", lampy.linalg.pinv, torch.linalg.pinv, rng.standard_normal((4, 3)))
cmp(
    "matrix_power -2",
    lambda x: lampy.linalg.matrix_power(x, -2),
    lambda x: torch.linalg.matrix_power(x, -2),
    S,
)
cmp("norm fro", lambda x: lampy.linalg.norm(x), lambda x: torch.linalg.matrix_norm(x), A)
cmp(
    "norm nuc",
    lambda x: lampy.linalg.norm(x, "nuc"),
    lambda x: torch.linalg.matrix_norm(x, "nuc"),
    A,
)
cmp("norm 2 matrix", lambda x: lampy.linalg.norm(x, 2), lambda x: torch.linalg.matrix_norm(x, 2), A)
cmp(
    "qr R",
    lambda x: lampy.linalg.qr(x)[1],
    lambda x: torch.linalg.qr(x)[1],
    rng.standard_normal((4, 3)),
)
cmp(
    "matmul 1d@2d bcast",
    lampy.matmul,
    torch.matmul,
    rng.standard_normal(3),
    rng.standard_normal((2, 3, 4)),
)
cmp(
    "broadcast mul",
    lampy.multiply,
    torch.mul,
    rng.standard_normal((2, 1, 3)),
    rng.standard_normal((4, 1)),
)
cmp("f32 tanh", lampy.tanh, torch.tanh, rng.standard_normal(5).astype(np.float32))
cmp(
    "gather",
    lambda x: lampy.gather(x, 1, np.array([[0, 0], [1, 0]])),
    lambda x: torch.gather(x, 1, torch.tensor([[0, 0], [1, 0]])),
    rng.standard_normal((2, 2)),
)
cmp(
    "scatter_add",
    lambda x, s: lampy.scatter_add(x, 0, np.array([[0, 1], [0, 0]]), s),
    lambda x, s: torch.scatter_add(x, 0, torch.tensor([[0, 1], [0, 0]]), s),
    rng.standard_normal((2, 2)),
    rng.standard_normal((2, 2)),
)
cmp(
    "index_add",
    lambda x, s: lampy.index_add(x, 0, np.array([0, 0]), s),
    lambda x, s: torch.index_add(x, 0, torch.tensor([0, 0]), s),
    rng.standard_normal((2, 2)),
    rng.standard_normal((2, 2)),
)
cmp(
    "masked_fill",
    lambda x: lampy.masked_fill(x, np.array([True, False]), 0.0),
    lambda x: x.masked_fill(torch.tensor([True, False]), 0.0),
    rng.standard_normal(2),
)
cmp(
    "cumsum",
    lambda x: lampy.cumsum(x, axis=1),
    lambda x: torch.cumsum(x, 1),
    rng.standard_normal((2, 3)),
)
cmp(
    "pad reflect",
    lambda x: lampy.pad(x, 2, mode="reflect"),
    lambda x: torch.nn.functional.pad(x[None, None], (2, 2), mode="reflect")[0, 0],
    rng.standard_normal(5),
)
cmp("roll", lambda x: lampy.roll(x, 1), lambda x: torch.roll(x, 1), rng.standard_normal(4))
cmp("kron", lampy.kron, torch.kron, rng.standard_normal((2, 2)), rng.standard_normal((2, 3)))
cmp("tril", lambda x: lampy.tril(x, -1), lambda x: torch.tril(x, -1), rng.standard_normal((3, 3)))
cmp(
    "einsum batch",
    lambda a, b: lampy.einsum("bij,bjk->bik", a, b),
    lambda a, b: torch.einsum("bij,bjk->bik", a, b),
    rng.standard_normal((2, 2, 3)),
    rng.standard_normal((2, 3, 2)),
)
cmp("fmax nan", lampy.fmax, torch.fmax, np.array([np.nan, 1.0]), np.array([2.0, np.nan]))

print(f"{len(FAILED)} disagreements" + (": " + ", ".join(FAILED) if FAILED else ""))
