"""lampy.train.fit: learns, matches a hand-written loop, releases every step's graph,
accumulates gradients, runs schedulers and callbacks, and stops on non-finite losses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.optim as optim
from lampy._errors import LampyTypeError, LampyValueError
from lampy.data import Batches
from lampy.train import (
    BestCheckpoint,
    Callback,
    EarlyStopping,
    MetricsLogger,
    NonFiniteError,
    TrainState,
    accuracy,
    evaluate,
    fit,
)
from tests.train.conftest import ce_loss, classification_data, mlp


def _weights(model: Any) -> list[np.ndarray]:
    return [p.value.copy() for p in model.parameters()]


def test_fit_learns_and_reports_history() -> None:
    """A small MLP reaches high accuracy; the history has one entry per epoch."""
    x, y = classification_data(256)
    with lampy.Scope():
        model = mlp(0)
        opt = optim.Adam(model.parameters(), lr=0.05)
        train = Batches(x, y, batch_size=32, shuffle=True, rng=np.random.default_rng(0))
        hist = fit(
            model,
            ce_loss,
            opt,
            train,
            epochs=15,
            valid_batches=Batches(x, y, batch_size=64),
            metrics={"accuracy": accuracy},
            progress=False,
        )
        assert len(hist) == 15
        assert hist["epoch"] == list(range(1, 16))
        assert hist["val_accuracy"][-1] >= 0.95
        assert hist["loss"][-1] < hist["loss"][0]
        assert set(hist.epochs[0]) >= {
            "loss",
            "val_loss",
            "val_accuracy",
            "lr",
            "time",
            "samples_per_s",
        }
        with pytest.raises(KeyError, match="no 'val_f1'"):
            hist["val_f1"]


def test_fit_equals_a_hand_written_loop() -> None:
    """fit's steps are exactly: scope, loss, backward, step, zero_grad, batch by batch."""
    x, y = classification_data(64)
    with lampy.Scope():
        a, b = mlp(3), mlp(3)
        opt_a = optim.SGD(a.parameters(), lr=0.1, momentum=0.9)
        fit(a, ce_loss, opt_a, Batches(x, y, batch_size=16), epochs=2, progress=False)
        opt_b = optim.SGD(b.parameters(), lr=0.1, momentum=0.9)
        for _ in range(2):
            for batch in Batches(x, y, batch_size=16):
                with lampy.Scope():
                    ce_loss(b, batch).backward()
                opt_b.step()
                opt_b.zero_grad()
        for wa, wb in zip(_weights(a), _weights(b), strict=True):
            np.testing.assert_array_equal(wa, wb)


def test_each_step_releases_its_graph() -> None:
    """After fit, the outer scope holds only the model's parameters: no step leaked."""
    x, y = classification_data(64)
    with lampy.Scope() as outer:
        model = mlp(1)
        before = len(outer)
        fit(
            model,
            ce_loss,
            optim.SGD(model.parameters(), lr=0.1),
            Batches(x, y, batch_size=8),
            epochs=2,
            valid_batches=Batches(x, y, batch_size=32),
            progress=False,
        )
        assert len(outer) == before


