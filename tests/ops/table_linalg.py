"""Op table of lampy.linalg: inv, pinv, det, slogdet, solve, lstsq, matrix_power,
multi_dot, cholesky, qr, eig, eigvals, eigh, eigvalsh, svd and norm, and scipy's
solve_triangular, sqrtm and solve_sylvester (against scipy.linalg).

Inputs are built to be well conditioned (singular values and eigenvalues bounded away
from 0 and from each other), and the decompositions are checked through functions that
do not depend on the arbitrary signs of their vectors (``V diag(c) V^T``,
``U diag(c) Vh``...), so that finite differences are meaningful.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
from hypothesis import assume
from hypothesis import strategies as st

import lampy
from lampy import linalg as la
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec

BATCHES: list[tuple[int, ...]] = [(), (2,)]


# ------------------------------------------------------------------ input builders
def _orthogonal(d: st.DrawFn, batch: tuple[int, ...], n: int) -> np.ndarray:
    """An orthogonal matrix (Householder QR of any matrix, zeros included, is one)."""
    m = d(ls.arrays((*batch, n, n), np.float64, min_value=-1, max_value=1))
    return np.linalg.qr(m)[0]


def _separated(d: st.DrawFn, batch: tuple[int, ...], k: int, lo: float) -> np.ndarray:
    """``k`` values in descending order, the smallest ``lo``, gaps of 0.3 to 0.8."""
    gaps = d(ls.arrays((*batch, k), np.float64, min_value=0.3, max_value=0.8))
    return (lo - 0.3 + np.cumsum(gaps, axis=-1))[..., ::-1]


def conditioned(
    d: st.DrawFn, batch: tuple[int, ...], m: int, n: int, lo: float = 0.5
) -> np.ndarray:
    """``U diag(s) V^T`` with singular values ``s >= lo``, at least 0.3 apart."""
    k = min(m, n)
    s = _separated(d, batch, k, lo)
    u = _orthogonal(d, batch, m)[..., :k]
    v = _orthogonal(d, batch, n)[..., :k]
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def qr_input(d: st.DrawFn, batch: tuple[int, ...], m: int, n: int) -> np.ndarray:
    """Full rank, and for ``m < n`` a well-conditioned leading ``m x m`` block (where the
    QR of a wide matrix is differentiable)."""
    if m >= n:
        return conditioned(d, batch, m, n)
    rest = d(ls.arrays((*batch, m, n - m), np.float64, min_value=-2, max_value=2))
    return np.concatenate([conditioned(d, batch, m, m), rest], axis=-1)


def symmetric(d: st.DrawFn, batch: tuple[int, ...], n: int, signs: bool = True) -> np.ndarray:
    """``Q diag(w) Q^T`` with eigenvalues at least 0.3 apart (and, with ``signs``, random
    signs but distinct absolute values >= 0.5)."""
    w = _separated(d, batch, n, 0.5)
    if signs:
        signs = d(ls.arrays(w.shape, np.float64, min_value=-1, max_value=1))
        w = np.where(signs < 0, -w, w)
    q = _orthogonal(d, batch, n)
    a = (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def real_spectrum(d: st.DrawFn, batch: tuple[int, ...], n: int) -> np.ndarray:
    """``S diag(w) S^{-1}``: not symmetric, with real eigenvalues at least 0.3 apart and
    a well-conditioned eigenvector basis ``S``."""
    w = _separated(d, batch, n, 0.5)
    signs = d(ls.arrays(w.shape, np.float64, min_value=-1, max_value=1))
    w = np.where(signs < 0, -w, w)
    s = conditioned(d, batch, n, n)
    return (s * w[..., None, :]) @ np.linalg.inv(s)


def spd(d: st.DrawFn, batch: tuple[int, ...], n: int) -> np.ndarray:
    """``B B^T + n I``: symmetric positive definite."""
    b = d(ls.arrays((*batch, n, n), np.float64, min_value=-1, max_value=1))
    a = b @ np.swapaxes(b, -1, -2) + n * np.eye(n)
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def _cast(dtype: np.dtype[Any], *arrays: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(a, dtype=dtype) for a in arrays]


def matrices(
    build: Any, square: bool = True, batches: list[tuple[int, ...]] = BATCHES, **kwargs: Any
) -> Any:
    """One matrix input built by ``build(d, batch, m, n)`` (or ``(d, batch, n)`` when
    ``square``), plus keyword arguments drawn from the strategies in ``kwargs``."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def go(d: st.DrawFn) -> Inputs:
            batch = d(st.sampled_from(batches))
            m = d(st.integers(1, 3))
            a = build(d, batch, m) if square else build(d, batch, m, d(st.integers(1, 3)))
            return _cast(dtype, a), {k: d(v) for k, v in kwargs.items()}

        return go()

    return draw


