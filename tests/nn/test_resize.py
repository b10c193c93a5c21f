"""pad and interpolate: forward against per-element numpy references (PyTorch's pad
order, crop semantics and source-index formulas, float32 index arithmetic), gradients
against finite differences, float32 and errors."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyValueError, ShapeError
from lampy.nn.functional._adaptive_pool import adaptive_avg_pool2d
from lampy.nn.functional._resize import interpolate, pad
from lampy.testing import check_grad


def _value(f: Any, *args: Any, **kw: Any) -> Any:
    with lampy.Scope():
        return f(*args, **kw).value.copy()


# --- pad ------------------------------------------------------------------------------------


def _source(mode: str, j: int, n: int, b: int, e: int) -> int | None:
    """The input index output ``j`` copies along an axis of length ``n`` padded by
    ``(b, e)``; None for the constant."""
    if mode == "circular":  # PyTorch crops first, then wraps what is left
        start, kept = max(-b, 0), n + min(b, 0) + min(e, 0)
        return start + (j - max(b, 0)) % kept
    i = j + max(-b, 0) - max(b, 0)  # pad the whole axis, then crop
    if 0 <= i < n:
        return i
    if mode == "constant":
        return None
    if mode == "replicate":
        return min(max(i, 0), n - 1)
    return -i if i < 0 else 2 * (n - 1) - i  # reflect


def _ref_pad(x: np.ndarray, p: tuple[int, ...], mode: str, value: float) -> np.ndarray:
    k = len(p) // 2
    pairs = [(p[2 * i], p[2 * i + 1]) for i in range(k)][::-1]
    spatial = x.shape[x.ndim - k :]
    outs = [n + b + e for n, (b, e) in zip(spatial, pairs, strict=True)]
    out = np.empty((*x.shape[: x.ndim - k], *outs))
    for j in itertools.product(*(range(m) for m in outs)):
        src = [_source(mode, ji, n, b, e) for ji, n, (b, e) in zip(j, spatial, pairs, strict=True)]
        out[(..., *j)] = value if None in src else x[(..., *src)]
    return out


@st.composite
def pad_case(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, ...], str, float | None]:
    mode = draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    k = draw(st.integers(1, 3 if mode != "constant" else 2))
    ndim = k + draw(st.integers(1, 2)) if mode != "constant" else draw(st.integers(k, 4))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    pads = []
    for n in shape[ndim - k :][::-1]:
        if mode == "reflect":
            b, e = (draw(st.integers(-(n // 2), n - 1)) for _ in range(2))
        elif mode == "circular":
            b, e = (draw(st.integers(-(n // 2), n // 2)) for _ in range(2))
            b, e = min(b, n + min(e, 0)), min(e, n + min(b, 0))  # wrap at most once
        else:
            b, e = (draw(st.integers(-(n // 2), 3)) for _ in range(2))
        pads += [b, e]
    value = draw(st.sampled_from([None, 1.5])) if mode == "constant" else None
    x = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).normal(size=shape)
    return x, tuple(pads), mode, value


@given(case=pad_case())
@settings(max_examples=40)
def test_pad_forward_and_gradient(case: tuple[np.ndarray, tuple[int, ...], str, Any]) -> None:
    """pad equals an element-by-element reference in every mode, with negative pads
    cropping; its gradient matches finite differences; float32 stays float32."""
    x, p, mode, value = case
    want = _ref_pad(x, p, mode, 0.0 if value is None else value)
    kw = {} if value is None else {"value": value}
    np.testing.assert_array_equal(_value(pad, x, p, mode, **kw), want)
    got32 = _value(pad, x.astype(np.float32), p, mode, **kw)
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(got32, want.astype(np.float32))
    check_grad(lambda v: pad(v, p, mode, **kw), x)


def test_pad_examples() -> None:
    """PyTorch's numbers: reflect and replicate pad then crop, circular crops then wraps."""
    x = np.arange(5.0).reshape(1, 5)
    assert _value(pad, x, (-2, 3), "reflect").tolist() == [[2, 3, 4, 3, 2, 1]]
    assert _value(pad, x, (3, -2), "reflect").tolist() == [[3, 2, 1, 0, 1, 2]]
    assert _value(pad, x, (3, -2), "replicate").tolist() == [[0, 0, 0, 0, 1, 2]]
    assert _value(pad, x, (3, -2), "circular").tolist() == [[0, 1, 2, 0, 1, 2]]
    assert _value(pad, x, (-1, 2), "circular").tolist() == [[1, 2, 3, 4, 1, 2]]
    assert _value(pad, np.arange(4.0).reshape(2, 2), (-1, 2, 1, -1), value=7).tolist() == [
        [7, 7, 7],
        [1, 7, 7],
    ]
    assert _value(pad, x, (-3, -2)).shape == (1, 0)


