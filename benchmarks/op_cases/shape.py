"""Benchmark cases of the shape ops (forward + backward, 200,000 elements or more).

Inputs have shape (400, 500) (or (40, 50, 100) for the 3-d rearrangements). Each baseline
is the plain numpy forward followed by the hand-written gradient: for the rearrangements
the view of ``g`` copied into a C-ordered array (a gradient buffer laid out like the
input, which is what lampy's gradients are), slices of ``g`` for joins,
``np.add`` into slices for splits, reshaped sums for tile/repeat, and for the padding
modes that copy elements the index map of the brief (``np.pad`` of ``arange``) summed
with ``np.bincount``. Ops returning several Variables (split, array_split,
broadcast_arrays) are measured with a ``stack`` of their results, and the baseline does
the same. torch and mygrad are imported lazily inside the lambdas so this module
imports without them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.ops._join import (
    array_split,
    broadcast_arrays,
    concatenate,
    hstack,
    split,
    stack,
    vstack,
)
from lampy.ops._pad import flip, pad, repeat, roll, tile
from lampy.ops._shape import (
    atleast_3d,
    broadcast_to,
    expand_dims,
    matrix_transpose,
    moveaxis,
    ravel,
    reshape,
    squeeze,
    swapaxes,
    transpose,
)

from ._case import Case

SHAPE = (400, 500)
CUBE = (40, 50, 100)
REPEATS = np.random.default_rng(2).integers(0, 4, SHAPE[1])
"""The fixed per-column repeat counts of the ``repeat`` case (zeros included)."""
TORCH_PAD = {"constant": "constant", "edge": "replicate", "reflect": "reflect", "wrap": "circular"}
"""torch.nn.functional.pad's names of numpy's padding modes."""


def _one(shape: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    return lambda rng: [rng.standard_normal(shape)]


def _two(
    s1: tuple[int, ...], s2: tuple[int, ...]
) -> Callable[[np.random.Generator], list[np.ndarray]]:
    return lambda rng: [rng.standard_normal(s1), rng.standard_normal(s2)]


def _torch(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(torch, *tensors)``, torch imported at the call."""

    def call(*t: Any) -> Any:
        import torch

        return fn(torch, *t)

    return call