def solve_inputs(vector: bool) -> Any:
    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def go(d: st.DrawFn) -> Inputs:
            n = d(st.integers(1, 3))
            if vector:
                a = conditioned(d, d(st.sampled_from(BATCHES)), n, n)
                b = d(ls.arrays((n,), np.float64, min_value=-2, max_value=2))
            else:
                ba, bb = d(ls.broadcastable_shapes(2, max_dims=2, max_side=2))
                a = conditioned(d, ba, n, n)
                b = d(
                    ls.arrays((*bb, n, d(st.integers(1, 2))), np.float64, min_value=-2, max_value=2)
                )
            return _cast(dtype, a, b), {}

        return go()

    return draw


def lstsq_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def go(d: st.DrawFn) -> Inputs:
        m, n = d(st.integers(1, 4)), d(st.integers(1, 4))
        a = conditioned(d, (), m, n)
        shape = d(st.sampled_from([(m,), (m, 1), (m, 2)]))
        b = d(ls.arrays(shape, np.float64, min_value=-2, max_value=2))
        return _cast(dtype, a, b), {}

    return go()


def multi_dot_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def go(d: st.DrawFn) -> Inputs:
        count = d(st.integers(2, 4))
        dims = [d(st.integers(1, 3)) for _ in range(count + 1)]
        arrays = [
            d(ls.arrays((dims[i], dims[i + 1]), np.float64, min_value=-2, max_value=2))
            for i in range(count)
        ]
        if d(st.booleans()):
            arrays[0] = arrays[0][0]
        if d(st.booleans()):
            arrays[-1] = arrays[-1][:, 0]
        return _cast(dtype, *arrays), {}

    return go()


def distinct_abs(d: st.DrawFn, shape: tuple[int, ...]) -> np.ndarray:
    """Entries of random signs whose absolute values are at least 0.3 and 0.2 apart."""
    size = int(np.prod(shape))
    rank = np.array(d(st.permutations(range(size))), dtype=np.float64).reshape(shape)
    jitter = d(ls.arrays(shape, np.float64, min_value=0, max_value=0.2))
    sign = np.where(d(ls.arrays(shape, np.float64, min_value=-1, max_value=1)) < 0, -1, 1)
    return sign * (0.3 + 0.4 * rank + jitter)


