"""Normalisation ops: forward against plain-numpy references, gradients against finite
differences, running-statistics updates, dtypes and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional._batch_norm import batch_norm
from lampy.nn.functional._normalization import (
    group_norm,
    layer_norm,
    normalize,
    rms_norm,
)
from lampy.testing import check_grad

DTYPES = [np.float64, np.float32]


def _forward(f: Any, *args: Any, **kw: Any) -> Any:
    with lampy.Scope():
        return f(*args, **kw).value.copy()


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 2e-4, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-11}


# --- references ---------------------------------------------------------------------


def _ref_standardize(x: np.ndarray, axes: tuple[int, ...], eps: float) -> Any:
    x = x.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _channel(v: np.ndarray, ndim: int) -> Any:
    """A per-channel vector shaped to broadcast over (N, C, *)."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _ref_group_norm(x: np.ndarray, groups: int, w: Any, b: Any, eps: float) -> Any:
    """Loops over samples and groups, standardising each slice."""
    x = x.astype(np.float64)
    out = np.empty_like(x)
    size = x.shape[1] // groups
    for i in range(x.shape[0]):
        for k in range(groups):
            part = x[i, k * size : (k + 1) * size]
            out[i, k * size : (k + 1) * size] = (part - part.mean()) / np.sqrt(part.var() + eps)
    if w is not None:
        out = out * _channel(w, x.ndim)
    if b is not None:
        out = out + _channel(b, x.ndim)
    return out


# --- strategies ---------------------------------------------------------------------


@st.composite
def nc_shapes(draw: st.DrawFn, min_count: int = 2) -> tuple[int, ...]:
    """(N, C, *spatial) with at least ``min_count`` values per channel."""
    spatial = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n = draw(st.integers(1, 4))
    c = draw(st.integers(1, 4))
    if n * int(np.prod(spatial)) < min_count:
        n = min_count
    return (n, c, *spatial)


# --- batch_norm ---------------------------------------------------------------------


@given(
    shape=nc_shapes(),
    seed=st.integers(0, 2**32 - 1),
    momentum=st.floats(0.0, 1.0),
    eps=st.sampled_from([1e-5, 1e-3, 0.1]),
    affine=st.booleans(),
)
@settings(max_examples=20)
def test_batch_norm_training_forward_and_running_stats(
    shape: tuple[int, ...], seed: int, momentum: float, eps: float, affine: bool
) -> None:
    """Training batch_norm standardises per channel and updates the running stats in
    place with the biased mean and the unbiased variance."""
    rng = np.random.default_rng(seed)
    axes = (0, *range(2, len(shape)))
    count = shape[0] * int(np.prod(shape[2:]))
    for dtype in DTYPES:
        x = rng.normal(2.0, 3.0, size=shape).astype(dtype)
        w = rng.normal(size=shape[1]).astype(dtype) if affine else None
        b = rng.normal(size=shape[1]).astype(dtype) if affine else None
        rm0 = rng.normal(size=shape[1]).astype(dtype)
        rv0 = rng.uniform(0.5, 2.0, size=shape[1]).astype(dtype)
        rm, rv = rm0.copy(), rv0.copy()
        got = _forward(batch_norm, x, rm, rv, w, b, training=True, momentum=momentum, eps=eps)
        want = _ref_standardize(x, axes, eps)
        if affine:
            want = want * _channel(w, x.ndim) + _channel(b, x.ndim)
        assert got.dtype == dtype and got.shape == shape
        np.testing.assert_allclose(got, want, **_tol(dtype))
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=axes)
        var = x64.var(axis=axes) * count / (count - 1)
        assert rm.dtype == dtype and rv.dtype == dtype
        np.testing.assert_allclose(rm, (1 - momentum) * rm0 + momentum * mean, **_tol(dtype))
        np.testing.assert_allclose(rv, (1 - momentum) * rv0 + momentum * var, **_tol(dtype))


def test_batch_norm_cumulative_average_counts_batches() -> None:
    """momentum=None averages the batch statistics cumulatively and increments
    num_batches_tracked in place, as torch.nn.BatchNorm1d(momentum=None)."""
    rng = np.random.default_rng(0)
    rm, rv = np.zeros(3), np.ones(3)
    nbt = np.zeros((), np.int64)
    means, variances = [], []
    for step in range(4):
        x = rng.normal(step, 1 + step, size=(5, 3, 2))
        with lampy.Scope():
            batch_norm(x, rm, rv, training=True, momentum=None, num_batches_tracked=nbt)
        means.append(x.mean(axis=(0, 2)))
        variances.append(x.var(axis=(0, 2), ddof=1))
    assert int(nbt) == 4
    np.testing.assert_allclose(rm, np.mean(means, axis=0), rtol=1e-12)
    np.testing.assert_allclose(rv, np.mean(variances, axis=0), rtol=1e-12)
    with lampy.Scope():  # a float momentum still counts the batch, as the module does
        batch_norm(x, rm, rv, training=True, momentum=0.1, num_batches_tracked=nbt)
    assert int(nbt) == 5


