"""unfold and fold: forward against direct loops, the adjoint and round-trip relations,
gradients against finite differences, float32, unbatched inputs and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional._fold import fold, unfold
from lampy.testing import check_grad


def _ref_unfold(x: np.ndarray, k: Any, d: Any, p: Any, s: Any) -> np.ndarray:
    """Direct loop over (channel, kernel row, kernel column) and block positions."""
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    bh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bw = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.zeros((n, c * k[0] * k[1], bh * bw))
    for ci in range(c):
        for a in range(k[0]):
            for b in range(k[1]):
                row = (ci * k[0] + a) * k[1] + b
                for i in range(bh):
                    for j in range(bw):
                        out[:, row, i * bw + j] = xp[
                            :, ci, i * s[0] + a * d[0], j * s[1] + b * d[1]
                        ]
    return out


def _value(f: Any, *args: Any, **kw: Any) -> np.ndarray:
    with lampy.Scope():
        return f(*args, **kw).value.copy()


@st.composite
def fold_cases(draw: st.DrawFn) -> dict[str, Any]:
    """An image and block parameters, each an int or a pair, with at least one block."""
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    p = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    size = tuple(
        max(1, dd * (kk - 1) + 1 - 2 * pp) + draw(st.integers(0, 3))
        for kk, dd, pp in zip(k, d, p, strict=True)
    )
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    x = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).standard_normal((n, c, *size))
    square = draw(st.booleans()) and k[0] == k[1] and d[0] == d[1] and p[0] == p[1] and s[0] == s[1]
    kw = {
        "kernel_size": k[0] if square else k,
        "dilation": d[0] if square else d,
        "padding": p[0] if square else p,
        "stride": s[0] if square else s,
    }
    return {"x": x, "kw": kw, "ref": (k, d, p, s)}


@given(case=fold_cases())
@settings(max_examples=40)
def test_unfold_forward(case: dict[str, Any]) -> None:
    """unfold equals a direct loop, in float64 and float32 (which stays float32)."""
    x = case["x"]
    want = _ref_unfold(x, *case["ref"])
    np.testing.assert_array_equal(_value(unfold, x, **case["kw"]), want)
    got32 = _value(unfold, x.astype(np.float32), **case["kw"])
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(got32, want.astype(np.float32))


@given(case=fold_cases())
@settings(max_examples=40)
def test_fold_is_adjoint_of_unfold(case: dict[str, Any]) -> None:
    """<unfold(x), y> = <x, fold(y)> for any y of unfold's output shape, in float64 and
    float32."""
    x, kw = case["x"], case["kw"]
    cols = _value(unfold, x, **kw)
    y = np.random.default_rng(1).standard_normal(cols.shape)
    back = _value(fold, y, x.shape[2:], **kw)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.vdot(cols, y), np.vdot(x, back), rtol=1e-10, atol=1e-10)
    back32 = _value(fold, y.astype(np.float32), x.shape[2:], **kw)
    assert back32.dtype == np.float32
    np.testing.assert_allclose(back32, back, rtol=1e-5, atol=1e-5)


@given(case=fold_cases())
@settings(max_examples=30)
def test_fold_of_unfold_counts_overlaps(case: dict[str, Any]) -> None:
    """fold(unfold(x)) = x * the number of blocks covering each element (a direct count)."""
    x, kw = case["x"], case["kw"]
    k, d, p, s = case["ref"]
    h, w = x.shape[2:]
    count = np.zeros((h + 2 * p[0], w + 2 * p[1]))
    bh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bw = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    for i in range(bh):
        for j in range(bw):
            for a in range(k[0]):
                for b in range(k[1]):
                    count[i * s[0] + a * d[0], j * s[1] + b * d[1]] += 1
    count = count[p[0] : p[0] + h, p[1] : p[1] + w]
    with lampy.Scope():
        got = fold(unfold(x, **kw), (h, w), **kw).value.copy()
    np.testing.assert_allclose(got, x * count, rtol=1e-12, atol=1e-12)


@given(case=fold_cases())
@settings(max_examples=20)
def test_gradients(case: dict[str, Any]) -> None:
    """unfold's and fold's gradients match finite differences."""
    x, kw = case["x"], case["kw"]
    check_grad(lambda a: unfold(a, **kw), x)
    cols = np.random.default_rng(2).standard_normal(_value(unfold, x, **kw).shape)
    check_grad(lambda a: fold(a, x.shape[2:], **kw), cols)


def test_float32_gradients_and_unbatched() -> None:
    """float32 gradients stay float32; unbatched (C, H, W) and (C*kH*kW, L) inputs give
    the batched results without the batch dimension."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    kw = {"kernel_size": (2, 3), "padding": 1, "stride": (2, 1)}
    cols = _value(unfold, x, **kw)
    np.testing.assert_array_equal(cols, _value(unfold, x[None], **kw)[0])
    back = _value(fold, cols, (5, 4), **kw)
    np.testing.assert_array_equal(back, _value(fold, cols[None], (5, 4), **kw)[0])
    assert cols.dtype == back.dtype == np.float32
    check_grad(lambda a: unfold(a, **kw), x)
    check_grad(lambda a: fold(a, (5, 4), **kw), cols)


