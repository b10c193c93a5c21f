"""gelu (exact and tanh), softmax and log_softmax on both of their paths: the compiled
kernels (Numba, the lampy[fast] extra) and the numpy fallback (the ``path`` fixture).
Each path against float64 math and against the other, gradients against finite
differences, special values (signed zeros, infinities, nan, rows of -inf), the edge
cases (0-d, empty, non-contiguous input and gradient, dims other than the last), which
inputs take the kernels, and threads. (float32 results, saved arrays and gradients:
test_float32_kernels.py; the kernels' float32 arithmetic: test_numba_kernels.py.)"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy.nn.functional import _activations, _shared
from lampy.testing import check_grad
from tests.nn.test_float32_kernels import _gelu64, _log_softmax64

F32 = np.float32
_K, _C = math.sqrt(2 / math.pi), 0.044715


def _gelu_tanh64(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gelu's tanh approximation and its derivative in float64, as ``x s`` with
    ``s = (1 + tanh(u)) / 2 = 1 / (1 + exp(-2u))`` and ``(1 - tanh(u)**2) / 2 =
    1 / (2 cosh(u)**2)`` (nothing cancels)."""
    x64 = x.astype(np.float64)
    u = _K * (x64 + _C * x64**3)
    with np.errstate(over="ignore"):
        s = 1 / (1 + np.exp(-2 * u))
        half_sech2 = 0.5 / np.cosh(u) ** 2
    return x64 * s, s + x64 * half_sech2 * _K * (1 + 3 * _C * x64 * x64)


def _run(fn: Callable[[Any], Any], x: np.ndarray, g: np.ndarray | None = None) -> list[Any]:
    """``fn``'s value and the input's gradient for the output gradient ``g`` (ones)."""
    with lampy.Scope():
        p = lampy.param(x)
        y = fn(p)
        y.backward(np.ones(y.shape, y.dtype) if g is None else g)
        assert p.grad is not None
        return [np.array(y.value), np.array(p.grad)]


# --- gelu ---------------------------------------------------------------------------

