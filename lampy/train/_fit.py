"""``fit``: the epochs of a training run, with validation, schedules, callbacks and history.

The steps of an epoch live in ``_loop.py`` (``TrainLoop``), evaluation in
``_evaluate.py``, and what a fit records and shares in ``_state.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lampy._errors import LampyTypeError, LampyValueError
from lampy._malloc import tune_malloc
from lampy.nn import Module
from lampy.opkit import Variable
from lampy.optim import Optimizer
from lampy.optim.lr_scheduler import LRScheduler
from lampy.train._callbacks import Callback
from lampy.train._evaluate import Metric, evaluate
from lampy.train._loop import EpochStats, Schedule, TrainLoop, first_lr
from lampy.train._state import History, TrainState

__all__ = ["fit"]


def fit(
    model: Module,
    loss_fn: Callable[[Any, tuple[Any, ...]], Variable],
    optimizer: Optimizer,
    train_batches: Iterable[tuple[Any, ...]],
    *,
    epochs: int,
    valid_batches: Iterable[tuple[Any, ...]] | None = None,
    metrics: Mapping[str, Metric] | None = None,
    scheduler: LRScheduler | None = None,
    callbacks: Sequence[Callback] = (),
    grad_accumulation: int = 1,
    clip_grad_norm: float | None = None,
    progress: bool = True,
    detect_anomaly: bool = False,
    initial_epoch: int = 0,
    scheduler_interval: str | None = None,
    workers: int | str | None = None,
    distributed: bool = False,
) -> History:
    """Train ``model`` for ``epochs`` epochs; return the per-epoch numbers.

    Each step runs ``loss_fn(model, batch)`` and its backward pass inside its own
    ``lampy.Scope``, so a step's graph is released before the next starts and memory
    stays flat; only the parameters' gradients outlive it. Every ``grad_accumulation``
    batches (and after an epoch's last batch) the gradients are clipped (if asked),
    the optimizer steps and the gradients are zeroed.

    The gradients are zeroed when ``fit`` starts and when it raises, so gradients left
    by earlier code or by a failed run never reach a step. Every check (non-finite loss,
    non-finite gradients, non-finite gradient norm) runs before the optimizer steps: when
    ``fit`` raises, the weights are those of the last completed step.

    Args:
        model: The module to train; ``fit`` runs it through ``model.with_training(True)`` and
            validates through ``model.with_training(False)`` (both share its parameters).
        loss_fn: ``loss_fn(model, batch)`` returns the batch's scalar loss Variable.
        optimizer: A ``lampy.optim.Optimizer`` over the model's parameters.
        train_batches: Re-iterable batches (a ``lampy.data.Batches``), one pass an epoch.
        epochs: The epoch to stop after (counting from 1; see ``initial_epoch``).
        valid_batches: Batches to compute ``val_loss`` and ``val_<metric>`` on after
            each epoch.
        metrics: Extra numbers for validation: names and ``metric(model, batch)``
            functions such as ``lampy.train.accuracy``.
        scheduler: A learning-rate scheduler, a
            ``lampy.optim.lr_scheduler.LRScheduler``. It steps when it declares (its
            ``interval``): once an epoch after validation for most
            schedules, after every optimizer step for ``OneCycleLR``;
            ``ReduceLROnPlateau`` (``takes_metric``) steps on ``val_loss``, or ``loss``
            without validation.
        callbacks: ``lampy.train.Callback`` objects (early stopping, checkpoints,
            logging, your own).
        grad_accumulation: Batches whose gradients are summed before each optimizer
            step; each batch's loss is divided by the number of batches in its group
            (``grad_accumulation``, or fewer for an epoch's last group when the batches
            have a ``len()``), so each step sees their mean.
        clip_grad_norm: Clip the gradients' total 2-norm to this before each step; a
            non-finite norm raises ``NonFiniteError`` instead of stepping.
        progress: Show a progress bar per epoch (loss, lr, samples/s) when stderr is a
            terminal and tqdm is installed, and print a one-line summary per epoch.
            False prints nothing.
        detect_anomaly: When the loss is not finite, also name the first op that
            produced a non-finite value; and check every gradient after each batch,
            naming the parameters whose gradients are not finite.
        initial_epoch: Epochs already done, when resuming from a checkpoint: training
            runs epochs ``initial_epoch + 1`` to ``epochs``.
        scheduler_interval: ``"epoch"`` or ``"step"``, to override when the scheduler
            steps.
        workers: Threads for each backward pass (see `lampy.backward`); None takes
            `lampy.get_num_workers`.
        distributed: Train data-parallel over the ranks of ``lampy.distributed.init()``'s
            world (see docs/distributed.md): ``train_batches`` must be sharded for this
            rank (``Batches(..., shard=(rank, world))``); every rank starts from rank 0's
            weights and optimizer state, gradients are averaged over the ranks
            (``lampy.distributed.DataParallel``), the logged numbers are means over every
            rank's samples (so every rank schedules and stops alike), and only rank 0
            shows progress.

    Returns:
        The ``lampy.train.History`` of the epochs run: ``loss`` (mean training
        loss), ``lr`` (first group's, at the epoch's end), ``time`` (seconds),
        ``samples_per_s``, and ``val_loss`` / ``val_<metric>`` with validation.

    Raises:
        NonFiniteError: if a loss (or, with ``detect_anomaly``, a gradient; or, with
            ``clip_grad_norm``, the gradient norm) is nan or infinite; it names the
            epoch, batch and optimizer step.
    """
    if grad_accumulation < 1:
        raise LampyValueError(f"fit: grad_accumulation must be >= 1, got {grad_accumulation}.")
    if not isinstance(model, Module):
        raise LampyTypeError(f"fit: model must be a lampy.nn.Module, got {type(model).__name__}.")
    schedule = Schedule(scheduler, scheduler_interval)
    tune_malloc()  # a training loop frees and re-allocates its graph every step
    history = History()
    train_model = model.with_training(True)
    state = TrainState(train_model, optimizer, history)
    dist = None
    if distributed:
        from lampy.distributed._training import DistributedFit

        dist = DistributedFit(train_model, optimizer, train_batches)
    progress = progress and (dist is None or dist.is_main)
    loop = TrainLoop(
        train_model,
        loss_fn,
        optimizer,
        state,
        schedule,
        callbacks,
        grad_accumulation=grad_accumulation,
        clip_grad_norm=clip_grad_norm,
        detect_anomaly=detect_anomaly,
        progress=progress,
        workers=workers,
        dist=dist,
    )
    val_metrics: dict[str, Metric] = {"loss": loss_fn, **(metrics or {})}
    loop.zero_grad()
    try:
        for cb in callbacks:
            cb.on_train_begin(state)
        for epoch in range(initial_epoch + 1, epochs + 1):
            state.epoch = epoch
            for cb in callbacks:
                cb.on_epoch_begin(state)
            stats = loop.run_epoch(train_batches, epoch, epochs)
            run = evaluate if dist is None else dist.evaluator(evaluate)
            logs = _epoch_logs(stats, model, valid_batches, val_metrics, schedule, optimizer, run)
            for cb in callbacks:
                logs.update(cb.numbers(state))
            history.epochs.append({"epoch": epoch, **logs})
            if progress:
                _print_summary(epoch, epochs, logs)
            for cb in callbacks:
                cb.on_epoch_end(state, logs)
            if state.stop:
                break
        for cb in callbacks:
            cb.on_train_end(state)
    except BaseException:
        loop.zero_grad()  # an unfinished step leaves no gradient behind
        raise
    return history


def _epoch_logs(
    stats: EpochStats,
    model: Module,
    valid_batches: Iterable[tuple[Any, ...]] | None,
    val_metrics: Mapping[str, Metric],
    schedule: Schedule,
    optimizer: Any,
    run: Callable[..., dict[str, float]],
) -> dict[str, float]:
    """The epoch's numbers: training loss, validation (by ``run``: ``evaluate``, or its
    reduction over the ranks), then the lr after the epoch's scheduler step, and timing."""
    logs: dict[str, float] = {"loss": stats.loss}
    if valid_batches is not None:
        for name, v in run(model, valid_batches, val_metrics).items():
            logs[f"val_{name}"] = v
    schedule.after_epoch(logs)
    logs["lr"] = first_lr(optimizer)
    logs["time"] = stats.elapsed
    logs["samples_per_s"] = stats.rate
    return logs


def _print_summary(epoch: int, epochs: int, logs: dict[str, float]) -> None:
    shown = ", ".join(f"{k} {v:.4g}" for k, v in logs.items() if k not in ("time", "samples_per_s"))
    print(
        f"epoch {epoch}/{epochs}: {shown}, {logs['time']:.1f}s "
        f"({logs['samples_per_s']:.0f} samples/s)"
    )
