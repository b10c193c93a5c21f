"""erf behind float64 gelu, both ways: lampy's numpy code (float32 within 1 ulp of the C
library's erf, float64 the C library's) and, when SciPy is installed, scipy.special.erf;
the two agree. And the float32 normal distribution function behind float32 gelu
(normal_cdf_float32): its stated accuracy, special values, shapes, float32 throughout."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lampy.nn.functional import _erf
from lampy.nn.functional._erf import erf, erf_numpy, normal_cdf_float32

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


# --- normal_cdf_float32 --------------------------------------------------------------

_erfc_exact = np.frompyfunc(math.erfc, 1, 1)
_SQRT_HALF = math.sqrt(0.5)


def _phi_and_slope(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Phi(x) = erfc(-x / sqrt 2) / 2 and Phi(x) + x phi(x), in float64 from the C
    library's erfc."""
    x64 = x.astype(np.float64)
    phi = np.asarray(_erfc_exact(-x64 * _SQRT_HALF), np.float64) / 2
    return phi, phi + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)


def _cdf_grid() -> np.ndarray:
    """A dense grid of [-16, 16], magnitudes down to 1e-30 of both signs, and the worst
    points of an exhaustive check of every float32 with 2**-30 <= |x| <= 16 (for each
    exp, of Phi and of the slope)."""
    tiny = np.logspace(-30, 0, 3_001)
    worst = [0.037453953, 0.04873894, 1.387006, 0.056078047]
    return np.concatenate([np.linspace(-16, 16, 400_001), tiny, -tiny, worst]).astype(np.float32)


@pytest.mark.parametrize(
    ("exp2", "phi_bound", "slope_bound"),
    [(True, 1.25e-7, 1.6e-7), (False, 2e-7, 2e-7)],
    ids=["exp2", "exp"],
)
def test_normal_cdf_float32_accuracy(
    monkeypatch: pytest.MonkeyPatch, exp2: bool, phi_bound: float, slope_bound: float
) -> None:
    """Phi within 1.25e-7 absolutely through exp2 (1.2e-7 measured on every float32 of
    [-16, 16]), within 2e-7 through numpy's exp (1.5e-7 measured); the slope
    Phi + x phi within 1.6e-7 and 2e-7 (1.5e-7 and 1.7e-7 measured)."""
    monkeypatch.setattr(_erf, "fast_exp2", lambda: exp2)
    x = _cdf_grid()
    phi, slope = normal_cdf_float32(x, slope=True)
    assert phi.dtype == np.float32 and slope is not None and slope.dtype == np.float32
    want_phi, want_slope = _phi_and_slope(x)
    assert np.abs(phi - want_phi).max() <= phi_bound
    assert np.abs(slope - want_slope).max() <= slope_bound
    alone, none = normal_cdf_float32(x, slope=False)
    assert none is None
    np.testing.assert_array_equal(alone, phi)


def test_normal_cdf_float32_special_values_and_shapes() -> None:
    """Signed zeros give 1/2, +-inf and huge values 1 and 0 (slopes 1 and 0), nan stays
    nan, subnormals give 1/2; 0-d and empty inputs keep their shapes."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, 1e30, -1e30, np.nan, 1e-40, -1e-40], np.float32)
    phi, slope = normal_cdf_float32(x, slope=True)
    assert slope is not None
    np.testing.assert_array_equal(phi, [0.5, 0.5, 1, 0, 1, 0, np.nan, 0.5, 0.5])
    np.testing.assert_array_equal(slope, [0.5, 0.5, 1, 0, 1, 0, np.nan, 0.5, 0.5])
    p0, s0 = normal_cdf_float32(np.array(1.5, np.float32), slope=True)
    assert p0.shape == () and s0 is not None and s0.shape == ()
    want_phi, want_slope = _phi_and_slope(np.array([1.5], np.float32))
    assert abs(float(p0) - want_phi[0]) < 1.25e-7 and abs(float(s0) - want_slope[0]) < 1.6e-7
    pe, se = normal_cdf_float32(np.zeros((2, 0, 3), np.float32), slope=True)
    assert pe.shape == (2, 0, 3) and se is not None and se.shape == (2, 0, 3)


class _Float32Only(np.ndarray):
    """An array that records the dtypes of every ufunc call it takes part in."""

    seen: ClassVar[list[np.dtype]] = []

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        arrays = [*inputs, *kwargs.get("out", ())]
        for a in arrays:
            if isinstance(a, np.ndarray):
                _Float32Only.seen.append(a.dtype)
        plain = [a.view(np.ndarray) if isinstance(a, _Float32Only) else a for a in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                o.view(np.ndarray) if isinstance(o, _Float32Only) else o for o in kwargs["out"]
            )
        result = getattr(ufunc, method)(*plain, **kwargs)
        if isinstance(result, np.ndarray) and not isinstance(result, _Float32Only):
            _Float32Only.seen.append(result.dtype)
            return result.view(_Float32Only)
        return result


def test_normal_cdf_float32_computes_in_float32_only() -> None:
    """Every numpy pass of the kernel reads and writes float32 arrays only: no float64
    intermediate anywhere (the arithmetic takes float32 scalars)."""
    _Float32Only.seen = []
    x = np.linspace(-6, 6, 1001, dtype=np.float32).view(_Float32Only)
    phi, slope = normal_cdf_float32(x, slope=True)
    assert len(_Float32Only.seen) > 20
    assert set(_Float32Only.seen) == {np.dtype(np.float32)}
    assert phi.dtype == np.float32 and slope is not None and slope.dtype == np.float32
