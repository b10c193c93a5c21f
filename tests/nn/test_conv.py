"""Convolutions: forward against direct-loop numpy references, gradients against finite
differences for input, weight and bias, float32, unbatched inputs and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional import _conv as conv_module
from lampy.nn.functional._conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from lampy.testing import check_grad

CONV = {1: conv1d, 2: conv2d}
CONV_T = {1: conv_transpose1d, 2: conv_transpose2d}


# --- references ---------------------------------------------------------------------


def _ref_conv(
    x: np.ndarray, w: np.ndarray, b: Any, stride: Any, pads: Any, dil: Any, groups: int
) -> np.ndarray:
    """Direct loop over output positions and groups, in float64."""
    nd = x.ndim - 2
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *pads])
    kernel = w.shape[2:]
    out = [(xp.shape[2 + i] - dil[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    o, cg = w.shape[:2]
    og = o // groups
    y = np.zeros((x.shape[0], o, *out))
    axes = list(range(1, nd + 2))
    for pos in np.ndindex(*out):
        rows = [np.arange(kernel[i]) * dil[i] + pos[i] * stride[i] for i in range(nd)]
        window = xp[(slice(None), slice(None), *np.ix_(*rows))]
        for gi in range(groups):
            part = window[:, gi * cg : (gi + 1) * cg]
            y[(slice(None), slice(gi * og, (gi + 1) * og), *pos)] = np.tensordot(
                part, w[gi * og : (gi + 1) * og], axes=(axes, axes)
            )
    if b is not None:
        y += b.reshape((-1,) + (1,) * nd)
    return y


def _ref_conv_transpose(
    x: np.ndarray, w: np.ndarray, b: Any, stride: Any, pad: Any, extra: Any, groups: int, dil: Any
) -> np.ndarray:
    """Direct scatter: each input element adds weight * x at pos * stride + k * dilation."""
    nd = x.ndim - 2
    ci, cog = w.shape[:2]
    cig = ci // groups
    kernel = w.shape[2:]
    full = [
        (x.shape[2 + i] - 1) * stride[i] + dil[i] * (kernel[i] - 1) + 1 + extra[i]
        for i in range(nd)
    ]
    y = np.zeros((x.shape[0], cog * groups, *full))
    for pos in np.ndindex(*x.shape[2:]):
        for k in np.ndindex(*kernel):
            at = tuple(pos[i] * stride[i] + k[i] * dil[i] for i in range(nd))
            for gi in range(groups):
                xs = x[(slice(None), slice(gi * cig, (gi + 1) * cig), *pos)]
                ws = w[(slice(gi * cig, (gi + 1) * cig), slice(None), *k)]
                y[(slice(None), slice(gi * cog, (gi + 1) * cog), *at)] += xs @ ws
    crop = tuple(slice(pad[i], full[i] - pad[i]) for i in range(nd))
    y = y[(slice(None), slice(None), *crop)]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * nd)
    return y


def _value(f: Any, *args: Any, **kw: Any) -> np.ndarray:
    with lampy.Scope():
        return f(*args, **kw).value.copy()


# --- strategies ---------------------------------------------------------------------


@st.composite
def conv_cases(draw: st.DrawFn) -> dict[str, Any]:
    """A small convolution: shapes, stride, padding (ints, tuples, "same", "valid"),
    dilation, groups, and a bias or not."""
    nd = draw(st.sampled_from([1, 2]))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    n = draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dil = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    kind = draw(st.sampled_from(["int", "tuple", "same", "valid"]))
    stride = (
        tuple(1 for _ in range(nd))
        if kind == "same"
        else (tuple(draw(st.integers(1, 3)) for _ in range(nd)))
    )
    if kind == "int":
        p = draw(st.integers(0, 2))
        padding: Any = p
        pads = [(p, p)] * nd
    elif kind == "tuple":
        padding = tuple(draw(st.integers(0, 2)) for _ in range(nd))
        pads = [(p, p) for p in padding]
    elif kind == "same":
        padding = "same"
        tot = [d * (k - 1) for k, d in zip(kernel, dil, strict=True)]
        pads = [(t // 2, t - t // 2) for t in tot]
    else:
        padding, pads = "valid", [(0, 0)] * nd
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dil, strict=True)]
    size = tuple(
        max(1, s - a - c) + draw(st.integers(0, 3)) for s, (a, c) in zip(spans, pads, strict=True)
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((n, cg * groups, *size))
    w = rng.standard_normal((og * groups, cg, *kernel))
    b = rng.standard_normal(og * groups) if draw(st.booleans()) else None
    # PyTorch's conv takes an int stride/dilation as well as a tuple: vary the form.
    as_int = draw(st.booleans()) and len(set(stride)) == 1 and len(set(dil)) == 1
    kw = {
        "stride": stride[0] if as_int else stride,
        "padding": padding,
        "dilation": dil[0] if as_int else dil,
        "groups": groups,
    }
    return {"nd": nd, "x": x, "w": w, "b": b, "kw": kw, "ref": (stride, pads, dil, groups)}


@st.composite
def transpose_cases(draw: st.DrawFn) -> dict[str, Any]:
    """A small transposed convolution with stride, padding, output_padding, groups and
    dilation; the output size is kept >= 1."""
    nd = draw(st.sampled_from([1, 2]))
    groups = draw(st.sampled_from([1, 1, 2]))
    cig, cog = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    n = draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dil = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    extra = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dil, strict=True))
    size = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    full = [
        (i - 1) * s + d * (k - 1) + 1 + e
        for i, s, d, k, e in zip(size, stride, dil, kernel, extra, strict=True)
    ]
    pad = tuple(draw(st.integers(0, (f - 1) // 2)) for f in full)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((n, cig * groups, *size))
    w = rng.standard_normal((cig * groups, cog, *kernel))
    b = rng.standard_normal(cog * groups) if draw(st.booleans()) else None
    kw = {
        "stride": stride,
        "padding": pad,
        "output_padding": extra,
        "groups": groups,
        "dilation": dil,
    }
    return {"nd": nd, "x": x, "w": w, "b": b, "kw": kw, "ref": (stride, pad, extra, groups, dil)}


# --- forward ------------------------------------------------------------------------


def _check_float64_and_float32(f: Any, case: dict[str, Any], want: np.ndarray) -> None:
    """``f`` on the case's float64 operands gives ``want``, and on float32 operands a
    float32 result close to it."""
    x, w, b = case["x"], case["w"], case["b"]
    got = _value(f, x, w, b, **case["kw"])
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    f32 = [None if a is None else a.astype(np.float32) for a in (x, w, b)]
    got32 = _value(f, *f32, **case["kw"])
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-4, atol=1e-5)


@given(case=conv_cases())
@settings(max_examples=40)
def test_conv_forward(case: dict[str, Any]) -> None:
    """conv1d/conv2d equal a direct loop, in float64 and float32 (which stays float32)."""
    want = _ref_conv(case["x"], case["w"], case["b"], *case["ref"])
    _check_float64_and_float32(CONV[case["nd"]], case, want)


@given(case=transpose_cases())
@settings(max_examples=40)
def test_conv_transpose_forward(case: dict[str, Any]) -> None:
    """conv_transpose1d/2d equal a direct scatter loop, in float64 and float32."""
    want = _ref_conv_transpose(case["x"], case["w"], case["b"], *case["ref"])
    _check_float64_and_float32(CONV_T[case["nd"]], case, want)


@given(case=transpose_cases())
@settings(max_examples=20)
def test_conv_transpose_is_adjoint_of_conv(case: dict[str, Any]) -> None:
    """<conv_transpose(x, w), y> = <x, conv(y, w)> with the same stride, padding, dilation
    and groups: the transposed convolution is the convolution's adjoint."""
    nd, x, w, kw = case["nd"], case["x"], case["w"], dict(case["kw"])
    del kw["output_padding"]
    z = _value(CONV_T[nd], x, w, **case["kw"])
    y = np.random.default_rng(0).standard_normal(z.shape)
    back = _value(CONV[nd], y, w, **kw)
    # conv of the (output_padding-extended) y can have more positions than x: crop.
    back = back[(slice(None), slice(None), *(slice(0, s) for s in x.shape[2:]))]
    np.testing.assert_allclose(np.vdot(z, y), np.vdot(x, back), rtol=1e-10, atol=1e-10)


