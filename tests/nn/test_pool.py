"""Pooling: max, average and adaptive pools against direct-loop numpy references
(values, PyTorch's argmax indices and tie/NaN conventions, ceil_mode and padding
divisors), gradients against finite differences, float32, empty batches and errors."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional._adaptive_pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
)
from lampy.nn.functional._pool import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from lampy.testing import check_grad

MAX = {1: max_pool1d, 2: max_pool2d}
AVG = {1: avg_pool1d, 2: avg_pool2d}


# --- references -----------------------------------------------------------------------------


def _out_len(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = n + 2 * p - d * (k - 1) - 1
    o = (math.ceil(span / s) if ceil_mode else span // s) + 1
    if ceil_mode and (o - 1) * s >= n + p:  # the last window must start before the right pad
        o -= 1
    return o


def _planes(x: np.ndarray, nd: int) -> np.ndarray:
    return x.reshape(-1, *x.shape[-nd:])


def _ref_max(x: np.ndarray, nd: int, k: Any, s: Any, p: Any, d: Any, ceil: bool) -> Any:
    """Loops over planes, outputs and taps: PyTorch's first maximum (last NaN)."""
    spatial = x.shape[-nd:]
    outs = [_out_len(*a, ceil) for a in zip(spatial, k, s, p, d, strict=True)]
    planes = _planes(x, nd)
    val = np.full((len(planes), *outs), -np.inf)
    idx = np.zeros((len(planes), *outs), dtype=np.int64)
    for b, plane in enumerate(planes):
        for o in itertools.product(*(range(m) for m in outs)):
            best, at = -np.inf, None
            # no tap inside the input: PyTorch reports the first tap past the left edge
            first = [oi * si - pi for oi, si, pi in zip(o, s, p, strict=True)]
            first = [
                q + (-q + di - 1) // di * di if q < 0 else q for q, di in zip(first, d, strict=True)
            ]
            for t in itertools.product(*(range(kk) for kk in k)):
                pos = [
                    oi * si - pi + ti * di for oi, si, pi, ti, di in zip(o, s, p, t, d, strict=True)
                ]
                if not all(0 <= q < n for q, n in zip(pos, spatial, strict=True)):
                    continue
                v = plane[tuple(pos)]
                if at is None:
                    at = pos
                if v > best or np.isnan(v):
                    best, at = v, pos
            val[(b, *o)] = best
            if at is None:
                idx[(b, *o)] = first[0] * spatial[1] + first[1] if nd == 2 else first[0]
            else:
                idx[(b, *o)] = np.ravel_multi_index(tuple(at), spatial)
    lead = x.shape[:-nd]
    return val.reshape(*lead, *outs), idx.reshape(*lead, *outs)


def _ref_avg(
    x: np.ndarray, nd: int, k: Any, s: Any, p: Any, ceil: bool, include: bool, div: Any
) -> Any:
    """Loops over planes, outputs and taps, with PyTorch's divisor."""
    spatial = x.shape[-nd:]
    outs = [_out_len(*a, 1, ceil) for a in zip(spatial, k, s, p, strict=True)]
    planes = _planes(x, nd)
    val = np.zeros((len(planes), *outs))
    for b, plane in enumerate(planes):
        for o in itertools.product(*(range(m) for m in outs)):
            total, size, inside = 0.0, 1, 1
            for oi, si, pi, ki, n in zip(o, s, p, k, spatial, strict=True):
                start = oi * si - pi
                end = min(start + ki, n + pi)
                size *= end - start
                inside *= min(end, n) - max(start, 0)
            for t in itertools.product(*(range(kk) for kk in k)):
                pos = [oi * si - pi + ti for oi, si, pi, ti in zip(o, s, p, t, strict=True)]
                if all(0 <= q < n for q, n in zip(pos, spatial, strict=True)):
                    total += plane[tuple(pos)]
            val[(b, *o)] = total / (div if div else size if include else inside)
    return val.reshape(*x.shape[:-nd], *outs)


