"""Convolution and pooling modules: PyTorch's state_dict keys, counts, initialisation
and reprs, forward against direct numpy loops (padding modes included), input
gradients, transposed output sizes and errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn._conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from lampy.nn._pooling import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from lampy.testing import check_grad

NP_MODE = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _shapes(m: Any) -> dict[str, tuple[int, ...]]:
    return {k: v.shape for k, v in m.state_dict().items()}


def _conv2d_ref(x: np.ndarray, w: np.ndarray, b: Any, s: Any, d: Any, groups: int) -> Any:
    """Direct loops over an already padded (N, C, H, W) input."""
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd - d[1] * (kw - 1) - 1) // s[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for i in range(oh):
        for j in range(ow):
            for q in range(o):
                g = q // og
                patch = x[
                    :,
                    g * cg : (g + 1) * cg,
                    i * s[0] : i * s[0] + d[0] * (kh - 1) + 1 : d[0],
                    j * s[1] : j * s[1] + d[1] * (kw - 1) + 1 : d[1],
                ]
                out[:, q, i, j] = (patch * w[q]).sum(axis=(1, 2, 3))
    return out + (0 if b is None else b[None, :, None, None])


# --- convolutions --------------------------------------------------------------------


def test_conv_state_dicts_match_torch() -> None:
    """Weight layouts, keys and counts equal torch 2.13's for each convolution."""
    with lampy.Scope():
        r = _rng()
        c1 = Conv1d.init(4, 6, 3, groups=2, rng=r)
        assert _shapes(c1) == {"weight": (6, 2, 3), "bias": (6,)}
        assert c1.num_parameters() == 42 == 6 * 2 * 3 + 6
        c2 = Conv2d.init(3, 8, (3, 5), rng=r)
        assert _shapes(c2) == {"weight": (8, 3, 3, 5), "bias": (8,)}
        assert c2.num_parameters() == 368 == 8 * 3 * 15 + 8
        t1 = ConvTranspose1d.init(4, 6, 3, groups=2, rng=r)
        assert _shapes(t1) == {"weight": (4, 3, 3), "bias": (6,)} and t1.num_parameters() == 42
        t2 = ConvTranspose2d.init(3, 8, (3, 5), bias=False, rng=r)
        assert _shapes(t2) == {"weight": (3, 8, 3, 5)} and t2.num_parameters() == 360
        assert (
            repr(Conv2d.init(3, 16, 3, rng=r)) == "Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1))"
        )
        assert repr(t2) == "ConvTranspose2d(3, 8, kernel_size=(3, 5), stride=(1, 1), bias=False)"


def test_conv_default_init_bounds() -> None:
    """Weights and biases are U(-k, k), k = 1/sqrt(fan_in), fan_in from weight.shape[1:]."""
    with lampy.Scope():
        c = Conv2d.init(8, 64, 3, groups=2, rng=_rng())
        k = 1 / math.sqrt(4 * 9)
        assert k * 0.97 < np.abs(c.weight.value).max() <= k
        assert c.bias is not None and np.abs(c.bias.value).max() <= k
        t = ConvTranspose2d.init(8, 64, 3, groups=2, rng=_rng())
        kt = 1 / math.sqrt(32 * 9)
        assert kt * 0.97 < np.abs(t.weight.value).max() <= kt


@given(
    c_in=st.sampled_from([1, 2, 4]),
    groups=st.sampled_from([1, 2]),
    k=st.integers(1, 3),
    stride=st.integers(1, 2),
    dilation=st.integers(1, 2),
    pad=st.integers(0, 2),
    mode=st.sampled_from(list(NP_MODE)),
    bias=st.booleans(),
)
def test_conv2d_matches_loops(
    c_in: int, groups: int, k: int, stride: int, dilation: int, pad: int, mode: str, bias: bool
) -> None:
    """Conv2d equals direct loops over the input padded with numpy's equivalent mode."""
    if c_in % groups:
        c_in = groups
    x = _rng(1).normal(size=(2, c_in, 5, 6))
    with lampy.Scope():
        m = Conv2d.init(
            c_in,
            2 * groups,
            k,
            stride,
            pad,
            dilation,
            groups,
            bias,
            mode,
            dtype=np.float64,
            rng=_rng(),
        )
        xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)], NP_MODE[mode])
        b = None if m.bias is None else m.bias.value
        ref = _conv2d_ref(xp, m.weight.value, b, (stride,) * 2, (dilation,) * 2, groups)
        np.testing.assert_allclose(m(x).value, ref, rtol=1e-10, atol=1e-12)
        check_grad(m, x[:1])


