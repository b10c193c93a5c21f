"""Evaluation: metrics averaged over batches in eval mode, without gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from lampy._errors import LampyValueError
from lampy.autograd import Scope
from lampy.nn import Module
from lampy.opkit import Variable, no_grad

__all__ = ["Metric", "accuracy", "batch_size", "evaluate", "scalar"]

Metric = Callable[[Any, tuple[Any, ...]], Any]
"""A metric: ``metric(model, batch)`` gives the batch's mean (a float or scalar Variable)."""


def batch_size(batch: Sequence[Any]) -> int:
    """The number of samples in ``batch``: the length of its first array."""
    first = batch[0] if isinstance(batch, tuple | list) and batch else batch
    return len(first) if hasattr(first, "__len__") else 1


def scalar(where: str, value: Any) -> float:
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
    ``lampy.no_grad``, each batch in its own Scope.

    Args:
        model: The module; it is evaluated through ``model.with_training(False)``
            (dropout off, batch norm on its running statistics).
        batches: Batches as tuples of arrays (a ``lampy.data.Batches``).
        metrics: Names and functions ``metric(model, batch) -> float``.
    """
    eval_model = model.with_training(False)
    totals = dict.fromkeys(metrics, 0.0)
    count = 0
    with no_grad():
        for batch in batches:
            n = batch_size(batch)
            with Scope():
                for name, fn in metrics.items():
                    totals[name] += scalar(f"metric {name!r}", fn(eval_model, batch)) * n
            count += n
    if count == 0:
        raise LampyValueError("evaluate: the batches are empty; there is nothing to average.")
    return {name: total / count for name, total in totals.items()}
