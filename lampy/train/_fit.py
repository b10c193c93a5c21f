"""The fit loop and evaluation: one Scope per step, callbacks, progress, non-finite checks."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from typing import Any

import numpy as np

import lampy
from lampy._errors import LampyTypeError, LampyValueError
from lampy.autograd._grad_mode import no_grad
from lampy.autograd._variable import Variable
from lampy.nn._module import Module
from lampy.train._anomaly import NonFiniteError, find_nonfinite
from lampy.train._callbacks import Callback

__all__ = ["History", "TrainState", "accuracy", "evaluate", "fit"]

Metric = Callable[[Any, tuple[Any, ...]], Any]
"""A metric: ``metric(model, batch)`` gives the batch's mean (a float or scalar Variable)."""


class History:
    """Per-epoch numbers of a fit: ``history["val_loss"]`` is the list over epochs.

    Attributes:
        epochs: One dict per epoch run, with ``epoch`` (1-based) and every number.
    """

    def __init__(self) -> None:
        self.epochs: list[dict[str, float]] = []

    def __getitem__(self, key: str) -> list[float]:
        if not self.epochs or key not in self.epochs[-1]:
            known = sorted(self.epochs[-1]) if self.epochs else []
            raise KeyError(f"History has no {key!r}; it has {known}.")
        return [e[key] for e in self.epochs if key in e]

    def __len__(self) -> int:
        return len(self.epochs)

    def __repr__(self) -> str:
        last = self.epochs[-1] if self.epochs else {}
        return f"History({len(self)} epochs, last: {last})"


class TrainState:
    """What callbacks see and may change while ``fit`` runs.

    Attributes:
        model: The module being trained (in training mode).
        optimizer: The optimizer.
        epoch: The current epoch, 1-based.
        step: Optimizer steps taken so far.
        history: The [History][lampy.train.History] so far.
        stop: Set it to True to stop after the current epoch.
    """

    def __init__(self, model: Module, optimizer: Any, history: History) -> None:
        self.model = model
        self.optimizer = optimizer
        self.history = history
        self.epoch = 0
        self.step = 0
        self.stop = False


def _batch_size(batch: Sequence[Any]) -> int:
    first = batch[0] if isinstance(batch, tuple | list) and batch else batch
    return len(first) if hasattr(first, "__len__") else 1


def _scalar(where: str, value: Any) -> float:
    """A metric's or loss's value as a float, with a clear error for non-scalars."""
    a = value.value if isinstance(value, Variable) else np.asarray(value)
    if a.size != 1:
        raise LampyValueError(
            f"{where} must give a scalar (one number per batch), got shape {a.shape}; "
            "reduce it, e.g. with .mean()."
        )
    return float(a.reshape(()))


def accuracy(model: Any, batch: tuple[Any, ...]) -> float:
    """The fraction of samples whose highest score is the label: for ``batch = (x, y)``
    with integer class labels ``y``, ``mean(argmax(model(x), -1) == y)``."""
    x, y = batch[0], batch[-1]
    scores = model(x)
    scores = scores.value if isinstance(scores, Variable) else np.asarray(scores)
    return float(np.mean(np.argmax(scores, axis=-1) == np.asarray(y)))


def evaluate(
    model: Module, batches: Iterable[tuple[Any, ...]], metrics: Mapping[str, Metric]
) -> dict[str, float]:
    """Each metric's mean over ``batches`` (weighted by batch size), in eval mode, under
    [lampy.no_grad][], each batch in its own Scope.

    Args:
        model: The module; it is evaluated through ``model.eval()`` (dropout off, batch
            norm on its running statistics).
        batches: Batches as tuples of arrays (a [lampy.data.Batches][]).
        metrics: Names and functions ``metric(model, batch) -> float``.
    """
    eval_model = model.eval()
    totals = dict.fromkeys(metrics, 0.0)
    count = 0
    with no_grad():
        for batch in batches:
            n = _batch_size(batch)
            with lampy.Scope():
                for name, fn in metrics.items():
                    totals[name] += _scalar(f"metric {name!r}", fn(eval_model, batch)) * n
            count += n
    if count == 0:
        raise LampyValueError("evaluate: the batches are empty; there is nothing to average.")
    return {name: total / count for name, total in totals.items()}


class _Progress:
    """A tqdm bar over one epoch's batches when asked for and on a terminal, else nothing."""

    def __init__(self, enabled: bool, total: int | None, desc: str) -> None:
        self.bar = None
        if enabled and sys.stderr.isatty():
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, desc=desc, leave=False, dynamic_ncols=True)

    def update(self, loss: float, lr: float, rate: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4g}", lr=f"{lr:.3g}", samples_s=f"{rate:.0f}")
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _lr(optimizer: Any) -> float:
    return float(optimizer.param_groups[0]["lr"])


def _nonfinite_grads(model: Module) -> list[str]:
    return [
        name
        for name, p in model.named_parameters()
        if p.grad is not None and not np.isfinite(p.grad).all()
    ]