@pytest.mark.parametrize(
    ("args", "kw", "error"),
    [
        ((np.zeros((1, 5)), (1, 2, 3)), {}, LampyValueError),
        ((np.zeros((1, 5)), (1, 2, 3, 4, 5, 6)), {}, ShapeError),
        ((np.zeros((1, 5)), (1, 1)), {"mode": "foo"}, LampyValueError),
        ((np.zeros((1, 5)), (1, 1)), {"mode": "reflect", "value": 0.0}, LampyValueError),
        ((np.zeros((1, 5)), (5, 1)), {"mode": "reflect"}, LampyValueError),
        ((np.zeros((1, 5)), (6, -2)), {"mode": "circular"}, LampyValueError),
        ((np.zeros((5,)), (1, 1)), {"mode": "replicate"}, ShapeError),
        ((np.zeros((1, 5)), (-6, 2)), {}, ShapeError),
        ((np.zeros((1, 5)), (-4, -3)), {"mode": "replicate"}, ShapeError),
    ],
)
def test_pad_errors(args: Any, kw: dict[str, Any], error: type[Exception]) -> None:
    """Odd pad lengths, too many pairs, bad modes, value with a copying mode, reflect and
    circular pads too long, unsupported ranks and over-cropping raise."""
    with lampy.Scope(), pytest.raises(error, match="pad"):
        pad(*args, **kw)


# --- interpolate ----------------------------------------------------------------------------


def _nearest_index(n: int, m: int, scale: Any, exact: bool, nd: int) -> list[int]:
    """PyTorch's nearest source indices, one output at a time in float32."""
    f32 = np.float32
    out = []
    for i in range(m):
        if not exact and nd == 2 and m in (n, 2 * n):  # the 4-d kernel's shortcuts
            out.append(i if m == n else i // 2)
            continue
        if not exact and nd == 2:
            r = f32(1.0 / scale) if scale else f32(n) / f32(m)
        else:
            r = f32(n / (n * scale)) if scale else f32(n / m)
        at = f32(i) + f32(0.5) if exact else f32(i)
        out.append(min(math.floor(at * r), n - 1))
    return out


def _linear_weights(n: int, m: int, scale: Any, align: bool, dtype: Any) -> list[Any]:
    """PyTorch's ``(i0, i1, w0, w1)`` per output, in the input's precision."""
    t = np.dtype(dtype).type
    rows = []
    for i in range(m):
        if m == n:
            rows.append((i, i, t(1), t(0)))
            continue
        if align:
            real = (t(n - 1) / t(m - 1) if m > 1 else t(0)) * t(i)
        else:
            r = t(1.0 / scale) if scale else t(n) / t(m)
            real = max(r * (t(i) + t(0.5)) - t(0.5), t(0))
        i0 = min(math.floor(real), n - 1)
        w1 = min(max(real - t(i0), t(0)), t(1))
        rows.append((i0, i0 + (i0 < n - 1), t(1) - w1, w1))
    return rows


def _ref_interpolate(
    x: np.ndarray, outs: list[int], scales: list[Any], mode: str, align: bool
) -> np.ndarray:
    """Each output element from its own source indices and weights."""
    nd = x.ndim - 2
    spatial = x.shape[2:]
    per_axis = []
    for n, m, s in zip(spatial, outs, scales, strict=True):
        if mode in ("nearest", "nearest-exact"):
            per_axis.append([((k, 1.0),) for k in _nearest_index(n, m, s, mode != "nearest", nd)])
        else:
            per_axis.append(
                [((a, wa), (b, wb)) for a, b, wa, wb in _linear_weights(n, m, s, align, x.dtype)]
            )
    out = np.zeros((*x.shape[:2], *outs))
    for j in itertools.product(*(range(m) for m in outs)):
        for taps in itertools.product(*(per_axis[a][j[a]] for a in range(nd))):
            w = np.prod([float(wt) for _, wt in taps])
            out[(..., *j)] += w * x[(..., *(k for k, _ in taps))]
    return out


@st.composite
def interp_case(draw: st.DrawFn) -> dict[str, Any]:
    mode = draw(st.sampled_from(["nearest", "nearest-exact", "linear", "bilinear", "trilinear"]))
    nd = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode) or draw(st.integers(1, 3))
    spatial = [draw(st.integers(1, 5 if nd < 3 else 3)) for _ in range(nd)]
    kw: dict[str, Any] = {"mode": mode}
    if draw(st.booleans()):
        kw["size"] = [draw(st.integers(1, 7 if nd < 3 else 4)) for _ in range(nd)]
        scales: list[Any] = [None] * nd
        outs = kw["size"]
    else:
        kw["scale_factor"] = [
            draw(st.sampled_from([0.5, 0.75, 1.0, 1.2, 1.5, 2.0, 2.4, 3.0])) for _ in range(nd)
        ]
        outs = [math.floor(n * f) for n, f in zip(spatial, kw["scale_factor"], strict=True)]
        if min(outs) < 1:
            kw["scale_factor"] = [max(f, 1.0) for f in kw["scale_factor"]]
            outs = [math.floor(n * f) for n, f in zip(spatial, kw["scale_factor"], strict=True)]
        recompute = draw(st.sampled_from([None, False, True]))
        kw["recompute_scale_factor"] = recompute
        scales = [None] * nd if recompute else list(kw["scale_factor"])
    if mode not in ("nearest", "nearest-exact"):
        kw["align_corners"] = draw(st.sampled_from([None, False, True]))
    n_batch = draw(st.sampled_from([1, 2, 0]))
    shape = (n_batch, 2, *spatial)
    return {"shape": shape, "kw": kw, "outs": outs, "scales": scales}