def test_same_padding_even_kernel_pads_more_at_the_end() -> None:
    """padding="same" with an even kernel pads the extra zero at the bottom/right, as PyTorch."""
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    w = np.zeros((1, 1, 2, 2))
    w[0, 0, 0, 0] = 1.0  # picks x_pad[i, j], the top-left of each window
    got = _value(conv2d, x, w, padding="same")
    assert got.shape == x.shape
    np.testing.assert_array_equal(got, x)  # no padding before, so x itself
    w1 = np.array([[[0.0, 0.0, 0.0, 1.0]]])  # kernel 4: pads 1 before, 2 after
    got1 = _value(conv1d, np.array([[1.0, 2.0, 3.0]]), w1, padding="same")
    np.testing.assert_array_equal(got1, [[3.0, 0.0, 0.0]])


def test_unbatched_inputs_match_batched() -> None:
    """(C, L) and (C, H, W) inputs give the batched result without the batch dimension,
    and their gradients have the unbatched shape."""
    rng = np.random.default_rng(3)
    for nd in (1, 2):
        x = rng.standard_normal((4,) + (5,) * nd)
        w = rng.standard_normal((6, 2) + (3,) * nd)
        b = rng.standard_normal(6)
        got = _value(CONV[nd], x, w, b, padding=1, groups=2)
        np.testing.assert_allclose(got, _value(CONV[nd], x[None], w, b, padding=1, groups=2)[0])
        check_grad(lambda a, v, c, f=CONV[nd]: f(a, v, c, stride=2, groups=2), x, w, b)
        wt = rng.standard_normal((4, 3) + (2,) * nd)
        got_t = _value(CONV_T[nd], x, wt, stride=2)
        np.testing.assert_allclose(got_t, _value(CONV_T[nd], x[None], wt, stride=2)[0])
        check_grad(lambda a, v, f=CONV_T[nd]: f(a, v, stride=2, padding=1), x, wt)


