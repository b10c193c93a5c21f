"""Checkpoints: safetensors files other readers load, atomic writes, validation that
changes nothing on failure, and resuming a run exactly where it stopped."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import lampy
import lampy.optim as optim
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.data import Batches
from lampy.io import CheckpointError, read_safetensors, write_safetensors
from lampy.train import fit
from tests.train.conftest import ce_loss, classification_data, mlp


def _state(model: Any) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in model.state_dict().items()}


def _trained(seed: int) -> tuple[Any, Any]:
    x, y = classification_data(32)
    model = mlp(seed)
    opt = optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
    fit(model, ce_loss, opt, Batches(x, y, batch_size=8), epochs=1, progress=False)
    return model, opt


def test_round_trip_restores_weights_optimizer_and_metadata(tmp_path: Path) -> None:
    """save then load into fresh objects gives equal weights, optimizer state, metadata."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        model, opt = _trained(0)
        lampy.save(
            path, model, opt, epoch=3, note="hi", rng=np.random.default_rng(5).bit_generator.state
        )
        other = mlp(99)
        opt2 = optim.Adam(other.parameters(), lr=0.5, amsgrad=True)
        meta = lampy.load(path, other, opt2)
        assert meta["epoch"] == 3 and meta["note"] == "hi"
        assert meta["rng"] == np.random.default_rng(5).bit_generator.state
        for k, v in _state(model).items():
            np.testing.assert_array_equal(other.state_dict()[k], v)
        sd, sd2 = opt.state_dict(), opt2.state_dict()
        assert sd2["param_groups"] == sd["param_groups"]
        for i, s in sd["state"].items():
            for key, v in s.items():
                np.testing.assert_array_equal(sd2["state"][i][key], v)


def test_files_are_standard_safetensors(tmp_path: Path) -> None:
    """The safetensors package reads lampy's files (weights under PyTorch's names), and
    lampy reads files the package wrote."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        model, opt = _trained(1)
        lampy.save(path, model, opt)
        loaded = load_file(path)
        for k, v in model.state_dict().items():
            np.testing.assert_array_equal(loaded[k], v)
        assert any(k.startswith("__optimizer__.state.") for k in loaded)
        theirs = tmp_path / "theirs.safetensors"
        save_file({k: v.copy() for k, v in model.state_dict().items()}, theirs)
        other = mlp(2)
        assert lampy.load(theirs, other) == {}
        for k, v in model.state_dict().items():
            np.testing.assert_array_equal(other.state_dict()[k], v)


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash during a save leaves the previous checkpoint whole and no temporary file."""
    path = tmp_path / "ckpt.safetensors"
    write_safetensors(path, {"a": np.arange(3.0)})
    before = path.read_bytes()

    class Boom(Exception):
        pass

    def crash(*args: Any) -> None:
        raise Boom

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(Boom):
        write_safetensors(path, {"a": np.zeros(1000)})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.safetensors"]