@given(case=interp_case(), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=40)
def test_interpolate_forward(case: dict[str, Any], seed: int) -> None:
    """interpolate equals per-output source indices and weights (PyTorch's formulas,
    float32 arithmetic for float32 inputs), in float64 and float32."""
    kw = case["kw"]
    align = bool(kw.get("align_corners"))
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        x = np.random.default_rng(seed).normal(size=case["shape"]).astype(dtype)
        got = _value(interpolate, x, **kw)
        assert got.dtype == dtype and got.shape == (*x.shape[:2], *case["outs"])
        want = _ref_interpolate(x, case["outs"], case["scales"], kw["mode"], align)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@given(case=interp_case(), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=20)
def test_interpolate_gradient(case: dict[str, Any], seed: int) -> None:
    """interpolate's gradient matches finite differences in every mode."""
    shape = (1, 1, *case["shape"][2:])
    x = np.random.default_rng(seed).normal(size=shape)
    check_grad(lambda v: interpolate(v, **case["kw"]), x)
    check_grad(lambda v: interpolate(v, **case["kw"]), x.astype(np.float32))


def test_interpolate_examples() -> None:
    """PyTorch's numbers: legacy nearest uses 1/scale_factor, the 4-d kernel copies an
    unchanged axis, linear clamps negative coordinates and align_corners maps corners."""
    x = np.arange(4.0).reshape(1, 1, 4)
    assert _value(interpolate, x, scale_factor=1.1).tolist() == [[[0, 0, 1, 2]]]
    assert _value(interpolate, x, scale_factor=1.2, mode="nearest-exact").tolist() == [
        [[0, 1, 2, 2]]
    ]
    x2 = np.arange(2.0).reshape(1, 1, 2)
    assert _value(interpolate, x2, scale_factor=2.4).tolist() == [[[0, 0, 0, 1]]]
    y = _value(interpolate, np.arange(2.0).reshape(1, 1, 1, 2), scale_factor=2.4)
    assert y.tolist() == [[[[0, 0, 1, 1]] * 2]]
    lin = _value(interpolate, x2, size=4, mode="linear")
    np.testing.assert_allclose(lin, [[[0.0, 0.25, 0.75, 1.0]]])
    ac = _value(interpolate, x2, size=3, mode="linear", align_corners=True)
    np.testing.assert_allclose(ac, [[[0.0, 0.5, 1.0]]])


def test_interpolate_area_is_adaptive_avg_pool() -> None:
    """mode='area' is adaptive average pooling to the output size."""
    x = np.random.default_rng(3).normal(size=(2, 3, 7, 5))
    np.testing.assert_array_equal(
        _value(interpolate, x, size=(3, 4), mode="area"), _value(adaptive_avg_pool2d, x, (3, 4))
    )
    assert _value(interpolate, x[..., 0], scale_factor=0.5, mode="area").shape == (2, 3, 3)


@pytest.mark.parametrize(
    ("shape", "kw", "error"),
    [
        ((1, 3, 4), {"size": 3, "scale_factor": 2.0}, LampyValueError),
        ((1, 3, 4), {}, LampyValueError),
        ((1, 3, 4), {"size": 3, "align_corners": True}, LampyValueError),
        ((1, 3, 4), {"size": 3, "mode": "bogus"}, LampyValueError),
        ((1, 3, 4), {"size": (3, 3)}, ShapeError),
        ((1, 3, 4), {"scale_factor": (2.0, 2.0)}, ShapeError),
        ((1, 3, 4), {"scale_factor": 0.1}, ShapeError),
        ((3, 4), {"size": 3}, ShapeError),
        ((1, 3, 4, 4), {"size": 3, "mode": "linear"}, ShapeError),
        ((1, 3, 4), {"size": 3, "recompute_scale_factor": True}, LampyValueError),
        ((1, 3, 4), {"size": 3, "antialias": True}, LampyValueError),
    ],
)
def test_interpolate_errors(shape: Any, kw: dict[str, Any], error: type[Exception]) -> None:
    """Both or neither of size and scale_factor, align_corners with nearest, bad modes,
    ranks, sizes and options raise, recording nothing."""
    with lampy.Scope(), pytest.raises(error, match="interpolate"):
        interpolate(np.zeros(shape), **kw)