def test_empty_batch() -> None:
    """A 0-sample batch gives a 0-sample output and zero weight gradients, as PyTorch."""
    with lampy.Scope():
        w = lampy.param(np.ones((3, 2, 3, 3)))
        y = conv2d(np.zeros((0, 2, 5, 5)), w, padding=1)
        assert y.shape == (0, 3, 5, 5)
        y.sum().backward()
        np.testing.assert_array_equal(w.grad, np.zeros((3, 2, 3, 3)))
        z = conv_transpose2d(np.zeros((0, 3, 4, 4)), w.value.reshape(3, 2, 3, 3), stride=2)
        assert z.shape == (0, 2, 9, 9)


@pytest.mark.parametrize("nd", [1, 2])
@pytest.mark.parametrize("transpose", [False, True])
def test_empty_batch_bias_gradient_is_zero(nd: int, transpose: bool) -> None:
    """With a 0-sample batch the bias gradient is an empty sum, zeros (PyTorch's too);
    it used to fail in backward reshaping the empty gradient to (0, -1)."""
    f = (CONV_T if transpose else CONV)[nd]
    w_shape = (2, 3, *(2,) * nd) if transpose else (3, 2, *(2,) * nd)
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 2, *(4,) * nd)))
        w = lampy.param(np.ones(w_shape))
        b = lampy.param(np.ones(3, np.float32))
        y = f(x, w, b)
        assert y.shape[:2] == (0, 3)
        y.sum().backward()
        np.testing.assert_array_equal(b.grad, np.zeros(3, np.float32))
        assert b.grad.dtype == np.float32
        np.testing.assert_array_equal(w.grad, np.zeros(w_shape))
        assert x.grad.shape == x.shape


def test_mixed_dtypes_promote_and_keep_gradient_dtypes() -> None:
    """A float32 input with a float64 weight computes in float64; each gradient has its
    own input's dtype."""
    with lampy.Scope():
        x = lampy.param(np.ones((1, 2, 4), np.float32))
        w = lampy.param(np.ones((3, 2, 2)))
        y = conv1d(x, w)
        assert y.dtype == np.float64
        y.sum().backward()
        assert x.grad.dtype == np.float32 and w.grad.dtype == np.float64
        np.testing.assert_array_equal(x.grad, [[[3, 6, 6, 3]] * 2])