def test_mismatched_checkpoints_are_clear_errors_and_change_nothing(tmp_path: Path) -> None:
    """Other shapes, other names, other optimizers or no optimizer state: clear errors,
    and the module and optimizer keep their state."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        model, opt = _trained(3)
        lampy.save(path, model, opt)
        from lampy import nn
        from lampy.nn._linear import Linear

        rng = np.random.default_rng(0)
        wide = nn.Sequential.init(Linear.init(4, 9, rng=rng), Linear.init(9, 2, rng=rng))
        snap = _state(wide)
        with pytest.raises(LampyValueError, match="keys do not match"):
            lampy.load(path, wide)
        target, target_opt = _trained(4)
        snap, opt_snap = _state(target), target_opt.state_dict()
        with pytest.raises(CheckpointError, match="state of a Adam optimizer, not of a SGD"):
            lampy.load(path, target, optim.SGD(target.parameters(), lr=0.1))
        plain = tmp_path / "plain.safetensors"
        lampy.save(plain, model)
        with pytest.raises(CheckpointError, match="holds no optimizer state"):
            lampy.load(plain, target, target_opt)
        bad = {k: v for k, v in read_safetensors(path)[0].items()}
        bad["0.weight"] = np.zeros((8, 5), np.float32)
        write_safetensors(tmp_path / "bad.safetensors", bad, read_safetensors(path)[1])
        with pytest.raises(ShapeError, match=r"'0\.weight' has shape \(8, 4\)"):
            lampy.load(tmp_path / "bad.safetensors", target, target_opt)
        for k, v in snap.items():
            np.testing.assert_array_equal(target.state_dict()[k], v)
        assert target_opt.state_dict()["param_groups"] == opt_snap["param_groups"]
        with pytest.raises(LampyTypeError, match="not JSON-serialisable"):
            lampy.save(path, model, when=object())


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"abc", "not a safetensors file"),
        (None, "has 4 bytes, but shape"),
        ((10**9).to_bytes(8, "little") + b"{}", "truncated"),
        ((4).to_bytes(8, "little") + b"nope", "not valid JSON"),
        ((2).to_bytes(8, "little") + b"[]", "not a JSON object"),
    ],
)
def test_malformed_files_are_rejected(tmp_path: Path, data: bytes | None, match: str) -> None:
    """Truncated files, bad JSON and tensors that do not fit their bytes are CheckpointErrors."""
    path = tmp_path / "x.safetensors"
    if data is None:
        header = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}).encode()
        data = len(header).to_bytes(8, "little") + header + b"\0" * 4
    path.write_bytes(data)
    with pytest.raises(CheckpointError, match=match):
        read_safetensors(path)


def _run(path: Path | None, epochs: int, stop_after: int | None = None) -> list[np.ndarray]:
    """Train with dropout, shuffling, Adam and a schedule; optionally stop, checkpoint,
    rebuild everything from other seeds, load, and resume."""
    x, y = classification_data(48)
    with lampy.Scope():
        data_rng = np.random.default_rng(1)
        model = mlp(7, dropout=0.3)
        opt = optim.Adam(model.parameters(), lr=0.02)
        sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
        batches = Batches(x, y, batch_size=8, shuffle=True, rng=data_rng)
        drop_rng = model.layers[2].rng
        if stop_after is None:
            fit(model, ce_loss, opt, batches, epochs=epochs, scheduler=sched, progress=False)
            return [p.value.copy() for p in model.parameters()]
        assert path is not None
        fit(model, ce_loss, opt, batches, epochs=stop_after, scheduler=sched, progress=False)
        lampy.save(
            path,
            model,
            opt,
            epoch=stop_after,
            scheduler=sched.state_dict(),
            data_rng=data_rng.bit_generator.state,
            drop_rng=drop_rng.bit_generator.state,
        )
    with lampy.Scope():  # a new process, in effect: everything rebuilt from other seeds
        data_rng = np.random.default_rng(100)
        model = mlp(70, dropout=0.3)
        opt = optim.Adam(model.parameters(), lr=0.5)
        sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
        meta = lampy.load(path, model, opt)
        sched.load_state_dict(meta["scheduler"])
        data_rng.bit_generator.state = meta["data_rng"]
        model.layers[2].rng.bit_generator.state = meta["drop_rng"]
        batches = Batches(x, y, batch_size=8, shuffle=True, rng=data_rng)
        fit(
            model,
            ce_loss,
            opt,
            batches,
            epochs=epochs,
            initial_epoch=meta["epoch"],
            scheduler=sched,
            progress=False,
        )
        return [p.value.copy() for p in model.parameters()]


def test_resuming_from_a_checkpoint_continues_exactly(tmp_path: Path) -> None:
    """4 epochs straight equal 2 epochs, save, rebuild, load, and 2 more: bit for bit."""
    straight = _run(None, 4)
    resumed = _run(tmp_path / "mid.safetensors", 4, stop_after=2)
    for a, b in zip(straight, resumed, strict=True):
        np.testing.assert_array_equal(a, b)


def test_zero_dim_arrays_and_batch_norm_buffers_round_trip(tmp_path: Path) -> None:
    """0-d arrays stay 0-d, so a model with BatchNorm (num_batches_tracked) reloads."""
    from lampy import nn

    path = tmp_path / "x.safetensors"
    write_safetensors(path, {"a": np.array(7, np.int64), "b": np.ones((2, 3))[:, ::2]})
    tensors, _ = read_safetensors(path)
    assert tensors["a"].shape == () and tensors["a"] == 7
    np.testing.assert_array_equal(tensors["b"], np.ones((2, 2)))
    with lampy.Scope():
        bn = nn.BatchNorm1d.init(4)
        changed = {"num_batches_tracked": np.array(5), "running_mean": np.arange(1.0, 5.0)}
        bn.load_state_dict({**bn.state_dict(), **changed})  # buffers change by loading
        lampy.save(path, bn)
        other = nn.BatchNorm1d.init(4)
        lampy.load(path, other)
        assert int(other.num_batches_tracked) == 5
        np.testing.assert_array_equal(other.running_mean, [1, 2, 3, 4])


def test_files_get_the_usual_permissions(tmp_path: Path) -> None:
    """A checkpoint is readable by others as any file the process writes (not 0600)."""
    path = tmp_path / "x.safetensors"
    write_safetensors(path, {"a": np.zeros(1)})
    mask = os.umask(0o022)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_malformed_lampy_metadata_is_a_checkpoint_error(tmp_path: Path) -> None:
    """Broken optimizer or user metadata: CheckpointError, and the module is unchanged."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        model, opt = _trained(5)
        lampy.save(path, model, opt)
        tensors, meta = read_safetensors(path)
        target, target_opt = _trained(6)
        snap = _state(target)
        for key, bad in [
            ("lampy.optimizer", "{not json"),
            ("lampy.optimizer", '{"class": 1}'),
            ("lampy.metadata", "[1, 2"),
        ]:
            write_safetensors(path, tensors, {**meta, key: bad})
            with pytest.raises(CheckpointError, match="malformed"):
                lampy.load(path, target, target_opt)
        for k, v in snap.items():
            np.testing.assert_array_equal(target.state_dict()[k], v)


