"""Gradients at nan inputs (issue 16 #6): each op's convention, exactly, next to what
PyTorch 2.x gives.

lampy matches PyTorch where PyTorch has a rule: piecewise activations pass ``g`` at nan
(their backward zeroes only where a comparison with ``x`` holds, and every comparison
with nan is false), ``abs`` and ``l1_loss`` give 0 (PyTorch's ``sgn(nan) = 0``), ``clip``
gives 0. It differs where PyTorch's result is an accident of its formula:

- ``amax``/``amin`` (and ``max``/``min``, the same functions in numpy): PyTorch's
  ``amax`` backward divides by the number of elements equal to the result, 0 for a nan
  result, so every element of the slice gets nan; its ``torch.max(x)`` instead shares the
  gradient among the nan entries (``evenly_distribute_backward`` handles nan on purpose).
  lampy shares it among the nan entries, which carry the value, for all four.
- ``maximum``/``minimum``: PyTorch gives the whole ``g`` to both inputs at a nan (both
  "not smaller" comparisons are false), counting it twice; lampy gives it to the nan
  input, whose value the output carries (to ``x1`` if both are nan), as numpy returns it.

The PyTorch values below were computed with torch 2.13.0 (CPU, float64) and are
hard-coded, so the suite does not need torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F

nan = np.nan
X = [nan, -1.0, 0.0, 2.0, nan, 7.0]


def _grads(fn: Callable[..., Any], *inputs: Any) -> list[np.ndarray]:
    """The gradients of ``fn(*inputs).sum()`` with respect to each input (float64)."""
    with lampy.Scope():
        params = [lampy.param(np.asarray(x, np.float64)) for x in inputs]
        fn(*params).sum().backward()
        return [p.grad.copy() for p in params]


# name, function of X, lampy's gradient, PyTorch 2.13's gradient (same unless noted)
UNARY: list[tuple[str, Callable[[Any], Any], list[float], list[float]]] = [
    ("relu", F.relu, [1, 0, 0, 1, 1, 1], [1, 0, 0, 1, 1, 1]),
    ("relu6", F.relu6, [1, 0, 0, 1, 1, 0], [1, 0, 0, 1, 1, 0]),
    ("hardtanh", F.hardtanh, [1, 0, 1, 0, 1, 0], [1, 0, 1, 0, 1, 0]),
    (
        "leaky_relu",
        lambda x: F.leaky_relu(x, 0.1),
        [0.1, 0.1, 0.1, 1, 0.1, 1],
        [0.1, 0.1, 0.1, 1, 0.1, 1],
    ),
    (
        "hardswish",
        F.hardswish,
        [1, -1 / 3 + 0.5, 0.5, 2 / 3 + 0.5, 1, 1],
        [1, 1 / 6, 0.5, 7 / 6, 1, 1],
    ),
    ("abs", lampy.abs, [0, -1, 0, 1, 0, 1], [0, -1, 0, 1, 0, 1]),
    (
        "l1_loss",
        lambda x: F.l1_loss(x, np.zeros(6), reduction="sum"),
        [0, -1, 0, 1, 0, 1],
        [0, -1, 0, 1, 0, 1],
    ),
    ("clip", lambda x: lampy.clip(x, -0.5, 1.0), [0, 0, 1, 0, 0, 0], [0, 0, 1, 0, 0, 0]),
    # max over all: PyTorch's torch.max(x) shares among the nans too; torch.amax(x) gives
    # nan to all six elements (0/0 in its backward).
    ("amax", lampy.amax, [0.5, 0, 0, 0, 0.5, 0], [nan] * 6),
    ("max", lampy.max, [0.5, 0, 0, 0, 0.5, 0], [0.5, 0, 0, 0, 0.5, 0]),
    ("amin", lampy.amin, [0.5, 0, 0, 0, 0.5, 0], [nan] * 6),
    ("min", lampy.min, [0.5, 0, 0, 0, 0.5, 0], [0.5, 0, 0, 0, 0.5, 0]),
]


@pytest.mark.parametrize(("name", "fn", "ours", "torch"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradient_at_nan(
    name: str, fn: Callable[[Any], Any], ours: list[float], torch: list[float]
) -> None:
    """The gradient at nan (and at ordinary points) is the documented one, exactly; at
    the nans it is PyTorch's but for amax/amin."""
    (g,) = _grads(fn, X)
    np.testing.assert_array_equal(g, ours)
    at_nan = np.isnan(X)
    if name not in ("amax", "amin"):  # the one deliberate difference, see the docstring
        np.testing.assert_array_equal(g[at_nan], np.asarray(torch)[at_nan])
        np.testing.assert_allclose(g[~at_nan], np.asarray(torch)[~at_nan], rtol=1e-15)


def test_amax_along_an_axis_shares_the_gradient_among_the_nans() -> None:
    """A slice holding nans gives its gradient to the nan entries, shared; a slice without
    one to its maxima. (PyTorch 2.13: torch.amax gives [[nan, nan, nan], [0, .5, .5]];
    torch.max(x, 1).values gives [[1, 0, 0], [0, 1, 0]], to the index it returns.)"""
    x = [[nan, 1.0, nan], [1.0, 3.0, 3.0]]
    for fn in (lampy.amax, lampy.max):
        (g,) = _grads(lambda v, fn=fn: fn(v, axis=1), x)
        np.testing.assert_array_equal(g, [[0.5, 0, 0.5], [0, 0.5, 0.5]])


@pytest.mark.parametrize("fn", [lampy.maximum, lampy.minimum], ids=["maximum", "minimum"])
def test_maximum_minimum_give_the_gradient_to_the_nan_input(fn: Callable[..., Any]) -> None:
    """At a nan the gradient goes to the nan input (x1 if both are nan); ties share it.
    (PyTorch 2.13 gives g to both inputs wherever either is nan: dx1 = dx2 = 1 at the
    first three positions below.)"""
    a = [nan, 1.0, nan, 2.0]
    b = [1.0, nan, nan, 2.0]
    ga, gb = _grads(fn, a, b)
    np.testing.assert_array_equal(ga, [1, 0, 1, 0.5])
    np.testing.assert_array_equal(gb, [0, 1, 0, 0.5])


def test_clip_with_nan_bounds_gives_no_gradient_there() -> None:
    """clip with array bounds: a nan in x or a bound gives every input 0 there, as
    PyTorch's clamp (2.13: all zeros but d hi = 1 where x is above a finite hi)."""
    x = [nan, 0.0, 0.0, 5.0, 0.0]
    lo = [0.0, nan, 0.0, 0.0, -1.0]
    hi = [1.0, 1.0, nan, 1.0, nan]
    gx, glo, ghi = _grads(lampy.clip, x, lo, hi)
    np.testing.assert_array_equal(gx, [0, 0, 0, 0, 0])
    np.testing.assert_array_equal(glo, [0, 0, 0, 0, 0])
    np.testing.assert_array_equal(ghi, [0, 0, 0, 1, 0])


def test_float32_and_scalar_inputs_follow_the_same_rules() -> None:
    """abs and relu keep float32 and handle 0-d inputs at nan."""
    with lampy.Scope():
        x = lampy.param(np.array([nan, -2.0, 3.0], np.float32))
        (lampy.abs(x) + F.relu(x)).sum().backward()
        assert x.grad.dtype == np.float32
        np.testing.assert_array_equal(x.grad, [1, -1, 2])
        s = lampy.param(nan)
        lampy.abs(s).backward()
        assert s.grad == 0
