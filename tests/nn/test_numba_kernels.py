"""The module of compiled kernels itself (``lampy.nn.functional._numba_kernels``, Numba,
the lampy[fast] extra): every kernel's float32 specialisation computes in float32 only;
the kernels compile without a writable cache directory and give the cached results;
without Numba the ops take their numpy paths; and the building blocks the kernels share,
``_exp`` (accuracy, special values) and ``_row_max`` (numpy's nan rule)."""

from __future__ import annotations

import importlib.util
import math
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
import lampy.nn.functional as F
from lampy.nn.functional import _shared

F32 = np.float32


def _ro(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _calls() -> dict[str, tuple[Any, ...]]:
    """Arguments of one float32 call of each kernel and helper (inputs read-only, as the
    ops pass them), on (5, 7) rows and their 35 elements."""
    m, d = 5, 7
    x = _ro(np.linspace(-3, 3, m * d, dtype=F32).reshape(m, d))
    v, r, x1 = _ro(np.ones(d, F32)), _ro(np.ones(m, F32)), x.reshape(-1)
    inv_d = F32(1 / d)
    t = _ro(np.arange(m, dtype=np.intp) % d)  # class indices

    def out(*shape: int) -> np.ndarray:
        return np.zeros(shape, F32)

    return {
        "layer_norm_rows": (x, v, v, F32(1e-5), inv_d, out(m, d), out(m, d), out(m)),
        "layer_norm_rows_backward": (x, x, r, v, inv_d, out(m, d), out(d), out(d), True, True, 2),
        # the gradient mode (y empty); both modes are typed in one specialisation
        "gelu_float32": (x1, out(0), x1, out(m * d)),
        "gelu_tanh": (x1, out(0), x1, out(m * d), F32(0.7978846), F32(0.044715)),
        "softmax_rows": (x, out(m, d)),
        "softmax_rows_backward": (x, x, out(m, d)),
        "log_softmax_rows": (x, out(m, d)),
        "log_softmax_rows_backward": (x, x, out(m, d)),
        "attention_exp_rows": (x, out(m, d), out(m), 3, True, F32(0.5)),
        "cross_entropy_rows": (x, t, out(m, d), out(m), out(m)),
        "cross_entropy_rows_backward": (out(m, d) + 1, out(m) + 1, t, r, out(m, d)),
        "attention_scores_backward": (out(m, d), x, r),
        "_exp_sum_first": (x1, F32(1), out(m * d), 20, F32(0.5)),
        "_row_max": (x1,),
        "_max_of_numbers": (x1,),
        "_exp_sum": (x1, F32(1), out(m * d)),
        "_dot": (x1, x1),
        "_sum": (x1,),
    }


def test_every_kernel_is_called_here() -> None:
    """The table of calls covers every public kernel of the module."""
    kernels = pytest.importorskip("lampy.nn.functional._numba_kernels")
    assert set(kernels.__all__) <= set(_calls())


def test_compiled_float32_kernels_have_no_float64_variable() -> None:
    """Inside the float32 specialisations of the compiled kernels, of their helpers and
    of ``_exp`` every floating-point variable and constant is float32 (Numba's type map
    of a fresh, uncached copy)."""
    numba = pytest.importorskip("numba")
    kernels = _shared.numba_kernels()
    assert kernels is not None
    fresh = {}
    for name, args in _calls().items():
        kernel = getattr(kernels, name)
        options = {k: v for k, v in kernel.targetoptions.items() if k not in ("nopython", "cache")}
        fresh[name] = numba.njit(**options)(kernel.py_func)
        fresh[name](*args)
    fresh["_exp"] = numba.njit(fastmath={"contract"})(kernels._EXP[numba.types.float32])
    fresh["_exp"](F32(-1.5))
    fresh["_exp_normal32"] = numba.njit(fastmath={"contract"})(kernels._EXP_NORMAL32)
    fresh["_exp_normal32"](F32(-1.5))
    for name, fn in fresh.items():
        (signature,) = fn.signatures
        types = {str(t) for t in fn.overloads[signature].type_annotation.typemap.values()}
        assert "float32" in types, name
        assert not any("float64" in t or "complex" in t for t in types), (name, types)


def test_kernels_compile_without_a_writable_cache_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where Numba finds no writable cache directory (``njit(cache=True)`` raises, as in a
    read-only installation), the kernels compile without a cache and give the cached
    ones' results bit for bit."""
    numba = pytest.importorskip("numba")
    real_njit = numba.njit

    def njit(*args: Any, **options: Any) -> Any:
        if options.get("cache"):
            raise RuntimeError("cannot cache function 'f': no locator available for file")
        return real_njit(*args, **options)

    monkeypatch.setattr(numba, "njit", njit)
    cached = _shared.numba_kernels()
    assert cached is not None
    spec = importlib.util.spec_from_file_location("_uncached_kernels", cached.__file__)
    assert spec is not None and spec.loader is not None
    uncached = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(uncached)  # the module under another name: main's is untouched
    for name in cached.__all__:
        assert getattr(uncached, name).targetoptions.get("cache") is None, name
        runs = [_calls()[name], _calls()[name]]
        getattr(uncached, name)(*runs[0])
        getattr(cached, name)(*runs[1])
        for a, b in zip(*runs, strict=True):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b, err_msg=name)


