"""eig and eigvals for matrices with real eigenvalues: numpy's values and order, the
gradient against eigh's on symmetric matrices and against finite differences, repeated
eigenvalues, and complex spectra."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy import linalg as la
from lampy.testing import check_grad

from .helpers import conditioned, grad_of, symmetric

RNG = np.random.default_rng(15)


def real_spectrum(w: list[float], batch: tuple[int, ...] = ()) -> np.ndarray:
    """``S diag(w) S^{-1}`` with a well-conditioned, non-orthogonal S."""
    s = conditioned(RNG, len(w), len(w), batch) + 0.5 * np.eye(len(w))
    return (s * np.asarray(w)) @ np.linalg.inv(s)


def _sorted_pairs(w: lampy.Variable, v: lampy.Variable) -> tuple[lampy.Variable, lampy.Variable]:
    order = np.argsort(w.value, axis=-1)
    return lampy.take_along_axis(w, order, -1), lampy.take_along_axis(v, order[..., None, :], -1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_eig_matches_numpy(dtype: type, batch: tuple[int, ...]) -> None:
    """eig gives numpy's eigenvalues and eigenvectors (same order, unit columns) as an
    EigResult of Variables; eigvals gives the same eigenvalues."""
    a = real_spectrum([-1.5, 0.5, 2.0], batch).astype(dtype)
    w, v = np.linalg.eig(a)
    if w.dtype.kind == "c":  # numpy >= 2.5 returns complex pairs for a real spectrum too
        assert not w.imag.any() and not v.imag.any()
        w, v = w.real, v.real
    with lampy.Scope():
        res = la.eig(lampy.param(a))
        assert isinstance(res, la.EigResult)
        assert res.eigenvalues.dtype == res.eigenvectors.dtype == dtype
        np.testing.assert_array_equal(res.eigenvalues.value, w)
        np.testing.assert_array_equal(res.eigenvectors.value, v)
        np.testing.assert_array_equal(la.eigvals(lampy.param(a)).value, w)
        np.testing.assert_allclose(la.eigvals(a).value, np.linalg.eigvals(a).real)


def test_eig_on_a_symmetric_matrix_agrees_with_eigh() -> None:
    """On a symmetric matrix V is orthogonal, so eig's gradients of eigenvalues and of
    sign-invariant functions of eigenvectors equal eigh's (symmetric) ones."""
    a = symmetric(RNG, [-1.0, 0.5, 2.5])
    weights = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [1.5, 0.0, -2.0]])

    def via(decompose: object) -> object:
        def f(x: lampy.Variable) -> lampy.Variable:
            w, v = _sorted_pairs(*decompose(x))  # type: ignore[operator]
            return w * np.array([1.0, -2.0, 0.5]) + (v * v * weights).sum(axis=0)

        return f

    g_eig = grad_of(via(la.eig), a)[0]
    g_eigh = grad_of(via(la.eigh), a)[0]
    np.testing.assert_allclose(g_eig + g_eig.T, g_eigh + g_eigh.T, atol=1e-10)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_eig_gradient_matches_finite_differences(batch: tuple[int, ...]) -> None:
    """The eigenvalue and (through V * V, sign-invariant) eigenvector gradients of a
    non-symmetric matrix pass the central-difference check, in float64 and float32."""
    a = real_spectrum([-2.0, -0.5, 1.0, 3.0], batch)
    c = RNG.normal(size=(4, 4))

    def f(x: lampy.Variable) -> lampy.Variable:
        w, v = _sorted_pairs(*la.eig(x))
        return lampy.concatenate([(w * w).ravel(), (v * v * c).ravel()])

    check_grad(f, a)
    check_grad(f, a.astype(np.float32))
    check_grad(lambda x: lampy.sort(la.eigvals(x)), a)


def test_eig_values_gradient_at_repeated_eigenvalues() -> None:
    """At the identity (eigenvalue 1, three times) the sum of the eigenvalues (the
    trace) still has its exact gradient, the identity."""
    with lampy.Scope():
        x = lampy.param(np.eye(3))
        la.eigvals(x).sum().backward()
        np.testing.assert_allclose(x.grad, np.eye(3), atol=1e-12)


def test_complex_spectra_give_complex_results() -> None:
    """A rotation has eigenvalues +-i: eig and eigvals return numpy's complex values (for
    a param and a constant alike), and so for a complex matrix; a real spectrum stays
    real (tests/linalg/test_complex_linalg.py checks the gradients)."""
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    with lampy.Scope():
        for x in (lampy.param(rotation), rotation, rotation * 1j):
            w, v = la.eig(x)
            assert w.dtype == v.dtype == np.complex128
            np.testing.assert_allclose(
                np.sort_complex(la.eigvals(x).value), np.sort_complex(w.value)
            )
            np.testing.assert_allclose(
                v.value @ np.diag(w.value),
                np.asarray(x if not isinstance(x, lampy.Variable) else x.value) @ v.value,
                atol=1e-12,
            )
        assert la.eigvals(np.diag([1.0, 2.0])).dtype == np.float64


def test_eig_shape_errors() -> None:
    """Non-square and 1-d inputs raise ShapeError naming eig."""
    with lampy.Scope():
        with pytest.raises(lampy.ShapeError, match="eig: the last two dimensions must be square"):
            la.eig(lampy.param(np.ones((2, 3))))
        with pytest.raises(lampy.ShapeError, match="eigvals: expected a matrix"):
            la.eigvals(lampy.param(np.ones(3)))
