"""cholesky, qr, eigh, eigvalsh and svd beyond what the op table draws: raw outputs,
the symmetric-gradient convention, full matrices, modes and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy import linalg as la
from lampy.testing import check_grad

from .helpers import conditioned, grad_of, mt, sym, symmetric

SHAPES = [(3, 3), (4, 2), (2, 4), (2, 3, 3), (2, 4, 3), (1, 0), (0, 2), (0, 0)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_svd_and_qr_outputs_match_numpy(shape: tuple[int, ...], dtype: type) -> None:
    """svd (full, thin, values only) and qr (every mode) give numpy's values, shapes and
    dtypes, empty matrices included."""
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    with lampy.Scope():
        x = lampy.param(a)
        for full in (True, False):
            for got, want in zip(
                la.svd(x, full_matrices=full), np.linalg.svd(a, full), strict=True
            ):
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_allclose(got.value, want, rtol=1e-5, atol=1e-6)
        s = la.svd(x, compute_uv=False)
        np.testing.assert_allclose(s.value, np.linalg.svd(a, compute_uv=False), rtol=1e-5)
        for mode in ("reduced", "complete"):
            for got, want in zip(la.qr(x, mode), np.linalg.qr(a, mode), strict=True):
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got.value, want)
        np.testing.assert_array_equal(la.qr(x, "r").value, np.linalg.qr(a, "r"))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_eigh_and_cholesky_outputs_match_numpy(dtype: type) -> None:
    """eigh, eigvalsh and cholesky give numpy's values and dtypes, and read only the
    triangle numpy reads."""
    rng = np.random.default_rng(1)
    a = symmetric(rng, [1.0, 2.0, 4.0], (2,)).astype(dtype)
    a[..., 0, 2] += 5.0  # garbage in the upper triangle
    with lampy.Scope():
        x = lampy.param(a)
        for uplo in ("L", "U"):
            res = la.eigh(x, UPLO=uplo)
            assert isinstance(res, la.EighResult)
            for got, want in zip(res, np.linalg.eigh(a, UPLO=uplo), strict=True):
                assert got.dtype == dtype
                np.testing.assert_array_equal(got.value, want)
            np.testing.assert_allclose(
                la.eigvalsh(x, UPLO=uplo).value, np.linalg.eigvalsh(a, UPLO=uplo), rtol=1e-5
            )
        spd = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3, dtype=dtype)
        for upper in (False, True):
            got = la.cholesky(lampy.param(spd), upper=upper)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.value, np.linalg.cholesky(spd, upper=upper))


def _symmetric_cases() -> list[Any]:
    w = np.cos(np.arange(9.0)).reshape(3, 3)
    c = np.array([1.0, -2.0, 0.5])
    cases = [
        ("eigh-w", "L", lambda v: la.eigh(v).eigenvalues * c),
        ("eigh-v", "L", lambda v: (lambda r: (r[1] * r[0]) @ mt(r[1]) * w)(la.eigh(v))),
        ("eigh-U", "U", lambda v: la.eigh(v, UPLO="U").eigenvalues ** 2),
        ("eigvalsh", "L", lambda v: la.eigvalsh(v) * c),
        ("cholesky", "L", lambda v: la.cholesky(v) * w),
        ("cholesky-upper", "U", lambda v: la.cholesky(v, upper=True) * w),
        ("svd-hermitian", "L", lambda v: la.svd(v, hermitian=True)[1] * c),
        (
            "svd-hermitian-uv",
            "L",
            lambda v: (lambda r: (r[0] * c) @ r[2])(la.svd(v, hermitian=True)),
        ),
        ("pinv-hermitian", "L", lambda v: la.pinv(v, hermitian=True) * w),
    ]
    return [pytest.param(f, reads, id=name) for name, reads, f in cases]


@pytest.mark.parametrize(("f", "reads"), _symmetric_cases())
def test_symmetric_input_gradient_convention(f: Any, reads: str) -> None:
    """Ops that read one triangle of a symmetric input return PyTorch's symmetric
    gradient: symmetric, equal to the gradient through an explicit symmetrisation (the
    derivative along symmetric perturbations, split equally between a[i, j] and a[j, i]),
    and unchanged by garbage in the triangle that is not read."""
    a = symmetric(np.random.default_rng(2), [1.0, 2.5, 4.0])
    (g,) = grad_of(f, a)
    (gs,) = grad_of(lambda v: f(sym(v)), a)
    np.testing.assert_allclose(g, g.T, atol=1e-12)
    np.testing.assert_allclose(g, gs, atol=1e-12)
    garbage = a + 5.0 * (
        np.tril(np.ones((3, 3)), -1) if reads == "U" else np.triu(np.ones((3, 3)), 1)
    )
    (gg,) = grad_of(f, garbage)
    np.testing.assert_allclose(gg, g, atol=1e-12)
    check_grad(lambda v: f(sym(v)), a)


def test_eigh_repeated_eigenvalues() -> None:
    """At a repeated eigenvalue the eigenvalue gradient stays exact for symmetric
    functions of the group, while the eigenvector gradient is not finite (as in PyTorch)."""
    a = symmetric(np.random.default_rng(3), [1.0, 1.0, 3.0])
    check_grad(lambda v: lampy.sum(la.eigvalsh(sym(v)) ** 2), a)
    exact = np.diag([1.0, 1.0, 3.0])
    (g,) = grad_of(lambda v: la.eigh(v).eigenvectors * np.arange(9.0).reshape(3, 3), exact)
    assert not np.all(np.isfinite(g))


def test_svd_values_at_repeated_singular_values() -> None:
    """The gradient of the singular values alone is exact also where they repeat (the
    nuclear norm of an orthogonal matrix)."""
    q = np.linalg.qr(np.random.default_rng(4).standard_normal((3, 3)))[0]
    check_grad(lambda v: lampy.sum(la.svd(v, compute_uv=False)), q)
    (g,) = grad_of(lambda v: la.svd(v, compute_uv=False), q)
    np.testing.assert_allclose(g, q, atol=1e-12)


@pytest.mark.parametrize(("m", "n"), [(4, 2), (2, 4), (3, 1)])
def test_svd_full_matrices_gradient(m: int, n: int) -> None:
    """With full_matrices=True, functions of the extra singular vectors through their span
    (the projector U2 U2^T) get exact gradients, and functions of the first min(m, n)
    vectors the same gradient as with full_matrices=False."""
    a = conditioned(np.random.default_rng(5), m, n)
    k = min(m, n)

    def span(v: Any) -> Any:
        u, _, vh = la.svd(v)
        pu = u[:, k:] @ mt(u[:, k:]) * np.arange(m * m).reshape(m, m)
        pv = mt(vh[k:]) @ vh[k:] * np.arange(n * n).reshape(n, n)
        return lampy.sum(pu) + lampy.sum(pv)

    check_grad(span, a)

    def first(full: bool) -> Any:
        def f(v: Any) -> Any:
            u, s, vh = la.svd(v, full_matrices=full)
            return (u[:, :k] * (s + 1.0)) @ vh[:k] * np.cos(np.arange(m * n)).reshape(m, n)

        return f

    np.testing.assert_allclose(grad_of(first(True), a)[0], grad_of(first(False), a)[0], atol=1e-12)


def test_qr_modes_and_errors() -> None:
    """qr rejects mode='raw' and unknown modes with a clear message; mode='r' returns R
    alone, differentiable."""
    a = conditioned(np.random.default_rng(6), 4, 3)
    with lampy.Scope():
        x = lampy.param(a)
        with pytest.raises(ValueError, match="qr: mode='raw' is not supported"):
            la.qr(x, mode="raw")
        with pytest.raises(ValueError, match="qr: unrecognized mode"):
            la.qr(x, mode="economic")
        r = la.qr(x, mode="r")
        assert isinstance(r, lampy.Variable) and r.needs_grad
        assert isinstance(la.qr(x), la.QRResult)
    check_grad(lambda v: mt(la.qr(v, mode="r")) @ la.qr(v, mode="r"), a)


def test_qr_product_and_wide_matrices() -> None:
    """Q @ R reproduces a, so its gradient is the identity map, for tall, square and wide
    (PyTorch's split into a square block and the rest) matrices."""
    rng = np.random.default_rng(7)
    for m, n in [(4, 3), (3, 3), (2, 4)]:
        a = conditioned(rng, m, n)
        w = rng.standard_normal((m, n))
        (g,) = grad_of(lambda v: (lambda q, r: q @ r * w)(*la.qr(v)), a)
        np.testing.assert_allclose(g, w, atol=1e-10)


def test_cholesky_not_positive_definite() -> None:
    """cholesky of a matrix that is not positive definite raises numpy's LinAlgError."""
    with lampy.Scope(), pytest.raises(la.LinAlgError):
        la.cholesky(lampy.param(-np.eye(2)))


def test_svd_result_fields() -> None:
    """svd returns an SVDResult of Variables named U, S, Vh as numpy's."""
    with lampy.Scope():
        res = la.svd(lampy.param(np.eye(2)))
        assert isinstance(res, la.SVDResult)
        assert res.U is res[0] and res.S is res[1] and res.Vh is res[2]


def test_no_grad_skips_the_extra_factors() -> None:
    """Under no_grad (or for constants) eigvalsh, svd(compute_uv=False) and qr(mode='r')
    return constants with numpy's values."""
    a = symmetric(np.random.default_rng(8), [1.0, 2.0, 3.0])
    with lampy.Scope():
        with lampy.no_grad():
            x = lampy.param(a)
            for out in (la.eigvalsh(x), la.svd(x, compute_uv=False), la.qr(x, mode="r")):
                assert not out.needs_grad
        np.testing.assert_array_equal(la.eigvalsh(a).value, np.linalg.eigvalsh(a))