def test_grad_accumulation_equals_one_big_batch() -> None:
    """Accumulating 4 batches of 8 steps like one batch of 32 (mean losses)."""
    x, y = classification_data(64)
    with lampy.Scope():
        a, b = mlp(2), mlp(2)
        fit(
            a,
            ce_loss,
            optim.SGD(a.parameters(), lr=0.5),
            Batches(x, y, batch_size=8),
            epochs=1,
            grad_accumulation=4,
            progress=False,
        )
        fit(
            b,
            ce_loss,
            optim.SGD(b.parameters(), lr=0.5),
            Batches(x, y, batch_size=32),
            epochs=1,
            progress=False,
        )
        for wa, wb in zip(_weights(a), _weights(b), strict=True):
            np.testing.assert_allclose(wa, wb, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_bounds_the_step() -> None:
    """With clipping to a tiny norm and plain SGD, a step moves weights by at most lr * norm."""
    x, y = classification_data(32)
    with lampy.Scope():
        model = mlp(4)
        w0 = np.concatenate([w.ravel() for w in _weights(model)])
        fit(
            model,
            ce_loss,
            optim.SGD(model.parameters(), lr=1.0),
            Batches(x, y, batch_size=32),
            epochs=1,
            clip_grad_norm=1e-3,
            progress=False,
        )
        w1 = np.concatenate([w.ravel() for w in _weights(model)])
        assert np.linalg.norm(w1 - w0) <= 1e-3 * (1 + 1e-4)


def test_schedulers_step_per_epoch_or_per_batch() -> None:
    """StepLR steps once an epoch, OneCycleLR once a batch, ReduceLROnPlateau on val_loss."""
    x, y = classification_data(32)
    with lampy.Scope():
        model = mlp(5)
        opt = optim.SGD(model.parameters(), lr=1.0)
        hist = fit(
            model,
            ce_loss,
            opt,
            Batches(x, y, batch_size=8),
            epochs=3,
            scheduler=optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5),
            progress=False,
        )
        assert hist["lr"] == [0.5, 0.25, 0.125]
        opt = optim.SGD(model.parameters(), lr=0.1)
        sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=8)
        fit(
            model,
            ce_loss,
            opt,
            Batches(x, y, batch_size=8),
            epochs=2,
            scheduler=sched,
            progress=False,
        )
        assert sched.last_epoch == 8
        opt = optim.SGD(model.parameters(), lr=1e-6)
        sched2 = optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5, eps=0.0)
        hist = fit(
            model,
            ce_loss,
            opt,
            Batches(x, y, batch_size=8),
            epochs=3,
            scheduler=sched2,
            valid_batches=Batches(x, y, batch_size=32),
            progress=False,
        )
        # At lr 1e-6 val_loss cannot improve by the relative threshold 1e-4: lr is cut.
        assert hist["lr"] == [1e-6, 5e-7, 2.5e-7]


def test_callbacks_see_every_hook_and_can_stop() -> None:
    """A user callback gets each hook in order and stops training by setting state.stop."""
    calls: list[str] = []

    class Spy(Callback):
        def on_train_begin(self, state: TrainState) -> None:
            calls.append("train_begin")

        def on_epoch_begin(self, state: TrainState) -> None:
            calls.append(f"epoch_begin {state.epoch}")

        def on_batch_end(self, state: TrainState, logs: dict[str, float]) -> None:
            calls.append(f"batch {state.step}")

        def on_epoch_end(self, state: TrainState, logs: dict[str, float]) -> None:
            calls.append(f"epoch_end {state.epoch}")
            state.stop = state.epoch == 2

        def on_train_end(self, state: TrainState) -> None:
            calls.append("train_end")

    x, y = classification_data(16)
    with lampy.Scope():
        model = mlp(6)
        hist = fit(
            model,
            ce_loss,
            optim.SGD(model.parameters(), lr=0.1),
            Batches(x, y, batch_size=8),
            epochs=5,
            callbacks=[Spy()],
            progress=False,
        )
    assert len(hist) == 2
    assert calls == [
        "train_begin",
        "epoch_begin 1",
        "batch 1",
        "batch 2",
        "epoch_end 1",
        "epoch_begin 2",
        "batch 3",
        "batch 4",
        "epoch_end 2",
        "train_end",
    ]


def test_early_stopping_and_best_checkpoint(tmp_path: Path) -> None:
    """EarlyStopping stops after `patience` flat epochs; BestCheckpoint keeps the best epoch."""
    x, y = classification_data(32)
    with lampy.Scope():
        model = mlp(7)
        opt = optim.SGD(model.parameters(), lr=0.0)  # no learning: val_loss never improves
        stop = EarlyStopping(monitor="val_loss", patience=2)
        best = BestCheckpoint(tmp_path / "best.safetensors")
        hist = fit(
            model,
            ce_loss,
            opt,
            Batches(x, y, batch_size=8),
            epochs=10,
            valid_batches=Batches(x, y, batch_size=32),
            callbacks=[stop, best],
            progress=False,
        )
        assert len(hist) == 3 and stop.stopped_epoch == 3
        assert best.best_epoch == 1
        meta = lampy.load(tmp_path / "best.safetensors", model)
        assert meta["epoch"] == 1 and meta["val_loss"] == pytest.approx(hist["val_loss"][0])
        with pytest.raises(LampyValueError, match="monitor 'val_acc' is not among"):
            fit(
                model,
                ce_loss,
                opt,
                Batches(x, y, batch_size=8),
                epochs=1,
                callbacks=[EarlyStopping(monitor="val_acc")],
                progress=False,
            )


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_metrics_logger_writes_a_row_per_epoch(tmp_path: Path, suffix: str) -> None:
    """MetricsLogger writes a CSV with a header, or JSON lines, one row per epoch."""
    x, y = classification_data(16)
    path = tmp_path / f"log{suffix}"
    with lampy.Scope():
        model = mlp(8)
        fit(
            model,
            ce_loss,
            optim.SGD(model.parameters(), lr=0.1),
            Batches(x, y, batch_size=8),
            epochs=3,
            callbacks=[MetricsLogger(path)],
            progress=False,
        )
    lines = path.read_text().splitlines()
    if suffix == ".csv":
        assert lines[0].startswith("epoch,loss,lr") and len(lines) == 4
    else:
        rows = [json.loads(line) for line in lines]
        assert [r["epoch"] for r in rows] == [1, 2, 3]


