"""Fault injection for checkpoints: a process killed at each point of a save, writes that
fail (file size limit, disk full). Each leaves the previous checkpoint loadable, and a
later save removes whatever temporary file a killed writer left (issue 16, issue 14)."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.io import CheckpointWriteError
from tests.faults.child import model

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and rlimits are POSIX")


def _child(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.faults.child", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _weights(seed: int) -> dict[str, np.ndarray]:
    with lampy.Scope():
        return {k: v.copy() for k, v in model(seed).state_dict().items()}


def _loaded(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    with lampy.Scope():
        m = model(99)
        meta = lampy.load(path, m)
        return {k: v.copy() for k, v in m.state_dict().items()}, meta


def _assert_weights(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert got.keys() == want.keys()
    for k, v in want.items():
        np.testing.assert_array_equal(got[k], v)


@pytest.mark.parametrize(
    ("point", "replaced"),
    [("data", False), ("fsync", False), ("replace", False), ("after", True)],
)
def test_a_save_killed_at_any_point_leaves_a_loadable_checkpoint(
    tmp_path: Path, point: str, replaced: bool
) -> None:
    """SIGKILL mid-save (mid-data, before the flush, before and after the rename): the
    file holds the previous checkpoint whole, or the new one once renamed, never a mix.
    The killed writer's temporary file is removed by the next save (it used to stay, the
    size of the model, forever)."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        lampy.save(path, model(1), epoch=1)
    child = _child("save", str(path), point)
    assert child.stdout is not None
    ready = child.stdout.readline()
    assert ready == b"ready\n", child.communicate()[1].decode()
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    weights, meta = _loaded(path)
    _assert_weights(weights, _weights(2 if replaced else 1))
    assert meta == {"epoch": 2 if replaced else 1}
    left = sorted(p.name for p in tmp_path.iterdir())
    if not replaced:
        assert len(left) == 2 and left[0].startswith(f".ckpt.safetensors.{child.pid}@")
    with lampy.Scope():
        lampy.save(path, model(3), epoch=3)
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.safetensors"]
    _assert_weights(_loaded(path)[0], _weights(3))


def test_temporaries_of_other_targets_and_live_writers_are_left_alone(tmp_path: Path) -> None:
    """Cleaning up removes only this target's temporaries whose writer is gone: not those
    of a live process (it may be writing), of another file, or of another machine."""
    path = tmp_path / "ckpt.safetensors"
    host = socket.gethostname()
    # a pid above Linux's largest (2**22) cannot belong to a live process
    live = tmp_path / f".ckpt.safetensors.{os.getppid()}@{host}.abcd1234.tmp"
    other_file = tmp_path / f".other.safetensors.{2**22 + 12345}@{host}.abcd1234.tmp"
    other_host = tmp_path / f".ckpt.safetensors.{2**22 + 12345}@not-{host}.abcd1234.tmp"
    dead = tmp_path / f".ckpt.safetensors.{2**22 + 12345}@{host}.abcd1234.tmp"
    for p in (live, other_file, other_host, dead):
        p.write_bytes(b"partial")
    with lampy.Scope():
        lampy.save(path, model(1))
    assert not dead.exists()
    assert live.exists() and other_file.exists() and other_host.exists()


def test_a_file_size_limit_is_a_clear_error_and_keeps_the_old_file(tmp_path: Path) -> None:
    """EFBIG (RLIMIT_FSIZE below the checkpoint's size, in a child process): a
    CheckpointWriteError, a LampyError and an OSError with errno EFBIG, naming the path;
    the previous checkpoint is intact and no temporary file is left."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        lampy.save(path, model(1), epoch=1)
    before = path.read_bytes()
    child = _child("fsize", str(path), "4096")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err.decode()
    result = json.loads(out)
    assert result["error"] == "CheckpointWriteError" and result["lampy"] and result["oserror"]
    assert result["errno"] == errno.EFBIG
    assert f"could not write '{path}'" in result["message"]
    assert "the previous file, if any, is unchanged" in result["message"]
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.safetensors"]


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_a_full_disk_is_a_clear_error_and_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """ENOSPC while writing the data or at the flush to disk (injected): a
    CheckpointWriteError with errno ENOSPC naming the path; the previous checkpoint is
    intact and no temporary file is left."""
    path = tmp_path / "ckpt.safetensors"
    with lampy.Scope():
        m = model(1)
        lampy.save(path, m, epoch=1)
        before = path.read_bytes()

        def full(*args: Any) -> Any:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        if where == "fsync":
            monkeypatch.setattr(os, "fsync", full)
        else:
            fdopen = os.fdopen

            class Full:
                def __init__(self, f: Any) -> None:
                    self.f = f

                def write(self, chunk: Any) -> int:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

                def __enter__(self) -> Full:
                    return self

                def __exit__(self, *exc: object) -> None:
                    self.f.close()

            monkeypatch.setattr(os, "fdopen", lambda *a, **k: Full(fdopen(*a, **k)))
        with pytest.raises(CheckpointWriteError, match=r"No space left on device") as info:
            lampy.save(path, m, epoch=2)
        monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.safetensors"]
