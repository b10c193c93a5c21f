"""Learning-rate schedulers with PyTorch's semantics: the base ``LRScheduler`` and the
per-epoch schedules ``LambdaLR``, ``StepLR``, ``MultiStepLR``, ``ExponentialLR``,
``LinearLR`` and ``CosineAnnealingLR``.

A scheduler changes ``group["lr"]`` of its optimizer's param groups. Constructing one
performs its initial step (``last_epoch`` goes from -1 to 0) and records each group's
``initial_lr``; each call of ``lampy.optim.lr_scheduler.LRScheduler.step`` moves the
schedule on by one (call it after ``optimizer.step()``). The chainable schedules compute
the next lr from the current ``group["lr"]`` as PyTorch does (so several schedulers may
act on one optimizer), which reproduces PyTorch's sequence of floats.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Literal

from lampy._errors import LampyTypeError, LampyValueError
from lampy.optim._optimizer import Optimizer

__all__ = [
    "CosineAnnealingLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "StepLR",
]


def _check_optimizer(optimizer: Any, name: str) -> None:
    if not isinstance(optimizer, Optimizer):
        raise LampyTypeError(
            f"{name}: expected a lampy.optim.Optimizer, got a {type(optimizer).__name__}."
        )


def _lrs(optimizer: Optimizer) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


class LRScheduler:
    """Base class of learning-rate schedulers (PyTorch's ``torch.optim.lr_scheduler.LRScheduler``).

    Subclasses implement ``get_lr()``: the lrs of the groups at epoch ``last_epoch``,
    computed when ``step`` has just advanced it; optionally ``_get_closed_form_lr()``.

    Args:
        optimizer: The optimizer whose ``lr`` is scheduled.
        last_epoch: The index of the last epoch; -1 starts the schedule. A value >= 0
            resumes it, and needs ``"initial_lr"`` in every param group (as a loaded
            optimizer state has).

    Attributes:
        optimizer: The optimizer.
        base_lrs: The ``initial_lr`` of each group.
        last_epoch: The number of steps taken (0 after construction).
        interval: When a training loop steps it: ``"epoch"`` (once an epoch, the default)
            or ``"step"`` (after every optimizer step, as ``OneCycleLR``).
            ``lampy.train.fit`` asks it; a subclass declares its own.
        takes_metric: Whether ``step`` takes the epoch's monitored number
            (``ReduceLROnPlateau.step(metric)``); False for the others.

    Raises:
        LampyTypeError: ``optimizer`` is not an Optimizer.
        LampyValueError: ``last_epoch >= 0`` and a group has no ``"initial_lr"``.
    """

    interval: ClassVar[Literal["epoch", "step"]] = "epoch"
    takes_metric: ClassVar[bool] = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        name = type(self).__name__
        _check_optimizer(optimizer, name)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise LampyValueError(
                        f"{name}: param_groups[{i}] has no 'initial_lr', needed to resume a "
                        f"schedule with last_epoch={last_epoch}. Load the optimizer's saved "
                        "state first, or start with last_epoch=-1."
                    )
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The lr of each group at epoch ``last_epoch`` (called by ``step``)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The lrs the last ``step`` set, one per param group."""
        return list(self._last_lr)

    def step(self) -> None:
        """Advance the schedule by one epoch (or batch) and set each group's lr.

        A step that raises leaves the scheduler and the learning rates as they were.
        """
        counts = self._step_count, self.last_epoch
        self._step_count += 1
        try:
            self._update_lr()
        except BaseException:
            self._step_count, self.last_epoch = counts
            raise

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: every attribute except the optimizer."""
        return {k: _copy(v) for k, v in vars(self).items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state taken by ``state_dict``."""
        self.__dict__.update({k: _copy(v) for k, v in state_dict.items()})


def _copy(v: Any) -> Any:
    if isinstance(v, (list, dict, Counter)):
        return type(v)(v)
    return v


def _per_group(name: str, what: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """``value`` for every param group: a list of one value per group, or one value for all."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise LampyValueError(
                f"{name}: {what} must have one value per param group: got {len(value)} "
                f"values for {n} groups."
            )
        return list(value)
    return [value] * n


class LambdaLR(LRScheduler):
    """Set each group's lr to ``initial_lr * lr_lambda(epoch)``.

    Args:
        optimizer: The optimizer.
        lr_lambda: A function of the epoch (an int) giving a factor, or a list of them,
            one per param group.
        last_epoch: See ``lampy.optim.lr_scheduler.LRScheduler``.

    Raises:
        LampyValueError: a list of lambdas whose length is not the number of groups.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer, "LambdaLR")
        self.optimizer = optimizer
        self.lr_lambdas: list[Callable[[int], float]] = _per_group(
            "LambdaLR", "lr_lambda", optimizer, lr_lambda
        )
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [
            base_lr * lmbda(self.last_epoch)
            for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]

    def state_dict(self) -> dict[str, Any]:
        """The state; plain functions are not saved, callable objects save their ``__dict__``."""
        state = {k: _copy(v) for k, v in vars(self).items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else dict(vars(fn)) for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state; the lambdas themselves stay those given to the constructor."""
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas", [])
        self.__dict__.update({k: _copy(v) for k, v in state.items()})
        for fn, saved in zip(self.lr_lambdas, lambdas, strict=False):
            if saved is not None:
                fn.__dict__.update(saved)


class StepLR(LRScheduler):
    """Multiply each group's lr by ``gamma`` every ``step_size`` epochs.

    The lr at epoch ``e`` is ``initial_lr * gamma ** (e // step_size)``.

    Args:
        optimizer: The optimizer.
        step_size: Period of the decay, in epochs.
        gamma: Multiplicative factor of the decay.
        last_epoch: See ``lampy.optim.lr_scheduler.LRScheduler``.

    Raises:
        LampyValueError: ``step_size`` is not a positive integer.
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        if not isinstance(step_size, int) or step_size <= 0:
            raise LampyValueError(f"StepLR: step_size must be a positive int, got {step_size!r}.")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply each group's lr by ``gamma`` at each of the ``milestones`` (epochs).

    A milestone listed twice multiplies by ``gamma**2``.

    Args:
        optimizer: The optimizer.
        milestones: Epoch indices.
        gamma: Multiplicative factor of the decay.
        last_epoch: See ``lampy.optim.lr_scheduler.LRScheduler``.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return _lrs(self.optimizer)
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        milestones = sorted(self.milestones.elements())
        k = bisect_right(milestones, self.last_epoch)
        return [base * self.gamma**k for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply each group's lr by ``gamma`` every epoch.

    Args:
        optimizer: The optimizer.
        gamma: Multiplicative factor of the decay.
        last_epoch: See ``lampy.optim.lr_scheduler.LRScheduler``.
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return _lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale each group's lr by a factor going linearly from ``start_factor`` to ``end_factor``.

    The factor reaches ``end_factor`` after ``total_iters`` epochs and stays there:
    the lr at epoch ``e`` is ``initial_lr * (start_factor + (end_factor - start_factor)
    * min(e, total_iters) / total_iters)``.

    Args:
        optimizer: The optimizer.
        start_factor: Factor at epoch 0, in ``(0, 1]``.
        end_factor: Factor from epoch ``total_iters`` on, in ``[0, 1]``.
        total_iters: Number of epochs of the ramp.
        last_epoch: See ``lampy.optim.lr_scheduler.LRScheduler``.

    Raises:
        LampyValueError: a factor out of its range.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise LampyValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}.")
        if end_factor > 1.0 or end_factor < 0:
            raise LampyValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        change = self.end_factor - self.start_factor
        factor = 1.0 + change / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * change
        )
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        change = self.end_factor - self.start_factor
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + change * frac) for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal each group's lr along a cosine from ``initial_lr`` to ``eta_min`` in ``T_max`` epochs.

    The closed form is ``eta_min + (initial_lr - eta_min) * (1 + cos(pi * e / T_max)) / 2``;
    like PyTorch, ``step`` uses the recursive form (so it composes with other
    schedulers), which gives the same numbers to rounding, and goes on past ``T_max``
    as a periodic curve.

    Args:
        optimizer: The optimizer.
        T_max: Half-period, in epochs.
        eta_min: The smallest lr.
        last_epoch: See ``lampy.optim.lr_scheduler.LRScheduler``.

    Raises:
        LampyValueError: at a step with ``T_max`` 0 (PyTorch fails there with a
            ``ZeroDivisionError``). Making the scheduler with ``T_max=0`` is allowed, as
            in PyTorch, so ``T_max=epochs`` works for a run of 0 epochs.
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def _check_period(self) -> None:
        if self.T_max == 0:
            raise LampyValueError(
                "CosineAnnealingLR.step: T_max is 0 (the cosine's half-period, in epochs), "
                "so there is no cosine to follow; give the number of epochs to anneal over, "
                "e.g. T_max=epochs."
            )

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        e, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _lrs(self.optimizer)
        self._check_period()
        if self._step_count == 1 and e > 0:
            return [
                eta_min + (base - eta_min) * (1 + math.cos(e * math.pi / t_max)) / 2
                for base in self.base_lrs
            ]
        if (e - 1 - t_max) % (2 * t_max) == 0:
            return [
                group["lr"] + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                for base, group in zip(self.base_lrs, groups, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * e / t_max)) / (1 + math.cos(math.pi * (e - 1) / t_max))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        self._check_period()
        return [
            self.eta_min
            + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base in self.base_lrs
        ]
