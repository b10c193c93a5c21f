"""Second (and third) derivatives through the convolutions: ``conv1d``, ``conv2d``,
``conv_transpose1d`` and ``conv_transpose2d`` with every option (stride, int, tuple,
"same" and "valid" padding, dilation, groups, bias, unbatched inputs, output_padding),
checked with ``check_grad(..., order=2)`` against central differences of the first-order
gradients; and the Hessian of a small CNN's loss in a conv weight against central
differences of its gradient.

Order 2 is checked in float64 on small shapes (differences of differences need both).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import lampy
import lampy.nn.functional as F
from lampy.testing import check_grad

CONV = {1: F.conv1d, 2: F.conv2d}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d}


def _per_dim(draw: Any, nd: int, values: st.SearchStrategy[int]) -> Any:
    """An int, or (in 2-d, sometimes) a tuple of one int per dimension."""
    if nd == 2 and draw(st.booleans()):
        return (draw(values), draw(values))
    return draw(values)


def _dims(value: Any, nd: int) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, tuple) else (value,) * nd


def _arrays(
    seed: int, x_shape: tuple[int, ...], w_shape: tuple[int, ...], bias: int | None
) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape) * 0.7]
    return arrays + ([rng.standard_normal(bias)] if bias is not None else [])


def _check(op: Callable[..., Any], arrays: list[np.ndarray], **options: Any) -> None:
    """``op(x, w[, b], **options)`` squared (so the second derivative in x and w is not
    zero) and summed by ``check_grad``'s cotangent, checked to order 2."""
    if len(arrays) == 3:
        check_grad(lambda x, w, b: op(x, w, b, **options) ** 2, *arrays, order=2)
    else:
        check_grad(lambda x, w: op(x, w, None, **options) ** 2, *arrays, order=2)


# ------------------------------------------------------------------------ convolution
@st.composite
def conv_cases(draw: Any, nd: int) -> tuple[list[np.ndarray], dict[str, Any]]:
    stride = _per_dim(draw, nd, st.integers(1, 3))
    dilation = _per_dim(draw, nd, st.integers(1, 2))
    kernel = _dims(_per_dim(draw, nd, st.integers(1, 3)), nd)
    choices: list[Any] = ["valid", _per_dim(draw, nd, st.integers(0, 2))]
    if max(_dims(stride, nd)) == 1:
        choices.append("same")
    padding = draw(st.sampled_from(choices))
    groups = draw(st.sampled_from([1, 2]))
    spatial = (draw(st.integers(4, 6)),) + ((draw(st.integers(3, 5)),) if nd == 2 else ())
    pads = _dims(0 if padding in ("valid", "same") else padding, nd)
    reach = [d * (k - 1) + 1 for d, k in zip(_dims(dilation, nd), kernel, strict=True)]
    if padding != "same":
        assume(all(s + 2 * p >= r for s, p, r in zip(spatial, pads, reach, strict=True)))
    c, o = 2, 2 * groups if draw(st.booleans()) else 2
    batch = () if draw(st.booleans()) else (2,)
    bias = o if draw(st.booleans()) else None
    arrays = _arrays(
        draw(st.integers(0, 2**16)), (*batch, c, *spatial), (o, c // groups, *kernel), bias
    )
    return arrays, {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}


@pytest.mark.parametrize("nd", [1, 2])
@settings(max_examples=20)
@given(data=st.data())
def test_conv_second_order(nd: int, data: st.DataObject) -> None:
    arrays, options = data.draw(conv_cases(nd))
    _check(CONV[nd], arrays, **options)


# Combinations checked on every run, whatever hypothesis draws: asymmetric "same"
# padding (an even dilated kernel), strides that leave input unread, mixed 2-d options.
CONV_FIXED = [
    (1, (2, 3, 6), (3, 3, 2), {"padding": "same"}),
    (1, (2, 3, 6), (3, 3, 2), {"padding": "same", "dilation": 3}),
    (1, (2, 4, 6), (4, 2, 2), {"stride": 3, "padding": 1, "groups": 2}),
    (1, (4, 6), (2, 4, 1), {"stride": 2}),
    (1, (2, 2, 5), (3, 2, 3), {"stride": 2, "padding": 2, "dilation": 2}),
    (2, (2, 2, 5, 4), (3, 2, 2, 3), {"padding": "same", "dilation": (1, 2)}),
    (2, (2, 4, 5, 5), (2, 2, 3, 2), {"stride": (2, 1), "padding": (1, 0), "groups": 2}),
    (2, (2, 5, 6), (4, 2, 2, 2), {"stride": (1, 3), "dilation": (2, 1)}),
    (2, (2, 2, 6, 5), (2, 2, 3, 3), {"padding": "valid", "dilation": 2}),
]


@pytest.mark.parametrize(("nd", "x_shape", "w_shape", "options"), CONV_FIXED)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_second_order_fixed(
    nd: int, x_shape: tuple[int, ...], w_shape: tuple[int, ...], options: dict[str, Any], bias: bool
) -> None:
    arrays = _arrays(0, x_shape, w_shape, w_shape[0] if bias else None)
    _check(CONV[nd], arrays, **options)


# --------------------------------------------------------------- transposed convolution
@st.composite
def conv_transpose_cases(draw: Any, nd: int) -> tuple[list[np.ndarray], dict[str, Any]]:
    stride = _dims(_per_dim(draw, nd, st.integers(1, 3)), nd)
    dilation = _dims(_per_dim(draw, nd, st.integers(1, 2)), nd)
    kernel = _dims(_per_dim(draw, nd, st.integers(1, 3)), nd)
    padding = _dims(_per_dim(draw, nd, st.integers(0, 2)), nd)
    extra = tuple(
        draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation, strict=True)
    )
    spatial = (draw(st.integers(2, 4)),) + ((draw(st.integers(2, 3)),) if nd == 2 else ())
    size = [
        (i - 1) * s - 2 * p + d * (k - 1) + e + 1
        for i, s, p, d, k, e in zip(spatial, stride, padding, dilation, kernel, extra, strict=True)
    ]
    assume(min(size) >= 1)
    groups = draw(st.sampled_from([1, 2]))
    c, og = 2 * groups if draw(st.booleans()) else 2, draw(st.integers(1, 2))
    batch = () if draw(st.booleans()) else (2,)
    bias = og * groups if draw(st.booleans()) else None
    arrays = _arrays(draw(st.integers(0, 2**16)), (*batch, c, *spatial), (c, og, *kernel), bias)
    options = {
        "stride": stride,
        "padding": padding,
        "output_padding": extra,
        "groups": groups,
        "dilation": dilation,
    }
    return arrays, options