def vector_norm_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Entries with distinct absolute values at least 0.2 apart and 0.3 from 0 (no ties
    for +-inf, no kinks of |x|)."""

    @st.composite
    def go(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
        x = distinct_abs(d, shape)
        ord_ = d(st.sampled_from([None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1.5]))
        axis = d(st.integers(-len(shape), len(shape) - 1))
        return _cast(dtype, x), {"ord": ord_, "axis": axis, "keepdims": d(st.booleans())}

    return go()


def matrix_norm_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """For 1, -1, inf, -inf: entries away from 0 with distinct row and column sums of
    ``|x|``; otherwise well-conditioned matrices (distinct singular values). Moved to a
    random pair of axes."""

    @st.composite
    def go(d: st.DrawFn) -> Inputs:
        batch = d(st.sampled_from(BATCHES))
        m, n = d(st.integers(1, 3)), d(st.integers(1, 3))
        ord_ = d(st.sampled_from([None, "fro", "nuc", 1, -1, np.inf, -np.inf, 2, -2]))
        if ord_ in (1, -1, np.inf, -np.inf):
            a = distinct_abs(d, (*batch, m, n))
            for ax in (-1, -2):
                sums = np.sort(np.abs(a).sum(axis=ax), axis=-1)
                assume(np.all(np.diff(sums, axis=-1) > 0.05))
        else:
            a = conditioned(d, batch, m, n)
        nd = a.ndim
        r, c = d(st.permutations(range(nd)))[:2]
        a = np.moveaxis(a, (-2, -1), (r, c))
        if d(st.booleans()):
            r, c = r - nd, c - nd
        return _cast(dtype, a), {"ord": ord_, "axis": (r, c), "keepdims": d(st.booleans())}

    return go()


def default_norm_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """``ord=None, axis=None`` (the flattened 2-norm), and the 'fro' / 2 fast paths."""

    @st.composite
    def go(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(max_dims=3, max_side=3))
        x = d(ls.arrays(shape, np.float64, min_value=-3, max_value=3, avoid=(0.0,), margin=0.1))
        kwargs: dict[str, Any] = {"keepdims": d(st.booleans())}
        if len(shape) == 2 and d(st.booleans()):
            kwargs["ord"] = "fro"
        if len(shape) == 1 and d(st.booleans()):
            kwargs["ord"] = 2
        return _cast(dtype, x), kwargs

    return go()


# --------------------------------------------------- gauge-invariant test functions
def _mt(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.swapaxes(x, -1, -2)
    nd = x.ndim
    return lampy.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _sym(x: Any) -> Any:
    return (x + _mt(x)) * 0.5


def _weights(n: int, k: int) -> np.ndarray:
    """1, 2, ..., k, then k + 1 repeated: distinct on the first ``k`` vectors, equal on
    the rest (a basis of a complement, which only its span may influence)."""
    return np.minimum(np.arange(1.0, n + 1), k + 1)


def _fixed(m: int, n: int) -> np.ndarray:
    return np.cos(np.arange(m * n, dtype=np.float64) + 0.5).reshape(m, n)


def _eigh_fn(eigh: Any) -> Any:
    def f(a: Any, UPLO: str = "L") -> Any:
        w, v = eigh(_sym(a), UPLO=UPLO)
        c = _weights(v.shape[-1], v.shape[-1]).astype(a.dtype)
        return (v * (w * w + c)[..., None, :]) @ _mt(v)

    return f


def _svd_fn(svd: Any) -> Any:
    def f(a: Any, full_matrices: bool = True) -> Any:
        u, s, vh = svd(a, full_matrices=full_matrices)
        m, n = a.shape[-2:]
        k = min(m, n)
        dt = a.dtype
        pairs = (u[..., :, :k] * (s * s + _weights(k, k).astype(dt))[..., None, :]) @ vh[..., :k, :]
        left = ((u * _weights(u.shape[-1], k).astype(dt)) @ _mt(u)) @ _fixed(m, n).astype(dt)
        right = _fixed(m, n).astype(dt) @ (_mt(vh) * _weights(vh.shape[-2], k).astype(dt)) @ vh
        return pairs + left + right

    return f


def _qr_fn(qr: Any) -> Any:
    def f(a: Any, mode: str = "reduced") -> Any:
        m, n = a.shape[-2:]
        k, dt = min(m, n), a.dtype
        if mode == "r":
            r = qr(a, mode="r")
            return _mt(r) @ (r * _weights(r.shape[-2], k).astype(dt)[:, None])
        q, r = qr(a, mode=mode)
        rr = _mt(r) @ (r * _weights(r.shape[-2], k).astype(dt)[:, None])
        qq = (q * _weights(q.shape[-1], k).astype(dt)) @ _mt(q)
        return qq @ _fixed(m, n).astype(dt) + _fixed(m, n).astype(dt) @ rr

    return f


def _lstsq(lib: Any) -> Any:
    return lambda a, b: lib.lstsq(a, b)[0]


def _pinv_hermitian(lib: Any) -> Any:
    return lambda a: lib.pinv(_sym(a), hermitian=True)


def _svd_hermitian(lib: Any) -> Any:
    return lambda a: lib.svd(_sym(a), compute_uv=False, hermitian=True)


def _cholesky(lib: Any) -> Any:
    return lambda a, upper=False: lib.cholesky(_sym(a), upper=upper)


def _eig_fn(lib: Any) -> Any:
    """Eigenpairs in ascending order of eigenvalue (a constant permutation), through
    ``V * V`` (invariant to each eigenvector's sign, not to its length)."""

    def f(a: Any) -> Any:
        w, v = lib.eig(a)
        order = np.argsort(w.value if isinstance(w, lampy.Variable) else w, axis=-1)
        take = lampy.take_along_axis if isinstance(w, lampy.Variable) else np.take_along_axis
        w, v = take(w, order, -1), take(v, order[..., None, :], -1)
        c = _weights(v.shape[-1], v.shape[-1]).astype(a.dtype)
        return v * v * (w + c)[..., None, :]

    return f


def _real(x: np.ndarray) -> np.ndarray:
    """numpy >= 2.5 returns complex eigenpairs even for a real spectrum: keep the reals."""
    return x.real if x.dtype.kind == "c" and not x.imag.any() else x


class _RealEig:
    """numpy's eig and eigvals with the real parts of an all-real result (as lampy's)."""

    @staticmethod
    def eig(a: Any) -> Any:
        w, v = np.linalg.eig(a)
        return _real(w), _real(v)

    @staticmethod
    def eigvals(a: Any) -> Any:
        return _real(np.linalg.eigvals(a))


def _eigvals(lib: Any) -> Any:
    sort = lampy.sort if lib is la else np.sort
    return lambda a: sort(lib.eigvals(a))


def _eigvalsh(lib: Any) -> Any:
    return lambda a, UPLO="L": lib.eigvalsh(_sym(a), UPLO=UPLO)


np_la = np.linalg
UPLO = st.sampled_from(["L", "U"])


# ------------------------------------------------------ scipy.linalg's functions
def triangular_inputs(vector: bool) -> Any:
    """A full matrix whose triangles both hold values (only one is read) with a
    diagonal of magnitude 1 to 2 and small off-diagonal entries (well conditioned
    whichever triangle is read, unit diagonal or not), a right-hand side, and scipy's
    options."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def go(d: st.DrawFn) -> Inputs:
            n = d(st.integers(1, 3))
            ba, bb = d(ls.broadcastable_shapes(2, max_dims=1, max_side=2))
            a = d(ls.arrays((*ba, n, n), np.float64, min_value=-0.4, max_value=0.4))
            diag = d(ls.arrays((*ba, n), np.float64, min_value=1, max_value=2))
            signs = d(ls.arrays((*ba, n), np.float64, min_value=-1, max_value=1))
            idx = np.arange(n)
            a[..., idx, idx] = np.where(signs < 0, -diag, diag)
            b_shape = (n,) if vector else (*bb, n, d(st.integers(1, 2)))
            b = d(ls.arrays(b_shape, np.float64, min_value=-2, max_value=2))
            options = {
                "lower": d(st.booleans()),
                "trans": d(st.sampled_from([0, 1, 2, "N", "T", "C"])),
                "unit_diagonal": d(st.booleans()),
            }
            return _cast(dtype, a, b), options

        return go()

    return draw


def positive_spectrum(d: st.DrawFn, batch: tuple[int, ...], n: int) -> np.ndarray:
    """``S diag(w) S^{-1}``: not symmetric, real eigenvalues >= 0.5 and 0.3 apart (a
    real principal square root, and Sylvester equations far from singular)."""
    w = _separated(d, batch, n, 0.5)
    s = conditioned(d, batch, n, n)
    return (s * w[..., None, :]) @ np.linalg.inv(s)


def sylvester_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """``a`` and ``b`` with positive spectra (so ``a x + x b = q`` has one solution, well
    conditioned), ``q``; batch axes broadcast."""

    @st.composite
    def go(d: st.DrawFn) -> Inputs:
        m, n = d(st.integers(1, 3)), d(st.integers(1, 3))
        b1, b2, b3 = d(ls.broadcastable_shapes(3, max_dims=1, max_side=2))
        a, b = positive_spectrum(d, b1, m), positive_spectrum(d, b2, n)
        q = d(ls.arrays((*b3, m, n), np.float64, min_value=-2, max_value=2))
        return _cast(dtype, a, b, q), {}

    return go()


def per_problem(fn: Any, signature: str) -> Any:
    """scipy's ``fn`` one problem at a time over broadcast batch axes (numpy's
    ``vectorize``): a reference that does not need scipy 1.16's own batching."""

    def ref(*arrays: np.ndarray, **options: Any) -> Any:
        dtype = np.result_type(*arrays)
        one = np.vectorize(lambda *xs: fn(*xs, **options), signature=signature, otypes=[dtype])
        return one(*arrays)

    return ref


