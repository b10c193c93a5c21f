"""What a fit records and shares with its callbacks: ``History`` and ``TrainState``."""

from __future__ import annotations

from typing import Any

from lampy.nn import Module

__all__ = ["History", "TrainState"]


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
        history: The ``lampy.train.History`` so far.
        stop: Set it to True to stop after the current epoch.
    """

    def __init__(self, model: Module, optimizer: Any, history: History) -> None:
        self.model = model
        self.optimizer = optimizer
        self.history = history
        self.epoch = 0
        self.step = 0
        self.stop = False