def test_progress_prints_one_summary_line_per_epoch(capsys: pytest.CaptureFixture[str]) -> None:
    """With progress on (and no terminal), fit prints one line per epoch and no bar."""
    x, y = classification_data(16)
    with lampy.Scope():
        model = mlp(9)
        fit(
            model,
            ce_loss,
            optim.SGD(model.parameters(), lr=0.1),
            Batches(x, y, batch_size=8),
            epochs=2,
            progress=True,
        )
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("epoch 1/2: loss ") and "lr 0.1" in lines[0]
    assert "samples/s" in lines[1] and out.err == ""


def test_evaluate_uses_eval_mode_without_gradients() -> None:
    """evaluate weights batch means by batch size, in eval mode (dropout off), no grads."""
    x, y = classification_data(50)
    with lampy.Scope():
        model = mlp(10, dropout=0.5)
        a = evaluate(model, Batches(x, y, batch_size=7), {"accuracy": accuracy})
        b = evaluate(model, Batches(x, y, batch_size=50), {"accuracy": accuracy})
        assert a["accuracy"] == pytest.approx(b["accuracy"])
        assert all(p.grad is None for p in model.parameters())
        with pytest.raises(LampyValueError, match="must give a scalar"):
            evaluate(model, Batches(x, y, batch_size=7), {"scores": lambda m, b: m(b[0])})


def test_nonfinite_loss_stops_with_the_step_and_op() -> None:
    """A nan loss raises NonFiniteError naming the batch; detect_anomaly names the op."""
    x, y = classification_data(32)
    x[20] = np.nan  # batch 3 of 8 samples

    with lampy.Scope():
        model = mlp(11)
        opt = optim.SGD(model.parameters(), lr=0.1)
        with pytest.raises(
            NonFiniteError,
            match=r"loss is nan at epoch 1, batch 3 \(after 2 optimizer steps\).*detect_anomaly",
        ):
            fit(model, ce_loss, opt, Batches(x, y, batch_size=8), epochs=1, progress=False)

        def log_loss(m: Any, batch: Any) -> lampy.Variable:
            with np.errstate(divide="ignore"):  # log(0) = -inf, from finite inputs
                return lampy.log(m(batch[0]) * 0.0).mean()

        with pytest.raises(
            NonFiniteError, match=r"op 'log' produced inf in its output float32\[8, 2\]"
        ):
            fit(
                model,
                log_loss,
                opt,
                Batches(x[:8], y[:8], batch_size=8),
                epochs=1,
                progress=False,
                detect_anomaly=True,
            )


def test_fit_argument_errors() -> None:
    """Bad accumulation counts, non-Variable losses and non-modules are clear errors."""
    x, y = classification_data(16)
    with lampy.Scope():
        model = mlp(12)
        opt = optim.SGD(model.parameters(), lr=0.1)
        batches = Batches(x, y, batch_size=8)
        with pytest.raises(LampyValueError, match="grad_accumulation must be >= 1"):
            fit(model, ce_loss, opt, batches, epochs=1, grad_accumulation=0)
        with pytest.raises(LampyTypeError, match="must return a scalar lampy Variable, got float"):
            fit(model, lambda m, b: 1.0, opt, batches, epochs=1, progress=False)  # type: ignore[arg-type, return-value]
        with pytest.raises(LampyTypeError, match=r"model must be a lampy\.nn\.Module"):
            fit(lambda v: v, ce_loss, opt, batches, epochs=1)  # type: ignore[arg-type]


