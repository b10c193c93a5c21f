"""The training loop of ``fit``: one epoch of steps, the optimizer step, gradient hygiene,
and when a learning-rate scheduler steps.

Every failure leaves the weights as the last completed optimizer step left them: the
checks (a non-finite loss, non-finite gradients, a non-finite gradient norm before
clipping) all run before ``optimizer.step``, and ``lampy.train.fit`` zeroes the
gradients when it starts and when it raises, so an unfinished step leaves nothing behind.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence, Sized
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.autograd import Scope
from lampy.nn import Module
from lampy.nn.utils import NonFiniteNormError, clip_grad_norm_
from lampy.opkit import Variable
from lampy.train._anomaly import NonFiniteError, find_nonfinite
from lampy.train._callbacks import Callback
from lampy.train._evaluate import batch_size, scalar
from lampy.train._state import TrainState

if TYPE_CHECKING:
    from lampy.distributed._training import DistributedFit

__all__ = ["EpochStats", "Schedule", "TrainLoop"]

INTERVALS = ("step", "epoch")


class Schedule:
    """When and how ``fit`` steps a learning-rate scheduler, as the scheduler declares.

    A scheduler says when it steps with its ``interval`` attribute (``"epoch"``, the
    default, or ``"step"``: after every optimizer step, as ``OneCycleLR``), and whether
    its ``step`` takes the epoch's monitored number with ``takes_metric``
    (``ReduceLROnPlateau``: it gets ``val_loss``, or ``loss`` without validation). A
    scheduler without these attributes steps once an epoch without arguments.
    """

    def __init__(self, scheduler: Any, interval: str | None) -> None:
        declared = getattr(scheduler, "interval", "epoch")
        self.interval = declared if interval is None else interval
        if self.interval not in INTERVALS:
            raise LampyValueError(
                f"fit: scheduler_interval must be 'step' or 'epoch', got {self.interval!r}."
            )
        self.scheduler = scheduler
        self.takes_metric = bool(getattr(scheduler, "takes_metric", False))
        if scheduler is not None and self.takes_metric and self.interval == "step":
            raise LampyValueError(
                f"fit: {type(scheduler).__name__} steps on an epoch's validation number, "
                "so it cannot step after every optimizer step; leave scheduler_interval "
                "unset (or 'epoch')."
            )

    def after_step(self) -> None:
        """Step a per-step scheduler (called after each optimizer step)."""
        if self.scheduler is not None and self.interval == "step":
            self.scheduler.step()

    def after_epoch(self, logs: dict[str, float]) -> None:
        """Step a per-epoch scheduler (called after validation, with the epoch's numbers)."""
        if self.scheduler is None or self.interval != "epoch":
            return
        if self.takes_metric:
            self.scheduler.step(logs.get("val_loss", logs["loss"]))
        else:
            self.scheduler.step()


class Progress:
    """A tqdm bar over one epoch's batches when asked for and on a terminal, else nothing."""

    def __init__(self, enabled: bool, total: int | None, desc: str) -> None:
        self.bar = None
        if enabled and sys.stderr.isatty():
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, desc=desc, leave=False, dynamic_ncols=True)

    def update(
        self, loss: float, lr: float, rate: float, callbacks: Sequence[Callback], state: TrainState
    ) -> None:
        if self.bar is not None:
            extra = {k: f"{v:.4g}" for cb in callbacks for k, v in cb.numbers(state).items()}
            self.bar.set_postfix(
                loss=f"{loss:.4g}", lr=f"{lr:.3g}", samples_s=f"{rate:.0f}", **extra
            )
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def first_lr(optimizer: Any) -> float:
    """The lr of the optimizer's first param group."""
    return float(optimizer.param_groups[0]["lr"])


@attrs.frozen
class EpochStats:
    """What one epoch of training measured."""

    loss: float  # mean training loss over the epoch's samples
    samples: int
    elapsed: float  # seconds

    @property
    def rate(self) -> float:
        """Samples per second."""
        return self.samples / self.elapsed if self.elapsed > 0 else 0.0