def test_without_numba_the_numpy_paths_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """With Numba not importable, numba_kernels() is None and the ops with kernels still
    work (their numpy paths)."""
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba -> ImportError
    monkeypatch.delitem(sys.modules, "lampy.nn.functional._numba_kernels", raising=False)
    monkeypatch.delattr(lampy.nn.functional, "_numba_kernels", raising=False)
    _shared.numba_kernels.cache_clear()
    try:
        assert _shared.numba_kernels() is None
        x = np.array([[-1.0, 0.0, 2.0], [3.0, 3.0, 3.0]], F32)
        with lampy.Scope():
            p = lampy.param(x)
            ln = F.layer_norm(p, 3).value
            gelu, sm, lsm = F.gelu(p).value, F.softmax(p, 1).value, F.log_softmax(p, 1).value
        np.testing.assert_allclose(ln[1], 0, atol=1e-6)
        np.testing.assert_allclose(gelu[0], [-0.15865525, 0, 1.9544997], rtol=0, atol=3e-7)
        np.testing.assert_allclose(sm[1], 1 / 3, rtol=1e-7)
        np.testing.assert_allclose(lsm[1], -math.log(3), rtol=1e-7)
    finally:
        _shared.numba_kernels.cache_clear()


# --- the building blocks: _exp and _row_max --------------------------------------------


def _compiled_exp(dtype: Any, name: str = "_exp") -> Any:
    """``_exp`` (or another scalar exp of the module, by ``name``) over a vector of
    ``dtype``, compiled with the kernels' options."""
    numba = pytest.importorskip("numba")
    kernels = _shared.numba_kernels()
    assert kernels is not None
    exp = getattr(kernels, name)

    @numba.njit(fastmath={"contract"}, error_model="numpy")
    def exp_all(x: np.ndarray, out: np.ndarray) -> None:
        for i in range(x.size):
            out[i] = exp(x[i])

    def run(x: np.ndarray) -> np.ndarray:
        out = np.empty_like(x)
        exp_all(x.astype(dtype), out)
        return out

    return run


def test_exp_float32_within_one_ulp() -> None:
    """float32 ``_exp`` is within 1 ulp of the float64 exp on a dense grid of the whole
    range where it is neither 0 nor inf (0.94 ulp measured on every float32 of
    [-104, 88.7]), subnormal results included."""
    exp = _compiled_exp(F32)
    x = np.concatenate([np.linspace(-104, 88.7, 2_000_001), np.linspace(-1, 1, 200_001)])
    x = x.astype(F32)
    got = exp(x)
    want = np.exp(x.astype(np.float64))
    ulp = np.maximum(np.spacing(want.astype(F32)).astype(np.float64), 2.0**-149)
    assert np.max(np.abs(got - want) / ulp) <= 1.0