def test_accumulation_groups_and_step_schedules_without_len() -> None:
    """Batches without len(): the leftover group steps the optimizer and the per-step
    schedule alike; with len(), the last partial group's step sees its batches' mean."""
    x, y = classification_data(40)

    class NoLen:
        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter(Batches(x, y, batch_size=8))

    with lampy.Scope():
        model = mlp(13)
        opt = optim.SGD(model.parameters(), lr=0.1)
        sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=6)
        fit(
            model,
            ce_loss,
            opt,
            NoLen(),
            epochs=2,
            grad_accumulation=2,
            scheduler=sched,
            progress=False,
        )
        assert sched.last_epoch == 6  # 5 batches -> 3 steps an epoch
        a, b = mlp(14), mlp(14)
        fit(
            a,
            ce_loss,
            optim.SGD(a.parameters(), lr=0.5),
            Batches(x[:24], y[:24], batch_size=8),
            epochs=1,
            grad_accumulation=4,
            progress=False,
        )  # one group of 3 batches
        fit(
            b,
            ce_loss,
            optim.SGD(b.parameters(), lr=0.5),
            Batches(x[:24], y[:24], batch_size=24),
            epochs=1,
            progress=False,
        )
        for wa, wb in zip(_weights(a), _weights(b), strict=True):
            np.testing.assert_allclose(wa, wb, rtol=1e-5, atol=1e-6)


def test_best_checkpoint_on_the_training_loss(tmp_path: Path) -> None:
    """BestCheckpoint can watch the training loss; its file records that value and the epoch."""
    x, y = classification_data(16)
    with lampy.Scope():
        model = mlp(15)
        best = BestCheckpoint(tmp_path / "b.safetensors", monitor="loss")
        hist = fit(
            model,
            ce_loss,
            optim.SGD(model.parameters(), lr=0.1),
            Batches(x, y, batch_size=8),
            epochs=3,
            callbacks=[best],
            progress=False,
        )
        assert best.best_epoch == 3
        meta = lampy.load(tmp_path / "b.safetensors", model)
        assert meta == {"loss": hist["loss"][2], "epoch": 3}


def _poisoned_loss(m: Any, batch: Any) -> lampy.Variable:
    """The cross-entropy plus ``sqrt(0 * scores)``: a finite loss whose gradients are nan
    (the derivative of sqrt at 0 is inf, times 0)."""
    return ce_loss(m, batch) + lampy.sqrt(m(batch[0]) * 0.0).sum()


def _grads_are_zero(model: Any) -> bool:
    return all(p.grad is None or not p.grad.any() for p in model.parameters())


def test_a_failed_fit_leaves_the_weights_and_zero_gradients() -> None:
    """Issue 16 #2: after a NonFiniteError about gradients (detect_anomaly) the weights are
    as before and the gradients zero, so the next fit trains as a fresh one would (it used
    to step on the leftover nan gradients and blame the data)."""
    x, y = classification_data(32)
    with lampy.Scope():
        model, twin = mlp(16), mlp(16)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        before = _weights(model)
        with pytest.raises(NonFiniteError, match=r"gradients of \[.*\] are not finite"):
            fit(
                model,
                _poisoned_loss,
                opt,
                Batches(x, y, batch_size=8),
                epochs=1,
                grad_accumulation=2,
                detect_anomaly=True,
                progress=False,
            )
        for w, b in zip(_weights(model), before, strict=True):
            np.testing.assert_array_equal(w, b)
        assert _grads_are_zero(model)
        fit(model, ce_loss, opt, Batches(x, y, batch_size=8), epochs=1, progress=False)
        twin_opt = optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
        fit(twin, ce_loss, twin_opt, Batches(x, y, batch_size=8), epochs=1, progress=False)
        for w, t in zip(_weights(model), _weights(twin), strict=True):
            np.testing.assert_array_equal(w, t)