# --- gradients ----------------------------------------------------------------------


@given(case=conv_cases())
@settings(max_examples=25)
def test_conv_gradients(case: dict[str, Any]) -> None:
    """Input, weight and bias gradients of conv1d/conv2d match finite differences."""
    f, x, w, b, kw = CONV[case["nd"]], case["x"], case["w"], case["b"], case["kw"]
    if b is None:
        check_grad(lambda a, v: f(a, v, **kw), x, w)
    else:
        check_grad(lambda a, v, c: f(a, v, c, **kw), x, w, b)


@given(case=transpose_cases())
@settings(max_examples=25)
def test_conv_transpose_gradients(case: dict[str, Any]) -> None:
    """Input, weight and bias gradients of conv_transpose1d/2d match finite differences."""
    f, x, w, b, kw = CONV_T[case["nd"]], case["x"], case["w"], case["b"], case["kw"]
    if b is None:
        check_grad(lambda a, v: f(a, v, **kw), x, w)
    else:
        check_grad(lambda a, v, c: f(a, v, c, **kw), x, w, b)


def test_float32_gradients() -> None:
    """The float32 path: gradients stay float32 and match finite differences."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    check_grad(lambda a, v, c: conv2d(a, v, c, stride=2, padding=1, groups=2), x, w, b)
    wt = rng.standard_normal((4, 3, 2, 3)).astype(np.float32)
    bt = rng.standard_normal(3).astype(np.float32)
    check_grad(lambda a, v, c: conv_transpose2d(a, v, c, stride=2, output_padding=1), x, wt, bt)


def test_gradient_accumulates_over_two_uses() -> None:
    """A weight used by two convolutions (and a second backward) gets the summed gradients."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 6, 6))
    check_grad(
        lambda a, v: conv2d(conv2d(a, v, padding=1), v, padding="same"),
        x,
        rng.standard_normal((3, 3, 3, 3)),
    )
    check_grad(
        lambda a, v: conv_transpose2d(conv2d(a, v, stride=2), v, stride=2),
        x,
        rng.standard_normal((3, 3, 2, 2)),
    )


# --- the stride-1 path (flattened padded planes) ------------------------------------


def _both_paths(
    case: dict[str, Any], x: np.ndarray, edit: Any = None
) -> list[tuple[np.ndarray, ...]]:
    """Value, input and weight gradients (for a random output gradient, changed in
    place by ``edit`` if given) of the case's stride-1 convolution of the batched ``x``
    by the flat path and by the im2col path (which handles every stride)."""
    from lampy.nn.functional._conv_common import conv_padding

    w, b, groups, dil = case["w"], case["b"], case["kw"]["groups"], case["ref"][2]
    nd = w.ndim - 2
    pads = conv_padding("t", case["kw"]["padding"], x.shape[2:], w.shape[2:], (1,) * nd, dil)
    results = []
    for path in (conv_module._conv_flat, conv_module._conv_strided):
        if path is conv_module._conv_flat:
            value, d_input, d_weight = path(x, w, b, groups, pads, dil)
        else:
            out = _value(CONV[nd], x, w, b, **case["kw"]).shape[2:]
            value, d_input, d_weight = path(x, w, b, groups, pads, out, (1,) * nd, dil, 2)
        g = np.random.default_rng(1).standard_normal(value.shape).astype(x.dtype)
        if edit is not None:
            edit(g)
        results.append((value, d_input(g), d_weight(g)))
    return results


