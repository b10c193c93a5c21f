"""lampy.memory_profile: per-op allocations and frees, the table, the plot, fit's PeakMemory."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lampy
from lampy import optim
from lampy.data import Batches
from lampy.train import PeakMemory, fit
from tests.train.conftest import ce_loss, classification_data, mlp


def _step(n: int = 64) -> lampy.MemoryProfile:
    """Profile one forward and backward pass of a linear layer with a tanh."""
    with lampy.Scope():
        w = lampy.param(np.ones((n, n), np.float32))
        x = lampy.const(np.ones((8, n), np.float32))
        with lampy.memory_profile() as prof, lampy.Scope():
            h = lampy.tanh(x @ w)
            loss = h.sum()
            loss.backward()
            del h, loss
    return prof


def test_events_add_up_and_every_step_array_is_freed() -> None:
    """Each event's live total is the running sum of the deltas; everything the inner
    scope allocated is freed by its exit, and only w's gradient stays live."""
    prof = _step()
    lives = np.cumsum([e.delta for e in prof.events])
    assert list(lives) == [e.live for e in prof.events]
    assert prof.live_bytes == 64 * 64 * 4  # w.grad outlives the step
    assert prof.peak_bytes == max(e.live for e in prof.events)


def test_forward_and_backward_phases() -> None:
    """Values of ops are forward events; gradient buffers are backward events; the
    forward comes first."""
    prof = _step()
    phases = [e.phase for e in prof.events if e.delta > 0]
    assert phases[0] == "forward" and "backward" in phases
    for e in prof.events:
        if e.delta > 0 and e.op in ("matmul", "tanh", "sum"):
            assert e.phase == "forward"
        if e.delta > 0 and e.op.endswith("grad"):
            assert e.phase == "backward"


def test_table_lists_ops_by_peak_contribution() -> None:
    """The table names the ops with their allocated bytes, sorted by bytes at the peak,
    and the at-peak column sums to the peak."""
    prof = _step()
    rows = prof.ops()
    assert sum(r.at_peak for r in rows) == prof.peak_bytes
    assert [r.at_peak for r in rows] == sorted((r.at_peak for r in rows), reverse=True)
    by_op = {r.op: r for r in rows}
    assert by_op["matmul"].allocated == 8 * 64 * 4 and by_op["matmul"].calls == 1
    assert by_op["tanh"].allocated == 8 * 64 * 4
    assert by_op["tanh"].freed == 8 * 64 * 4  # the scope's exit freed it
    text = prof.table()
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["op", "arrays"]
    assert any(line.startswith("matmul ") and "2.00 KiB" in line for line in lines)
    assert lines[-1].startswith("peak ")


def test_profile_counts_no_array_made_before_it() -> None:
    """Arrays allocated before the block are not counted, so an empty block is empty."""
    with lampy.Scope():
        lampy.param(np.ones(100))
        with lampy.memory_profile() as prof:
            pass
    assert prof.events == [] and prof.peak_bytes == 0
    assert "peak 0 B over 0 events" in prof.table()


def test_profiles_do_not_nest() -> None:
    """A second profile inside the first raises and leaves the first active."""
    with lampy.memory_profile() as outer:
        with pytest.raises(lampy.LampyError, match="already active"), lampy.memory_profile():
            pass
        with lampy.Scope():
            lampy.param(np.ones(10))
    assert outer.events[0].op == "param"


def test_plot_writes_a_png(tmp_path: Path) -> None:
    """plot saves a PNG file (matplotlib from the plot extra)."""
    pytest.importorskip("matplotlib")
    path = _step().plot(tmp_path / "memory.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without matplotlib, plot raises an error naming `pip install "lampy[plot]"` and
    writes nothing."""
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    prof = _step()
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(lampy.LampyError, match=r'pip install "lampy\[plot\]"'):
        prof.plot(tmp_path / "memory.png")
    assert not (tmp_path / "memory.png").exists()


def test_peak_memory_callback_logs_each_epoch(capsys: pytest.CaptureFixture[str]) -> None:
    """PeakMemory adds peak_mib to every epoch's history and summary line; it covers the
    params and their gradients, and grows with the batch size."""
    x, y = classification_data(64)
    peaks = []
    for batch in (8, 64):
        with lampy.Scope():
            model = mlp(0)
            history = fit(
                model,
                ce_loss,
                optim.Adam(model.parameters(), lr=0.01),
                Batches(x, y, batch_size=batch),
                epochs=2,
                callbacks=[PeakMemory()],
            )
            param_bytes = sum(p.value.nbytes for p in model.parameters())
        assert [("peak_mib" in e) for e in history.epochs] == [True, True]
        peak = history.epochs[-1]["peak_mib"] * 2**20
        assert peak >= 2 * param_bytes  # values and gradients
        peaks.append(peak)
    assert peaks[1] > peaks[0]
    assert "peak_mib" in capsys.readouterr().out


def test_peak_memory_callback_needs_a_scope() -> None:
    """Without a scope around fit, PeakMemory's error says to open one."""
    cb = PeakMemory()
    with pytest.raises(lampy.NoScopeError):
        cb.on_epoch_begin(None)  # type: ignore[arg-type]