@given(shape=nc_shapes(min_count=1), seed=st.integers(0, 2**32 - 1), affine=st.booleans())
@settings(max_examples=15)
def test_batch_norm_eval_forward(shape: tuple[int, ...], seed: int, affine: bool) -> None:
    """Evaluation batch_norm uses the running statistics and leaves them unchanged."""
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        x = rng.normal(size=shape).astype(dtype)
        rm = rng.normal(size=shape[1]).astype(dtype)
        rv = rng.uniform(0.5, 2.0, size=shape[1]).astype(dtype)
        w = rng.normal(size=shape[1]).astype(dtype) if affine else None
        b = rng.normal(size=shape[1]).astype(dtype) if affine else None
        kept = (rm.copy(), rv.copy())
        got = _forward(batch_norm, x, rm, rv, w, b)
        want = (x - _channel(rm, x.ndim)) / np.sqrt(_channel(rv, x.ndim).astype(np.float64) + 1e-5)
        if affine:
            want = want * _channel(w, x.ndim) + _channel(b, x.ndim)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, **_tol(dtype))
        np.testing.assert_array_equal(rm, kept[0])
        np.testing.assert_array_equal(rv, kept[1])


@pytest.mark.parametrize("training", [True, False])
@given(shape=nc_shapes(), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=10)
def test_batch_norm_gradients(training: bool, shape: tuple[int, ...], seed: int) -> None:
    """batch_norm's gradients for input, weight and bias match finite differences."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    w, b = rng.normal(size=shape[1]), rng.normal(size=shape[1])
    rm, rv = rng.normal(size=shape[1]), rng.uniform(0.5, 2.0, size=shape[1])

    def f(x: Any, w: Any, b: Any) -> Any:
        # copies: the numerical gradient calls f many times; stats must not drift
        return batch_norm(x, rm.copy(), rv.copy(), w, b, training=training)

    check_grad(f, x, w, b)
    check_grad(lambda x: batch_norm(x, None, None, training=True) if training else x * 1.0, x)


def test_batch_norm_empty_batch() -> None:
    """A batch of 0 samples gives an empty result and leaves the running stats alone."""
    rm, rv = np.zeros(3), np.ones(3)
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 3, 2)))
        w = lampy.param(np.ones(3))
        y = batch_norm(x, rm, rv, w, training=True)
        assert y.shape == (0, 3, 2)
        y.sum().backward()
        assert x.grad.shape == (0, 3, 2) and w.grad.tolist() == [0.0, 0.0, 0.0]
    assert rm.tolist() == [0.0, 0.0, 0.0] and rv.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_failed_call_leaves_running_stats(momentum: float | None) -> None:
    """A training call that fails to record its result (no Scope open) leaves
    running_mean, running_var and num_batches_tracked unchanged."""
    rm, rv, nbt = np.zeros(3), np.ones(3), np.zeros((), np.int64)
    x = np.arange(12.0).reshape(4, 3)
    with pytest.raises(lampy.NoScopeError):
        batch_norm(x, rm, rv, training=True, momentum=momentum, num_batches_tracked=nbt)
    assert rm.tolist() == [0.0, 0.0, 0.0] and rv.tolist() == [1.0, 1.0, 1.0]
    assert int(nbt) == 0


def test_batch_norm_errors() -> None:
    """Bad channel counts, too few values, missing or read-only stats raise clear errors."""
    x = np.ones((2, 3, 4))
    with lampy.Scope():
        with pytest.raises(ShapeError, match=r"batch_norm: running_mean has shape \(4,\)"):
            batch_norm(x, np.zeros(4), np.ones(4), training=True)
        with pytest.raises(ShapeError, match=r"batch_norm: weight has shape \(2,\).*\(3,\)"):
            batch_norm(x, None, None, np.ones(2), training=True)
        with pytest.raises(LampyValueError, match="more than 1 value per channel"):
            batch_norm(np.ones((1, 3)), np.zeros(3), np.ones(3), training=True)
        with pytest.raises(LampyValueError, match="evaluation mode"):
            batch_norm(x, None, None)
        with pytest.raises(LampyValueError, match="num_batches_tracked"):
            batch_norm(x, np.zeros(3), np.ones(3), training=True, momentum=None)
        ro = np.zeros(3)
        ro.flags.writeable = False
        with pytest.raises(LampyTypeError, match="writable numpy array"):
            batch_norm(x, ro, np.ones(3), training=True)
        with pytest.raises(LampyTypeError, match="writable numpy array"):
            batch_norm(x, lampy.const(np.zeros(3)), np.ones(3), training=True)
        with pytest.raises(ShapeError, match="at least 2 dimensions"):
            batch_norm(np.ones(3), np.zeros(3), np.ones(3))
        rm = np.zeros(3)
        with pytest.raises(ShapeError):  # validated before the stats are touched
            batch_norm(x, rm, np.ones(3), np.ones(5), training=True)
        assert rm.tolist() == [0.0, 0.0, 0.0]


# --- layer_norm, rms_norm -----------------------------------------------------------


@st.composite
def trailing_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """An input shape and a non-empty trailing normalized_shape of it."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    k = draw(st.integers(1, len(shape)))
    return shape, shape[len(shape) - k :]


