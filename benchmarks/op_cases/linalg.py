"""Benchmark cases of lampy.linalg (forward + backward).

Inputs have 10^5 or more elements: mostly stacks of 1,000 small matrices (where a
per-matrix Python loop would show) and a few single large matrices (where LAPACK and
BLAS dominate). Each baseline is the numpy forward followed by the hand-written
gradient, as one would write it by hand (the textbook formula, ``inv`` where the
formula has an inverse). Decompositions are measured through one output at a time
(``U``, ``S``...), as the op has one closure per output. torch and mygrad are imported
lazily inside the lambdas so this module imports without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy import linalg as la

from ._case import Case

Arrays = list[np.ndarray]


def _t(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _normal(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], Arrays]:
    return lambda rng: [rng.standard_normal(s) for s in shapes]


def _well_conditioned(
    *shape: int, extra: tuple[tuple[int, ...], ...] = ()
) -> Callable[[np.random.Generator], Arrays]:
    """A random matrix (stack) plus a multiple of the identity, and further normal arrays."""

    def make(rng: np.random.Generator) -> Arrays:
        n = shape[-1]
        a = rng.standard_normal(shape) + 2 * np.sqrt(n) * np.eye(shape[-2], n)
        return [a, *(rng.standard_normal(s) for s in extra)]

    return make


def _spd(*shape: int) -> Callable[[np.random.Generator], Arrays]:
    def make(rng: np.random.Generator) -> Arrays:
        b = rng.standard_normal(shape)
        return [b @ _t(b) + shape[-1] * np.eye(shape[-1])]

    return make


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
def _inv_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    x = np.linalg.inv(inputs[0])
    return [-(_t(x) @ g @ _t(x))]


def _det_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs
    d = np.linalg.det(a)
    return [(g * d)[..., None, None] * _t(np.linalg.inv(a))]


def _slogdet_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs
    np.linalg.slogdet(a)
    return [g[..., None, None] * _t(np.linalg.inv(a))]


def _solve_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs
    x = np.linalg.solve(a, b)
    gb = np.linalg.solve(_t(a), g)
    return [-gb @ _t(x), gb]


def _pinv_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs  # tall, full column rank: -P^T g P^T + (I - A P) g^T P P^T
    p = np.linalg.pinv(a)
    pt, gt = _t(p), _t(g)
    u = gt @ (p @ pt)
    return [-(pt @ g @ pt) + u - a @ (p @ u)]


def _lstsq_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b = inputs  # full column rank: y = (A^T A)^{-1} g, da = r y^T - A y x^T, db = A y
    x = np.linalg.lstsq(a, b)[0]
    y = np.linalg.solve(a.T @ a, g)
    r = b - a @ x
    return [np.outer(r, y) - np.outer(a @ y, x), a @ y]


def _matrix_power_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs  # a^5 = a^4 a with a^4 = (a^2)^2, then reverse mode through the products
    a2 = a @ a
    a4 = a2 @ a2
    a4 @ a
    g4, ga = g @ _t(a), _t(a4) @ g
    g2 = g4 @ _t(a2) + _t(a2) @ g4
    return [ga + g2 @ _t(a) + _t(a) @ g2]


def _multi_dot_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    a, b, c = inputs  # (a b) c is the cheaper order here
    ab = a @ b
    ab @ c
    gab = g @ c.T
    return [gab @ b.T, a.T @ gab, ab.T @ g]


def _cholesky_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs
    low = np.linalg.cholesky(a)
    phi = np.tril(_t(low) @ np.tril(g))
    idx = np.arange(a.shape[-1])
    phi[..., idx, idx] *= 0.5
    linv = np.linalg.inv(low)
    return [_t(linv) @ (0.5 * (phi + _t(phi))) @ linv]


def _qr_r_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs  # square: (Q copyltu(R gR^T)) R^{-T}
    q, r = np.linalg.qr(a)
    m = r @ _t(g)
    sym = np.tril(m) + _t(np.tril(m, -1))
    return [q @ sym @ _t(np.linalg.inv(r))]


def _qr_q_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (a,) = inputs  # square: (gQ - Q copyltu(gQ^T Q)) R^{-T}
    q, r = np.linalg.qr(a)
    m = -(_t(g) @ q)
    sym = np.tril(m) + _t(np.tril(m, -1))
    return [(g + q @ sym) @ _t(np.linalg.inv(r))]


def _gaps(w: np.ndarray) -> np.ndarray:
    d = w[..., None, :] - w[..., :, None]
    idx = np.arange(w.shape[-1])
    d[..., idx, idx] = np.inf
    return 1 / d


def _eigvalsh_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    _, v = np.linalg.eigh(inputs[0])
    return [(v * g[..., None, :]) @ _t(v)]


def _eigh_vectors_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    w, v = np.linalg.eigh(inputs[0])
    x = _t(v) @ g
    return [v @ (0.5 * (x - _t(x)) * _gaps(w)) @ _t(v)]


def _svdvals_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    u, _, vh = np.linalg.svd(inputs[0], full_matrices=False)
    return [(u * g[..., None, :]) @ vh]


def _svd_u_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    u, s, vh = np.linalg.svd(inputs[0], full_matrices=False)  # square: U (F * (X - X^T)) S V^T
    x = _t(u) @ g
    return [u @ ((x - _t(x)) * _gaps(s * s) * s[..., None, :]) @ vh]


def _norm_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    n = np.sqrt(x.ravel().dot(x.ravel()))
    return [x * (g / n)]


def _norm_rows_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    n = np.sqrt(np.sum(x * x, axis=1))
    return [x * (g / n)[:, None]]


def _norm_p_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs  # p = 3 along axis 1
    ax = np.abs(x)
    n = np.sum(ax**3, axis=1) ** (1 / 3)
    return [np.sign(x) * ax**2 * (g / n**2)[:, None]]


def _norm_inf_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    ax = np.abs(x)
    hit = ax == ax.max(axis=1, keepdims=True)
    return [np.sign(x) * hit / hit.sum(axis=1, keepdims=True) * g[:, None]]


def _norm_nuc_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    u, _, vh = np.linalg.svd(inputs[0], full_matrices=False)
    return [g[..., None, None] * (u @ vh)]


B = 1000  # matrices in a stack


def _sylvester(n: int) -> Callable[[np.random.Generator], Arrays]:
    """``a``, ``b`` with spectra in the right half-plane (shifted by ``2 sqrt(n)``), so
    ``a x + x b = q`` is well conditioned, and ``q``."""

    def make(rng: np.random.Generator) -> Arrays:
        shift = 2 * np.sqrt(n) * np.eye(n)
        a, b, q = (rng.standard_normal((n, n)) for _ in range(3))
        return [a + shift, b + shift, q]

    return make


def _solve_triangular_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    import scipy.linalg as sl

    a, b = inputs  # upper triangle read: x = U^-1 b, db = U^-T g, da = triu(-db x^T)
    x = sl.solve_triangular(a, b)
    gb = sl.solve_triangular(a, g, trans=1)
    return [np.triu(-(gb @ _t(x))), gb]


def _sqrtm_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    import scipy.linalg as sl

    (a,) = inputs  # X^T L + L X^T = g
    x = sl.sqrtm(a)
    return [sl.solve_sylvester(_t(x), _t(x), g)]


def _solve_sylvester_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    import scipy.linalg as sl

    a, b, q = inputs  # a^T L + L b^T = g: dq = L, da = -L x^T, db = -x^T L
    x = sl.solve_sylvester(a, b, q)
    lam = sl.solve_sylvester(_t(a), _t(b), g)
    return [-(lam @ _t(x)), -(_t(x) @ lam), lam]


CASES: list[Case] = [
    Case(
        name="linalg.inv (1000, 10, 10)",
        family="linalg",
        make_inputs=_well_conditioned(B, 10, 10),
        lampy_fn=la.inv,
        numpy_fwd_bwd=_inv_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.inv(a)),
    ),
    Case(
        name="linalg.inv (320, 320)",
        family="linalg",
        make_inputs=_well_conditioned(320, 320),
        lampy_fn=la.inv,
        numpy_fwd_bwd=_inv_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.inv(a)),
    ),
    Case(
        name="linalg.det (1000, 10, 10)",
        family="linalg",
        make_inputs=_well_conditioned(B, 10, 10),
        lampy_fn=la.det,
        numpy_fwd_bwd=_det_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.det(a)),
    ),
    Case(
        name="linalg.slogdet (1000, 10, 10)",
        family="linalg",
        make_inputs=_well_conditioned(B, 10, 10),
        lampy_fn=lambda a: la.slogdet(a).logabsdet,
        numpy_fwd_bwd=_slogdet_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.slogdet(a)[1]),
    ),
    Case(
        name="linalg.solve (1000, 10, 10) (1000, 10, 4)",
        family="linalg",
        make_inputs=_well_conditioned(B, 10, 10, extra=((B, 10, 4),)),
        lampy_fn=la.solve,
        numpy_fwd_bwd=_solve_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.linalg.solve(a, b)),
    ),
    Case(
        name="linalg.pinv (500, 20, 10)",
        family="linalg",
        make_inputs=_well_conditioned(500, 20, 10),
        lampy_fn=la.pinv,
        numpy_fwd_bwd=_pinv_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.pinv(a)),
    ),
    Case(
        name="linalg.lstsq (1000, 100) (1000,)",
        family="linalg",
        make_inputs=_well_conditioned(1000, 100, extra=((1000,),)),
        lampy_fn=lambda a, b: la.lstsq(a, b)[0],
        numpy_fwd_bwd=_lstsq_baseline,
        torch_fn=_torch(lambda torch, a, b: torch.linalg.pinv(a) @ b),
    ),
    Case(
        name="linalg.matrix_power (1000, 10, 10) n=5",
        family="linalg",
        make_inputs=lambda rng: [rng.standard_normal((B, 10, 10)) / 4],
        lampy_fn=lambda a: la.matrix_power(a, 5),
        numpy_fwd_bwd=_matrix_power_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.matrix_power(a, 5)),
    ),
    Case(
        name="linalg.multi_dot (200, 500) (500, 400) (400, 300)",
        family="linalg",
        make_inputs=_normal((200, 500), (500, 400), (400, 300)),
        lampy_fn=lambda a, b, c: la.multi_dot([a, b, c]),
        numpy_fwd_bwd=_multi_dot_baseline,
        torch_fn=_torch(lambda torch, a, b, c: torch.linalg.multi_dot([a, b, c])),
    ),
    Case(
        name="linalg.cholesky (1000, 10, 10)",
        family="linalg",
        make_inputs=_spd(B, 10, 10),
        lampy_fn=la.cholesky,
        numpy_fwd_bwd=_cholesky_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.cholesky(a)),
    ),
    Case(
        name="linalg.qr R (1000, 10, 10)",
        family="linalg",
        make_inputs=_well_conditioned(B, 10, 10),
        lampy_fn=lambda a: la.qr(a).R,
        numpy_fwd_bwd=_qr_r_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.qr(a)[1]),
    ),
    Case(
        name="linalg.qr Q (1000, 10, 10)",
        family="linalg",
        make_inputs=_well_conditioned(B, 10, 10),
        lampy_fn=lambda a: la.qr(a).Q,
        numpy_fwd_bwd=_qr_q_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.qr(a)[0]),
    ),
    Case(
        name="linalg.eigvalsh (1000, 10, 10)",
        family="linalg",
        make_inputs=_spd(B, 10, 10),
        lampy_fn=la.eigvalsh,
        numpy_fwd_bwd=_eigvalsh_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.eigvalsh(a)),
    ),
    Case(
        name="linalg.eigh eigenvectors (1000, 10, 10)",
        family="linalg",
        make_inputs=_spd(B, 10, 10),
        lampy_fn=lambda a: la.eigh(a).eigenvectors,
        numpy_fwd_bwd=_eigh_vectors_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.eigh(a)[1]),
    ),
    Case(
        name="linalg.svd S (1000, 10, 10)",
        family="linalg",
        make_inputs=_normal((B, 10, 10)),
        lampy_fn=lambda a: la.svd(a, compute_uv=False),
        numpy_fwd_bwd=_svdvals_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.svdvals(a)),
    ),
    Case(
        name="linalg.svd U (1000, 10, 10)",
        family="linalg",
        make_inputs=_normal((B, 10, 10)),
        lampy_fn=lambda a: la.svd(a, full_matrices=False).U,
        numpy_fwd_bwd=_svd_u_baseline,
        torch_fn=_torch(lambda torch, a: torch.linalg.svd(a, full_matrices=False)[0]),
    ),
    Case(
        name="linalg.norm (1000, 1000)",
        family="linalg",
        make_inputs=_normal((1000, 1000)),
        lampy_fn=la.norm,
        numpy_fwd_bwd=_norm_baseline,
        torch_fn=_torch(lambda torch, x: torch.linalg.norm(x)),
        mygrad_fn=_mygrad(lambda mg, x: mg.linalg.norm(x)),
    ),
    Case(
        name="linalg.norm (1000, 1000) axis=1",
        family="linalg",
        make_inputs=_normal((1000, 1000)),
        lampy_fn=lambda x: la.norm(x, axis=1),
        numpy_fwd_bwd=_norm_rows_baseline,
        torch_fn=_torch(lambda torch, x: torch.linalg.vector_norm(x, dim=1)),
        mygrad_fn=_mygrad(lambda mg, x: mg.linalg.norm(x, axis=1)),
    ),
    Case(
        name="linalg.norm (1000, 1000) ord=3 axis=1",
        family="linalg",
        make_inputs=_normal((1000, 1000)),
        lampy_fn=lambda x: la.norm(x, 3, axis=1),
        numpy_fwd_bwd=_norm_p_baseline,
        torch_fn=_torch(lambda torch, x: torch.linalg.vector_norm(x, 3, dim=1)),
        mygrad_fn=_mygrad(lambda mg, x: mg.linalg.norm(x, 3, axis=1)),
    ),
    Case(
        name="linalg.norm (1000, 1000) ord=inf axis=1",
        family="linalg",
        make_inputs=_normal((1000, 1000)),
        lampy_fn=lambda x: la.norm(x, np.inf, axis=1),
        numpy_fwd_bwd=_norm_inf_baseline,
        torch_fn=_torch(lambda torch, x: torch.linalg.vector_norm(x, float("inf"), dim=1)),
        mygrad_fn=_mygrad(lambda mg, x: mg.linalg.norm(x, np.inf, axis=1)),
    ),
    Case(
        name="linalg.norm nuc (1000, 10, 10)",
        family="linalg",
        make_inputs=_normal((B, 10, 10)),
        lampy_fn=lambda x: la.norm(x, "nuc", axis=(1, 2)),
        numpy_fwd_bwd=_norm_nuc_baseline,
        torch_fn=_torch(lambda torch, x: torch.linalg.matrix_norm(x, "nuc")),
    ),
    Case(
        name="linalg.solve_triangular (1000, 10, 10) (1000, 10, 4)",
        family="linalg",
        make_inputs=_well_conditioned(B, 10, 10, extra=((B, 10, 4),)),
        lampy_fn=la.solve_triangular,
        numpy_fwd_bwd=_solve_triangular_baseline,
        torch_fn=_torch(
            lambda torch, a, b: torch.linalg.solve_triangular(torch.triu(a), b, upper=True)
        ),
    ),
    Case(
        name="linalg.sqrtm (320, 320)",
        family="linalg",
        make_inputs=_spd(320, 320),
        lampy_fn=la.sqrtm,
        numpy_fwd_bwd=_sqrtm_baseline,
    ),
    Case(
        name="linalg.solve_sylvester (320, 320)",
        family="linalg",
        make_inputs=_sylvester(320),
        lampy_fn=la.solve_sylvester,
        numpy_fwd_bwd=_solve_sylvester_baseline,
    ),
]