def _mygrad(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(mygrad, *tensors)``, mygrad imported at the call."""

    def call(*t: Any) -> Any:
        import mygrad

        return fn(mygrad, *t)

    return call


def _view(fwd: Callable[[np.ndarray], Any], back: Callable[[np.ndarray], Any]) -> Any:
    """Baseline of a rearrangement: ``fwd(a)``, then ``back(g)`` copied into a C-ordered
    array (a gradient laid out like the input, as lampy's is)."""

    def baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
        (a,) = inputs
        fwd(a)
        return [np.array(back(g), order="C")]

    return baseline


def _concat_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    np.concatenate([a, b], axis=1)
    n = a.shape[1]
    return [g[:, :n].copy(), g[:, n:].copy()]


def _vstack_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    np.vstack([a, b])
    n = a.shape[0]
    return [g[:n].copy(), g[n:].copy()]


def _stack_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    np.stack([a, b], axis=1)
    return [g[:, 0].copy(), g[:, 1].copy()]


def _split_stack_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    pieces = np.split(a, 4, axis=1)
    np.stack(pieces)
    grads = [g[i].copy() for i in range(4)]  # stack's gradients
    d = np.zeros_like(a)  # split's: each piece's gradient added into its slice
    for i, gi in enumerate(grads):
        d[:, 125 * i : 125 * (i + 1)] += gi
    return [d]


def _array_split_concat_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    pieces = np.array_split(a, 3, axis=1)
    np.concatenate(pieces, axis=1)
    bounds = np.cumsum([0] + [p.shape[1] for p in pieces])
    grads = [g[:, lo:hi].copy() for lo, hi in itertools.pairwise(bounds)]  # concatenate's
    d = np.zeros_like(a)  # array_split's
    for lo, hi, gi in zip(bounds[:-1], bounds[1:], grads, strict=True):
        d[:, lo:hi] += gi
    return [d]


def _broadcast_arrays_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    a, b = inputs
    np.stack(np.broadcast_arrays(a, b))
    return [g[0].sum(axis=0, keepdims=True), g[1].sum(axis=1, keepdims=True)]


def _tile_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    np.tile(a, (2, 2))
    n, m = a.shape
    return [g.reshape(2, n, 2, m).sum(axis=(0, 2))]


def _repeat_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    np.repeat(a, 2, axis=1)
    return [g.reshape(a.shape[0], a.shape[1], 2).sum(axis=2)]


def _repeat_array_baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    (a,) = inputs
    np.repeat(a, REPEATS, axis=1)
    owner = np.repeat(np.arange(a.shape[1]), REPEATS)  # the column each output came from
    d = np.zeros_like(a)
    np.add.at(d, (slice(None), owner), g)
    return [d]


def _pad_baseline(mode: str) -> Any:
    def baseline(inputs: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
        (a,) = inputs
        np.pad(a, 8, mode)  # type: ignore[call-overload]
        if mode == "constant":
            return [g[8:-8, 8:-8].copy()]
        source = np.pad(np.arange(a.size).reshape(a.shape), 8, mode)  # type: ignore[call-overload]
        return [np.bincount(source.ravel(), g.ravel(), a.size).reshape(a.shape)]

    return baseline


def _case(name: str, make: Any, fn: Any, baseline: Any, torch: Any = None, mg: Any = None) -> Case:
    return Case(name, "shape", make, fn, baseline, torch, mg)


CASES: list[Case] = [
    _case(
        "reshape",
        _one(SHAPE),
        lambda x: reshape(x, (500, 400)),
        _view(lambda a: a.reshape(500, 400), lambda g: g.reshape(SHAPE)),
        _torch(lambda torch, t: t.reshape(500, 400)),
        _mygrad(lambda mg, t: mg.reshape(t, (500, 400))),
    ),
    _case(
        "ravel order=F",
        _one(SHAPE),
        lambda x: ravel(x, "F"),
        _view(lambda a: a.ravel("F"), lambda g: g.reshape(SHAPE, order="F")),
        _torch(lambda torch, t: t.T.reshape(-1)),
        _mygrad(lambda mg, t: mg.ravel(mg.transpose(t))),
    ),
    _case(
        "transpose",
        _one(SHAPE),
        transpose,
        _view(lambda a: a.T, lambda g: g.T),
        _torch(lambda torch, t: t.T),
        _mygrad(lambda mg, t: mg.transpose(t)),
    ),
    _case(
        "matrix_transpose 3-d",
        _one(CUBE),
        matrix_transpose,
        _view(lambda a: a.swapaxes(-1, -2), lambda g: g.swapaxes(-1, -2)),
        _torch(lambda torch, t: t.mT),
        _mygrad(lambda mg, t: mg.swapaxes(t, -1, -2)),
    ),
    _case(
        "swapaxes 0,2",
        _one(CUBE),
        lambda x: swapaxes(x, 0, 2),
        _view(lambda a: a.swapaxes(0, 2), lambda g: g.swapaxes(0, 2)),
        _torch(lambda torch, t: t.swapaxes(0, 2)),
        _mygrad(lambda mg, t: mg.swapaxes(t, 0, 2)),
    ),
    _case(
        "moveaxis 0->-1",
        _one(CUBE),
        lambda x: moveaxis(x, 0, -1),
        _view(lambda a: np.moveaxis(a, 0, -1), lambda g: np.moveaxis(g, -1, 0)),
        _torch(lambda torch, t: torch.movedim(t, 0, -1)),
        _mygrad(lambda mg, t: mg.moveaxis(t, 0, -1)),
    ),
    _case(
        "squeeze",
        _one((400, 1, 500)),
        squeeze,
        _view(np.squeeze, lambda g: g.reshape(400, 1, 500)),
        _torch(lambda torch, t: t.squeeze()),
        _mygrad(lambda mg, t: mg.squeeze(t)),
    ),
    _case(
        "expand_dims 1",
        _one(SHAPE),
        lambda x: expand_dims(x, 1),
        _view(lambda a: a[:, None], lambda g: g.reshape(SHAPE)),
        _torch(lambda torch, t: t.unsqueeze(1)),
        _mygrad(lambda mg, t: mg.expand_dims(t, 1)),
    ),
    _case(
        "atleast_3d",
        _one(SHAPE),
        atleast_3d,
        _view(np.atleast_3d, lambda g: g.reshape(SHAPE)),
        _torch(lambda torch, t: torch.atleast_3d(t)),
        _mygrad(lambda mg, t: mg.atleast_3d(t)),
    ),
    _case(
        "broadcast_to (500,)->(400,500)",
        _one((500,)),
        lambda x: broadcast_to(x, SHAPE),
        _view(lambda a: np.broadcast_to(a, SHAPE), lambda g: g.sum(axis=0)),
        _torch(lambda torch, t: t.broadcast_to(SHAPE)),
        _mygrad(lambda mg, t: mg.broadcast_to(t, SHAPE)),
    ),
    _case(
        "broadcast_arrays + stack",
        _two((1, 500), (400, 1)),
        lambda x, y: stack(broadcast_arrays(x, y)),
        _broadcast_arrays_baseline,
        _torch(lambda torch, a, b: torch.stack(torch.broadcast_tensors(a, b))),
        _mygrad(lambda mg, a, b: mg.stack([mg.broadcast_to(a, SHAPE), mg.broadcast_to(b, SHAPE)])),
    ),
    _case(
        "concatenate axis=1",
        _two(SHAPE, SHAPE),
        lambda x, y: concatenate([x, y], axis=1),
        _concat_baseline,
        _torch(lambda torch, a, b: torch.cat([a, b], dim=1)),
        _mygrad(lambda mg, a, b: mg.concatenate([a, b], axis=1)),
    ),
    _case(
        "hstack",
        _two(SHAPE, SHAPE),
        lambda x, y: hstack([x, y]),
        _concat_baseline,
        _torch(lambda torch, a, b: torch.hstack([a, b])),
        _mygrad(lambda mg, a, b: mg.concatenate([a, b], axis=1)),
    ),
    _case(
        "vstack",
        _two(SHAPE, SHAPE),
        lambda x, y: vstack([x, y]),
        _vstack_baseline,
        _torch(lambda torch, a, b: torch.vstack([a, b])),
        _mygrad(lambda mg, a, b: mg.concatenate([a, b], axis=0)),
    ),
    _case(
        "stack axis=1",
        _two(SHAPE, SHAPE),
        lambda x, y: stack([x, y], axis=1),
        _stack_baseline,
        _torch(lambda torch, a, b: torch.stack([a, b], dim=1)),
        _mygrad(lambda mg, a, b: mg.stack([a, b], axis=1)),
    ),
    _case(
        "split 4 axis=1 + stack",
        _one(SHAPE),
        lambda x: stack(split(x, 4, axis=1)),
        _split_stack_baseline,
        _torch(lambda torch, t: torch.stack(torch.split(t, 125, dim=1))),
    ),
    _case(
        "array_split 3 axis=1 + concatenate",
        _one(SHAPE),
        lambda x: concatenate(array_split(x, 3, axis=1), axis=1),
        _array_split_concat_baseline,
        _torch(lambda torch, t: torch.cat(torch.tensor_split(t, 3, dim=1), dim=1)),
    ),
    _case(
        "tile (2,2)",
        _one((200, 250)),
        lambda x: tile(x, (2, 2)),
        _tile_baseline,
        _torch(lambda torch, t: t.tile((2, 2))),
    ),
    _case(
        "repeat 2 axis=1",
        _one(SHAPE),
        lambda x: repeat(x, 2, axis=1),
        _repeat_baseline,
        _torch(lambda torch, t: t.repeat_interleave(2, dim=1)),
        _mygrad(lambda mg, t: mg.repeat(t, 2, axis=1)),
    ),
    _case(
        "repeat per-column axis=1",
        _one(SHAPE),
        lambda x: repeat(x, REPEATS, axis=1),
        _repeat_array_baseline,
        _torch(lambda torch, t: t.repeat_interleave(torch.as_tensor(REPEATS), dim=1)),
    ),
    _case(
        "flip axis=1",
        _one(SHAPE),
        lambda x: flip(x, 1),
        _view(lambda a: np.flip(a, 1), lambda g: np.flip(g, 1)),
        _torch(lambda torch, t: torch.flip(t, (1,))),
        _mygrad(lambda mg, t: t[:, ::-1]),
    ),
    _case(
        "roll (3,-7) axis=(0,1)",
        _one(SHAPE),
        lambda x: roll(x, (3, -7), (0, 1)),
        _view(lambda a: np.roll(a, (3, -7), (0, 1)), lambda g: np.roll(g, (-3, 7), (0, 1))),
        _torch(lambda torch, t: torch.roll(t, (3, -7), (0, 1))),
        _mygrad(lambda mg, t: mg.roll(t, (3, -7), (0, 1))),
    ),
    *(
        _case(
            f"pad 8 {mode}",
            _one(SHAPE),
            lambda x, mode=mode: pad(x, 8, mode),
            _pad_baseline(mode),
            _torch(
                lambda torch, t, mode=mode: torch.nn.functional.pad(
                    t[None, None], (8, 8, 8, 8), TORCH_PAD[mode]
                )[0, 0]
            ),
        )
        for mode in ("constant", "edge", "reflect", "wrap")
    ),
]
