"""The vectorised float32 erf behind gelu is within 1 float32 ulp of the C library's."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from lampy.nn.functional._erf import erf

_erf_exact = np.frompyfunc(math.erf, 1, 1)


def _ulps(x: np.ndarray) -> np.ndarray:
    ref = np.asarray(_erf_exact(x.astype(np.float64)), np.float64).astype(np.float32)
    got = erf(x)
    assert got.dtype == np.float32
    return np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref)).astype(np.float64)


def test_float32_within_one_ulp_on_a_dense_grid() -> None:
    """Over normal draws, a dense grid of [-6, 6] and tiny magnitudes: at most 1 ulp."""
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            rng.normal(size=100_000) * 2,
            np.linspace(-6, 6, 200_001),
            np.logspace(-38, 0, 2_000),
            -np.logspace(-38, 0, 2_000),
        ]
    ).astype(np.float32)
    assert _ulps(x).max() <= 1.0


finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


@given(st.lists(finite32, min_size=1, max_size=50))
def test_float32_within_one_ulp_anywhere(values: list[float]) -> None:
    """Any finite float32, however large or small: at most 1 ulp."""
    assert _ulps(np.array(values, np.float32)).max() <= 1.0


def test_special_values_shapes_and_float64() -> None:
    """Signed zeros, infinities and nan; shapes kept; float64 is the C library's erf."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    r = erf(x)
    assert r[0] == 0 and np.signbit(r[1]) and r[2] == 1 and r[3] == -1 and np.isnan(r[4])
    assert erf(np.zeros((2, 0, 3), np.float32)).shape == (2, 0, 3)
    assert erf(np.float32(0.5)) == np.float32(math.erf(0.5))
    x64 = np.linspace(-4, 4, 101)
    np.testing.assert_array_equal(erf(x64), [math.erf(v) for v in x64])
