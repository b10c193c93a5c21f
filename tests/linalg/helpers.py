"""Matrices with known conditioning for the lampy.linalg tests."""

from __future__ import annotations

from typing import Any

import numpy as np

import lampy


def orthogonal(rng: np.random.Generator, n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """A random orthogonal matrix (or stack)."""
    return np.linalg.qr(rng.standard_normal((*batch, n, n)))[0]


def conditioned(
    rng: np.random.Generator, m: int, n: int, batch: tuple[int, ...] = ()
) -> np.ndarray:
    """A random matrix with singular values 1, 1.5, 2, ... (distinct, away from 0)."""
    k = min(m, n)
    s = 1.0 + 0.5 * np.arange(k)[::-1]
    u = orthogonal(rng, m, batch)[..., :k]
    v = orthogonal(rng, n, batch)[..., :k]
    return (u * s) @ np.swapaxes(v, -1, -2)


def symmetric(rng: np.random.Generator, eigenvalues: Any, batch: tuple[int, ...] = ()) -> Any:
    """A random symmetric matrix with the given eigenvalues."""
    w = np.asarray(eigenvalues, dtype=np.float64)
    q = orthogonal(rng, w.shape[-1], batch)
    a = (q * w) @ np.swapaxes(q, -1, -2)
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def mt(x: Any) -> Any:
    """Batched transpose of a Variable."""
    nd = x.ndim
    return lampy.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def sym(x: Any) -> Any:
    """Symmetric part of a Variable, ``(x + x^T) / 2``."""
    return (x + mt(x)) * 0.5


def grad_of(f: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    """The gradients of ``sum(f(*params))`` with respect to every input."""
    with lampy.Scope():
        ps = [lampy.param(a) for a in arrays]
        lampy.sum(f(*ps)).backward()
        return [
            np.zeros_like(a) if p.grad is None else p.grad.copy()
            for p, a in zip(ps, arrays, strict=True)
        ]