@given(mode=st.sampled_from(list(NP_MODE)), k=st.integers(1, 4), dilation=st.integers(1, 2))
def test_conv1d_same_padding_keeps_length(mode: str, k: int, dilation: int) -> None:
    """padding='same' keeps the length (extra padding after), in every padding mode."""
    x = _rng(1).normal(size=(2, 3, 7))
    with lampy.Scope():
        m = Conv1d.init(
            3,
            2,
            k,
            padding="same",
            dilation=dilation,
            padding_mode=mode,
            dtype=np.float64,
            rng=_rng(),
        )
        total = dilation * (k - 1)
        xp = np.pad(x, [(0, 0), (0, 0), (total // 2, total - total // 2)], NP_MODE[mode])
        ref = _conv2d_ref(
            xp[..., None],
            m.weight.value[..., None],
            m.bias.value,  # type: ignore[union-attr]
            (1, 1),
            (dilation, 1),
            1,
        )[..., 0]
        y = m(x)
        assert y.shape == (2, 2, 7)
        np.testing.assert_allclose(y.value, ref, rtol=1e-10, atol=1e-12)
        assert m(x[0]).shape == (2, 7)  # unbatched


@given(
    stride=st.integers(1, 3),
    pad=st.integers(0, 1),
    k=st.integers(1, 3),
    dilation=st.integers(1, 2),
    data=st.data(),
)
def test_conv_transpose1d_matches_scatter_loops(
    stride: int, pad: int, k: int, dilation: int, data: st.DataObject
) -> None:
    """ConvTranspose1d scatters each input tap into out[l*s - p + j*d] (plus output_padding)."""
    op = data.draw(st.integers(0, max(stride, dilation) - 1))
    x = _rng(1).normal(size=(2, 2, 4))
    with lampy.Scope():
        m = ConvTranspose1d.init(
            2, 3, k, stride, pad, op, dilation=dilation, dtype=np.float64, rng=_rng()
        )
        w, b = m.weight.value, m.bias.value  # type: ignore[union-attr]
        n_out = (4 - 1) * stride - 2 * pad + dilation * (k - 1) + op + 1
        full = np.zeros((2, 3, n_out + 2 * pad + stride * k + dilation * k))
        for i in range(4):
            for j in range(k):
                full[:, :, i * stride + j * dilation] += x[:, :, i] @ w[:, :, j]
        ref = full[:, :, pad : pad + n_out] + b[None, :, None]
        np.testing.assert_allclose(m(x).value, ref, rtol=1e-10, atol=1e-12)
        check_grad(m, x)


def test_conv_transpose2d_output_size() -> None:
    """output_size picks output_padding as PyTorch does; unreachable sizes are errors."""
    x = _rng(1).normal(size=(1, 3, 4, 4)).astype(np.float32)
    with lampy.Scope():
        m = ConvTranspose2d.init(3, 2, 3, stride=2, padding=1, rng=_rng())
        assert m(x).shape == (1, 2, 7, 7)
        assert m(x, output_size=(8, 7)).shape == (1, 2, 8, 7)
        assert m(x, output_size=(1, 2, 8, 8)).shape == (1, 2, 8, 8)
        ref = ConvTranspose2d.init(3, 2, 3, stride=2, padding=1, output_padding=(1, 0), rng=_rng())
        np.testing.assert_allclose(m(x, output_size=(8, 7)).value, ref(x).value, rtol=1e-6)
        with pytest.raises(ShapeError, match=r"\[7, 8\]"):
            m(x, output_size=(9, 7))


def test_conv_errors() -> None:
    """Wrong channels, ranks, small inputs and bad settings are clear errors."""
    with lampy.Scope():
        m = Conv2d.init(3, 16, 3, rng=_rng())
        msg = (
            r"Conv2d\(3, 16, kernel_size=\(3, 3\), stride=\(1, 1\)\): expected input \(N, 3, H, W\)"
        )
        with pytest.raises(ShapeError, match=msg + ".*channel count 1 differs"):
            m(np.ones((8, 1, 28, 28)))
        with pytest.raises(ShapeError, match="4 or 3 dimensions"):
            m(np.ones((3, 28)))
        with pytest.raises(ShapeError, match="smaller than"):
            m(np.ones((1, 3, 2, 5)))
        with pytest.raises(ShapeError, match="too large for 'reflect'"):
            Conv1d.init(1, 1, 3, padding=3, padding_mode="reflect", rng=_rng())(
                np.ones((1, 1, 3), np.float32)
            )
        with pytest.raises(LampyValueError, match="groups=2 must divide"):
            Conv2d.init(3, 4, 3, groups=2, rng=_rng())
        with pytest.raises(LampyValueError, match="stride 1"):
            Conv1d.init(1, 1, 3, stride=2, padding="same", rng=_rng())
        with pytest.raises(LampyValueError, match="padding_mode"):
            ConvTranspose1d.init(1, 1, 3, padding_mode="reflect", rng=_rng())
        with pytest.raises(LampyValueError, match="output_padding"):
            ConvTranspose2d.init(1, 1, 3, stride=2, output_padding=2, rng=_rng())
        with pytest.raises(LampyTypeError, match="Generator"):
            Conv1d.init(1, 1, 3, rng=0)  # type: ignore[arg-type]


def test_conv_round_trip() -> None:
    """state_dict → a Conv2d made with another rng → equal outputs."""
    x = _rng(3).normal(size=(2, 2, 5, 5)).astype(np.float32)
    with lampy.Scope():
        a = Conv2d.init(2, 4, 3, padding=1, padding_mode="circular", rng=_rng(0))
        b = Conv2d.init(2, 4, 3, padding=1, padding_mode="circular", rng=_rng(1))
        b.load_state_dict(a.state_dict())
        np.testing.assert_array_equal(a(x).value, b(x).value)
        assert a(x).dtype == np.float32


# --- pooling -------------------------------------------------------------------------


@given(k=st.integers(1, 3), s=st.integers(1, 3), data=st.data())
def test_max_and_avg_pool2d_match_loops(k: int, s: int, data: st.DataObject) -> None:
    """MaxPool2d / AvgPool2d equal window loops over the padded input (-inf / 0 padding)."""
    p = data.draw(st.integers(0, k // 2))
    x = _rng(1).normal(size=(2, 2, 5, 6))
    with lampy.Scope():
        mx, av = MaxPool2d.init(k, s, p), AvgPool2d.init(k, s, p)
        oh, ow = (5 + 2 * p - k) // s + 1, (6 + 2 * p - k) // s + 1
        xm = np.pad(x, [(0, 0), (0, 0), (p, p), (p, p)], constant_values=-np.inf)
        xa = np.pad(x, [(0, 0), (0, 0), (p, p), (p, p)])
        rm = np.zeros((2, 2, oh, ow))
        ra = np.zeros((2, 2, oh, ow))
        for i in range(oh):
            for j in range(ow):
                rm[:, :, i, j] = xm[:, :, i * s : i * s + k, j * s : j * s + k].max(axis=(2, 3))
                ra[:, :, i, j] = xa[:, :, i * s : i * s + k, j * s : j * s + k].mean(axis=(2, 3))
        np.testing.assert_allclose(mx(x).value, rm)
        np.testing.assert_allclose(av(x).value, ra, rtol=1e-12)
        check_grad(av, x[:1])


def test_pool1d_and_adaptive() -> None:
    """MaxPool1d (with indices), AvgPool1d and AdaptiveAvgPool2d against numpy."""
    x = _rng(1).normal(size=(2, 3, 8))
    with lampy.Scope():
        y, idx = MaxPool1d.init(2, return_indices=True)(x)
        np.testing.assert_array_equal(y.value, x.reshape(2, 3, 4, 2).max(-1))
        np.testing.assert_array_equal(idx, x.reshape(2, 3, 4, 2).argmax(-1) + np.arange(0, 8, 2))
        np.testing.assert_allclose(AvgPool1d.init(4)(x).value, x.reshape(2, 3, 2, 4).mean(-1))
        img = _rng(2).normal(size=(2, 3, 6, 4))
        out = AdaptiveAvgPool2d.init((3, None))(img)
        np.testing.assert_allclose(out.value, img.reshape(2, 3, 3, 2, 4).mean(3), rtol=1e-12)
        g = AdaptiveAvgPool2d.init(1)(img)
        np.testing.assert_allclose(g.value, img.mean(axis=(2, 3), keepdims=True), rtol=1e-12)
        check_grad(AdaptiveAvgPool2d.init((2, 3)), _rng(3).normal(size=(1, 2, 5, 4)))


def test_pool_reprs_state_and_errors() -> None:
    """Reprs as torch's, no state, and errors naming the module."""
    assert repr(MaxPool2d.init(2)) == (
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )
    assert repr(AvgPool1d.init(2)) == "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert MaxPool2d.init(2).state_dict() == {}
    with lampy.Scope():
        with pytest.raises(ShapeError, match=r"MaxPool2d\(kernel_size=2.*4 or 3 dimensions"):
            MaxPool2d.init(2)(np.ones((4, 4)))
        with pytest.raises(LampyValueError, match=r"^MaxPool2d\(.*half of the kernel"):
            MaxPool2d.init(2, padding=2)(np.ones((1, 1, 4, 4)))
    with pytest.raises(LampyValueError, match="kernel_size"):
        MaxPool1d.init(0)
    with pytest.raises(LampyValueError, match="divisor_override"):
        AvgPool2d.init(2, divisor_override=0)
    with pytest.raises(LampyValueError, match="output_size"):
        AdaptiveAvgPool2d.init((1, 2, 3))  # type: ignore[arg-type]