@given(
    shapes=trailing_shapes(),
    seed=st.integers(0, 2**32 - 1),
    eps=st.sampled_from([1e-5, 1e-2]),
    affine=st.sampled_from(["none", "weight", "both"]),
)
@settings(max_examples=25)
def test_layer_norm_forward(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], seed: int, eps: float, affine: str
) -> None:
    """layer_norm standardises over the trailing dims, then scales and shifts."""
    shape, norm_shape = shapes
    rng = np.random.default_rng(seed)
    axes = tuple(range(len(shape) - len(norm_shape), len(shape)))
    for dtype in DTYPES:
        x = rng.normal(1.0, 2.0, size=shape).astype(dtype)
        w = rng.normal(size=norm_shape).astype(dtype) if affine != "none" else None
        b = rng.normal(size=norm_shape).astype(dtype) if affine == "both" else None
        got = _forward(layer_norm, x, norm_shape, w, b, eps=eps)
        want = _ref_standardize(x, axes, eps)
        if w is not None:
            want = want * w
        if b is not None:
            want = want + b
        assert got.dtype == dtype and got.shape == shape
        np.testing.assert_allclose(got, want, **_tol(dtype))


@given(shapes=trailing_shapes(), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=15)
def test_layer_norm_gradients(shapes: tuple[tuple[int, ...], tuple[int, ...]], seed: int) -> None:
    """layer_norm's gradients for input, weight and bias match finite differences."""
    shape, norm_shape = shapes
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    w, b = rng.normal(size=norm_shape), rng.normal(size=norm_shape)
    check_grad(lambda x, w, b: layer_norm(x, norm_shape, w, b), x, w, b)
    check_grad(lambda x: layer_norm(x, norm_shape, eps=0.1), x)


@given(
    shapes=trailing_shapes(),
    seed=st.integers(0, 2**32 - 1),
    eps=st.sampled_from([None, 1e-3]),
)
@settings(max_examples=20)
def test_rms_norm_forward_and_gradients(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], seed: int, eps: float | None
) -> None:
    """rms_norm is x / sqrt(mean(x^2) + eps) * weight, eps=None meaning the dtype's
    machine epsilon; its gradients match finite differences."""
    shape, norm_shape = shapes
    rng = np.random.default_rng(seed)
    axes = tuple(range(len(shape) - len(norm_shape), len(shape)))
    for dtype in DTYPES:
        x = rng.normal(size=shape).astype(dtype)
        w = rng.normal(size=norm_shape).astype(dtype)
        e = float(np.finfo(dtype).eps) if eps is None else eps
        x64 = x.astype(np.float64)
        want = x64 / np.sqrt((x64**2).mean(axis=axes, keepdims=True) + e) * w
        got = _forward(rms_norm, x, norm_shape, w, eps=eps)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, **_tol(dtype))
    check_grad(lambda x, w: rms_norm(x, norm_shape, w, eps=eps), rng.normal(size=shape), w * 1.0)


