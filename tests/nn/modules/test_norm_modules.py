"""Normalisation modules (BatchNorm1d/2d, LayerNorm, GroupNorm, RMSNorm): PyTorch's
state_dict keys and order, initialisation, batch and running statistics in train and
eval mode, forward against numpy, gradients and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyValueError, ShapeError
from lampy.nn._normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm
from lampy.testing import check_grad


def _x(*shape: int, seed: int = 1, dtype: Any = np.float64) -> np.ndarray:
    return (np.random.default_rng(seed).normal(size=shape) * 2 + 0.5).astype(dtype)


def _shapes(m: Any) -> list[tuple[str, tuple[int, ...], str]]:
    return [(k, v.shape, v.dtype.name) for k, v in m.state_dict().items()]


def test_batch_norm_state_dict_matches_torch() -> None:
    """Keys in torch's order, dtypes (num_batches_tracked 0-d int64) and counts."""
    with lampy.Scope():
        bn = BatchNorm1d.init(5)
        assert _shapes(bn) == [
            ("weight", (5,), "float32"),
            ("bias", (5,), "float32"),
            ("running_mean", (5,), "float32"),
            ("running_var", (5,), "float32"),
            ("num_batches_tracked", (), "int64"),
        ]
        assert bn.num_parameters() == 10 == 2 * 5
        assert [k for k, _ in bn.named_buffers()] == [
            "running_mean",
            "running_var",
            "num_batches_tracked",
        ]
        assert list(BatchNorm2d.init(5, affine=False).state_dict()) == [
            "running_mean",
            "running_var",
            "num_batches_tracked",
        ]
        assert BatchNorm2d.init(5, affine=False).num_parameters() == 0
        assert list(BatchNorm2d.init(5, track_running_stats=False).state_dict()) == [
            "weight",
            "bias",
        ]
        assert (
            repr(bn)
            == "BatchNorm1d(5, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"
        )
        np.testing.assert_array_equal(bn.running_var, np.ones(5))


@given(shape=st.sampled_from([(6, 3), (4, 3, 5)]), momentum=st.sampled_from([0.1, 0.5, None]))
def test_batch_norm1d_training_and_running_stats(shape: tuple[int, ...], momentum: Any) -> None:
    """Training uses batch statistics and updates the buffers in place as torch does."""
    x1, x2 = _x(*shape), _x(*shape, seed=2)
    axes = (0,) if len(shape) == 2 else (0, 2)
    with lampy.Scope():
        bn = BatchNorm1d.init(3, momentum=momentum, dtype=np.float64)
        view = bn.with_training(False)  # a copy sharing the buffers
        rm, rv = np.zeros(3), np.ones(3)
        for step, x in enumerate((x1, x2), start=1):
            y = bn(x).value
            mean, var = x.mean(axis=axes), x.var(axis=axes)
            ref = (x - np.expand_dims(mean, axes)) / np.sqrt(np.expand_dims(var, axes) + 1e-5)
            np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-12)
            f = 1 / step if momentum is None else momentum
            n = x.size / 3
            rm, rv = (1 - f) * rm + f * mean, (1 - f) * rv + f * var * n / (n - 1)
            np.testing.assert_allclose(view.running_mean, rm, rtol=1e-12)  # type: ignore[arg-type]
            np.testing.assert_allclose(view.running_var, rv, rtol=1e-12)  # type: ignore[arg-type]
            assert int(view.num_batches_tracked) == step  # type: ignore[arg-type]
        ev = view(x1).value
        np.testing.assert_allclose(
            ev,
            (x1 - np.expand_dims(rm, axes)) / np.sqrt(np.expand_dims(rv, axes) + 1e-5),
            rtol=1e-10,
        )
        assert int(view.num_batches_tracked) == 2  # type: ignore[arg-type]


def test_batch_norm2d_modes_and_grads() -> None:
    """BatchNorm2d: eval is affine in the input, no-tracking uses batch stats in eval."""
    x = _x(3, 2, 4, 4)
    with lampy.Scope():
        bn = BatchNorm2d.init(2, dtype=np.float64)
        check_grad(bn, x)
        check_grad(bn.with_training(False), x)
        free = BatchNorm2d.init(2, track_running_stats=False, dtype=np.float64).with_training(False)
        mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
        np.testing.assert_allclose(free(x).value, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10)
        y32 = BatchNorm2d.init(2)(x.astype(np.float32))
        assert y32.dtype == np.float32