GELU_X = np.concatenate(
    [np.linspace(-10, 10, 20_001), np.logspace(-30, 1, 311), -np.logspace(-30, 1, 311)]
)
# per (approximate, dtype, path): bounds of |value - reference| / |x| and of
# |slope - reference| (float64 exact: the C library's or SciPy's erf; tanh on the numpy
# path: 1 + tanh(u) cancels in the value's tail and the slope)
GELU_BOUNDS = {
    ("none", F32, "compiled"): (1.4e-7, 1.6e-7),
    ("none", F32, "numpy"): (1.4e-7, 1.6e-7),
    ("none", np.float64, "compiled"): (4e-16, 6e-16),
    ("none", np.float64, "numpy"): (4e-16, 6e-16),
    ("tanh", F32, "compiled"): (1.25e-7, 1.6e-7),
    ("tanh", F32, "numpy"): (1.25e-7, 1.3e-6),
    ("tanh", np.float64, "compiled"): (3e-16, 4e-16),
    ("tanh", np.float64, "numpy"): (5e-16, 4e-15),
}


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_against_float64(path: Any, approximate: str, dtype: Any) -> None:
    """Each path's value and gradient are in the input's dtype and within the bounds of
    ``GELU_BOUNDS`` of float64 math; float32 exact gelu and both dtypes of the tanh
    approximation run through their kernel (float64 exact gelu takes erf's numpy path):
    once for the value, and in backward once per block of the slope."""
    x = GELU_X.astype(dtype)
    value, grad = _run(lambda v: F.gelu(v, approximate), x)
    want, dwant = (_gelu64 if approximate == "none" else _gelu_tanh64)(x)
    vtol, gtol = GELU_BOUNDS[approximate, dtype, "numpy" if path is None else "compiled"]
    assert value.dtype == grad.dtype == dtype
    assert np.all(np.abs(value - want) <= vtol * np.abs(x) + 1e-300)
    assert np.max(np.abs(grad - dwant)) <= gtol
    if path is not None:
        kernel = "gelu_float32" if approximate == "none" else "gelu_tanh"
        blocks = -(-x.size // _activations._BLOCK)
        assert path == Counter({kernel: (1 + blocks) * (approximate == "tanh" or dtype == F32)})


def test_gelu_tanh_keeps_relative_accuracy_in_the_negative_tail() -> None:
    """The compiled tanh approximation computes ``x / (1 + exp(-2u))``: within 2e-5 of
    the value relatively down to 1e-30 (where ``u`` itself, rounded to float32, limits
    it); the numpy path's ``0.5 x (1 + tanh(u))`` cancels there (0 below about -6)."""
    pytest.importorskip("numba")
    x = np.linspace(-9, 0, 9001, dtype=F32)[:-1]
    value, _ = _run(lambda v: F.gelu(v, "tanh"), x)
    want = _gelu_tanh64(x)[0]
    big = np.abs(want) > 1e-30
    assert np.max(np.abs(value[big] - want[big]) / np.abs(want[big])) <= 2e-5


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-40, -1e-40, 40.0, -40.0]


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_special_values(path: Any, approximate: str) -> None:
    """float32 gelu at signed zeros (sign kept), infinities, nan, huge and subnormal
    inputs, on both paths: gelu(inf) = inf, gelu(-inf) = nan (-inf * 0, as PyTorch),
    gelu(-0.0) = -0.0, x / 2 for subnormal x; slopes 1/2 at 0, 1 and 0 far out, nan
    where PyTorch's is (tanh: inf * 0 at infinities and where x**3 overflows)."""
    x = np.array(SPECIAL, F32)
    with np.errstate(invalid="ignore", over="ignore"):  # numpy's tanh path: x**3 overflows
        value, grad = _run(lambda v: F.gelu(v, approximate), x)
    want = x.copy()  # 0, -0.0, inf, 1e30, 40 and their slopes 1/2 or 1
    want[[3, 4]] = np.nan
    want[[6, 10]] = -0.0
    want[[7, 8]] *= F32(0.5)
    np.testing.assert_array_equal(value, want)
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(value[number]), np.signbit(want[number]))
    slopes = np.array([0.5, 0.5, 1, 0, np.nan, 1, 0, 0.5, 0.5, 1, 0], F32)
    if approximate == "tanh":  # inf * 0 where u is infinite (x**3 overflows float32)
        slopes[2:7] = np.nan
    np.testing.assert_array_equal(grad, slopes)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradients_match_finite_differences(path: Any, approximate: str) -> None:
    """float64 and float32 gradients of both paths pass the finite-difference check."""
    x = np.random.default_rng(1).normal(size=(3, 7)) * 3
    check_grad(lambda v: F.gelu(v, approximate), x)
    check_grad(lambda v: F.gelu(v, approximate), x.astype(F32))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_shapes_and_layouts(path: Any, approximate: str) -> None:
    """0-d, empty, 3-d and non-contiguous inputs keep their shapes, and a strided input
    gives its contiguous copy's results bit for bit; float16 exact gelu goes through the
    float32 kernel, float16 tanh through numpy."""
    rng = np.random.default_rng(2)
    big = rng.normal(size=(4, 6, 10)).astype(F32)
    strided = big[:, ::2, 1::3]
    assert not strided.flags.c_contiguous
    fn = lambda v: F.gelu(v, approximate)
    for a, b in zip(_run(fn, strided), _run(fn, strided.copy()), strict=True):
        np.testing.assert_array_equal(a, b)
    v0, g0 = _run(fn, np.array(1.5, F32))
    assert v0.shape == g0.shape == () and v0.dtype == g0.dtype == F32
    np.testing.assert_array_equal([v0, g0], [r[0] for r in _run(fn, np.array([1.5], F32))])
    ve, ge = _run(fn, np.zeros((2, 0), F32))
    assert ve.shape == ge.shape == (2, 0)
    v16, g16 = _run(fn, big[0].astype(np.float16))
    assert v16.dtype == g16.dtype == np.float16
    if path is not None:
        kernel = "gelu_float32" if approximate == "none" else "gelu_tanh"
        # strided, its copy, 0-d, 1-element; none for the empty input; float16: exact;
        # each once for the value and once for the slope
        assert path == Counter({kernel: 2 * (4 + (approximate == "none"))})


# --- softmax, log_softmax -------------------------------------------------------------


def _softmax_ref(which: str, x: np.ndarray, g: np.ndarray, dim: int) -> tuple[Any, Any]:
    """Value and input gradient of softmax or log_softmax in float64."""
    lsm = _log_softmax64(x, dim)
    sm = np.exp(lsm)
    g64 = g.astype(np.float64)
    if which == "softmax":
        return sm, sm * (g64 - (g64 * sm).sum(dim, keepdims=True))
    return lsm, g64 - sm * g64.sum(dim, keepdims=True)


FNS = {"softmax": F.softmax, "log_softmax": F.log_softmax}
# (input shape, dim): rows, a 3-d input along its last axis named both ways and along
# the others, one row, rows of one element
SHAPES = [((6, 40), 1), ((6, 40), -1), ((2, 3, 17), 2), ((2, 3, 17), -1), ((2, 3, 17), 1)]
SHAPES += [((2, 3, 17), 0), ((9,), 0), ((5, 1), 1)]
TOL = {F32: (5e-7, 2e-6), np.float64: (1e-14, 1e-13)}