def fit(
    model: Module,
    loss_fn: Callable[[Any, tuple[Any, ...]], Variable],
    optimizer: Any,
    train_batches: Iterable[tuple[Any, ...]],
    *,
    epochs: int,
    valid_batches: Iterable[tuple[Any, ...]] | None = None,
    metrics: Mapping[str, Metric] | None = None,
    scheduler: Any = None,
    callbacks: Sequence[Callback] = (),
    grad_accumulation: int = 1,
    clip_grad_norm: float | None = None,
    progress: bool = True,
    detect_anomaly: bool = False,
    initial_epoch: int = 0,
    scheduler_interval: str | None = None,
    distributed: bool = False,
) -> History:
    """Train ``model`` for ``epochs`` epochs; return the per-epoch numbers.

    Each step runs ``loss_fn(model, batch)`` and its backward pass inside its own
    [lampy.Scope][], so a step's graph is released before the next starts and memory
    stays flat; only the parameters' gradients outlive it. Every ``grad_accumulation``
    batches (and after an epoch's last batch) the gradients are clipped (if asked),
    the optimizer steps and the gradients are zeroed.

    Args:
        model: The module to train; ``fit`` runs it through ``model.train()`` and
            validates through ``model.eval()`` (both share its parameters).
        loss_fn: ``loss_fn(model, batch)`` returns the batch's scalar loss Variable.
        optimizer: A [lampy.optim.Optimizer][] over the model's parameters.
        train_batches: Re-iterable batches (a [lampy.data.Batches][]), one pass an epoch.
        epochs: The epoch to stop after (counting from 1; see ``initial_epoch``).
        valid_batches: Batches to compute ``val_loss`` and ``val_<metric>`` on after
            each epoch.
        metrics: Extra numbers for validation: names and ``metric(model, batch)``
            functions such as [accuracy][lampy.train.accuracy].
        scheduler: A learning-rate scheduler from ``lampy.optim.lr_scheduler``. It steps
            once an epoch, after validation (``ReduceLROnPlateau`` with ``val_loss``, or
            ``loss`` without validation), or after every optimizer step for
            ``OneCycleLR``; ``scheduler_interval="step"``/``"epoch"`` overrides.
        callbacks: [Callback][lampy.train.Callback]s (early stopping, checkpoints,
            logging, your own).
        grad_accumulation: Batches whose gradients are summed before each optimizer
            step; each batch's loss is divided by the number of batches in its group
            (``grad_accumulation``, or fewer for an epoch's last group when the batches
            have a ``len()``), so each step sees their mean.
        clip_grad_norm: Clip the gradients' total 2-norm to this before each step.
        progress: Show a progress bar per epoch (loss, lr, samples/s) when stderr is a
            terminal and tqdm is installed, and print a one-line summary per epoch.
            False prints nothing.
        detect_anomaly: When the loss (or a gradient) is not finite, also name the
            first op that produced a non-finite value (or the parameters whose
            gradients are not finite).
        initial_epoch: Epochs already done, when resuming from a checkpoint: training
            runs epochs ``initial_epoch + 1`` to ``epochs``.
        scheduler_interval: ``"epoch"`` or ``"step"``; see ``scheduler``.
        distributed: Train data-parallel over the ranks of
            [lampy.distributed.init][]'s world (see docs/distributed.md):
            ``train_batches`` must be sharded for this rank
            (``Batches(..., shard=(rank, world))``); every rank starts from rank 0's
            weights and optimizer state, gradients are averaged over the ranks
            ([lampy.distributed.DataParallel][]), the logged numbers are means over every
            rank's samples (so every rank schedules and stops alike), and only rank 0
            shows progress.

    Returns:
        The [History][lampy.train.History] of the epochs run: ``loss`` (mean training
        loss), ``lr`` (first group's, at the epoch's end), ``time`` (seconds),
        ``samples_per_s``, and ``val_loss`` / ``val_<metric>`` with validation.

    Raises:
        NonFiniteError: if a loss (or, with ``detect_anomaly``, a gradient) is nan or
            infinite; it names the epoch, batch and optimizer step.
    """
    from lampy.optim._clip import clip_grad_norm_
    from lampy.optim._schedulers_special import OneCycleLR, ReduceLROnPlateau

    if grad_accumulation < 1:
        raise LampyValueError(f"fit: grad_accumulation must be >= 1, got {grad_accumulation}.")
    if not isinstance(model, Module):
        raise LampyTypeError(f"fit: model must be a lampy.nn.Module, got {type(model).__name__}.")
    interval = scheduler_interval
    if interval is None:
        interval = "step" if isinstance(scheduler, OneCycleLR) else "epoch"
    if interval not in ("step", "epoch"):
        raise LampyValueError(
            f"fit: scheduler_interval must be 'step' or 'epoch', got {interval!r}."
        )
    plateau = isinstance(scheduler, ReduceLROnPlateau)
    history = History()
    train_model = model.train()
    state = TrainState(train_model, optimizer, history)
    params = train_model.parameters()
    val_metrics: dict[str, Metric] = {"loss": loss_fn, **(metrics or {})}
    dist = None
    if distributed:
        from lampy.distributed._training import DistributedFit

        dist = DistributedFit(train_model, optimizer, train_batches)
    show = progress and (dist is None or dist.is_main)

    def optimizer_step() -> None:
        if clip_grad_norm is not None:
            clip_grad_norm_(params, clip_grad_norm)
        optimizer.step()
        optimizer.zero_grad()
        state.step += 1
        if scheduler is not None and interval == "step":
            scheduler.step()

    def train_step(epoch: int, i: int, batch: tuple[Any, ...], divisor: int, sync: bool) -> float:
        """Forward and backward of one batch in its own scope; the loss as a float."""
        with lampy.Scope(keep_values=detect_anomaly):
            loss = loss_fn(train_model, batch)
            if not isinstance(loss, Variable):
                raise LampyTypeError(
                    f"fit: loss_fn must return a scalar lampy Variable, got {type(loss).__name__}."
                )
            value = _scalar("fit: loss_fn", loss)
            where = f"epoch {epoch}, batch {i + 1} (after {state.step} optimizer steps)"
            if not math.isfinite(value):
                cause = find_nonfinite(loss) if detect_anomaly else None
                if cause:
                    hint = f" The first non-finite value: {cause}."
                elif not detect_anomaly:
                    hint = " Pass detect_anomaly=True to fit to name the op that produced it."
                else:
                    hint = ""
                raise NonFiniteError(
                    f"fit: the loss is {value} at {where}.{hint} Lower the learning "
                    "rate, clip gradients (clip_grad_norm=...), or check the data."
                )
            scaled = loss if divisor == 1 else loss / divisor
            if dist is None:
                scaled.backward()
            else:  # averaged over the ranks once per group, with the group's last batch
                dist.backward(scaled, sync)
        if detect_anomaly:
            bad = _nonfinite_grads(train_model)
            if bad:
                raise NonFiniteError(
                    f"fit: gradients of {bad} are not finite at {where}, though the loss is."
                )
        return value

    for cb in callbacks:
        cb.on_train_begin(state)
    for epoch in range(initial_epoch + 1, epochs + 1):
        state.epoch = epoch
        for cb in callbacks:
            cb.on_epoch_begin(state)
        total = len(train_batches) if isinstance(train_batches, Sized) else None
        bar = _Progress(show, total, f"epoch {epoch}/{epochs}")
        start = time.perf_counter()
        loss_sum, seen, pending, i = 0.0, 0, 0, -1
        try:
            for i, batch in enumerate(train_batches):
                if pending == 0:  # a new group: the mean over its batches, when known
                    group = (
                        grad_accumulation if total is None else min(grad_accumulation, total - i)
                    )
                n = _batch_size(batch)
                value = train_step(epoch, i, batch, group, pending + 1 == group)
                loss_sum += value * n
                seen += n
                pending += 1
                if pending == group:
                    optimizer_step()
                    pending = 0
                elapsed = time.perf_counter() - start
                mean, count = (
                    (loss_sum / seen, seen) if dist is None else dist.totals(loss_sum, seen)
                )
                bar.update(mean, _lr(optimizer), count / elapsed if elapsed > 0 else 0.0)
                for cb in callbacks:
                    cb.on_batch_end(state, {"loss": value})
        finally:
            bar.close()
        if pending:  # batches without a len(): step on the leftover accumulation
            if dist is not None:
                dist.sync()
            optimizer_step()
        if i < 0:
            raise LampyValueError("fit: train_batches gave no batches in this epoch.")
        elapsed = time.perf_counter() - start
        mean, seen = (loss_sum / seen, seen) if dist is None else dist.totals(loss_sum, seen)
        logs: dict[str, float] = {"loss": mean}
        if valid_batches is not None:
            run = evaluate if dist is None else dist.evaluator(evaluate)
            for name, v in run(model, valid_batches, val_metrics).items():
                logs[f"val_{name}"] = v
        if scheduler is not None and interval == "epoch":
            if plateau:
                scheduler.step(logs.get("val_loss", logs["loss"]))
            else:
                scheduler.step()
        logs["lr"] = _lr(optimizer)
        logs["time"] = elapsed
        logs["samples_per_s"] = seen / elapsed if elapsed > 0 else 0.0
        history.epochs.append({"epoch": epoch, **logs})
        if show:
            shown = ", ".join(
                f"{k} {v:.4g}" for k, v in logs.items() if k not in ("time", "samples_per_s")
            )
            rate = logs["samples_per_s"]
            print(f"epoch {epoch}/{epochs}: {shown}, {elapsed:.1f}s ({rate:.0f} samples/s)")
        for cb in callbacks:
            cb.on_epoch_end(state, logs)
        if state.stop:
            break
    for cb in callbacks:
        cb.on_train_end(state)
    return history