def test_layer_norm_int_shape_and_float32_gradients() -> None:
    """An int normalized_shape means the last dimension; float32 gradients stay float32."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 5)).astype(np.float32)
    w = rng.normal(size=5).astype(np.float32)
    np.testing.assert_array_equal(_forward(layer_norm, x, 5), _forward(layer_norm, x, (5,)))
    check_grad(lambda x, w, b: layer_norm(x, 5, w, b), x, w, w)
    check_grad(lambda x, w: rms_norm(x, [5], w), x, w)


def test_layer_norm_and_rms_norm_errors() -> None:
    """normalized_shape must be the input's trailing dims; weight/bias must match it."""
    x = np.ones((2, 6, 5))
    with lampy.Scope():
        with pytest.raises(ShapeError, match=r"layer_norm: normalized_shape \(6,\).*\(2, 6, 5\)"):
            layer_norm(x, (6,))
        with pytest.raises(ShapeError, match="trailing dimensions"):
            layer_norm(x, ())
        with pytest.raises(ShapeError, match=r"layer_norm: weight has shape \(6,\).*\(5,\)"):
            layer_norm(x, (5,), np.ones(6))
        with pytest.raises(ShapeError, match=r"layer_norm: bias has shape"):
            layer_norm(x, (6, 5), None, np.ones(5))
        with pytest.raises(LampyTypeError, match="normalized_shape must be"):
            layer_norm(x, "5")
        with pytest.raises(ShapeError, match=r"rms_norm: weight has shape \(3,\)"):
            rms_norm(x, (5,), np.ones(3))


# --- group_norm ---------------------------------------------------------------------


@st.composite
def group_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], int]:
    groups = draw(st.integers(1, 3))
    per = draw(st.integers(1, 3))
    spatial = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n = draw(st.integers(0, 3))
    # a single value per group is refused, as PyTorch does (test_pytorchs_degenerate_input_checks)
    assume(n * per * int(np.prod(spatial)) != 1)
    return (n, groups * per, *spatial), groups


@given(case=group_cases())
@settings(max_examples=200)
def test_group_cases_never_draw_single_value_groups(case: tuple[tuple[int, ...], int]) -> None:
    """The generated group_norm cases are all accepted: none has a single value per
    (sample, group), which group_norm refuses as PyTorch does."""
    shape, groups = case
    assert (shape[0] * shape[1] // groups) * int(np.prod(shape[2:])) != 1


@given(case=group_cases(), seed=st.integers(0, 2**32 - 1), affine=st.booleans())
@settings(max_examples=20)
def test_group_norm_forward(case: tuple[tuple[int, ...], int], seed: int, affine: bool) -> None:
    """group_norm standardises each (sample, group) slice, then scales per channel."""
    shape, groups = case
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        x = rng.normal(size=shape).astype(dtype)
        w = rng.normal(size=shape[1]).astype(dtype) if affine else None
        b = rng.normal(size=shape[1]).astype(dtype) if affine else None
        got = _forward(group_norm, x, groups, w, b)
        assert got.dtype == dtype and got.shape == shape
        np.testing.assert_allclose(got, _ref_group_norm(x, groups, w, b, 1e-5), **_tol(dtype))


@given(case=group_cases(), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=10)
def test_group_norm_gradients(case: tuple[tuple[int, ...], int], seed: int) -> None:
    """group_norm's gradients for input, weight and bias match finite differences."""
    shape, groups = case
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    w, b = rng.normal(size=shape[1]), rng.normal(size=shape[1])
    check_grad(lambda x, w, b: group_norm(x, groups, w, b, eps=1e-3), x, w, b)


def test_group_norm_errors() -> None:
    """num_groups must divide C; weight must have C entries; the input needs (N, C)."""
    x = np.ones((2, 6, 5))
    with lampy.Scope():
        with pytest.raises(ShapeError, match=r"group_norm: num_groups=4 .* C=6"):
            group_norm(x, 4)
        with pytest.raises(ShapeError, match="num_groups=0"):
            group_norm(x, 0)
        with pytest.raises(ShapeError, match=r"group_norm: weight has shape \(3,\)"):
            group_norm(x, 3, np.ones(3))
        with pytest.raises(ShapeError, match="at least 2 dimensions"):
            group_norm(np.ones(6), 3)
        with pytest.raises(LampyTypeError, match="num_groups must be an int"):
            group_norm(x, 2.0)  # type: ignore[arg-type]


# --- normalize ----------------------------------------------------------------------


@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    seed=st.integers(0, 2**32 - 1),
    p=st.sampled_from([1.0, 2.0, 3.0, float("inf")]),
    data=st.data(),
)
@settings(max_examples=25)
def test_normalize_forward_and_gradients(
    shape: list[int], seed: int, p: float, data: st.DataObject
) -> None:
    """normalize divides by max(||x||_p, eps) along dim; gradients match differences."""
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        x = rng.normal(size=shape).astype(dtype)
        x64 = x.astype(np.float64)
        norm = np.linalg.norm(np.moveaxis(x64, dim, -1), ord=p, axis=-1, keepdims=True)
        want = x64 / np.moveaxis(np.maximum(norm, 1e-12), -1, dim)
        got = _forward(normalize, x, p=p, dim=dim)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, **_tol(dtype))
    if p != float("inf"):  # the max norm's kink makes ties likely on tiny inputs
        check_grad(lambda x: normalize(x, p=p, dim=dim), rng.normal(size=shape))