def test_exp_float64_within_one_ulp() -> None:
    """float64 ``_exp`` is within 1 ulp of numpy's (itself within 1 ulp: 2 ulp apart at
    most) on a dense grid, and equals ``math.exp`` to 1 ulp on a random sample."""
    exp = _compiled_exp(np.float64)
    x = np.concatenate([np.linspace(-745, 709.7, 2_000_001), np.linspace(-1, 1, 200_001)])
    got, want = exp(x), np.exp(x)
    ulp = np.maximum(np.spacing(want), 5e-324)
    assert np.max(np.abs(got - want) / ulp) <= 2.0
    sample = np.random.default_rng(0).uniform(-700, 700, 20_000)
    want = np.array([math.exp(v) for v in sample])
    assert np.max(np.abs(exp(sample) - want) / np.spacing(want)) <= 1.0


@pytest.mark.parametrize("dtype", [F32, np.float64])
def test_exp_special_values(dtype: Any) -> None:
    """exp(-inf) = 0, exp(inf) = inf, nan stays nan, exp(+-0) = 1; results below the
    smallest normal number are subnormal as numpy's, and they round to 0 and overflow to
    inf where numpy's do."""
    exp = _compiled_exp(dtype)
    tiny = -90.0 if dtype == F32 else -720.0  # exp below the smallest normal number
    limits = [-104.0, 88.8] if dtype == F32 else [-746.0, 709.9]
    x = np.array([-np.inf, np.inf, np.nan, 0.0, -0.0, tiny, *limits, -1e30, 1e30], dtype)
    with np.errstate(over="ignore"):
        want = np.exp(x)
    got = exp(x)
    np.testing.assert_array_equal(got[:5], want[:5])
    np.testing.assert_allclose(got[5], want[5], rtol=2 * np.finfo(dtype).eps)
    assert 0 < got[5] < np.finfo(dtype).tiny
    np.testing.assert_array_equal(got[6:], [0.0, np.inf, 0.0, np.inf])


def test_exp_normal32_is_exp_where_it_is_normal_and_0_below() -> None:
    """gelu's ``_exp_normal32`` is ``_exp`` bit for bit on [-87.5, 0] (within 1 ulp of the
    float64 exp), 0 below -87.5 (where ``_exp`` gives subnormal numbers) and at -inf;
    nan stays nan."""
    fast, exp = _compiled_exp(F32, "_exp_normal32"), _compiled_exp(F32)
    x = np.concatenate([np.linspace(-87.5, 0, 2_000_001), np.linspace(-1, 0, 100_001)])
    x = x.astype(F32)
    got = fast(x)
    np.testing.assert_array_equal(got, exp(x))
    want = np.exp(x.astype(np.float64))
    assert np.max(np.abs(got - want) / np.spacing(want.astype(F32))) <= 1.0
    below = np.array([np.nextafter(F32(-87.5), F32(-np.inf)), -90, -104, -1e30, -np.inf], F32)
    np.testing.assert_array_equal(fast(below), np.zeros(5, F32))
    assert np.isnan(fast(np.array([np.nan], F32))[0])


def test_row_max_propagates_nan_as_numpy() -> None:
    """The compiled row max is numpy's max: nan if the row holds one, infinities compared
    as numpy's ``maximum`` (a zero maximum's sign is not compared: numpy's own depends
    on where the zeros are), in both dtypes at every position of
    rows of 1 to 17, 127, 128 and 131 entries."""
    pytest.importorskip("numba")
    kernels = _shared.numba_kernels()
    assert kernels is not None
    rows = [
        [1.0, 5.0, -2.0],
        [1.0, np.nan, 7.0],
        [np.nan, 1.0, 2.0],
        [-np.inf, -np.inf, -np.inf],
        [-np.inf, np.inf, 0.0],
        [3.0],
    ]
    for row in rows:
        for dtype in (F32, np.float64):
            for times in (1, 2, 11, 43, 50):  # rows of 1 to 150: eight lanes and a rest
                a = _ro(np.array(row * times, dtype))
                np.testing.assert_array_equal(kernels._row_max(a), np.max(a))
    for n in (*range(1, 18), 127, 128, 131):  # each lane of the running maxima, the rest
        for at in range(n):
            for special in (np.nan, 2.0):
                for dtype in (F32, np.float64):
                    a = np.linspace(-1, 1, n).astype(dtype)
                    a[at] = special
                    np.testing.assert_array_equal(kernels._row_max(_ro(a)), np.max(a))