SCIPY_OPS: list[OpSpec] = [
    OpSpec(
        "linalg.solve_triangular_vector",
        la.solve_triangular,
        per_problem(scipy.linalg.solve_triangular, "(m,m),(m)->(m)"),
        triangular_inputs(vector=True),
    ),
    OpSpec(
        "linalg.solve_triangular_matrix",
        la.solve_triangular,
        per_problem(scipy.linalg.solve_triangular, "(m,m),(m,k)->(m,k)"),
        triangular_inputs(vector=False),
    ),
    OpSpec(
        "linalg.sqrtm_symmetric",
        la.sqrtm,
        per_problem(scipy.linalg.sqrtm, "(m,m)->(m,m)"),
        matrices(lambda d, b, n: symmetric(d, b, n, signs=False)),
        forward_rtol=1e-4,
    ),
    OpSpec(
        "linalg.sqrtm",
        la.sqrtm,
        per_problem(scipy.linalg.sqrtm, "(m,m)->(m,m)"),
        matrices(positive_spectrum),
        forward_rtol=1e-4,
    ),
    OpSpec(
        "linalg.solve_sylvester",
        la.solve_sylvester,
        per_problem(scipy.linalg.solve_sylvester, "(m,m),(n,n),(m,n)->(m,n)"),
        sylvester_inputs,
        forward_rtol=1e-4,
    ),
]