@given(
    shape=st.lists(st.integers(1, 4), min_size=2, max_size=3),
    seed=st.integers(0, 2**32 - 1),
    p=st.sampled_from([1.0, 2.0, 3.0]),
    data=st.data(),
)
@settings(max_examples=25)
def test_normalize_over_several_axes(
    shape: list[int], seed: int, p: float, data: st.DataObject
) -> None:
    """A tuple dim normalises the elements of those axes together, as PyTorch (it used
    to fail with a bare ValueError); None and () mean every axis."""
    nd = len(shape)
    axes = data.draw(
        st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd, unique_by=lambda a: a % nd)
    )
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    keep = tuple(a % nd for a in axes)
    norm = np.sum(np.abs(x) ** p, axis=keep, keepdims=True) ** (1 / p)
    np.testing.assert_allclose(_forward(normalize, x, p=p, dim=tuple(axes)), x / norm, rtol=1e-12)
    whole = x / np.sum(np.abs(x) ** p) ** (1 / p)
    for every in (None, (), list(range(nd))):
        np.testing.assert_allclose(_forward(normalize, x, p=p, dim=every), whole, rtol=1e-12)
    check_grad(lambda v: normalize(v, p=p, dim=tuple(axes)), x)


def test_normalize_over_several_axes_with_inf_norm_and_empty_axis() -> None:
    """The max norm over two axes is the largest |x| of the slice; an empty slice has
    norm 0, so the (empty) output keeps its shape."""
    x = np.array([[[1.0, -4.0], [2.0, 0.5]], [[-3.0, 1.0], [0.0, 2.0]]])
    want = x / np.array([4.0, 3.0])[:, None, None]
    np.testing.assert_allclose(_forward(normalize, x, p=float("inf"), dim=(1, 2)), want)
    assert _forward(normalize, np.ones((2, 0, 3)), p=float("inf"), dim=(1, 2)).shape == (2, 0, 3)
    with lampy.Scope(), pytest.raises(ShapeError, match="repeats an axis"):
        normalize(np.ones((2, 3)), dim=(1, -1))


def test_normalize_clamped_norm_gradient() -> None:
    """Below eps the denominator is the constant eps (gradient g / eps); at 0 too."""
    with lampy.Scope():
        x = lampy.param(np.array([[0.0, 0.0], [3e-13, 4e-13]]))
        y = normalize(x, dim=1, eps=1e-12)
        np.testing.assert_allclose(y.value, [[0.0, 0.0], [0.3, 0.4]])
        y.sum().backward()
        np.testing.assert_allclose(x.grad, np.full((2, 2), 1e12))
    with lampy.Scope(), pytest.raises(ShapeError, match="axis 1 is out of bounds"):
        normalize(np.ones(3))


def test_pytorchs_degenerate_input_checks() -> None:
    """As PyTorch: batch_norm needs eps > 0 when training; group_norm refuses inputs
    PyTorch's batch-size check refuses."""
    with lampy.Scope():
        with pytest.raises(LampyValueError, match="eps must be positive when training"):
            batch_norm(np.zeros((4, 3)), np.zeros(3), np.ones(3), training=True, eps=0.0)
        batch_norm(np.zeros((4, 3)), np.zeros(3), np.ones(3), training=False, eps=0.0)
        for shape, groups in [((1, 1), 1), ((1, 3, 1), 3)]:
            with pytest.raises(LampyValueError, match="more than 1 value per channel"):
                group_norm(np.zeros(shape), groups)
        assert group_norm(np.zeros((2, 3, 1)), 3).shape == (2, 3, 1)
        assert group_norm(np.zeros((1, 4)), 2).shape == (1, 4)


def test_group_norm_without_affine_takes_its_result_without_a_copy(monkeypatch: Any) -> None:
    """Without weight and bias, group_norm's result is a view of its standardised rows,
    handed to the op read-only so that the op keeps it without a copy."""
    import lampy.autograd._variable as variable

    copied: list[bool] = []
    real_own = variable._own

    def spy(value: Any, shared: bool = False) -> Any:
        out = real_own(value, shared)
        copied.append(not np.shares_memory(out, value))
        return out

    monkeypatch.setattr(variable, "_own", spy)
    x = np.random.default_rng(0).normal(size=(2, 4, 3))
    with lampy.Scope():
        y = group_norm(x, 2)
        assert copied[-1] is False
        np.testing.assert_allclose(y.value, _ref_group_norm(x, 2, None, None, 1e-5), atol=1e-12)