def _ref_adaptive(x: np.ndarray, nd: int, outs: Any, kind: str) -> Any:
    spatial = x.shape[-nd:]
    planes = _planes(x, nd)
    val = np.zeros((len(planes), *outs))
    idx = np.zeros((len(planes), *outs), dtype=np.int64)
    for b, plane in enumerate(planes):
        for o in itertools.product(*(range(m) for m in outs)):
            box = tuple(
                slice(i * n // m, -(-(i + 1) * n // m))
                for i, n, m in zip(o, spatial, outs, strict=True)
            )
            w = plane[box]
            if kind == "avg":
                val[(b, *o)] = w.mean()
            else:
                flat = w.reshape(-1)
                j = (
                    int(np.flatnonzero(np.isnan(flat))[-1])
                    if np.isnan(flat).any()
                    else int(np.argmax(flat))
                )
                val[(b, *o)] = flat[j]
                at = [sl.start + q for sl, q in zip(box, np.unravel_index(j, w.shape), strict=True)]
                idx[(b, *o)] = np.ravel_multi_index(tuple(at), spatial)
    lead = x.shape[:-nd]
    return val.reshape(*lead, *outs), idx.reshape(*lead, *outs)


# --- strategies -----------------------------------------------------------------------------


@st.composite
def pool_case(draw: st.DrawFn, dilate: bool) -> dict[str, Any]:
    nd = draw(st.sampled_from([1, 2]))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    s = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    d = tuple(draw(st.integers(1, 2)) for _ in range(nd)) if dilate else (1,) * nd
    limit = [
        (dd * (kk - 1) + 1) // 2 if nd == 1 and dilate else kk // 2
        for kk, dd in zip(k, d, strict=True)
    ]
    p = tuple(draw(st.integers(0, m)) for m in limit)
    ceil = draw(st.booleans())
    spatial = []
    for kk, pp, dd in zip(k, p, d, strict=True):
        lo = max(1, dd * (kk - 1) + 1 - 2 * pp)  # the kernel fits in the padded input
        spatial.append(draw(st.integers(lo, lo + 4)))
    lead = draw(st.sampled_from([(2, 2), (1, 3), (0, 2), (2,)]))
    return {"nd": nd, "k": k, "s": s, "p": p, "d": d, "ceil": ceil, "shape": (*lead, *spatial)}


def _distinct(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values at least 0.1 apart: no ties, so finite differences see one argmax."""
    return (rng.permutation(int(np.prod(shape))) * 0.1 - 1.0).reshape(shape)


def _value(f: Any, *args: Any, **kw: Any) -> Any:
    with lampy.Scope():
        out = f(*args, **kw)
        if isinstance(out, tuple):
            return out[0].value.copy(), out[1]
        return out.value.copy()


# --- max pooling ----------------------------------------------------------------------------


@given(case=pool_case(dilate=True), seed=st.integers(0, 2**32 - 1), ties=st.booleans())
@settings(max_examples=40)
def test_max_pool_forward_and_indices(case: dict[str, Any], seed: int, ties: bool) -> None:
    """max_pool1d/2d values and int64 indices equal a tap loop (ties: the first tap)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=case["shape"])
    if ties:
        x = np.round(x)
    nd, k, s, p, d, ceil = (case[key] for key in ("nd", "k", "s", "p", "d", "ceil"))
    val, idx = _value(MAX[nd], x, k, s, p, d, ceil, return_indices=True)
    want_val, want_idx = _ref_max(x, nd, k, s, p, d, ceil)
    np.testing.assert_array_equal(val, want_val)
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx, want_idx)
    x32 = x.astype(np.float32)
    v32 = _value(MAX[nd], x32, k, s, p, d, ceil)
    assert v32.dtype == np.float32
    np.testing.assert_array_equal(v32, want_val.astype(np.float32))


@given(case=pool_case(dilate=True), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=20)
def test_max_pool_gradient(case: dict[str, Any], seed: int) -> None:
    """max_pool's gradient matches finite differences on tie-free inputs (overlaps add)."""
    nd, k, s, p, d, ceil = (case[key] for key in ("nd", "k", "s", "p", "d", "ceil"))
    shape = (1, *case["shape"][-nd - 1 :])
    x = _distinct(np.random.default_rng(seed), shape)
    assume(np.isfinite(_value(MAX[nd], x, k, s, p, d, ceil)).all())  # no tap-less window
    check_grad(lambda v: MAX[nd](v, k, s, p, d, ceil), x)
    check_grad(lambda v: MAX[nd](v, k, s, p, d, ceil), x.astype(np.float32))


