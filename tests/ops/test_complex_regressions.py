"""Complex gradients that ``benchmarks/check_complex_against_torch.py`` found wrong, fixed
and checked here against finite differences (no torch needed)."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad


def test_arccosh_left_half_plane() -> None:
    # d/dz arccosh(z) = 1 / (sqrt(z - 1) sqrt(z + 1)), not 1 / sqrt(z**2 - 1): the two
    # differ in sign where Re(z) < 0 (numpy's arccosh has the first one's branch cuts)
    z = np.array([-0.7 + 0.4j, -2.0 - 1.5j, -0.3 - 0.8j, 0.5 + 0.5j, 2.0 - 1.0j])
    check_grad(lampy.arccosh, z)
    check_grad(lampy.arccosh, z, order=2)
    with lampy.Scope():
        v = lampy.param(z)
        lampy.arccosh(v).backward(grad=np.ones(5, complex))
        expected = np.conj(1 / (np.sqrt(z - 1) * np.sqrt(z + 1)))
        np.testing.assert_allclose(v.grad, expected, rtol=1e-12)


def test_arccosh_real_unchanged() -> None:
    x = np.array([1.5, 2.0, 5.0])
    check_grad(lampy.arccosh, x)


def test_solve_sylvester_real_a_complex_b() -> None:
    # scipy's solve_sylvester gives a wrong x for a real `a` with a complex `b`
    pytest.importorskip("scipy")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    q = rng.standard_normal((3, 2))
    with lampy.Scope():
        x = lampy.linalg.solve_sylvester(a, b, q).value
    np.testing.assert_allclose(a @ x + x @ b, q, atol=1e-12)
    check_grad(lampy.linalg.solve_sylvester, a, b, q)