def test_fold_sums_overlaps_by_hand() -> None:
    """A 1x3 image from two overlapping 1x2 blocks: the middle element is their sum."""
    cols = np.array([[[1.0, 10.0], [2.0, 20.0]]])  # rows: kernel positions, cols: blocks
    np.testing.assert_array_equal(_value(fold, cols, (1, 3), (1, 2)), [[[[1.0, 12.0, 20.0]]]])


def _raises(exc: type[Exception], match: str, f: Any, *args: Any, **kw: Any) -> None:
    with lampy.Scope(), pytest.raises(exc, match=match):
        f(*args, **kw)


def test_errors() -> None:
    """Bad ranks, sizes and arguments raise clear errors naming the op."""
    x = np.zeros((1, 2, 4, 4))
    _raises(ShapeError, r"unfold: input must be 3-D .* or 4-D", unfold, np.zeros((4, 4)), 2)
    _raises(ShapeError, r"unfold: the padded input size \(4, 4\) is smaller", unfold, x, 5)
    _raises(LampyValueError, r"unfold: kernel_size must be >= 1", unfold, x, 0)
    _raises(LampyValueError, r"unfold: stride must be >= 1", unfold, x, 2, stride=(1, 0))
    _raises(
        LampyTypeError,
        r"unfold: padding must be an int or a tuple of 2 ints",
        unfold,
        x,
        2,
        padding="same",
    )
    _raises(ShapeError, r"fold: input must be 2-D .* or 3-D", fold, x, (4, 4), 2)
    _raises(
        ShapeError,
        r"must be divisible by the product of kernel_size \(2, 2\) \(4\)",
        fold,
        np.zeros((1, 6, 9)),
        (4, 4),
        2,
    )
    _raises(
        ShapeError,
        r"makes 3 \* 3 = 9 blocks, but the input .* has 8",
        fold,
        np.zeros((1, 8, 8)),
        (4, 4),
        2,
    )
    _raises(
        LampyValueError, r"fold: output_size must be >= 1", fold, np.zeros((1, 8, 9)), (0, 4), 2
    )


def test_unfold_of_an_empty_batch() -> None:
    """A batch of 0 samples unfolds to (0, C * kH * kW, L), and backpropagates."""
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 2, 3, 5)))
        cols = unfold(x, kernel_size=2, stride=(1, 2))
        assert cols.shape == (0, 8, 4)
        cols.sum().backward()
        assert x.grad is not None and x.grad.shape == (0, 2, 3, 5)


@pytest.mark.parametrize("which", ["fold", "unfold"])
@pytest.mark.parametrize("op_first", [True, False])
def test_a_1x1_kernel_input_also_used_elsewhere_gets_both_gradients(
    which: str, op_first: bool
) -> None:
    """With a 1x1 kernel (the windows are the input itself), the gradient of an input that
    another op also uses is the sum of both contributions, whichever comes first."""
    x0 = np.array([[[[0.5, -1.0], [2.0, 3.0]]]])
    with lampy.Scope():
        if which == "fold":
            x = lampy.param(x0.reshape(1, 1, 4))
            y = fold(x, (2, 2), kernel_size=1)
        else:
            x = lampy.param(x0)
            y = unfold(x, kernel_size=1)
        a, b = (y * 3.0).sum(), (x * 2.0).sum()
        (a + b if op_first else b + a).backward()
        np.testing.assert_array_equal(x.grad, np.full(x.shape, 5.0))  # type: ignore[arg-type]