def _attention_rows_with_numpy_max() -> Any:
    """``attention_exp_rows`` as it was with numpy's max (``_row_max``) for every row:
    the reference of the kernel's faster max (``_max_of_numbers``)."""
    numba = pytest.importorskip("numba")
    kernels = _shared.numba_kernels()
    assert kernels is not None
    row_max, exp_sum_first = kernels._row_max, kernels._exp_sum_first

    @numba.njit(fastmath={"contract"}, error_model="numpy")
    def reference(x: Any, e: Any, inv: Any, n_l: int, causal: bool, scale: Any) -> None:
        m, s = x.shape
        zero, one = x.dtype.type(0), x.dtype.type(1)
        for i in range(m):
            w = min(i % n_l + 1, s) if causal else s
            shift = row_max(x[i, :w]) if w else zero
            if shift < zero and np.isinf(shift):
                shift = zero
            total = exp_sum_first(x[i], shift, e[i], w, scale)
            inv[i] = one / total if total > zero else zero

    return reference


@pytest.mark.parametrize("scale", [1.0, 0.125, 0.3])
@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_exp_rows_give_numpy_max_bits(dtype: Any, causal: bool, scale: float) -> None:
    """``attention_exp_rows`` finds each row's max by comparisons that assume numbers and
    checks the row's sum for a nan: with a nan, +inf or -inf at every position of rows of
    1 to 200 entries (either side of ``_SHORT_ROW``), rows of only -inf, and maxima of
    0.0 and -0.0 together, its exps and inverse sums are bit for bit those of numpy's max."""
    kernels = _shared.numba_kernels()
    assert kernels is not None
    reference = _attention_rows_with_numpy_max()
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 63, 64, 65, kernels._SHORT_ROW - 1, kernels._SHORT_ROW, 200):
        base = rng.standard_normal(n).astype(dtype)
        rows = [base]
        for at in range(n):
            for special in (np.nan, np.inf, -np.inf):
                row = base.copy()
                row[at] = special
                rows.append(row)
        rows.append(np.full(n, -np.inf, dtype))
        zeros = -np.abs(base)
        zeros[:: max(1, n // 3)] = 0.0
        zeros[1 :: max(1, n // 2)] = -0.0
        rows.append(zeros)
        x = np.stack(rows)
        if causal:  # each row n times: query i of n sees its first i + 1 entries
            x = x[:, None].repeat(n, 1).reshape(-1, n)
        _ro(x)
        n_l = n if causal else 1
        e, inv = np.empty_like(x), np.empty(len(x), dtype)
        e_ref, inv_ref = np.empty_like(x), np.empty(len(x), dtype)
        with np.errstate(invalid="ignore"):
            kernels.attention_exp_rows(x, e, inv, n_l, causal, dtype(scale))
            reference(x, e_ref, inv_ref, n_l, causal, dtype(scale))
        np.testing.assert_array_equal(inv, inv_ref, err_msg=f"n={n}")
        np.testing.assert_array_equal(e, e_ref, err_msg=f"n={n}")
        assert np.array_equal(np.signbit(e), np.signbit(e_ref))


@given(
    n=st.integers(1, 300),
    at=st.integers(0, 299),
    special=st.sampled_from([np.nan, np.inf, -np.inf, 1e30]),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=60, deadline=None)
def test_row_max_at_every_position(n: int, at: int, special: float, seed: int) -> None:
    """The row max of rows of 1 to 300 elements (eight running maxima and a remainder)
    is numpy's max, with a nan, an infinity or a large value at
    any position, in either dtype."""
    pytest.importorskip("numba")
    kernels = _shared.numba_kernels()
    assert kernels is not None
    rng = np.random.default_rng(seed)
    for dtype in (F32, np.float64):
        a = rng.normal(size=n).astype(dtype)
        a[at % n] = special
        np.testing.assert_array_equal(kernels._row_max(_ro(a)), np.max(a))