OPS: list[OpSpec] = [
    OpSpec("linalg.inv", la.inv, np_la.inv, matrices(lambda d, b, n: conditioned(d, b, n, n))),
    OpSpec("linalg.pinv", la.pinv, np_la.pinv, matrices(conditioned, square=False)),
    OpSpec(
        "linalg.pinv_hermitian",
        _pinv_hermitian(la),
        _pinv_hermitian(np_la),
        matrices(symmetric),
    ),
    OpSpec("linalg.det", la.det, np_la.det, matrices(lambda d, b, n: conditioned(d, b, n, n))),
    OpSpec(
        "linalg.slogdet",
        lambda a: la.slogdet(a).logabsdet,
        lambda a: np_la.slogdet(a)[1],
        matrices(lambda d, b, n: conditioned(d, b, n, n)),
    ),
    OpSpec("linalg.solve_vector", la.solve, np_la.solve, solve_inputs(vector=True)),
    OpSpec("linalg.solve_matrix", la.solve, np_la.solve, solve_inputs(vector=False)),
    OpSpec("linalg.lstsq", _lstsq(la), _lstsq(np_la), lstsq_inputs),
    OpSpec(
        "linalg.matrix_power",
        la.matrix_power,
        np_la.matrix_power,
        matrices(lambda d, b, n: conditioned(d, b, n, n, lo=0.6), n=st.integers(-3, 5)),
    ),
    OpSpec(
        "linalg.multi_dot",
        lambda *xs: la.multi_dot(xs),
        lambda *xs: np_la.multi_dot(xs),
        multi_dot_inputs,
    ),
    OpSpec(
        "linalg.cholesky",
        _cholesky(la),
        _cholesky(np_la),
        matrices(spd, upper=st.booleans()),
    ),
    OpSpec(
        "linalg.qr",
        _qr_fn(la.qr),
        _qr_fn(np_la.qr),
        matrices(qr_input, square=False, mode=st.sampled_from(["reduced", "complete", "r"])),
    ),
    OpSpec(
        "linalg.eigh",
        _eigh_fn(la.eigh),
        _eigh_fn(np_la.eigh),
        matrices(symmetric, UPLO=UPLO),
    ),
    OpSpec("linalg.eigvalsh", _eigvalsh(la), _eigvalsh(np_la), matrices(symmetric, UPLO=UPLO)),
    OpSpec("linalg.eig", _eig_fn(la), _eig_fn(_RealEig), matrices(real_spectrum)),
    OpSpec("linalg.eigvals", _eigvals(la), _eigvals(_RealEig), matrices(real_spectrum)),
    OpSpec(
        "linalg.svd",
        _svd_fn(la.svd),
        _svd_fn(np_la.svd),
        matrices(conditioned, square=False, full_matrices=st.booleans()),
    ),
    OpSpec(
        "linalg.svd_values",
        lambda a: la.svd(a, compute_uv=False),
        lambda a: np_la.svd(a, compute_uv=False),
        matrices(conditioned, square=False),
    ),
    OpSpec(
        "linalg.svd_hermitian",
        _svd_hermitian(la),
        _svd_hermitian(np_la),
        matrices(symmetric),
    ),
    OpSpec("linalg.norm_vector", la.norm, np_la.norm, vector_norm_inputs),
    OpSpec("linalg.norm_matrix", la.norm, np_la.norm, matrix_norm_inputs),
    OpSpec("linalg.norm_default", la.norm, np_la.norm, default_norm_inputs),
    *SCIPY_OPS,
]
