"""Benchmark cases of the products and matrix-structure ops (forward + backward).

Inputs have 10^5 or more elements. Each baseline is the plain numpy forward followed by
the hand-written gradient, written the way one would by hand: matrix products as
``@``/``tensordot`` (BLAS), einsum gradients as the matching ``@`` or ``einsum`` calls,
diagonal gradients by filling a zero array. torch and mygrad are imported lazily inside
the lambdas so this module imports without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.ops._diagonal import diag, diagonal, trace, tril, triu
from lampy.ops._einsum import einsum
from lampy.ops._products import dot, inner, kron, matmul, outer, tensordot, vdot

from ._case import Case

Arrays = list[np.ndarray]


def _normal(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], Arrays]:
    return lambda rng: [rng.standard_normal(s) for s in shapes]


def _torch(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(torch, *tensors)``, torch imported at the call."""

    def call(*t: Any) -> Any:
        import torch

        return fn(torch, *t)

    return call


def _mygrad(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(mygrad, *tensors)``, mygrad imported at the call."""

    def call(*t: Any) -> Any:
        import mygrad

        return fn(mygrad, *t)

    return call


# ---------------------------------------------------------------- baselines
def _matmul_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    a @ b
    return [g @ b.T, a.T @ g]


def _batched_matmul_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs  # (B, n, k) @ (k, m): fold the batch into the rows for b's gradient
    a @ b
    k, m = b.shape
    return [g @ b.T, a.reshape(-1, k).T @ g.reshape(-1, m)]


def _dot_nd_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs  # (p, n, k) . (q, k, m) -> (p, n, q, m)
    np.dot(a, b)
    da = np.tensordot(g, b, axes=([2, 3], [0, 2]))  # (p, n, k)
    db = np.tensordot(a, g, axes=([0, 1], [0, 1]))  # (k, q, m)
    return [da, db.transpose(1, 0, 2)]


def _vdot_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    np.vdot(a, b)
    return [g * b, g * a]


def _inner_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    np.inner(a, b)
    return [g @ b, g.T @ a]


def _outer_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    np.outer(a, b)
    return [g @ b, a @ g]


def _tensordot_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs  # (p, q, r) x (r, q, s) over ([1, 2], [1, 0]) -> (p, s)
    np.tensordot(a, b, axes=([1, 2], [1, 0]))
    da = np.tensordot(g, b, axes=([1], [2])).transpose(0, 2, 1)  # (p, r, q) -> (p, q, r)
    db = np.tensordot(a, g, axes=([0], [0])).transpose(1, 0, 2)  # (q, r, s) -> (r, q, s)
    return [da, db]


def _einsum_mm_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    np.einsum("ij,jk->ik", a, b, optimize=True)
    return [g @ b.T, a.T @ g]


def _einsum_bmm_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    np.einsum("bij,bjk->bik", a, b, optimize=True)
    return [g @ b.transpose(0, 2, 1), a.transpose(0, 2, 1) @ g]


def _einsum_rowdot_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    np.einsum("ij,ij->i", a, b)
    return [g[:, None] * b, g[:, None] * a]


def _einsum_chain_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b, c = inputs
    ab = a @ b
    bc = b @ c
    ab @ c
    return [g @ bc.T, a.T @ g @ c.T, ab.T @ g]


def _einsum_diag_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs
    np.einsum("ii->i", a).copy()
    d = np.zeros_like(a)
    np.fill_diagonal(d, g)
    return [d]


def _einsum_outer_sum_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs  # 'ij->j': a column sum
    np.einsum("ij->j", a)
    return [np.broadcast_to(g, a.shape).copy()]


def _trace_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs
    np.trace(a)
    return [np.eye(a.shape[0]) * g]


def _diagonal_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs
    np.diagonal(a, 1)
    d = np.zeros_like(a)
    i = np.arange(g.shape[0])
    d[i, i + 1] = g
    return [d]


def _diag_build_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (v,) = inputs
    np.diag(v)
    return [np.diagonal(g).copy()]


def _tril_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs
    np.tril(a)
    return [np.tril(g)]


def _triu_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs
    np.triu(a, 1)
    return [np.triu(g, 1)]


def _kron_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    np.kron(a, b)
    (p, q), (r, s) = a.shape, b.shape
    g4 = g.reshape(p, r, q, s)
    da = np.einsum("prqs,rs->pq", g4, b, optimize=True)
    return [da, np.einsum("prqs,pq->rs", g4, a, optimize=True)]


CASES: list[Case] = [
    Case(
        name="matmul (400, 500) @ (500, 300)",
        family="matmul",
        make_inputs=_normal((400, 500), (500, 300)),
        lampy_fn=matmul,
        numpy_fwd_bwd=_matmul_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.matmul(a, b)),
        mygrad_fn=_mygrad(lambda mg, a, b: mg.matmul(a, b)),
    ),
    Case(
        name="matmul batched (64, 100, 50) @ (50, 80)",
        family="matmul",
        make_inputs=_normal((64, 100, 50), (50, 80)),
        lampy_fn=matmul,
        numpy_fwd_bwd=_batched_matmul_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.matmul(a, b)),
        mygrad_fn=_mygrad(lambda mg, a, b: mg.matmul(a, b)),
    ),
    Case(
        name="dot (20, 50, 100) . (30, 100, 20)",
        family="matmul",
        make_inputs=_normal((20, 50, 100), (30, 100, 20)),
        lampy_fn=dot,
        numpy_fwd_bwd=_dot_nd_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.tensordot(a, b, dims=([2], [1]))),
    ),
    Case(
        name="vdot (400, 500)",
        family="matmul",
        make_inputs=_normal((400, 500), (400, 500)),
        lampy_fn=vdot,
        numpy_fwd_bwd=_vdot_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.vdot(a.reshape(-1), b.reshape(-1))),
    ),
    Case(
        name="inner (400, 500) x (300, 500)",
        family="matmul",
        make_inputs=_normal((400, 500), (300, 500)),
        lampy_fn=inner,
        numpy_fwd_bwd=_inner_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.inner(a, b)),
    ),
    Case(
        name="outer (1000,) x (500,)",
        family="matmul",
        make_inputs=_normal((1000,), (500,)),
        lampy_fn=outer,
        numpy_fwd_bwd=_outer_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.outer(a, b)),
    ),
    Case(
        name="tensordot (40, 50, 60) x (60, 50, 30) axes=([1, 2], [1, 0])",
        family="matmul",
        make_inputs=_normal((40, 50, 60), (60, 50, 30)),
        lampy_fn=lambda a, b: tensordot(a, b, axes=([1, 2], [1, 0])),
        numpy_fwd_bwd=_tensordot_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.tensordot(a, b, dims=([1, 2], [1, 0]))),
    ),
    Case(
        name="einsum ij,jk->ik (400, 500) (500, 300)",
        family="einsum",
        make_inputs=_normal((400, 500), (500, 300)),
        lampy_fn=lambda a, b: einsum("ij,jk->ik", a, b),
        numpy_fwd_bwd=_einsum_mm_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.einsum("ij,jk->ik", a, b)),
        mygrad_fn=_mygrad(lambda mg, a, b: mg.einsum("ij,jk->ik", a, b)),
    ),
    Case(
        name="einsum bij,bjk->bik (32, 64, 64) x2",
        family="einsum",
        make_inputs=_normal((32, 64, 64), (32, 64, 64)),
        lampy_fn=lambda a, b: einsum("bij,bjk->bik", a, b),
        numpy_fwd_bwd=_einsum_bmm_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.einsum("bij,bjk->bik", a, b)),
        mygrad_fn=_mygrad(lambda mg, a, b: mg.einsum("bij,bjk->bik", a, b)),
    ),
    Case(
        name="einsum ij,ij->i (400, 500) x2",
        family="einsum",
        make_inputs=_normal((400, 500), (400, 500)),
        lampy_fn=lambda a, b: einsum("ij,ij->i", a, b),
        numpy_fwd_bwd=_einsum_rowdot_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.einsum("ij,ij->i", a, b)),
        mygrad_fn=_mygrad(lambda mg, a, b: mg.einsum("ij,ij->i", a, b)),
    ),
    Case(
        name="einsum ij,jk,kl->il (200, 300) (300, 300) (300, 200)",
        family="einsum",
        make_inputs=_normal((200, 300), (300, 300), (300, 200)),
        lampy_fn=lambda a, b, c: einsum("ij,jk,kl->il", a, b, c),
        numpy_fwd_bwd=_einsum_chain_baseline,
        torch_fn=_torch(lambda torch, a, b, c: torch.einsum("ij,jk,kl->il", a, b, c)),
        mygrad_fn=_mygrad(lambda mg, a, b, c: mg.einsum("ij,jk,kl->il", a, b, c)),
    ),
    Case(
        name="einsum ii->i (500, 500)",
        family="einsum",
        make_inputs=_normal((500, 500)),
        lampy_fn=lambda a: einsum("ii->i", a),
        numpy_fwd_bwd=_einsum_diag_baseline,
        torch_fn=_torch(lambda torch, a: torch.einsum("ii->i", a)),
        mygrad_fn=_mygrad(lambda mg, a: mg.einsum("ii->i", a)),
    ),
    Case(
        name="einsum ij->j (400, 500)",
        family="einsum",
        make_inputs=_normal((400, 500)),
        lampy_fn=lambda a: einsum("ij->j", a),
        numpy_fwd_bwd=_einsum_outer_sum_baseline,
        torch_fn=_torch(lambda torch, a: torch.einsum("ij->j", a)),
        mygrad_fn=_mygrad(lambda mg, a: mg.einsum("ij->j", a)),
    ),
    Case(
        name="trace (500, 500)",
        family="linalg",
        make_inputs=_normal((500, 500)),
        lampy_fn=trace,
        numpy_fwd_bwd=_trace_baseline,
        torch_fn=_torch(lambda torch, a: torch.trace(a)),
        mygrad_fn=_mygrad(lambda mg, a: mg.einsum("ii", a)),
    ),
    Case(
        name="diagonal (500, 500) offset=1",
        family="linalg",
        make_inputs=_normal((500, 500)),
        lampy_fn=lambda a: diagonal(a, 1),
        numpy_fwd_bwd=_diagonal_baseline,
        torch_fn=_torch(lambda torch, a: torch.diagonal(a, 1)),
    ),
    Case(
        name="diag (500,) -> (500, 500)",
        family="linalg",
        make_inputs=_normal((500,)),
        lampy_fn=diag,
        numpy_fwd_bwd=_diag_build_baseline,
        torch_fn=_torch(lambda torch, a: torch.diag(a)),
    ),
    Case(
        name="tril (400, 500)",
        family="linalg",
        make_inputs=_normal((400, 500)),
        lampy_fn=tril,
        numpy_fwd_bwd=_tril_baseline,
        torch_fn=_torch(lambda torch, a: torch.tril(a)),
    ),
    Case(
        name="triu (8, 200, 200) k=1",
        family="linalg",
        make_inputs=_normal((8, 200, 200)),
        lampy_fn=lambda a: triu(a, 1),
        numpy_fwd_bwd=_triu_baseline,
        torch_fn=_torch(lambda torch, a: torch.triu(a, 1)),
    ),
    Case(
        name="kron (20, 20) x (20, 25)",
        family="linalg",
        make_inputs=_normal((20, 20), (20, 25)),
        lampy_fn=kron,
        numpy_fwd_bwd=_kron_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.kron(a, b)),
    ),
]