def _edit_optimizer_json(path: Path, edit: Any) -> None:
    """Rewrite ``path`` with its lampy.optimizer metadata changed by ``edit(info)``."""
    tensors, meta = read_safetensors(path)
    info = json.loads(meta["lampy.optimizer"])
    edit(info)
    write_safetensors(path, tensors, {**meta, "lampy.optimizer": json.dumps(info)})


def _set_step(value: Any) -> Any:
    return lambda info: info["state"]["0"].__setitem__("step", value)


def _set_hyper(key: str, value: Any) -> Any:
    return lambda info: info["param_groups"][0].__setitem__(key, value)


@pytest.mark.parametrize(
    ("edit", "error", "match"),
    [
        (_set_step("abc"), LampyTypeError, r"state 'step' of param 0 is 'abc'.*whole number"),
        (_set_step(-5), LampyValueError, r"state 'step' of param 0 is -5.*>= 0"),
        (_set_step(2.5), LampyTypeError, r"state 'step' of param 0 is 2\.5"),
        (_set_step(True), LampyTypeError, r"state 'step' of param 0 is True"),
        (_set_step(None), LampyTypeError, r"state 'step' of param 0 is None"),
        (_set_hyper("lr", "abc"), LampyTypeError, r"'lr' of param group 0 is 'abc' \(str\)"),
        (_set_hyper("eps", None), LampyTypeError, r"'eps' of param group 0 is None"),
        (_set_hyper("lr", -1.0), LampyValueError, r"invalid lr value -1\.0"),
        (_set_hyper("betas", [0.9]), LampyTypeError, r"'betas' of param group 0 is \(0\.9,\)"),
        (_set_hyper("betas", [0.9, 1.5]), LampyValueError, r"beta parameter at index 1: 1\.5"),
        (_set_hyper("amsgrad", "abc"), LampyTypeError, r"'amsgrad' of param group 0 is 'abc'"),
        (
            _set_hyper("weight_decay", [1]),
            LampyTypeError,
            r"'weight_decay' of param group 0 is \(1,\)",
        ),
    ],
)
def test_hand_edited_optimizer_state_is_rejected_before_anything_changes(
    tmp_path: Path, edit: Any, error: type[Exception], match: str
) -> None:
    """Issue 16 #5: a step count or hyper-parameter of the wrong type or range in a
    checkpoint is a lampy error naming it (was a raw ValueError/TypeError, or for
    "step": -5 a load that failed at the next step with a complex-dtype error); the
    module and the optimizer keep their state."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        model, opt = _trained(8)
        lampy.save(path, model, opt)
        _edit_optimizer_json(path, edit)
        target, target_opt = _trained(9)
        snap, opt_snap = _state(target), target_opt.state_dict()
        with pytest.raises(error, match=match):
            lampy.load(path, target, target_opt)
        for k, v in snap.items():
            np.testing.assert_array_equal(target.state_dict()[k], v)
        after = target_opt.state_dict()
        assert after["param_groups"] == opt_snap["param_groups"]
        for i, s in opt_snap["state"].items():
            for key, v in s.items():
                np.testing.assert_array_equal(after["state"][i][key], v)


@pytest.mark.parametrize("entry", ["0.weight", "__optimizer__.state.0.exp_avg_sq"])
def test_values_that_overflow_float32_are_an_error_naming_the_tensor(
    tmp_path: Path, entry: str
) -> None:
    """Issue 16 #5: a float64 checkpoint holding 1e300 loads into a float32 model or
    optimizer as an error naming the tensor (it used to load inf with a warning); the
    module and the optimizer keep their state."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        model, opt = _trained(10)
        lampy.save(path, model, opt)
        tensors, meta = read_safetensors(path)
        tensors = {
            k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in tensors.items()
        }
        tensors[entry] = tensors[entry].copy()
        tensors[entry].flat[1] = 1e300
        write_safetensors(path, tensors, meta)
        snap, opt_snap = _state(model), opt.state_dict()
        name = entry.removeprefix("__optimizer__.state.0.")
        with pytest.raises(
            LampyValueError, match=rf"'{name}'.*1 value\(s\) that do not fit float32"
        ):
            lampy.load(path, model, opt)
        for k, v in snap.items():
            np.testing.assert_array_equal(model.state_dict()[k], v)
        for key, v in opt_snap["state"][0].items():
            np.testing.assert_array_equal(opt.state_dict()["state"][0][key], v)


