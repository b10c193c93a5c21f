"""erf behind gelu, both ways: lampy's numpy code (float32 within 1 ulp of the C
library's erf, float64 the C library's) and, when SciPy is installed, scipy.special.erf;
the two agree."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lampy.nn.functional import _erf
from lampy.nn.functional._erf import erf, erf_numpy

_erf_exact = np.frompyfunc(math.erf, 1, 1)


def _ulps(x: np.ndarray, f: Callable[[Any], Any] = erf_numpy) -> np.ndarray:
    ref = np.asarray(_erf_exact(x.astype(np.float64)), np.float64)
    got = f(x)
    assert got.dtype == x.dtype
    ref = ref.astype(x.dtype)
    tiny = np.finfo(x.dtype).smallest_subnormal
    spacing = np.spacing(np.maximum(np.abs(ref), tiny)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / spacing


def _dense_float32() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate(
        [
            rng.normal(size=100_000) * 2,
            np.linspace(-6, 6, 200_001),
            np.logspace(-38, 0, 2_000),
            -np.logspace(-38, 0, 2_000),
        ]
    ).astype(np.float32)


def test_float32_within_one_ulp_on_a_dense_grid() -> None:
    """Over normal draws, a dense grid of [-6, 6] and tiny magnitudes: at most 1 ulp."""
    assert _ulps(_dense_float32()).max() <= 1.0


finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


@given(st.lists(finite32, min_size=1, max_size=50))
def test_float32_within_one_ulp_anywhere(values: list[float]) -> None:
    """Any finite float32, however large or small: at most 1 ulp."""
    assert _ulps(np.array(values, np.float32)).max() <= 1.0


def test_numpy_path_keeps_no_float64_array_of_the_input_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """float32 erf works on float64 scratch of one chunk at most, never on a float64
    array the size of its input, and returns float32."""
    sizes: list[int] = []
    real_empty = np.empty

    def spy_empty(shape: Any, dtype: Any = float, *args: Any, **kwargs: Any) -> Any:
        out = real_empty(shape, dtype, *args, **kwargs)
        if out.dtype == np.float64:
            sizes.append(out.size)
        return out

    monkeypatch.setattr(_erf.np, "empty", spy_empty)
    x = np.linspace(-3, 3, 5 * _erf._CHUNK + 7, dtype=np.float32)
    assert erf_numpy(x).dtype == np.float32
    assert sizes and max(sizes) <= _erf._CHUNK


def test_special_values_shapes_and_float64() -> None:
    """Signed zeros, infinities and nan; shapes kept; float64 is the C library's erf."""
    for f in (erf, erf_numpy):
        x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
        r = f(x)
        assert r[0] == 0 and np.signbit(r[1]) and r[2] == 1 and r[3] == -1 and np.isnan(r[4])
        assert f(np.zeros((2, 0, 3), np.float32)).shape == (2, 0, 3)
        assert f(np.float32(0.5)) == np.float32(math.erf(0.5))
        assert f(np.zeros(3, np.float16)).dtype == np.float16
    x64 = np.linspace(-4, 4, 101)
    np.testing.assert_array_equal(erf_numpy(x64), [math.erf(v) for v in x64])


def test_scipy_and_numpy_paths_agree() -> None:
    """With SciPy (the lampy[fast] extra), erf is scipy.special.erf: within 0.5 ulp in
    float32 and 4 ulp of the C library in float64; lampy's numpy path agrees with it
    within 1 float32 ulp everywhere."""
    special = pytest.importorskip("scipy.special")
    assert _erf._scipy_erf() is special.erf
    x = _dense_float32()
    assert _ulps(x, erf).max() <= 0.5
    np.testing.assert_array_max_ulp(erf(x), erf_numpy(x), maxulp=1)
    x64 = np.linspace(-6, 6, 20_001)
    np.testing.assert_array_max_ulp(erf(x64), erf_numpy(x64), maxulp=4)