def test_max_pool_ties_take_first_tap() -> None:
    """Tied maxima: each window's gradient goes to its first tap, as PyTorch."""
    with lampy.Scope():
        x = lampy.param(np.array([[[2.0, 2.0, 1.0, 2.0]]]))
        y, idx = max_pool1d(x, 2, 1, return_indices=True)
        y.sum().backward()
        assert idx.tolist() == [[[0, 1, 3]]]
        assert x.grad.tolist() == [[[1.0, 1.0, 0.0, 1.0]]]
    with lampy.Scope():
        x = lampy.param(np.ones((1, 3, 3)))
        y = max_pool2d(x, 2, 1)
        y.sum().backward()  # windows start at (0,0), (0,1), (1,0), (1,1): their first taps
        assert x.grad.tolist() == [[[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]


def test_max_pool_nan_and_inf_conventions() -> None:
    """A NaN wins its window (the last NaN's index); an all -inf window with padding
    reports its first in-bounds tap, as PyTorch."""
    x = np.array([[[1.0, np.nan, 3.0, np.nan, 0.0]]])
    with lampy.Scope():
        v = lampy.param(x)
        y, idx = max_pool1d(v, 5, return_indices=True)
        y.sum().backward()
        assert np.isnan(y.value).all() and idx.tolist() == [[[3]]]
        assert v.grad.tolist() == [[[0.0, 0.0, 0.0, 1.0, 0.0]]]
    val, idx = _value(max_pool1d, np.full((1, 1, 3), -np.inf), 3, 1, 1, return_indices=True)
    assert idx.tolist() == [[[0, 0, 1]]] and np.isneginf(val).all()


def test_max_pool_window_outside_input_gets_no_gradient() -> None:
    """A dilated window with no tap inside the input gives -inf and no gradient."""
    with lampy.Scope():
        x = lampy.param(np.arange(5.0).reshape(1, 1, 1, 5))
        y = max_pool2d(x, 2, (1, 2), (1, 0), 2, True)
        assert np.isneginf(y.value).all()
        y.sum().backward()
        assert not x.grad.any()


@given(
    nd=st.sampled_from([1, 2]),
    k=st.lists(st.integers(1, 3), min_size=2, max_size=2),
    outs=st.lists(st.integers(1, 3), min_size=2, max_size=2),
    lead=st.sampled_from([(2, 3), (1,), (0, 2)]),
    values=st.sampled_from(["relu", "round", "inf", "nan"]),
    g_inf=st.booleans(),
    f32=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=60)
def test_tiled_max_pool_matches_tap_by_tap(
    nd: int,
    k: list[int],
    outs: list[int],
    lead: tuple[int, ...],
    values: str,
    g_inf: bool,
    f32: bool,
    seed: int,
) -> None:
    """Windows tiling the input (kernel = stride, sizes multiples of it: the separable
    path) give the values and gradients of the tap-by-tap path (taken with
    return_indices): ties go to the first tap in scan order, -inf, NaN in the input and
    an infinite output gradient included, float32 kept."""
    rng = np.random.default_rng(seed)
    shape = (*lead, *(o * kk for o, kk in zip(outs[:nd], k[:nd], strict=True)))
    x = rng.normal(size=shape)
    x = np.maximum(x, 0) if values == "relu" else np.round(x)
    if values in ("inf", "nan") and x.size:
        x.flat[rng.integers(0, x.size, 3)] = -np.inf if values == "inf" else np.nan
        x.flat[rng.integers(0, x.size, 1)] = np.inf
    x = x.astype(np.float32 if f32 else np.float64)
    g = rng.normal(size=(*lead, *outs[:nd])).astype(x.dtype)
    if g_inf and g.size:
        g.flat[0] = np.inf
    results = []
    for indices in (False, True):
        with lampy.Scope():
            v = lampy.param(x)
            y = MAX[nd](v, k[:nd], return_indices=indices)
            y = y[0] if indices else y
            y.backward(g)
            assert y.dtype == v.grad.dtype == x.dtype
            results.append((y.value.copy(), v.grad.copy()))
    (val, grad), (want_val, want_grad) = results
    np.testing.assert_array_equal(val, want_val)
    np.testing.assert_array_equal(grad, want_grad)


# --- average pooling ------------------------------------------------------------------------


@given(
    case=pool_case(dilate=False),
    seed=st.integers(0, 2**32 - 1),
    include=st.booleans(),
    div=st.sampled_from([None, None, 3]),
)
@settings(max_examples=40)
def test_avg_pool_forward(case: dict[str, Any], seed: int, include: bool, div: Any) -> None:
    """avg_pool1d/2d equal a tap loop with PyTorch's divisor (ceil_mode windows over the
    padding count less), float64 and float32."""
    nd, k, s, p, ceil = (case[key] for key in ("nd", "k", "s", "p", "ceil"))
    x = np.random.default_rng(seed).normal(size=case["shape"])
    kw = {"divisor_override": div} if nd == 2 else {}
    want = _ref_avg(x, nd, k, s, p, ceil, include, div if nd == 2 else None)
    got = _value(AVG[nd], x, k, s, p, ceil, include, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got32 = _value(AVG[nd], x.astype(np.float32), k, s, p, ceil, include, **kw)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-5, atol=1e-5)


@given(case=pool_case(dilate=False), seed=st.integers(0, 2**32 - 1), include=st.booleans())
@settings(max_examples=20)
def test_avg_pool_gradient(case: dict[str, Any], seed: int, include: bool) -> None:
    """avg_pool's gradient matches finite differences."""
    nd, k, s, p, ceil = (case[key] for key in ("nd", "k", "s", "p", "ceil"))
    x = np.random.default_rng(seed).normal(size=(1, *case["shape"][-nd - 1 :]))
    check_grad(lambda v: AVG[nd](v, k, s, p, ceil, include), x)
    check_grad(lambda v: AVG[nd](v, k, s, p, ceil, include), x.astype(np.float32))


def test_avg_pool_ceil_mode_divisors() -> None:
    """PyTorch's numbers: ceil_mode windows hanging over the padding divide by their part
    inside the padded input (count_include_pad) or inside the input."""
    x = np.arange(6.0).reshape(1, 1, 6)
    got = _value(avg_pool1d, x, 3, 2, 1, True, True)
    np.testing.assert_allclose(got, [[[1 / 3, 2.0, 4.0, 2.5]]])
    x5 = np.arange(5.0).reshape(1, 1, 5)
    np.testing.assert_allclose(_value(avg_pool1d, x5, 3, 2, 1, True, False), [[[0.5, 2.0, 3.5]]])
    np.testing.assert_allclose(_value(avg_pool1d, x, 2, 3, 0, True), [[[0.5, 3.5]]])


# --- adaptive pooling -----------------------------------------------------------------------


@given(
    nd=st.sampled_from([1, 2]),
    spatial=st.lists(st.integers(1, 7), min_size=2, max_size=2),
    outs=st.lists(st.integers(1, 8), min_size=2, max_size=2),
    lead=st.sampled_from([(2, 2), (0, 1), (3,)]),
    seed=st.integers(0, 2**32 - 1),
    nan=st.booleans(),
)
@settings(max_examples=40)
def test_adaptive_forward(
    nd: int, spatial: list[int], outs: list[int], lead: Any, seed: int, nan: bool
) -> None:
    """Adaptive avg/max pools equal loops over floor/ceil windows (NaN stays in its
    windows; max reports PyTorch's indices)."""
    x = np.round(np.random.default_rng(seed).normal(size=(*lead, *spatial[:nd])), 1)
    if nan and x.size:
        x.reshape(-1)[0] = np.nan
    o = tuple(outs[:nd])
    want_avg, _ = _ref_adaptive(x, nd, o, "avg")
    want_max, want_idx = _ref_adaptive(x, nd, o, "max")
    size: Any = o if nd == 2 else o[0]
    avg = _value(adaptive_avg_pool2d if nd == 2 else adaptive_avg_pool1d, x, size)
    val, idx = _value(
        adaptive_max_pool2d if nd == 2 else adaptive_max_pool1d, x, size, return_indices=True
    )
    np.testing.assert_allclose(avg, want_avg, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(val, want_max)
    np.testing.assert_array_equal(idx, want_idx)
    avg32 = _value(adaptive_avg_pool2d if nd == 2 else adaptive_avg_pool1d, x.astype("f4"), size)
    assert avg32.dtype == np.float32
    np.testing.assert_allclose(avg32, want_avg, rtol=1e-5, atol=1e-5)


@given(
    spatial=st.lists(st.integers(1, 5), min_size=2, max_size=2),
    outs=st.lists(st.integers(1, 6), min_size=2, max_size=2),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=15)
def test_adaptive_gradients(spatial: list[int], outs: list[int], seed: int) -> None:
    """Adaptive pools' gradients match finite differences (overlapping windows add)."""
    x = _distinct(np.random.default_rng(seed), (1, 2, *spatial))
    o = tuple(outs)
    check_grad(lambda v: adaptive_avg_pool2d(v, o), x)
    check_grad(lambda v: adaptive_max_pool2d(v, o), x)
    check_grad(lambda v: adaptive_avg_pool1d(v, o[0]), x[0])
    check_grad(lambda v: adaptive_max_pool1d(v, o[1]), x[0, :, 0])
    check_grad(lambda v: adaptive_avg_pool2d(v, o), x.astype(np.float32))


def test_adaptive_avg_nonfinite_gradient_stays_in_windows() -> None:
    """An inf in g reaches only the elements of its window (no inf * 0 = NaN)."""
    with lampy.Scope():
        x = lampy.param(np.zeros((1, 1, 4)))
        y = adaptive_avg_pool1d(x, 2)
        y.backward(np.array([[[np.inf, 1.0]]]))
        assert x.grad.tolist() == [[[np.inf, np.inf, 0.5, 0.5]]]


def test_adaptive_output_size_none_and_zero() -> None:
    """None keeps an axis's length; an output size of 0 gives an empty result."""
    x = np.random.default_rng(0).normal(size=(2, 3, 5, 7))
    assert _value(adaptive_avg_pool2d, x, (None, 3)).shape == (2, 3, 5, 3)
    assert _value(adaptive_max_pool2d, x[0], 0).shape == (3, 0, 0)


# --- shapes and errors ----------------------------------------------------------------------


def test_unbatched_and_empty_batch() -> None:
    """An unbatched input pools like a batch of one; an empty batch gives an empty result
    and gradient."""
    x = np.random.default_rng(1).normal(size=(1, 3, 6, 6))
    for f, args in ((max_pool2d, (2,)), (avg_pool2d, (3, 2, 1)), (adaptive_avg_pool2d, (4,))):
        np.testing.assert_array_equal(_value(f, x[0], *args), _value(f, x, *args)[0])
        with lampy.Scope():
            e = lampy.param(np.zeros((0, 3, 6, 6)))
            y = f(e, *args)
            y.sum().backward()
            assert y.shape[0] == 0 and e.grad.shape == e.shape


@pytest.mark.parametrize(
    ("f", "args", "error"),
    [
        (max_pool2d, (np.zeros((4, 4)), 2), ShapeError),
        (max_pool1d, (np.zeros((1, 1, 1, 4)), 2), ShapeError),
        (max_pool2d, (np.zeros((1, 0, 4, 4)), 2), ShapeError),
        (max_pool2d, (np.zeros((1, 1, 3, 3)), 4), ShapeError),
        (max_pool2d, (np.zeros((1, 1, 5, 5)), 3, 1, 2), LampyValueError),
        (max_pool2d, (np.zeros((1, 1, 5, 5)), 3, 1, 2, 2), LampyValueError),
        (max_pool1d, (np.zeros((1, 1, 5)), 3, 1, 3, 2), LampyValueError),
        (max_pool2d, (np.zeros((1, 1, 5, 5)), 0), LampyValueError),
        (max_pool2d, (np.zeros((1, 1, 5, 5)), 2, 0), LampyValueError),
        (max_pool2d, (np.zeros((1, 1, 5, 5)), (2, 2, 2)), LampyValueError),
        (max_pool2d, (np.zeros((1, 1, 5, 5)), 2.5), LampyTypeError),
        (avg_pool2d, (np.zeros((1, 1, 5, 5)), 2, 2, 2), LampyValueError),
        (avg_pool2d, (np.zeros((1, 1, 5, 5)), 2, 2, 0, False, True, 0), LampyValueError),
        (avg_pool1d, (np.zeros((1, 1, 2)), 3), ShapeError),
        (adaptive_avg_pool2d, (np.zeros((1, 1, 5, 5)), -1), LampyValueError),
        (adaptive_avg_pool2d, (np.zeros((1, 1, 5, 5)), (2, 2, 2)), LampyValueError),
        (adaptive_max_pool1d, (np.zeros((5,)), 2), ShapeError),
    ],
)
def test_errors(f: Any, args: tuple[Any, ...], error: type[Exception]) -> None:
    """Bad ranks, empty axes, oversized kernels, too much padding and bad sizes raise,
    recording nothing."""
    with lampy.Scope() as scope, pytest.raises(error, match=f.__name__):
        f(*args)
    del scope


def test_max_pool1d_allows_padding_up_to_half_the_dilated_kernel() -> None:
    """max_pool1d bounds padding by the dilated kernel, max_pool2d by the kernel alone,
    as PyTorch."""
    assert _value(max_pool1d, np.zeros((1, 1, 5)), 3, 1, 2, 2).shape == (1, 1, 5)
