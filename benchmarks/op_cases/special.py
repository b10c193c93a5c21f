"""Benchmark cases of lampy.special and lampy.stats (forward + backward).

Inputs have 10^6 elements. Each baseline is scipy's forward value followed by the
hand-written gradient with scipy.special, as one would write it by hand; torch has the
same functions under ``torch.special`` and ``torch.distributions``. torch is imported
lazily inside the lambdas, so this module imports without it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special as sc

from lampy import special, stats

from ._case import Case

Arrays = list[np.ndarray]
_N = 1_000_000


def _uniform(*bounds: tuple[float, float]) -> Callable[[np.random.Generator], Arrays]:
    return lambda rng: [rng.uniform(lo, hi, _N) for lo, hi in bounds]


def _torch(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(torch, *tensors)``, torch imported at the call."""

    def call(*t: Any) -> Any:
        import torch

        return fn(torch, *t)

    return call


def _erf_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    sc.erf(x)
    return [g * (2 / math.sqrt(math.pi)) * np.exp(-x * x)]


def _gammaln_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    (x,) = inputs
    sc.gammaln(x)
    return [g * sc.digamma(x)]


def _xlogy_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    x, y = inputs
    sc.xlogy(x, y)
    return [g * np.log(y), g * np.where(x == 0, 0, x / y)]


def _norm_logpdf_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    x, loc, scale = inputs
    z = (x - loc) / scale
    _ = -0.5 * z * z - np.log(scale) - 0.5 * math.log(2 * math.pi)
    dx = -g * z / scale
    return [dx, -dx, g * (z * z - 1) / scale]


def _gamma_logpdf_baseline(inputs: Arrays, g: np.ndarray) -> Arrays:
    x, a = inputs
    _ = sc.xlogy(a - 1, x) - x - sc.gammaln(a)
    return [g * ((a - 1) / x - 1), g * (np.log(x) - sc.digamma(a))]


CASES: list[Case] = [
    Case(
        "special.erf",
        "special",
        _uniform((-3, 3)),
        special.erf,
        _erf_baseline,
        torch_fn=_torch(lambda torch, x: torch.special.erf(x)),
    ),
    Case(
        "special.gammaln",
        "special",
        _uniform((0.1, 10)),
        special.gammaln,
        _gammaln_baseline,
        torch_fn=_torch(lambda torch, x: torch.special.gammaln(x)),
    ),
    Case(
        "special.xlogy",
        "special",
        _uniform((-3, 3), (0.1, 5)),
        special.xlogy,
        _xlogy_baseline,
        torch_fn=_torch(lambda torch, x, y: torch.special.xlogy(x, y)),
    ),
    Case(
        "stats.norm.logpdf",
        "special",
        _uniform((-3, 3), (-1, 1), (0.5, 2)),
        stats.norm.logpdf,
        _norm_logpdf_baseline,
        torch_fn=_torch(
            lambda torch, x, m, s: torch.distributions.Normal(m, s, validate_args=False).log_prob(x)
        ),
    ),
    Case(
        "stats.gamma.logpdf",
        "special",
        _uniform((0.1, 10), (0.5, 5)),
        stats.gamma.logpdf,
        _gamma_logpdf_baseline,
        torch_fn=_torch(
            lambda torch, x, a: torch.distributions.Gamma(a, 1.0, validate_args=False).log_prob(x)
        ),
    ),
]