def test_save_and_load_accept_pytorchs_argument_order(tmp_path: Path) -> None:
    """Issue 14: lampy.save(model, path) (torch.save's order) writes the same file as
    lampy.save(path, model); load takes both orders; anything else is a clear error."""
    a, b = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    with lampy.Scope():
        model, opt = _trained(11)
        lampy.save(a, model, opt, epoch=1)
        lampy.save(model, str(b), opt, epoch=1)
        assert a.read_bytes() == b.read_bytes()
        other, other_opt = _trained(12)
        assert lampy.load(other, b, other_opt) == {"epoch": 1}
        for k, v in _state(model).items():
            np.testing.assert_array_equal(other.state_dict()[k], v)
        with pytest.raises(LampyTypeError, match=r"got a dict and a PosixPath.*not its state_dict"):
            lampy.save(model.state_dict(), a)  # type: ignore[arg-type]
        with pytest.raises(LampyTypeError, match=r"load takes a path and a lampy\.nn\.Module"):
            lampy.load(a, b)  # type: ignore[arg-type]


def test_saving_to_a_symlink_writes_through_it(tmp_path: Path) -> None:
    """Issue 16 #5: saving to a symbolic link replaces the file it points to and the link
    stays a link (it used to become a regular file); a dangling link creates its target."""
    real = tmp_path / "runs" / "ckpt.safetensors"
    real.parent.mkdir()
    link = tmp_path / "latest.safetensors"
    link.symlink_to(real)
    with lampy.Scope():
        model, opt = _trained(13)
        lampy.save(link, model, opt)  # dangling: creates runs/ckpt.safetensors
        assert link.is_symlink() and real.is_file()
        real.chmod(0o640)
        lampy.save(link, model, opt, epoch=2)
        assert link.is_symlink() and os.readlink(link) == str(real)
        assert lampy.load(real, model, opt) == {"epoch": 2}
        assert real.stat().st_mode & 0o777 == 0o640  # a replaced file keeps its mode
        assert sorted(p.name for p in real.parent.iterdir()) == ["ckpt.safetensors"]