def test_batch_norm_round_trip_and_errors() -> None:
    """Buffers load in place (num_batches_tracked too); bad inputs name the module."""
    with lampy.Scope():
        a = BatchNorm1d.init(3)
        a(_x(4, 3, dtype=np.float32))
        b = BatchNorm1d.init(3)
        b.load_state_dict(a.state_dict())
        np.testing.assert_array_equal(b.running_mean, a.running_mean)  # type: ignore[arg-type]
        assert int(b.num_batches_tracked) == 1  # type: ignore[arg-type]
        x = _x(2, 3, dtype=np.float32)
        np.testing.assert_array_equal(
            a.with_training(False)(x).value, b.with_training(False)(x).value
        )
        with pytest.raises(ShapeError, match=r"BatchNorm1d\(3, .*channel count 4 differs"):
            a(np.ones((2, 4)))
        with pytest.raises(ShapeError, match=r"expected input \(N, 3, H, W\)"):
            BatchNorm2d.init(3)(np.ones((2, 3)))
        with pytest.raises(LampyValueError, match=r"BatchNorm1d\(3.*more than 1 value"):
            a(np.ones((1, 3), np.float32))
        with pytest.raises(ShapeError, match="running_mean"):
            a.load_state_dict({**a.state_dict(), "running_mean": np.zeros(4)})


@given(
    lead=st.lists(st.integers(1, 3), min_size=1, max_size=2),
    norm=st.sampled_from([(4,), (2, 3)]),
    affine=st.booleans(),
    bias=st.booleans(),
)
def test_layer_norm_matches_numpy(
    lead: list[int], norm: tuple[int, ...], affine: bool, bias: bool
) -> None:
    """LayerNorm normalises the trailing dims, then scales and shifts; gradients right."""
    x = _x(*lead, *norm)
    axes = tuple(range(-len(norm), 0))
    with lampy.Scope():
        m = LayerNorm.init(norm, eps=1e-3, elementwise_affine=affine, bias=bias, dtype=np.float64)
        keys = ["weight", "bias"] if affine and bias else ["weight"] if affine else []
        assert list(m.state_dict()) == keys and m.num_parameters() == len(keys) * int(np.prod(norm))
        ref = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(
            x.var(axis=axes, keepdims=True) + 1e-3
        )
        np.testing.assert_allclose(m(x).value, ref, rtol=1e-10, atol=1e-12)
        check_grad(m, x)


def test_group_norm_and_rms_norm_match_numpy() -> None:
    """GroupNorm standardises channel groups; RMSNorm divides by the root mean square."""
    x = _x(2, 6, 3)
    with lampy.Scope():
        g = GroupNorm.init(2, 6, dtype=np.float64)
        assert list(g.state_dict()) == ["weight", "bias"] and g.num_parameters() == 12
        xg = x.reshape(2, 2, 9)
        ref = (
            (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
        ).reshape(x.shape)
        np.testing.assert_allclose(g(x).value, ref, rtol=1e-10, atol=1e-12)
        check_grad(g, x)
        r = RMSNorm.init((6, 3), dtype=np.float64)
        assert list(r.state_dict()) == ["weight"] and r.num_parameters() == 18
        eps = np.finfo(np.float64).eps
        ref = x / np.sqrt((x**2).mean(axis=(1, 2), keepdims=True) + eps)
        np.testing.assert_allclose(r(x).value, ref, rtol=1e-10)
        check_grad(RMSNorm.init(3, eps=1e-3, dtype=np.float64), x)
        assert RMSNorm.init(3, elementwise_affine=False).state_dict() == {}
        assert repr(g) == "GroupNorm(2, 6, eps=1e-05, affine=True)"
        assert repr(r) == "RMSNorm((6, 3), eps=None, elementwise_affine=True)"
        assert repr(LayerNorm.init(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"


def test_norm_errors() -> None:
    """Mismatched trailing shapes, channel counts and groups are clear errors."""
    with lampy.Scope():
        with pytest.raises(ShapeError, match=r"LayerNorm\(\(4,\).*trailing dimensions"):
            LayerNorm.init(4)(np.ones((2, 3)))
        with pytest.raises(ShapeError, match=r"GroupNorm\(2, 6.*channel count 4"):
            GroupNorm.init(2, 6)(np.ones((2, 4, 3)))
        with pytest.raises(ShapeError, match="normalized_shape"):
            RMSNorm.init((2, 3))(np.ones((3, 2)))
    with pytest.raises(LampyValueError, match="divisible by num_groups"):
        GroupNorm.init(4, 6)
    with pytest.raises(LampyValueError, match="num_features"):
        BatchNorm2d.init(0)


def test_layer_norm_module_errors_name_the_module() -> None:
    """A LayerNorm whose parameters do not fit its normalized_shape (built directly, not
    by init) raises errors that name the module, fast path or not."""
    with lampy.Scope():
        bad_bias = LayerNorm(lampy.param(np.ones(16)), lampy.param(np.zeros(8)), (16,))
        with pytest.raises(ShapeError, match=r"^LayerNorm\(\(16,\).*bias has shape \(8,\)"):
            bad_bias(np.ones((2, 16)))
        bad_weight = LayerNorm(lampy.param(np.ones(8)), None, (16,))
        with pytest.raises(ShapeError, match=r"^LayerNorm\(\(16,\).*weight has shape \(8,\)"):
            bad_weight(np.ones((2, 16)))
