"""Benchmark cases of the binary elementwise ops, ``remainder`` and ``where`` (forward + backward,
200,000 elements).

Each baseline is the plain numpy forward followed by the hand-written gradient, written
the way one would by hand (temporaries allowed, no in-place tricks; ties and nans of the
extrema are not special-cased there). torch and mygrad are imported lazily inside the
lambdas so this module imports without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.ops._arithmetic import remainder
from lampy.ops._binary_math import arctan2, hypot, logaddexp, logaddexp2
from lampy.ops._extrema import fmax, fmin, maximum, minimum
from lampy.ops._where import where

from ._case import Case

SHAPE = (400, 500)
CONDITION = np.random.default_rng(0).random(SHAPE) < 0.5
"""The fixed condition of the ``where`` case."""


def _torch(name: str) -> Callable[..., Any]:
    """``torch.<name>(*tensors)``, torch imported at the call."""

    def call(*ts: Any) -> Any:
        import torch

        return getattr(torch, name)(*ts)

    return call


def _mygrad(name: str) -> Callable[..., Any]:
    """``mygrad.<name>(*tensors)``, mygrad imported at the call."""

    def call(*ts: Any) -> Any:
        import mygrad

        return getattr(mygrad, name)(*ts)

    return call


def _uniform(shape2: tuple[int, ...] = SHAPE) -> Callable[[np.random.Generator], Any]:
    return lambda rng: [rng.uniform(-3, 3, SHAPE), rng.uniform(-3, 3, shape2)]


def _extremum(name: str, lampy_fn: Callable[..., Any], forward: Any, wins: Any) -> Case:
    def baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
        a, b = inputs
        forward(a, b)
        m = wins(a, b)
        return [np.where(m, g, 0), np.where(m, 0, g)]

    return Case(
        name=name,
        family="elementwise",
        make_inputs=_uniform(),
        lampy_fn=lampy_fn,
        numpy_fwd_bwd=baseline,
        torch_fn=_torch(name),
        mygrad_fn=_mygrad(name) if name in ("maximum", "minimum") else None,
    )


def _maximum_row_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    np.maximum(a, b)
    m = a > b
    return [np.where(m, g, 0), np.where(m, 0, g).sum(axis=0)]


def _arctan2_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    np.arctan2(a, b)
    r2 = a * a + b * b
    return [g * b / r2, -g * a / r2]


def _hypot_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    y = np.hypot(a, b)
    return [g * a / y, g * b / y]


def _logaddexp_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    y = np.logaddexp(a, b)
    return [g * np.exp(a - y), g * np.exp(b - y)]


def _logaddexp2_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    y = np.logaddexp2(a, b)
    return [g * np.exp2(a - y), g * np.exp2(b - y)]


def _remainder_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    np.remainder(a, b)
    return [g, -g * np.floor_divide(a, b)]


def _where_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    np.where(CONDITION, a, b)
    return [np.where(CONDITION, g, 0), np.where(CONDITION, 0, g)]


def _torch_where(x: Any, y: Any) -> Any:
    import torch

    return torch.where(torch.from_numpy(CONDITION), x, y)


def _mygrad_where(x: Any, y: Any) -> Any:
    import mygrad

    return mygrad.where(CONDITION, x, y)


CASES: list[Case] = [
    _extremum("maximum", maximum, np.maximum, np.greater),
    _extremum("minimum", minimum, np.minimum, np.less),
    _extremum("fmax", fmax, np.fmax, np.greater),
    _extremum("fmin", fmin, np.fmin, np.less),
    Case(
        name="maximum (400, 500) with (500,)",
        family="elementwise",
        make_inputs=_uniform((SHAPE[1],)),
        lampy_fn=maximum,
        numpy_fwd_bwd=_maximum_row_baseline,
        torch_fn=_torch("maximum"),
        mygrad_fn=_mygrad("maximum"),
    ),
    Case(
        name="arctan2",
        family="elementwise",
        make_inputs=_uniform(),
        lampy_fn=arctan2,
        numpy_fwd_bwd=_arctan2_baseline,
        torch_fn=_torch("atan2"),
        mygrad_fn=_mygrad("arctan2"),
    ),
    Case(
        name="hypot",
        family="elementwise",
        make_inputs=_uniform(),
        lampy_fn=hypot,
        numpy_fwd_bwd=_hypot_baseline,
        torch_fn=_torch("hypot"),
    ),
    Case(
        name="logaddexp",
        family="elementwise",
        make_inputs=_uniform(),
        lampy_fn=logaddexp,
        numpy_fwd_bwd=_logaddexp_baseline,
        torch_fn=_torch("logaddexp"),
        mygrad_fn=_mygrad("logaddexp"),
    ),
    Case(
        name="remainder",
        family="elementwise",
        make_inputs=lambda rng: [rng.uniform(-3, 3, SHAPE), rng.uniform(0.5, 2, SHAPE)],
        lampy_fn=remainder,
        numpy_fwd_bwd=_remainder_baseline,
        torch_fn=_torch("remainder"),
    ),
    Case(
        name="logaddexp2",
        family="elementwise",
        make_inputs=_uniform(),
        lampy_fn=logaddexp2,
        numpy_fwd_bwd=_logaddexp2_baseline,
        torch_fn=_torch("logaddexp2"),
        mygrad_fn=_mygrad("logaddexp2"),
    ),
    Case(
        name="where",
        family="elementwise",
        make_inputs=_uniform(),
        lampy_fn=lambda x, y: where(CONDITION, x, y),
        numpy_fwd_bwd=_where_baseline,
        torch_fn=_torch_where,
        mygrad_fn=_mygrad_where,
    ),
]
