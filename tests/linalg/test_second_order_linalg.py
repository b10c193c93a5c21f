"""Second derivatives through inv, det, slogdet, solve and cholesky: their backward rules
are recorded with lampy ops (``create_graph=True``), checked with
``check_grad(..., order=2)`` against central differences of the first-order gradients
(float64: differences of differences need it)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy import linalg as la
from lampy.testing import check_grad

from .helpers import conditioned, sym

# (batch, n): one matrix, a stack, and the 1x1 edge
shapes = st.sampled_from([((), 1), ((), 2), ((), 3), ((2,), 3), ((2, 1), 2)])
seeds = st.integers(0, 2**16)


def _spd(rng: np.random.Generator, batch: tuple[int, ...], n: int) -> np.ndarray:
    m = rng.standard_normal((*batch, n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


@settings(max_examples=20)  # each example runs several order-2 checks
@given(shapes, seeds)
def test_inv_det_slogdet_second_order(shape: tuple[tuple[int, ...], int], seed: int) -> None:
    batch, n = shape
    rng = np.random.default_rng(seed)
    a = conditioned(rng, n, n, batch)
    check_grad(la.inv, a, order=2)
    check_grad(la.det, a, order=2)
    check_grad(lambda x: la.slogdet(x).logabsdet, a, order=2)
    # the sign flips with det's: a matrix with a negative determinant too
    check_grad(lambda x: la.slogdet(x).logabsdet, -a if n % 2 else a[..., ::-1, :], order=2)


@settings(max_examples=20)  # each example runs several order-2 checks
@given(shapes, seeds, st.booleans())
def test_solve_second_order(shape: tuple[tuple[int, ...], int], seed: int, vector: bool) -> None:
    batch, n = shape
    rng = np.random.default_rng(seed)
    a = conditioned(rng, n, n, batch)
    b = rng.standard_normal(n) if vector else rng.standard_normal((*batch, n, 2))
    check_grad(la.solve, a, b, order=2)  # a vector b is broadcast over a's batch axes
    if not vector:  # a used twice
        check_grad(lambda x, y: la.solve(x, la.solve(x, y)), a, b, order=2)


@settings(max_examples=20)  # each example runs several order-2 checks
@given(shapes, seeds, st.booleans())
def test_cholesky_second_order(shape: tuple[tuple[int, ...], int], seed: int, upper: bool) -> None:
    batch, n = shape
    a = _spd(np.random.default_rng(seed), batch, n)
    # cholesky reads one triangle: its gradient is the symmetric one, so check it
    # through a symmetric argument
    check_grad(lambda x: la.cholesky(sym(x), upper=upper), a, order=2)


def test_hessian_of_log_det_is_minus_inverse_kronecker() -> None:
    """d^2 log|det A| / dA_ij dA_kl = -inv(A)_jk inv(A)_li, a closed form."""
    a = conditioned(np.random.default_rng(1), 3, 3)
    h = lampy.hessian(lambda x: la.slogdet(x).logabsdet)(a)
    ai = np.linalg.inv(a)
    expected = -np.einsum("jk,li->ijkl", ai, ai)
    np.testing.assert_allclose(np.asarray(h), expected, atol=1e-10)