def _close(got: np.ndarray, want: np.ndarray, tol: float, what: str) -> None:
    """Within ``tol`` of the largest entry of ``want`` (at least 1)."""
    assert got.shape == want.shape, what
    scale = max(float(np.abs(want).max(initial=0)), 1.0)
    err = float(np.abs(got.astype(np.float64) - want).max(initial=0))
    assert err <= tol * scale, f"{what}: {err:.3g} > {tol:.1g} * {scale:.3g}"


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize(("shape", "dim"), SHAPES)
@pytest.mark.parametrize("which", sorted(FNS))
def test_softmax_against_float64(
    path: Any, which: str, shape: tuple[int, ...], dim: int, dtype: Any
) -> None:
    """Each path's value and gradient are in the input's dtype and match float64 math,
    along every dim of 1-d to 3-d inputs; the compiled path runs its kernels along the
    last axis (named as -1 or as ndim - 1) and numpy along the others."""
    rng = np.random.default_rng(len(shape) * 10 + dim)
    x = (rng.normal(size=shape) * 3).astype(dtype)
    g = rng.normal(size=shape).astype(dtype)
    value, grad = _run(lambda v: FNS[which](v, dim), x, g)
    want, dwant = _softmax_ref(which, x, g, dim)
    assert value.dtype == grad.dtype == dtype
    vtol, gtol = TOL[dtype]
    _close(value, want, vtol, "value")
    _close(grad, dwant, gtol, "gradient")
    if path is not None:
        n = int(dim % len(shape) == len(shape) - 1)
        assert path == Counter({f"{which}_rows": n, f"{which}_rows_backward": n})


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("which", sorted(FNS))
def test_compiled_and_numpy_paths_agree(
    monkeypatch: pytest.MonkeyPatch, which: str, dtype: Any
) -> None:
    """Both paths give the same values to a few units of the dtype's resolution beyond
    the error the numpy path's exp of ``x - shift`` carries (``exp_``: up to
    ``1.25 |x - shift|`` units, shifted by the global max; 1.2 and 0.6 of this bound
    measured), and the same gradients to a few units of their largest entry (4.2
    measured), on a (64, 256) input."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(64, 256)) * 2).astype(dtype)
    g = rng.normal(size=x.shape).astype(dtype)
    compiled = _run(lambda v: FNS[which](v, -1), x, g)
    monkeypatch.setattr(_shared, "numba_kernels", lambda: None)
    numpy = _run(lambda v: FNS[which](v, -1), x, g)
    eps = float(np.finfo(dtype).eps)
    shift = np.abs(x - x.max()).astype(np.float64)  # the numpy path's global shift
    if which == "softmax":
        bound = eps * np.abs(numpy[0]) * (4 + 1.25 * shift)
    else:  # the error of the log of a sum of such exps
        bound = eps * (2 * np.abs(numpy[0]) + 2.5 * shift.max(axis=1, keepdims=True))
    assert np.all(np.abs(compiled[0] - numpy[0]) <= bound)
    _close(compiled[1], numpy[1].astype(np.float64), 8 * eps, "gradient")


# rows (dim 1): ordinary; with -inf entries; all -inf (nan); with nan (nan); with +inf
# (nan); huge; one entry far below the rest (probability 0, log-probability exact)
EDGE_ROWS = np.array(
    [
        [0.0, 1.0, 2.0, 3.0],
        [-np.inf, 0.0, 1.0, -np.inf],
        [-np.inf, -np.inf, -np.inf, -np.inf],
        [np.nan, 0.0, 1.0, 2.0],
        [np.inf, 0.0, 1.0, 2.0],
        [1e4, 1e4 + 1, 1e4 - 1, 1e4],
        [0.0, 1.0, -1e30, 2.0],
    ],
    F32,
)


@pytest.mark.parametrize("which", sorted(FNS))
def test_softmax_edge_rows(path: Any, which: str) -> None:
    """Rows with -inf entries give them probability 0 (log-probability -inf, gradient 0
    for softmax, ``g`` for log_softmax); a row of -inf only, or holding nan or +inf,
    is nan throughout, value and gradient; huge rows and an entry far below the others
    are exact to float32 rounding; other rows are unaffected."""
    g = np.arange(EDGE_ROWS.size, dtype=F32).reshape(EDGE_ROWS.shape) / 10
    with np.errstate(invalid="ignore"):
        value, grad = _run(lambda v: FNS[which](v, 1), EDGE_ROWS, g)
        want, dwant = _softmax_ref(which, EDGE_ROWS, g, 1)
    nan_rows = [2, 3, 4]
    assert np.all(np.isnan(value[nan_rows])) and np.all(np.isnan(grad[nan_rows]))
    fine = [0, 1, 5, 6]
    np.testing.assert_array_equal(np.isinf(value[fine]), np.isinf(want[fine]))
    finite = np.isfinite(want[fine])
    np.testing.assert_allclose(value[fine][finite], want[fine][finite], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grad[fine], dwant[fine], rtol=1e-5, atol=1e-6)
    if which == "softmax":
        assert value[1, 0] == value[1, 3] == value[6, 2] == 0
        assert grad[1, 0] == grad[1, 3] == 0
    else:
        assert value[1, 0] == value[1, 3] == -np.inf
        np.testing.assert_array_equal(grad[1, [0, 3]], g[1, [0, 3]])


@pytest.mark.parametrize("which", sorted(FNS))
def test_softmax_zero_d_empty_and_non_contiguous(path: Any, which: str) -> None:
    """A 0-d input (dim 0 or -1) gives 1 (softmax) or 0 (log_softmax) with gradient 0;
    empty inputs keep their shapes; a strided input and a transposed gradient give their
    contiguous copies' results, bit for bit on the compiled path; no kernel runs for the
    0-d and empty inputs."""
    fn = FNS[which]
    for dim in (0, -1):
        value, grad = _run(lambda v: fn(v, dim), np.array(2.5, F32))
        assert value.shape == grad.shape == () and grad == 0
        assert value == (1 if which == "softmax" else 0)
    for shape in ((0, 5), (3, 0)):
        value, grad = _run(lambda v: fn(v, 1), np.zeros(shape, F32))
        assert value.shape == grad.shape == shape
    if path is not None:
        assert sum(path.values()) == 0
    rng = np.random.default_rng(4)
    x = rng.normal(size=(6, 20)).astype(F32)[:, ::2]
    gt = rng.normal(size=(10, 6)).astype(F32)
    assert not x.flags.c_contiguous and not gt.T.flags.c_contiguous
    strided = _run(lambda v: fn(v, 1), x, gt.T)
    contiguous = _run(lambda v: fn(v, 1), x.copy(), gt.T.copy())
    for s, c in zip(strided, contiguous, strict=True):
        if path is not None:
            np.testing.assert_array_equal(s, c)
        np.testing.assert_allclose(s, c, rtol=0, atol=4e-7 * float(np.abs(c).max()))


@pytest.mark.parametrize("dim", [-1, 1, 0])
@pytest.mark.parametrize("which", sorted(FNS))
def test_softmax_gradients_match_finite_differences(path: Any, which: str, dim: int) -> None:
    """float64 and float32 gradients of both paths pass the finite-difference check."""
    x = np.random.default_rng(5).normal(size=(3, 4, 5))
    check_grad(lambda v: FNS[which](v, dim), x)
    check_grad(lambda v: FNS[which](v, dim), x.astype(F32))


# --- threads ------------------------------------------------------------------------


def _graph(x: np.ndarray, workers: int) -> bytes:
    """The input's gradient, as bytes, through every kernel: exact gelu, its tanh
    approximation, softmax and log_softmax along the last axis."""
    with lampy.Scope():
        p = lampy.param(x)
        a = F.softmax(F.gelu(p), -1)
        b = F.log_softmax(F.gelu(p, "tanh"), 1)
        (a * b).sum().backward(workers=workers)
        assert p.grad is not None
        return bytes(p.grad.tobytes())


def test_gradients_are_bitwise_equal_for_any_worker_count(
    path: Any, always_concurrent: None
) -> None:
    """Backward with 2 or 3 workers (the closures of the four ops may then run in
    several threads) gives the serial gradient bit for bit."""
    x = np.random.default_rng(6).normal(size=(32, 64)).astype(F32)
    serial = _graph(x, 1)
    assert _graph(x, 2) == serial
    assert _graph(x, 3) == serial


def test_kernels_in_two_threads_at_once(path: Any, in_two_threads: Any) -> None:
    """The ops called from two threads at the same time (the compiled kernels release
    the GIL) give the serial results bit for bit."""
    rng = np.random.default_rng(7)
    xs = [rng.normal(size=(128, 256)).astype(F32) for _ in range(2)]

    def work(k: int) -> list[bytes]:
        return [_graph(xs[k], 1) for _ in range(5)]

    assert in_two_threads(work) == [work(0), work(1)]
