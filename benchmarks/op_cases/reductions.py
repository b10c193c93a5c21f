"""Benchmark cases of the reductions (forward + backward, 200,000 elements).

Inputs have shape (400, 500); most cases reduce along axis 1 (the last, contiguous one),
a few over everything or along axis 0. Each baseline is the plain numpy forward followed
by the hand-written gradient, written the way one would by hand (temporaries allowed, no
in-place tricks; ties of the extremes shared as lampy does, zeros of prod/cumprod not
special-cased since the inputs have none). torch and mygrad are imported lazily inside
the lambdas so this module imports without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.ops._cumulative import cumprod, cumsum
from lampy.ops._extreme_reductions import amax, amin, logsumexp
from lampy.ops._reductions import average, prod, std, var

from ._case import Case

SHAPE = (400, 500)
WEIGHTS = np.random.default_rng(1).uniform(0.5, 2.0, SHAPE[1])
"""The fixed weights of the ``average`` case (a constant, one per column)."""


def _normal(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal(SHAPE)]


def _near_one(rng: np.random.Generator) -> list[np.ndarray]:
    """Values in [0.99, 1.01]: products of 500 of them stay well inside float64."""
    return [rng.uniform(0.99, 1.01, SHAPE)]


def _torch(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(torch, tensor)``, torch imported at the call."""

    def call(t: Any) -> Any:
        import torch

        return fn(torch, t)

    return call


def _mygrad(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(mygrad, tensor)``, mygrad imported at the call."""

    def call(t: Any) -> Any:
        import mygrad

        return fn(mygrad, t)

    return call


def _rev_cumsum(g: np.ndarray, axis: int) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def _var_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    np.var(a, axis=1)
    d = a - a.mean(axis=1, keepdims=True)
    return [d * (2 * g[:, None] / a.shape[1])]


def _std_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    s = np.std(a, axis=1)
    d = a - a.mean(axis=1, keepdims=True)
    return [d * (g / (a.shape[1] * s))[:, None]]


def _prod_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    p = np.prod(a, axis=1)
    return [(g * p)[:, None] / a]


def _extreme_baseline(fn: Callable[..., Any], axis: int | None) -> Any:
    def baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
        (a,) = inputs
        m = fn(a, axis=axis, keepdims=True)
        hit = a == m
        count = hit.sum(axis=axis, keepdims=True)
        gk = g if axis is None else np.expand_dims(g, axis)
        return [np.where(hit, gk / count, 0)]

    return baseline


def _logsumexp_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    m = a.max(axis=1, keepdims=True)
    e = np.exp(a - m)
    s = e.sum(axis=1, keepdims=True)
    np.log(s) + m
    return [e * (g[:, None] / s)]


def _cumsum_baseline(axis: int | None) -> Any:
    def baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
        (a,) = inputs
        np.cumsum(a, axis=axis)
        if axis is None:
            return [_rev_cumsum(g, 0).reshape(a.shape)]
        return [_rev_cumsum(g, axis)]

    return baseline


def _cumprod_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    y = np.cumprod(a, axis=1)
    return [_rev_cumsum(g * y, 1) / a]


def _average_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    total = WEIGHTS.sum()
    np.average(a, axis=1, weights=WEIGHTS)
    return [(g / total)[:, None] * WEIGHTS]


def _average_both_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, w = inputs
    total = w.sum(axis=1, keepdims=True)
    avg = (a * w).sum(axis=1, keepdims=True) / total
    gk = g[:, None] / total
    return [gk * w, gk * (a - avg)]


CASES: list[Case] = [
    Case(
        name="var axis=1",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=lambda x: var(x, axis=1),
        numpy_fwd_bwd=_var_baseline,
        torch_fn=_torch(lambda torch, t: torch.var(t, dim=1, correction=0)),
        mygrad_fn=_mygrad(lambda mg, t: mg.var(t, axis=1)),
    ),
    Case(
        name="std axis=1",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=lambda x: std(x, axis=1),
        numpy_fwd_bwd=_std_baseline,
        torch_fn=_torch(lambda torch, t: torch.std(t, dim=1, correction=0)),
        mygrad_fn=_mygrad(lambda mg, t: mg.std(t, axis=1)),
    ),
    Case(
        name="prod axis=1",
        family="reduction",
        make_inputs=_near_one,
        lampy_fn=lambda x: prod(x, axis=1),
        numpy_fwd_bwd=_prod_baseline,
        torch_fn=_torch(lambda torch, t: torch.prod(t, dim=1)),
        mygrad_fn=_mygrad(lambda mg, t: mg.prod(t, axis=1)),
    ),
    Case(
        name="amax axis=1",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=lambda x: amax(x, axis=1),
        numpy_fwd_bwd=_extreme_baseline(np.amax, 1),
        torch_fn=_torch(lambda torch, t: torch.amax(t, dim=1)),
        mygrad_fn=_mygrad(lambda mg, t: mg.max(t, axis=1)),
    ),
    Case(
        name="amax axis=0",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=lambda x: amax(x, axis=0),
        numpy_fwd_bwd=_extreme_baseline(np.amax, 0),
        torch_fn=_torch(lambda torch, t: torch.amax(t, dim=0)),
        mygrad_fn=_mygrad(lambda mg, t: mg.max(t, axis=0)),
    ),
    Case(
        name="amin axis=None",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=amin,
        numpy_fwd_bwd=_extreme_baseline(np.amin, None),
        torch_fn=_torch(lambda torch, t: torch.amin(t)),
        mygrad_fn=_mygrad(lambda mg, t: mg.min(t)),
    ),
    Case(
        name="logsumexp axis=1",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=lambda x: logsumexp(x, axis=1),
        numpy_fwd_bwd=_logsumexp_baseline,
        torch_fn=_torch(lambda torch, t: torch.logsumexp(t, dim=1)),
    ),
    Case(
        name="cumsum axis=1",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=lambda x: cumsum(x, axis=1),
        numpy_fwd_bwd=_cumsum_baseline(1),
        torch_fn=_torch(lambda torch, t: torch.cumsum(t, dim=1)),
        mygrad_fn=_mygrad(lambda mg, t: mg.cumsum(t, axis=1)),
    ),
    Case(
        name="cumsum axis=None",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=cumsum,
        numpy_fwd_bwd=_cumsum_baseline(None),
        torch_fn=_torch(lambda torch, t: torch.cumsum(t.reshape(-1), dim=0)),
        mygrad_fn=_mygrad(lambda mg, t: mg.cumsum(t)),
    ),
    Case(
        name="cumprod axis=1",
        family="reduction",
        make_inputs=_near_one,
        lampy_fn=lambda x: cumprod(x, axis=1),
        numpy_fwd_bwd=_cumprod_baseline,
        torch_fn=_torch(lambda torch, t: torch.cumprod(t, dim=1)),
        mygrad_fn=_mygrad(lambda mg, t: mg.cumprod(t, axis=1)),
    ),
    Case(
        name="average axis=1, constant weights (500,)",
        family="reduction",
        make_inputs=_normal,
        lampy_fn=lambda x: average(x, axis=1, weights=WEIGHTS),
        numpy_fwd_bwd=_average_baseline,
    ),
    Case(
        name="average axis=1, weights (400, 500) differentiated",
        family="reduction",
        make_inputs=lambda rng: [rng.standard_normal(SHAPE), rng.uniform(0.5, 2.0, SHAPE)],
        lampy_fn=lambda x, w: average(x, axis=1, weights=w),
        numpy_fwd_bwd=_average_both_baseline,
    ),
]