@given(case=conv_cases(), f32=st.booleans())
@settings(max_examples=40)
def test_stride_one_flat_path_matches_im2col_path(case: dict[str, Any], f32: bool) -> None:
    """With stride 1 the flat path gives the im2col path's value, input gradient and
    weight gradient (padding wider or narrower than the kernel, dilation, groups), in
    float64 and in float32 (which stays float32)."""
    dtype = np.float32 if f32 else np.float64
    case["kw"]["stride"] = 1
    case["w"] = case["w"].astype(dtype)
    case["b"] = None if case["b"] is None else case["b"].astype(dtype)
    flat, old = _both_paths(case, case["x"].astype(dtype))
    tol = 1e-4 if f32 else 1e-10
    for a, b in zip(flat, old, strict=True):
        assert a.dtype == dtype and a.flags.c_contiguous
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_stride_one_gradients_float32_unbatched_and_wide_padding() -> None:
    """Stride-1 gradients match finite differences: float32 (kept), an unbatched input,
    padding wider than the dilated kernel's reach, asymmetric 'same' padding, groups."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4, 6, 5)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    check_grad(lambda a, v, c: conv2d(a, v, c, padding=1, groups=2), x, w, b)
    check_grad(lambda a, v, c: conv2d(a, v, c, padding="same", dilation=2, groups=2), x[0], w, b)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    check_grad(lambda a, v: conv2d(a, v, padding=(3, 2), groups=2), x64, w64)
    check_grad(
        lambda a, v: conv1d(a, v, padding=4, dilation=2, groups=2), x64[:, :, 0], w64[..., 0]
    )
    check_grad(lambda a, v: conv2d(a, v, padding=2), x64[:1], rng.standard_normal((3, 4, 1, 1)))


@pytest.mark.parametrize(("kernel", "padding"), [(3, 1), (3, 0), (5, 3), (2, "same")])
def test_stride_one_non_finite_input_weight_gradient(kernel: int, padding: Any) -> None:
    """An inf or NaN in the input reaches the weight gradient only where the input
    element pairs with the output gradient: the flat path's extra grid columns (which
    read input values) and its wrapped window taps (which read the neighbouring row)
    give no 0 * inf = NaN. Grids with and without extra columns, wrapped or padded rows."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 5, 6))
    x[0, 1, 2, 5] = np.inf  # the last column: junk windows and wrapped taps read it
    x[0, 2, 3, 0] = -np.inf  # the first column
    x[1, 0, 4, 0] = np.nan
    w = rng.standard_normal((4, 3, kernel, kernel))
    case = {"w": w, "b": None, "ref": (None, None, (1, 1))}
    case["kw"] = {"groups": 1, "padding": padding}
    flat, old = _both_paths(case, x)
    for a, b in zip(flat, old, strict=True):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    assert np.isfinite(flat[2]).any() and not np.isfinite(flat[2]).all()