def test_fit_zeroes_gradients_left_by_earlier_code() -> None:
    """Gradients accumulated before fit (a stray backward) do not leak into its first step."""
    x, y = classification_data(16)
    with lampy.Scope():
        model, twin = mlp(17), mlp(17)
        with lampy.Scope():
            _poisoned_loss(model, (x, y)).backward()  # nan gradients in every param
        for m in (model, twin):
            fit(
                m,
                ce_loss,
                optim.SGD(m.parameters(), lr=0.1),
                Batches(x, y, batch_size=8),
                epochs=1,
                progress=False,
            )
        for w, t in zip(_weights(model), _weights(twin), strict=True):
            np.testing.assert_array_equal(w, t)


def test_any_error_in_fit_zeroes_the_gradients_of_the_unfinished_step() -> None:
    """An exception from loss_fn midway through an accumulation group: the batches already
    backpropagated leave no gradient behind, and no step was taken."""
    x, y = classification_data(32)

    def fails_on_batch_3(m: Any, batch: Any) -> lampy.Variable:
        fails_on_batch_3.calls += 1  # type: ignore[attr-defined]
        if fails_on_batch_3.calls == 3:  # type: ignore[attr-defined]
            raise RuntimeError("a corrupt sample")
        return ce_loss(m, batch)

    fails_on_batch_3.calls = 0  # type: ignore[attr-defined]
    with lampy.Scope():
        model = mlp(18)
        before = _weights(model)
        opt = optim.SGD(model.parameters(), lr=0.1)
        with pytest.raises(RuntimeError, match="a corrupt sample"):
            fit(
                model,
                fails_on_batch_3,
                opt,
                Batches(x, y, batch_size=8),
                epochs=1,
                grad_accumulation=4,
                progress=False,
            )
        assert _grads_are_zero(model)
        for w, b in zip(_weights(model), before, strict=True):
            np.testing.assert_array_equal(w, b)


def test_clipping_nonfinite_gradients_raises_before_the_step() -> None:
    """With clip_grad_norm, a nan gradient norm is a NonFiniteError naming the step, and
    the weights are untouched (clipping would have scaled every gradient by nan)."""
    x, y = classification_data(16)
    with lampy.Scope():
        model = mlp(19)
        before = _weights(model)
        with pytest.raises(NonFiniteError, match=r"gradient norm is nan at epoch 1, batch 1"):
            fit(
                model,
                _poisoned_loss,
                optim.SGD(model.parameters(), lr=0.1),
                Batches(x, y, batch_size=8),
                epochs=1,
                clip_grad_norm=1.0,
                progress=False,
            )
        for w, b in zip(_weights(model), before, strict=True):
            np.testing.assert_array_equal(w, b)
        assert _grads_are_zero(model)


def test_schedulers_declare_when_fit_steps_them() -> None:
    """fit asks a scheduler's interval and takes_metric instead of testing its class: a
    scheduler of the user's own that declares interval="step" steps after each optimizer
    step; one without the attributes steps once an epoch."""
    assert optim.lr_scheduler.LRScheduler.interval == "epoch"
    assert optim.lr_scheduler.OneCycleLR.interval == "step"
    assert optim.lr_scheduler.ReduceLROnPlateau.takes_metric
    assert not optim.lr_scheduler.StepLR.takes_metric

    class Counting:
        def __init__(self, interval: str | None) -> None:
            if interval is not None:
                self.interval = interval
            self.steps = 0

        def step(self) -> None:
            self.steps += 1

    x, y = classification_data(32)
    with lampy.Scope():
        model = mlp(20)
        per_step, per_epoch = Counting("step"), Counting(None)
        for sched in (per_step, per_epoch):
            fit(
                model,
                ce_loss,
                optim.SGD(model.parameters(), lr=0.1),
                Batches(x, y, batch_size=8),
                epochs=2,
                scheduler=sched,
                progress=False,
            )
        assert (per_step.steps, per_epoch.steps) == (8, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)
        plateau = optim.lr_scheduler.ReduceLROnPlateau(opt)
        with pytest.raises(LampyValueError, match="ReduceLROnPlateau steps on an epoch's"):
            fit(
                model,
                ce_loss,
                opt,
                Batches(x, y, batch_size=8),
                epochs=1,
                scheduler=plateau,
                scheduler_interval="step",
            )
