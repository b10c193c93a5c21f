"""Callbacks of the fit loop: the protocol, early stopping, keep-best checkpoints, logging."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import Any

from lampy._errors import LampyValueError, no_scope
from lampy.autograd import Scope, current_or_none
from lampy.distributed import is_main_process
from lampy.train._checkpoint import save
from lampy.train._state import TrainState

__all__ = ["BestCheckpoint", "Callback", "EarlyStopping", "MetricsLogger", "PeakMemory"]


class Callback:
    """Hooks the fit loop calls; subclass it and override the ones you need.

    Every hook receives the ``lampy.train.TrainState`` (model, optimizer,
    epoch, step, history); setting ``state.stop = True`` ends training after the
    current epoch. ``logs`` holds the numbers of the batch (``loss``) or of the epoch
    (``loss``, ``lr``, ``val_loss``, ``val_<metric>``, ``time``...).
    """

    def on_train_begin(self, state: TrainState) -> None:
        """Before the first epoch."""

    def on_epoch_begin(self, state: TrainState) -> None:
        """Before each epoch."""

    def on_batch_end(self, state: TrainState, logs: dict[str, float]) -> None:
        """After each batch's backward pass (and optimizer step, when one was taken)."""

    def on_epoch_end(self, state: TrainState, logs: dict[str, float]) -> None:
        """After each epoch's validation, with the epoch's numbers."""

    def on_train_end(self, state: TrainState) -> None:
        """After the last epoch (also when stopped early)."""

    def numbers(self, state: TrainState) -> dict[str, float]:
        """Numbers this callback reports: shown in the progress bar after each batch, and
        added to the epoch's logs (history, summary line, ``on_epoch_end``) at its end."""
        return {}


class _Monitor:
    """Tracks the best value of one logged number."""

    def __init__(self, owner: str, monitor: str, mode: str, min_delta: float) -> None:
        if mode not in ("min", "max"):
            raise LampyValueError(f"{owner}: mode must be 'min' or 'max', got {mode!r}.")
        self.owner, self.monitor, self.mode, self.min_delta = owner, monitor, mode, min_delta
        self.best = math.inf if mode == "min" else -math.inf

    def value(self, logs: dict[str, float]) -> float:
        if self.monitor not in logs:
            raise LampyValueError(
                f"{self.owner}: monitor {self.monitor!r} is not among the epoch's numbers "
                f"{sorted(logs)}; pass valid_batches to fit for 'val_*' numbers, or monitor "
                "one of these."
            )
        return float(logs[self.monitor])

    def improved(self, value: float) -> bool:
        if self.mode == "min":
            better = value < self.best - self.min_delta
        else:
            better = value > self.best + self.min_delta
        if better:
            self.best = value
        return better


class EarlyStopping(Callback):
    """Stop training when a monitored number has not improved for ``patience`` epochs.

    Args:
        monitor: The epoch number to watch (``"val_loss"``, ``"val_accuracy"``...).
        mode: ``"min"`` if smaller is better, ``"max"`` if larger is.
        patience: Epochs without improvement to wait before stopping.
        min_delta: The least change that counts as an improvement.
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        mode: str = "min",
        patience: int = 5,
        min_delta: float = 0.0,
    ) -> None:
        self._m = _Monitor("EarlyStopping", monitor, mode, min_delta)
        self.patience = patience
        self.wait = 0
        self.stopped_epoch: int | None = None

    def on_epoch_end(self, state: TrainState, logs: dict[str, float]) -> None:
        if self._m.improved(self._m.value(logs)):
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                state.stop = True
                self.stopped_epoch = state.epoch


class BestCheckpoint(Callback):
    """Save a checkpoint whenever a monitored number reaches a new best.

    The file is written with ``lampy.save`` (atomically), with the optimizer's state and
    the epoch and monitored value as metadata. When ``lampy.distributed`` is initialized
    (``lampy.distributed.init()``), only rank 0 writes it (every rank holds the same
    weights).

    Args:
        path: The checkpoint file to (over)write.
        monitor: The epoch number to watch.
        mode: ``"min"`` or ``"max"``.
        save_optimizer: Whether to include the optimizer's state.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        monitor: str = "val_loss",
        mode: str = "min",
        save_optimizer: bool = True,
    ) -> None:
        self.path = Path(path)
        self._m = _Monitor("BestCheckpoint", monitor, mode, 0.0)
        self.save_optimizer = save_optimizer
        self.best_epoch: int | None = None

    @property
    def best(self) -> float:
        """The best value seen so far."""
        return self._m.best

    def on_epoch_end(self, state: TrainState, logs: dict[str, float]) -> None:
        value = self._m.value(logs)
        if self._m.improved(value):
            self.best_epoch = state.epoch
            opt = state.optimizer if self.save_optimizer else None
            meta = {self._m.monitor: value, "epoch": state.epoch}
            if is_main_process():  # one writer when training on several processes
                save(self.path, state.model, opt, **meta)


class MetricsLogger(Callback):
    """Append each epoch's numbers to a CSV file (``.csv``) or a JSON-lines file (else).

    The file is started afresh when training begins; each line is flushed at once, so
    it can be followed while training runs. When ``lampy.distributed`` is initialized
    (``lampy.distributed.init()``), only rank 0 writes it.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fields: list[str] | None = None

    def on_train_begin(self, state: TrainState) -> None:
        if is_main_process():
            self.path.write_text("")
        self._fields = None

    def on_epoch_end(self, state: TrainState, logs: dict[str, float]) -> None:
        if not is_main_process():  # one writer when training on several processes
            return
        row: dict[str, Any] = {"epoch": state.epoch, **logs}
        with self.path.open("a", newline="") as f:
            if self.path.suffix == ".csv":
                if self._fields is None:
                    self._fields = list(row)
                    csv.DictWriter(f, self._fields).writeheader()
                csv.DictWriter(f, self._fields, extrasaction="ignore").writerow(row)
            else:
                f.write(json.dumps(row) + "\n")


class PeakMemory(Callback):
    """Report the peak memory lampy owned during each epoch, in MiB (``peak_mib``).

    The peak is that of the scope ``fit`` runs in (its ``memory.peak_bytes``, which
    counts the step scopes inside it: values, gradient buffers, optimizer state; see
    `lampy.Scope.memory`); it is reset with `lampy.Scope.reset_peak` at the start of each
    epoch. The number appears in the progress bar, in the epoch's summary line and in
    the history.

    Args:
        key: The name of the number in the logs.

    Raises:
        NoScopeError: at the start of an epoch if no scope is open around ``fit``.
    """

    def __init__(self, key: str = "peak_mib") -> None:
        self.key = key
        self._scope: Scope | None = None

    def on_epoch_begin(self, state: TrainState) -> None:
        scope = current_or_none()
        if scope is None:
            raise no_scope("PeakMemory (a fit callback)")
        scope.reset_peak()
        self._scope = scope

    def numbers(self, state: TrainState) -> dict[str, float]:
        if self._scope is None:
            return {}
        return {self.key: self._scope.memory.peak_bytes / 2**20}