@pytest.mark.parametrize(("kernel", "padding"), [(3, 0), (5, 3), (3, 1)])
def test_stride_one_infinite_output_gradient_input_gradient(kernel: int, padding: int) -> None:
    """+inf and -inf in the output gradient at the end of a row and the start of the
    next give the im2col path's input gradient, without a NaN warning from the flat
    path's extra grid columns (whose windows wrap from one row to the next)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 6, 7))
    w = np.abs(rng.standard_normal((4, 3, kernel, kernel)))  # one sign: inf - inf = NaN
    pads = ((padding, padding),) * 2
    flat_value, d_flat, _ = conv_module._conv_flat(x, w, None, 1, pads, (1, 1))
    _, d_old, _ = conv_module._conv_strided(
        x, w, None, 1, pads, flat_value.shape[2:], (1, 1), (1, 1), 1
    )
    g = rng.standard_normal(flat_value.shape)
    g[0, 1, 1, -1], g[0, 2, 2, 0] = np.inf, -np.inf
    g[1, 0, 0, -1], g[1, 3, 1, 0] = -np.inf, np.inf
    got, want = d_flat(g), d_old(g)  # warnings are errors in the test suite
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    assert not np.isfinite(got).all()


# --- errors -------------------------------------------------------------------------


def _raises(exc: type[Exception], match: str, f: Any, *args: Any, **kw: Any) -> None:
    with lampy.Scope(), pytest.raises(exc, match=match):
        f(*args, **kw)


def test_errors() -> None:
    """Bad ranks, channel counts, groups, sizes and arguments raise clear errors."""
    x = np.zeros((1, 4, 5, 5))
    w = np.zeros((6, 2, 3, 3))
    _raises(ShapeError, r"conv2d: input must be 3-D .* or 4-D", conv2d, np.zeros((4, 5)), w)
    _raises(ShapeError, r"conv1d: input must be 2-D", conv1d, x, np.zeros((6, 4, 3)))
    _raises(ShapeError, r"conv2d: weight must be 4-D", conv2d, x, np.zeros((6, 4, 3)))
    _raises(
        ShapeError,
        r"expected the input to have .* = 2 channels, but input of shape \(1, 4, 5, 5\) has 4",
        conv2d,
        x,
        w,
    )
    _raises(LampyValueError, r"groups=4 must divide the out channels \(6\)", conv2d, x, w, groups=4)
    _raises(LampyValueError, r"groups must be an int >= 1", conv2d, x, w, groups=0)
    _raises(ShapeError, r"bias must have shape \(6,\)", conv2d, x, w, np.zeros(5), groups=2)
    _raises(
        ShapeError,
        r"smaller than the dilated kernel size \(7, 7\)",
        conv2d,
        x,
        w,
        groups=2,
        dilation=3,
    )
    _raises(
        LampyValueError,
        r"padding='same' needs stride 1",
        conv2d,
        x,
        w,
        stride=2,
        padding="same",
        groups=2,
    )
    _raises(
        LampyValueError,
        r"padding must be an int, a tuple of ints, 'valid' or 'same'",
        conv2d,
        x,
        w,
        padding="full",
        groups=2,
    )
    _raises(LampyValueError, r"stride must be >= 1", conv2d, x, w, stride=0, groups=2)
    _raises(LampyValueError, r"padding must be >= 0", conv2d, x, w, padding=(1, -1), groups=2)
    _raises(
        LampyTypeError,
        r"dilation must be an int or a tuple of 2 ints",
        conv2d,
        x,
        w,
        dilation=(1, 2, 3),
        groups=2,
    )
    _raises(LampyTypeError, r"stride must be an int", conv2d, x, w, stride=1.5, groups=2)
    _raises(ShapeError, r"kernel size must be >= 1", conv2d, x, np.zeros((6, 4, 0, 3)))
    wt = np.zeros((4, 3, 3, 3))
    _raises(
        ShapeError,
        r"conv_transpose2d: expected the input to have weight.shape\[0\] = 4 channels",
        conv_transpose2d,
        np.zeros((1, 3, 5, 5)),
        wt,
    )
    _raises(
        LampyValueError,
        r"groups=3 must divide the in channels \(4\)",
        conv_transpose2d,
        x,
        wt,
        groups=3,
    )
    _raises(
        LampyValueError,
        r"output_padding \(2, 2\) must be smaller than either stride",
        conv_transpose2d,
        x,
        wt,
        stride=2,
        output_padding=2,
    )
    _raises(
        ShapeError,
        r"output size \(-1, -1\) would be < 1",
        conv_transpose2d,
        np.zeros((1, 4, 1, 1)),
        np.zeros((4, 3, 1, 1)),
        padding=1,
    )
    _raises(
        ShapeError,
        r"bias must have shape \(6,\)",
        conv_transpose1d,
        np.zeros((1, 4, 3)),
        np.zeros((4, 3, 2)),
        np.zeros(3),
        groups=2,
    )


def test_error_records_nothing() -> None:
    """A convolution that raises leaves no Variable in the scope."""
    with lampy.Scope() as s:
        w = lampy.param(np.zeros((2, 3, 3)))
        before = len(s)
        with pytest.raises(ShapeError):
            conv1d(np.zeros((1, 2, 5)), w)
        assert len(s) == before


def test_unbatched_results_are_taken_without_a_copy(monkeypatch: Any) -> None:
    """An unbatched convolution's result (a view of the batched one) is handed to the
    op read-only, so the op keeps it without copying it again."""
    import lampy.autograd._variable as variable

    copied: list[bool] = []
    real_own = variable._own

    def spy(value: Any, shared: bool = False) -> Any:
        out = real_own(value, shared)
        copied.append(not np.shares_memory(out, value))
        return out

    monkeypatch.setattr(variable, "_own", spy)
    rng = np.random.default_rng(0)
    with lampy.Scope():
        x = rng.normal(size=(2, 7))
        y = conv1d(x, rng.normal(size=(3, 2, 3)), rng.normal(size=3))
        assert copied[-1] is False and y.shape == (3, 5)
        z = conv_transpose1d(x, rng.normal(size=(2, 3, 3)))
        assert copied[-1] is False and z.shape == (3, 9)