@pytest.mark.parametrize("nd", [1, 2])
@settings(max_examples=20)
@given(data=st.data())
def test_conv_transpose_second_order(nd: int, data: st.DataObject) -> None:
    arrays, options = data.draw(conv_transpose_cases(nd))
    _check(CONV_T[nd], arrays, **options)


CONV_T_FIXED = [
    (1, (2, 3, 4), (3, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    # output_padding >= stride (allowed by a larger dilation): the input gradient is
    # cropped to the input
    (1, (2, 2, 4), (2, 2, 2), {"padding": 1, "output_padding": 1, "dilation": 2}),
    (1, (2, 4), (2, 3, 3), {"stride": 3, "padding": 2, "output_padding": 2}),
    (1, (2, 4, 3), (4, 1, 2), {"stride": 2, "groups": 2, "dilation": 2}),
    (
        2,
        (2, 2, 3, 3),
        (2, 2, 2, 3),
        {"stride": (2, 1), "padding": (1, 0), "output_padding": (1, 0)},
    ),
    (2, (2, 4, 3, 2), (4, 1, 3, 2), {"stride": 2, "padding": 1, "groups": 2, "dilation": (1, 2)}),
    (2, (2, 3, 3), (2, 2, 2, 2), {"dilation": 2, "output_padding": 1}),
]


@pytest.mark.parametrize(("nd", "x_shape", "w_shape", "options"), CONV_T_FIXED)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_second_order_fixed(
    nd: int, x_shape: tuple[int, ...], w_shape: tuple[int, ...], options: dict[str, Any], bias: bool
) -> None:
    groups = options.get("groups", 1)
    arrays = _arrays(0, x_shape, w_shape, w_shape[1] * groups if bias else None)
    _check(CONV_T[nd], arrays, **options)


# -------------------------------------------------------------------------- third order
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nd", [1, 2])
def test_third_order(nd: int, transposed: bool) -> None:
    """The vjps are convolutions with vjps of their own: the gradient of a recorded
    gradient is checked to order 2 (third derivatives of the convolution)."""
    rng = np.random.default_rng(3)
    spatial = (5,) if nd == 1 else (4, 4)
    x = rng.standard_normal((2, 2, *spatial)) * 0.5
    w = rng.standard_normal((2, 1, *(2,) * nd)) * 0.5
    vx, vw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    options: dict[str, Any] = {"stride": 2, "dilation": 2, "groups": 2}
    options["padding"] = 1
    if transposed:
        options["output_padding"] = 1

    def loss(a: Any, b: Any) -> Any:
        op = CONV_T[nd] if transposed else CONV[nd]
        return (op(a, b, None, **options) ** 3).sum()

    def dotted(a: Any, b: Any) -> Any:
        ga, gb = lampy.grad(loss, argnums=(0, 1))(a, b)
        return (ga * vx).sum() + (gb * vw).sum()

    check_grad(dotted, x, w, order=2)


# ---------------------------------------------------------------- dtypes, empty batch
def test_float32_second_order_matches_float64() -> None:
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 2, 5, 4)), rng.standard_normal((3, 2, 2, 2))
    v = rng.standard_normal(w.shape)

    def loss(b: Any) -> Any:
        return (F.conv2d(x.astype(b.dtype), b, stride=2, padding="valid") ** 2).sum()

    _, h64 = lampy.hvp(loss, w, v)
    _, h32 = lampy.hvp(loss, w.astype(np.float32), v.astype(np.float32))
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, h64, rtol=1e-4, atol=1e-4)