class TrainLoop:
    """The steps of one ``fit``: forward and backward of each batch in its own Scope,
    gradient accumulation, clipping, the optimizer step and the per-step schedule.

    Args:
        model: The module in training mode.
        loss_fn: ``loss_fn(model, batch)``, the batch's scalar loss Variable.
        optimizer: The optimizer over the model's parameters.
        state: The fit's ``lampy.train.TrainState`` (its ``step`` is counted here).
        schedule: When the scheduler steps.
        callbacks: Their ``on_batch_end`` runs after each batch.
        grad_accumulation, clip_grad_norm, detect_anomaly, progress, workers: As for
            ``fit``.
        dist: With ``fit(..., distributed=True)``, what averages the gradients over the
            ranks (once per accumulation group) and reduces the epoch's numbers.
    """

    def __init__(
        self,
        model: Module,
        loss_fn: Callable[[Any, tuple[Any, ...]], Variable],
        optimizer: Any,
        state: TrainState,
        schedule: Schedule,
        callbacks: Sequence[Callback],
        *,
        grad_accumulation: int,
        clip_grad_norm: float | None,
        detect_anomaly: bool,
        progress: bool,
        workers: int | str | None = None,
        dist: DistributedFit | None = None,
    ) -> None:
        self.model = model
        self.params = model.parameters()
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.state = state
        self.schedule = schedule
        self.callbacks = callbacks
        self.grad_accumulation = grad_accumulation
        self.clip_grad_norm = clip_grad_norm
        self.detect_anomaly = detect_anomaly
        self.progress = progress
        self.workers = workers
        self.dist = dist

    def zero_grad(self) -> None:
        """Zero the gradients of the model's params and of the optimizer's."""
        for p in self.params:
            p.zero_grad()
        self.optimizer.zero_grad()

    def run_epoch(self, batches: Iterable[tuple[Any, ...]], epoch: int, epochs: int) -> EpochStats:
        """Train on one pass over ``batches``: a step every ``grad_accumulation`` batches
        and after the last one."""
        total = len(batches) if isinstance(batches, Sized) else None
        bar = Progress(self.progress, total, f"epoch {epoch}/{epochs}")
        start = time.perf_counter()
        loss_sum, seen, pending, group, where = 0.0, 0, 0, 1, ""
        try:
            for i, batch in enumerate(batches):
                if pending == 0:  # a new group: the mean over its batches, when known
                    group = self.grad_accumulation
                    if total is not None:
                        group = min(group, total - i)
                where = f"epoch {epoch}, batch {i + 1} (after {self.state.step} optimizer steps)"
                value = self._train_step(batch, group, where, sync=pending + 1 == group)
                n = batch_size(batch)
                loss_sum, seen, pending = loss_sum + value * n, seen + n, pending + 1
                if pending == group:
                    self._optimizer_step(where)
                    pending = 0
                elapsed = time.perf_counter() - start
                mean, count = self._totals(loss_sum, seen)
                bar.update(
                    mean,
                    first_lr(self.optimizer),
                    count / elapsed if elapsed > 0 else 0.0,
                    self.callbacks,
                    self.state,
                )
                for cb in self.callbacks:
                    cb.on_batch_end(self.state, {"loss": value})
        finally:
            bar.close()
        if not where:
            raise LampyValueError("fit: train_batches gave no batches in this epoch.")
        if pending:  # batches without a len(): step on the leftover accumulation
            if self.dist is not None:
                self.dist.sync()
            self._optimizer_step(where)
        return EpochStats(*self._totals(loss_sum, seen), time.perf_counter() - start)

    def _totals(self, loss_sum: float, seen: int) -> tuple[float, int]:
        """The mean loss and the number of samples so far (over every rank)."""
        if self.dist is None:
            return loss_sum / seen, seen
        return self.dist.totals(loss_sum, seen)

    def _train_step(
        self, batch: tuple[Any, ...], divisor: int, where: str, sync: bool = True
    ) -> float:
        """Forward and backward of one batch in its own scope; the loss as a float."""
        with Scope(keep_values=self.detect_anomaly):  # anomaly detection reads every value
            loss = self.loss_fn(self.model, batch)
            if not isinstance(loss, Variable):
                raise LampyTypeError(
                    f"fit: loss_fn must return a scalar lampy Variable, got {type(loss).__name__}."
                )
            value = scalar("fit: loss_fn", loss)
            if not math.isfinite(value):
                raise self._nonfinite_loss(value, loss, where)
            scaled = loss if divisor == 1 else loss / divisor
            if self.dist is None:
                scaled.backward(workers=self.workers)
            else:  # averaged over the ranks once per group, with the group's last batch
                self.dist.backward(scaled, sync, self.workers)
        if self.detect_anomaly:
            bad = [
                name
                for name, p in self.model.named_parameters()
                if p.grad is not None and not np.isfinite(p.grad).all()
            ]
            if bad:
                raise NonFiniteError(
                    f"fit: gradients of {bad} are not finite at {where}, though the loss is."
                )
        return value

    def _nonfinite_loss(self, value: float, loss: Variable, where: str) -> NonFiniteError:
        cause = find_nonfinite(loss) if self.detect_anomaly else None
        if cause:
            hint = f" The first non-finite value: {cause}."
        elif not self.detect_anomaly:
            hint = " Pass detect_anomaly=True to fit to name the op that produced it."
        else:
            hint = ""
        return NonFiniteError(
            f"fit: the loss is {value} at {where}.{hint} Lower the learning rate, clip "
            "gradients (clip_grad_norm=...), or check the data."
        )

    def _optimizer_step(self, where: str) -> None:
        """Clip, step, zero the gradients and step a per-step schedule. A non-finite
        gradient norm raises before anything is changed."""
        if self.clip_grad_norm is not None:
            try:
                clip_grad_norm_(self.params, self.clip_grad_norm, error_if_nonfinite=True)
            except NonFiniteNormError as e:
                raise NonFiniteError(
                    f"fit: the gradient norm is {e.total_norm} at {where}, though the loss "
                    "is finite; the weights were not updated. Pass detect_anomaly=True to "
                    "fit to name the parameters whose gradients are not finite."
                ) from None
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.state.step += 1
        self.schedule.after_step()
