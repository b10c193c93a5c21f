"""``lampy.nn.Buffer``: who may write a module's buffers (its forward pass through
``update``, ``load_state_dict`` through ``load``), copies that do not share them, and
state dicts, pickles and checkpoints that hold the same values and keys as before."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy import nn
from lampy._errors import LampyTypeError, ShapeError
from lampy.nn import Buffer

BUFFER_KEYS = ["running_mean", "running_var", "num_batches_tracked"]


def _x(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(2.0, 3.0, size=(8, 3)).astype(np.float32)


def test_a_buffer_is_read_only_outside_update() -> None:
    """Its value, its array conversion and an array kept from an update() block are all
    read-only; inside the block the array is written in place."""
    b = Buffer(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="read-only"):
        b.value[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(b)[0] = 1.0
    with pytest.raises(ValueError, match="WRITEABLE"):
        b.value.setflags(write=True)
    with b.update() as a:
        a += 2.0
    np.testing.assert_array_equal(b.value, [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 5.0  # the block is over: the kept array no longer writes
    with b.update() as outer, b.update() as inner:
        inner[0] = 1.0
        outer[1] = 1.0  # still open: the inner block ended first
    np.testing.assert_array_equal(b.value, [1.0, 1.0, 2.0])


def test_a_buffer_holds_a_copy_and_reads_as_its_array() -> None:
    """Buffer(values) copies; int, float, str, shape and dtype read the array."""
    values = np.arange(3.0)
    b = Buffer(values, np.float32)
    values[0] = 9.0
    assert b.value[0] == 0.0 and b.dtype == np.float32 and b.shape == (3,)
    assert b.ndim == 1 and b.size == 3 and str(b) == str(np.arange(3.0, dtype=np.float32))
    count = Buffer(np.zeros((), np.int64))
    assert int(count) == 0 and float(count) == 0.0 and repr(count) == "Buffer(array(0))"


def test_load_checks_shape_and_dtype_before_writing() -> None:
    """Buffer.load writes values of its shape castable to its dtype, nothing else."""
    b = Buffer(np.zeros(3, np.float32))
    b.load([1, 2, 3])
    np.testing.assert_array_equal(b.value, [1, 2, 3])
    with pytest.raises(ShapeError, match=r"\(2,\)"):
        b.load(np.zeros(2))
    with pytest.raises(LampyTypeError, match="complex"):
        b.load(np.zeros(3, np.complex64))
    np.testing.assert_array_equal(b.value, [1, 2, 3])
    with pytest.raises(LampyTypeError, match="Variable"), lampy.Scope():
        Buffer(lampy.param(np.zeros(2)))


def test_batch_norm_writes_its_buffers_only_in_training_mode() -> None:
    """A training forward pass updates the running statistics in their buffers (a view
    taken before sees it); evaluation reads them and changes nothing."""
    with lampy.Scope():
        bn = nn.BatchNorm1d.init(3)
        assert all(isinstance(getattr(bn, k), Buffer) for k in BUFFER_KEYS)
        view = bn.running_mean.value  # type: ignore[union-attr]
        x = _x()
        bn(x)
        np.testing.assert_allclose(view, 0.1 * x.mean(axis=0), rtol=1e-5)
        assert int(bn.num_batches_tracked) == 1  # type: ignore[arg-type]
        before = {k: v.copy() for k, v in bn.state_dict().items()}
        with nn.eval_mode(bn), lampy.no_grad():
            bn(x)
        for k, v in bn.state_dict().items():
            np.testing.assert_array_equal(v, before[k])
        with pytest.raises(ValueError, match="read-only"):
            bn.state_dict()["running_var"][0] = 0.0
        with pytest.raises(ValueError, match="read-only"):
            dict(bn.named_buffers())["num_batches_tracked"][()] = 7


def test_copies_share_buffers_deep_copies_and_pickles_do_not() -> None:
    """with_training and copy.copy share the Buffer objects (one model, two modes);
    copy.deepcopy and pickle make new ones with the same values, and a buffer shared by
    two modules in one pickle stays shared."""
    with lampy.Scope():
        bn = nn.BatchNorm1d.init(3)
        bn(_x())
        frozen = bn.with_training(False)
        assert (
            frozen.running_mean is bn.running_mean and copy.copy(bn).running_var is bn.running_var
        )
        for other in (copy.deepcopy(bn), pickle.loads(pickle.dumps(bn))):
            for k in BUFFER_KEYS:
                assert getattr(other, k) is not getattr(bn, k)
                np.testing.assert_array_equal(getattr(other, k), getattr(bn, k))
            other(_x(1))
            assert int(other.num_batches_tracked) == 2 and int(bn.num_batches_tracked) == 1  # type: ignore[arg-type]
        a, b = pickle.loads(pickle.dumps((bn, frozen)))
        assert a.running_mean is b.running_mean and not b.training


@given(seed=st.integers(0, 2**32 - 1))
def test_state_dict_round_trip_keeps_pytorch_keys_and_memory(seed: int) -> None:
    """Buffers are saved under PyTorch's keys and load into the same memory (a view
    from before sees the values); a failed load changes no buffer."""
    with lampy.Scope():
        src = nn.BatchNorm1d.init(3)
        src(_x(seed % 1000))
        dst = nn.BatchNorm1d.init(3)
        views = {k: v for k, v in dst.state_dict().items()}
        assert list(views) == ["weight", "bias", *BUFFER_KEYS]
        dst.load_state_dict({k: v.copy() for k, v in src.state_dict().items()})
        for k in BUFFER_KEYS:
            np.testing.assert_array_equal(views[k], src.state_dict()[k])
            assert np.shares_memory(views[k], dst.state_dict()[k])
        good = {k: v.copy() for k, v in dst.state_dict().items()}
        with pytest.raises(ShapeError, match="running_var"):
            dst.load_state_dict({**good, "running_mean": np.zeros(3), "running_var": np.ones(4)})
        np.testing.assert_array_equal(dst.state_dict()["running_mean"], good["running_mean"])


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    """lampy.save and lampy.load carry the buffers, 0-d counter included."""
    with lampy.Scope():
        bn = nn.BatchNorm2d.init(3)
        bn(np.random.default_rng(0).normal(size=(2, 3, 4, 4)).astype(np.float32))
        lampy.save(tmp_path / "bn.safetensors", bn)
        other = nn.BatchNorm2d.init(3)
        lampy.load(tmp_path / "bn.safetensors", other)
        for k in BUFFER_KEYS:
            np.testing.assert_array_equal(getattr(other, k), getattr(bn, k))
        assert other.state_dict()["num_batches_tracked"].shape == ()


def test_records_and_old_pickles_with_arrays_get_buffers() -> None:
    """A BatchNorm record built from arrays (or a pickle made when buffers were arrays)
    holds Buffers with copies of them; other types are refused as before."""
    with lampy.Scope():
        rm = np.zeros(3, np.float32)
        fields = {
            "weight": None,
            "bias": None,
            "running_mean": rm,
            "running_var": np.ones(3, np.float32),
            "num_batches_tracked": np.zeros((), np.int64),
            "num_features": 3,
        }
        bn = nn.BatchNorm1d(**fields)
        assert isinstance(bn.running_mean, Buffer) and not np.shares_memory(bn.running_mean, rm)
        from lampy.nn import _module

        old = _module._restore(nn.BatchNorm1d, fields)  # what an old pickle calls
        assert isinstance(old.num_batches_tracked, Buffer)
        with pytest.raises(LampyTypeError, match="running_mean must be a Buffer"):
            nn.BatchNorm1d(**{**fields, "running_mean": [0.0, 0.0, 0.0]})


@attrs.frozen(eq=False, repr=False)
class _Counter(nn.Module):
    """A module of one's own with a Buffer: it counts its calls."""

    calls: Buffer

    def forward(self, x: np.ndarray) -> np.ndarray:
        with self.calls.update() as c:
            c += 1
        return x


def test_a_buffer_field_of_ones_own_module() -> None:
    """A Buffer field is listed by named_buffers and state_dict, loads, and deep copies."""
    m = _Counter(Buffer(np.zeros((), np.int64)))
    m(np.ones(1))
    assert [k for k, _ in m.named_buffers()] == ["calls"] and int(m.state_dict()["calls"]) == 1
    m.load_state_dict({"calls": np.array(5)})
    twin = copy.deepcopy(m)
    twin(np.ones(1))
    assert int(m.calls) == 5 and int(twin.calls) == 6