def test_empty_batch_hessian_is_zero() -> None:
    rng = np.random.default_rng(5)
    w = rng.standard_normal((2, 2, 2))
    for op in (F.conv1d, F.conv_transpose1d):
        for stride in (1, 2):
            h = lampy.hessian(lambda b: (op(np.zeros((0, 2, 5)), b, stride=stride) ** 2).sum())(w)
            assert h.shape == w.shape * 2
            assert not h.any()


# --------------------------------------------------------------------------- a CNN
def test_cnn_hessian_matches_differences_of_gradient() -> None:
    """conv2d -> relu -> linear -> cross_entropy: the Hessian in the conv weight (8
    elements) against central differences of ``lampy.grad``."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 1, 5, 5))
    w0 = rng.standard_normal((2, 1, 2, 2))
    b = rng.standard_normal(2) * 0.1
    lin = rng.standard_normal((3, 2 * 3 * 3)) * 0.5
    t = np.array([0, 2, 1])

    def loss(w: Any) -> Any:
        h = F.relu(F.conv2d(x, w, b, stride=2, padding=1))
        h = lampy.reshape(h, (3, -1))
        return F.cross_entropy(F.linear(h, lin), t)

    hess = lampy.hessian(loss)(w0).reshape(w0.size, w0.size)
    grad = lampy.grad(loss)
    eps = 1e-5
    fd = np.empty_like(hess)
    for i in range(w0.size):
        e = np.zeros(w0.size)
        e[i] = eps
        up, down = grad(w0 + e.reshape(w0.shape)), grad(w0 - e.reshape(w0.shape))
        fd[:, i] = (np.asarray(up) - np.asarray(down)).ravel() / (2 * eps)
    assert np.abs(hess).max() > 1e-3  # the relu does not hide the curvature
    np.testing.assert_allclose(hess, fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------------- memory
def _owners(fn: Any, depth: int = 6) -> set[int]:
    """The ids of the arrays owning the memory of every array ``fn`` reaches through
    its closure (functions, partials and tuples in it, ``depth`` levels down)."""
    found: set[int] = set()

    def walk(o: Any, d: int) -> None:
        if isinstance(o, np.ndarray):
            while isinstance(o.base, np.ndarray):
                o = o.base
            found.add(id(o))
        elif isinstance(o, (tuple, list)):
            for item in o:
                walk(item, d)
        elif d and callable(o):
            for cell in getattr(o, "__closure__", None) or ():
                try:
                    walk(cell.cell_contents, d - 1)
                except ValueError:  # an empty cell
                    continue
            if isinstance(o, functools.partial):
                walk(o.args, d - 1)

    walk(fn, depth)
    return found


@pytest.mark.parametrize("wanted", ["input", "weight", "both"])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("transposed", [False, True])
def test_vjps_keep_no_array_their_closures_do_not(
    wanted: str, stride: int, transposed: bool
) -> None:
    """Memory accounting reads the numpy closures only: each vjp reaches no array its
    edge's closure does not (the input is rebuilt from the kept im2col matrix)."""
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 2, 5, 5)), rng.standard_normal((2, 2, 3, 3))
    with lampy.Scope():
        xv = lampy.param(x) if wanted != "weight" else x
        wv = lampy.param(w) if wanted != "input" else w
        op = F.conv_transpose2d if transposed else F.conv2d
        y = op(xv, wv, None, stride=stride, padding=1)
        edges = y.node.params
        assert len(edges) == (2 if wanted == "both" else 1)
        for _, fn, _, _, vjp in edges:
            assert vjp is not None
            assert _owners(vjp) <= _owners(fn)
