"""Learning-rate schedulers that are not per-epoch formulas: ``SequentialLR`` (schedulers
one after another), ``OneCycleLR`` (the 1cycle policy, per batch, also cycling momentum)
and ``ReduceLROnPlateau`` (driven by a metric), with PyTorch's semantics.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any, SupportsFloat

from lampy._errors import LampyValueError
from lampy.optim._optimizer import Optimizer
from lampy.optim._schedulers import LRScheduler, _check_optimizer, _copy, _lrs, _per_group

__all__ = ["OneCycleLR", "ReduceLROnPlateau", "SequentialLR"]


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at the epochs in ``milestones``.

    At a milestone the next scheduler restarts from its ``initial_lr`` (its closed form
    at epoch 0), as in PyTorch.

    Args:
        optimizer: The optimizer all the schedulers act on.
        schedulers: Schedulers already made on ``optimizer`` (not ``ReduceLROnPlateau``).
        milestones: ``len(schedulers) - 1`` increasing epoch indices.
        last_epoch: See ``lampy.optim.lr_scheduler.LRScheduler``.

    Raises:
        LampyValueError: no schedulers, a scheduler of another optimizer or a
            ``ReduceLROnPlateau``, or a wrong number of milestones.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer, "SequentialLR")
        if len(schedulers) < 1:
            raise LampyValueError("SequentialLR: expects at least one scheduler, got none.")
        for i, s in enumerate(schedulers):
            if getattr(s, "takes_metric", False):
                raise LampyValueError(
                    f"SequentialLR: the scheduler at index {i} is a {type(s).__name__}, "
                    "whose step needs a metric; it cannot be sequenced."
                )
            if getattr(s, "optimizer", None) is not optimizer:
                raise LampyValueError(
                    f"SequentialLR: the scheduler at index {i} ({type(s).__name__}) belongs "
                    "to another optimizer; all must schedule the same one."
                )
        if len(milestones) != len(schedulers) - 1:
            raise LampyValueError(
                "SequentialLR: expects one milestone fewer than schedulers, got "
                f"{len(schedulers)} schedulers and {len(milestones)} milestones."
            )
        self.optimizer = optimizer
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo(self)
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = self._schedulers[idx].get_last_lr()

    def _undo(self, sched: Any) -> None:
        """Take back the initial step that each (nested) scheduler made when constructed."""
        if sched is not self and hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self._undo(s)
        elif sched is self:
            for s in self._schedulers:
                self._undo(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self) -> None:
        """Advance the active scheduler (restarting the next one at a milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The state, with each scheduler's state in ``"_schedulers"``."""
        state = {
            k: _copy(v) for k, v in vars(self).items() if k not in ("optimizer", "_schedulers")
        }
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state and each scheduler's."""
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update({k: _copy(v) for k, v in state.items()})
        for s, sd in zip(self._schedulers, saved, strict=True):
            s.load_state_dict(sd)


_PHASE = tuple[float, str, str, str, str]  # end_step, start_lr, end_lr, start/end momentum


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith and Topin, 2017), stepped after every batch, as PyTorch's.

    The lr rises from ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start``
    of ``total_steps``, then falls to ``initial_lr / final_div_factor``. With
    ``three_phase`` it falls back to ``initial_lr`` symmetrically, then to the minimum.
    With ``cycle_momentum`` the momentum (``group["momentum"]``, or ``betas[0]`` for
    Adam-like optimizers) moves inversely between ``max_momentum`` and ``base_momentum``.
    Stepping past ``total_steps`` raises.

    Args:
        optimizer: The optimizer.
        max_lr: The peak lr, one for all groups or a list per group.
        total_steps: Number of steps of the cycle; else ``epochs * steps_per_epoch``.
        epochs: Number of epochs (with ``steps_per_epoch``).
        steps_per_epoch: Number of steps per epoch (with ``epochs``).
        pct_start: Fraction of the cycle spent raising the lr.
        anneal_strategy: ``"cos"`` or ``"linear"``.
        cycle_momentum: Cycle the momentum inversely to the lr.
        base_momentum: Lowest momentum (at the peak lr), one or a list per group.
        max_momentum: Highest momentum, one or a list per group.
        div_factor: ``initial_lr = max_lr / div_factor``.
        final_div_factor: ``min_lr = initial_lr / final_div_factor``.
        three_phase: Use the three-phase schedule of the paper.
        last_epoch: Index of the last batch; -1 starts the schedule.

    Raises:
        LampyValueError: no valid step count, ``pct_start`` outside ``[0, 1]``, an unknown
            ``anneal_strategy``, momentum cycling on an optimizer without momentum or
            betas, a list of the wrong length, or a step past ``total_steps``.
    """

    interval = "step"  # after every optimizer step (fit asks this)

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer, "OneCycleLR")
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise LampyValueError(
                    f"OneCycleLR: total_steps must be a positive int, got {total_steps!r}."
                )
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            for what, v in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not isinstance(v, int) or v <= 0:
                    raise LampyValueError(f"OneCycleLR: {what} must be a positive int, got {v!r}.")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise LampyValueError(
                "OneCycleLR: give either total_steps or both epochs and steps_per_epoch."
            )
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise LampyValueError(
                f"OneCycleLR: pct_start must be a float in [0, 1], got {pct_start!r}."
            )
        if anneal_strategy not in ("cos", "linear"):
            raise LampyValueError(
                f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}."
            )
        self.anneal_strategy = anneal_strategy
        n = self.total_steps
        up = float(pct_start * n) - 1
        self._phases: list[_PHASE] = (
            [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (
                    float(2 * pct_start * n) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                (n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
            if three_phase
            else [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        )
        max_lrs = _per_group("OneCycleLR", "max_lr", optimizer, max_lr)
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise LampyValueError(
                    f"OneCycleLR: {type(optimizer).__name__} has neither momentum nor betas; "
                    "pass cycle_momentum=False."
                )
            self.use_beta1 = "betas" in optimizer.defaults
            max_ms = _per_group("OneCycleLR", "max_momentum", optimizer, max_momentum)
            base_ms = _per_group("OneCycleLR", "base_momentum", optimizer, base_momentum)
        if last_epoch == -1:
            for i, group in enumerate(optimizer.param_groups):
                group["initial_lr"] = max_lrs[i] / div_factor
                group["max_lr"] = max_lrs[i]
                group["min_lr"] = group["initial_lr"] / final_div_factor
                if cycle_momentum:
                    if self.use_beta1:
                        group["betas"] = (max_ms[i], *group["betas"][1:])
                    else:
                        group["momentum"] = max_ms[i]
                    group["max_momentum"] = max_ms[i]
                    group["base_momentum"] = base_ms[i]
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise LampyValueError(
                f"OneCycleLR: tried to step {step} times, but total_steps is {self.total_steps}."
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    if end == start:  # PyTorch raises a bare ZeroDivisionError here
                        raise LampyValueError(
                            f"OneCycleLR: step {step} falls in phase {i + 1} of the schedule, "
                            f"which lasts 0 steps (total_steps={self.total_steps}); choose "
                            "pct_start and total_steps so that pct_start * total_steps is not "
                            "1 and no phase is empty."
                        )
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        m = self._anneal(group[m0], group[m1], pct)
                        if self.use_beta1:
                            group["betas"] = (m, *group["betas"][1:])
                        else:
                            group["momentum"] = m
                    break
                start = end
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` when a metric has stopped improving for ``patience`` epochs.

    Call ``step(metric)`` once per epoch. A metric is better than the best so far if
    (``mode="min"``) it is below ``best * (1 - threshold)`` (``threshold_mode="rel"``) or
    ``best - threshold`` (``"abs"``); mirrored for ``mode="max"``. After more than
    ``patience`` epochs without improvement each group's lr becomes ``max(lr * factor,
    min_lr)`` (unless that changes it by at most ``eps``), then ``cooldown`` epochs pass
    before bad epochs are counted again.

    Args:
        optimizer: The optimizer.
        mode: ``"min"`` or ``"max"``.
        factor: Factor of the reduction, below 1.
        patience: Number of bad epochs tolerated.
        threshold: Minimal change that counts as an improvement.
        threshold_mode: ``"rel"`` or ``"abs"``.
        cooldown: Epochs to wait after a reduction.
        min_lr: Lower bound of the lr, one or a list per group.
        eps: Reductions smaller than this are skipped.

    Raises:
        LampyValueError: ``factor >= 1``, an unknown mode, or a ``min_lr`` list of the
            wrong length.
    """

    takes_metric = True  # step(metric): fit passes val_loss (or loss)

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | list[float] = 0.0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise LampyValueError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor}.")
        _check_optimizer(optimizer, "ReduceLROnPlateau")
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr: float | None = None
            self.min_lrs = _per_group("ReduceLROnPlateau", "min_lr", optimizer, min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _lrs(optimizer)
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise LampyValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}.")
        if threshold_mode not in ("rel", "abs"):
            raise LampyValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}."
            )
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting after a reduction."""
        return self.cooldown_counter > 0

    def step(self, metrics: SupportsFloat) -> None:  # type: ignore[override]
        """Record this epoch's metric and reduce the lr if it has plateaued."""
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _lrs(self.optimizer)

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise LampyValueError(
                    f"ReduceLROnPlateau: the optimizer now has {len(groups)} param groups but "
                    f"min_lr gave {len(self.min_lrs)}; set `min_lrs` to one value per group."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs, strict=True):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                group["lr"] = new

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state taken by ``state_dict``."""
        super().load_state_dict(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
