"""Second derivatives through norm, matrix_power, pinv, lstsq, solve_triangular, sqrtm,
solve_sylvester, eigh, eigvalsh and svd: their backward rules are recorded with lampy
ops (``create_graph=True``), checked with ``check_grad(..., order=2)`` against central
differences of the first-order gradients (float64). Repeated eigenvalues refuse with
``NoSecondOrderError`` rather than answer wrongly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy import linalg as la
from lampy.testing import check_grad

from .helpers import conditioned, mt, symmetric

seeds = st.integers(0, 2**16)


@settings(max_examples=5, deadline=None)
@given(seeds)
def test_norms_second_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.3, 2, (2, 3)) * rng.choice([-1.0, 1.0], (2, 3))
    check_grad(la.norm, x, order=2)
    for ord_ in (None, 1, np.inf, 3, 0.5, -1.5):
        check_grad(lambda v, o=ord_: la.norm(v, ord=o, axis=1), x, order=2)
    a = conditioned(rng, 3, 2, (2,))
    for ord_ in ("fro", "nuc", 2, -2):
        check_grad(lambda v, o=ord_: la.norm(v, ord=o, axis=(-2, -1), keepdims=True), a, order=2)


@settings(max_examples=5, deadline=None)
@given(seeds, st.sampled_from([-3, -1, 2, 5]))
def test_matrix_power_second_order(seed: int, k: int) -> None:
    a = conditioned(np.random.default_rng(seed), 3, 3) * 0.6
    check_grad(lambda v: la.matrix_power(v, k), a, order=2)


@settings(max_examples=5, deadline=None)
@given(seeds, st.sampled_from([(3, 2), (2, 3), (3, 3)]))
def test_pinv_lstsq_second_order(seed: int, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(seed)
    m, n = shape
    a = conditioned(rng, m, n)
    check_grad(la.pinv, a, order=2)
    b = rng.uniform(-2, 2, (m, 2))
    check_grad(lambda u, v: la.lstsq(u, v)[0], a, b, order=2)
    check_grad(lambda u, v: la.lstsq(u, v)[0], a, b[:, 0], order=2)


@settings(max_examples=5, deadline=None)
@given(seeds, st.booleans(), st.sampled_from([0, 1]))
def test_solve_triangular_second_order(seed: int, lower: bool, trans: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
    b = rng.uniform(-1, 1, (2, 3, 2))
    f = lambda u, v: la.solve_triangular(u, v, trans=trans, lower=lower)
    check_grad(f, a, b, order=2)
    check_grad(f, a, b[0, :, 0], order=2)


@settings(max_examples=5, deadline=None)
@given(seeds)
def test_sqrtm_sylvester_second_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = symmetric(rng, [1.0, 2.0, 3.5])
    check_grad(la.sqrtm, s + 0.1 * rng.uniform(-1, 1, (3, 3)), order=2)
    a = conditioned(rng, 2, 2) + 3 * np.eye(2)
    b = conditioned(rng, 3, 3) + 3 * np.eye(3)
    check_grad(la.solve_sylvester, a, b, rng.uniform(-1, 1, (2, 3)), order=2)


def _sym(x: lampy.Variable) -> lampy.Variable:
    return (x + mt(x)) * 0.5


@settings(max_examples=5, deadline=None)
@given(seeds)
def test_eigh_svd_second_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = symmetric(rng, [-1.0, 0.5, 2.0])
    weights = np.array([1.0, 2.0, 3.0])
    check_grad(lambda v: la.eigvalsh(_sym(v)), s, order=2)
    check_grad(lambda v: (la.eigh(_sym(v)).eigenvectors ** 2) * weights, s, order=2)
    a = conditioned(rng, 3, 2)
    check_grad(lambda v: la.svd(v, compute_uv=False), a, order=2)

    def pairs(v: lampy.Variable) -> lampy.Variable:  # invariant to each pair's sign
        u, sv, vh = la.svd(v, full_matrices=False)
        return (u * (sv * weights[:2])) @ vh

    check_grad(pairs, a, order=2)


def test_repeated_eigenvalues_refuse_second_order() -> None:
    s = symmetric(np.random.default_rng(0), [1.0, 1.0, 2.0])
    with pytest.raises(lampy.NoSecondOrderError, match="repeated"):
        check_grad(lambda v: la.eigvalsh(_sym(v)), s, order=2)
    with pytest.raises(lampy.NoSecondOrderError, match="repeated"):
        check_grad(lambda v: la.svd(v, compute_uv=False), np.eye(2), order=2)
