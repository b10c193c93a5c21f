"""Mini-batches of aligned numpy arrays, and a seeded train/test split."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError

__all__ = ["Batches", "train_test_split"]


def _aligned(owner: str, arrays: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    """The arrays as numpy arrays, checked to share a first dimension."""
    if not arrays:
        raise LampyValueError(f"{owner}: give at least one array, e.g. {owner}(x, y, ...).")
    out = tuple(np.asarray(a) for a in arrays)
    for i, a in enumerate(out):
        if a.ndim == 0:
            raise ShapeError(
                f"{owner}: array {i} is 0-d; every array needs a first (sample) dimension."
            )
    lengths = [len(a) for a in out]
    if len(set(lengths)) > 1:
        raise ShapeError(
            f"{owner}: the arrays have different lengths {lengths} along their first "
            "dimension; every array must hold one row per sample, aligned with the others."
        )
    return out


class Batches:
    """Aligned mini-batches of one or more arrays, reshuffled each epoch.

    Iterating gives one epoch: a tuple holding a batch of each array, in order. With
    ``shuffle=True`` each iteration draws a new permutation from ``rng``, so the batch
    order is reproducible from the generator's seed and differs between epochs.

    With ``shard=(rank, world)``, for data-parallel training, each of ``world`` processes
    takes its own part of every batch: the epoch's order (the same on every rank, drawn
    from an ``rng`` seeded the same on every rank) is cut into global batches of
    ``batch_size * world`` samples, and rank ``r`` takes the samples at positions
    ``r, r + world, r + 2 * world...`` of each. So ``batch_size`` is the per-rank batch,
    every rank gets the same number of batches of the same sizes, and the ranks' batches
    together are exactly the batch one process would get with ``batch_size * world``.
    The last global batch, when the samples do not fill it:

    * ``drop_last=True``: is left out (every batch has ``batch_size`` samples);
    * ``drop_last=False``: is padded, to a multiple of ``world`` samples, with samples
      from the start of the epoch's order, so each rank's last batch has
      ``ceil(m / world)`` samples for ``m`` samples left; fewer than ``world`` samples
      are then seen twice in that epoch (the rule of PyTorch's ``DistributedSampler``).

    Args:
        *arrays: Arrays with the same length along their first dimension (samples).
        batch_size: Samples per batch (per rank with ``shard``; the last batch may be
            smaller).
        shuffle: Whether to visit the samples in a new random order each epoch.
        rng: The ``numpy.random.Generator`` the orders are drawn from; required with
            ``shuffle=True``. With ``shard``, seed it the same on every rank.
        drop_last: Whether to leave out a last batch smaller than ``batch_size`` (with
            ``shard``: a last global batch smaller than ``batch_size * world``).
        shard: ``(rank, world)``: this process's rank and the number of processes, as
            given by [lampy.distributed.rank][] and [lampy.distributed.world_size][].
            None (the default) is ``(0, 1)``: every batch whole.

    Raises:
        ShapeError: if the arrays' lengths differ.
        LampyValueError: for a batch size below 1, ``shuffle`` without ``rng``, or a
            ``shard`` whose rank is not in ``[0, world)``.

    Example:
        >>> batches = Batches(x, y, batch_size=32, shuffle=True, rng=np.random.default_rng(0))
        >>> for xb, yb in batches:
        ...     ...
    """

    def __init__(
        self,
        *arrays: Any,
        batch_size: int,
        shuffle: bool = False,
        rng: np.random.Generator | None = None,
        drop_last: bool = False,
        shard: tuple[int, int] | None = None,
    ) -> None:
        self.arrays = _aligned("Batches", arrays)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
            raise LampyTypeError(
                f"Batches: batch_size must be an int, got {type(batch_size).__name__}."
            )
        if batch_size < 1:
            raise LampyValueError(f"Batches: batch_size must be at least 1, got {batch_size}.")
        if shuffle and not isinstance(rng, np.random.Generator):
            raise LampyValueError(
                "Batches: shuffle=True needs rng=numpy.random.default_rng(seed), the "
                "generator each epoch's order is drawn from (lampy has no global seed)."
            )
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.rng = rng
        self.drop_last = drop_last
        self.shard = _shard(shard)

    @property
    def num_samples(self) -> int:
        """The number of samples (rows) in each array."""
        return len(self.arrays[0])

    def __len__(self) -> int:
        """Batches per epoch (on each rank, with ``shard``)."""
        n, g = self.num_samples, self.batch_size * self.shard[1]
        return n // g if self.drop_last else math.ceil(n / g)

    def __iter__(self) -> Iterator[tuple[np.ndarray, ...]]:
        n, b = self.num_samples, self.batch_size
        rank, world = self.shard
        g = b * world
        order = None
        if self.shuffle:
            assert self.rng is not None
            order = self.rng.permutation(n)
        for start in range(0, len(self) * g, g):
            stop = min(start + g, n) if world == 1 else start + g
            if stop > n:  # the last global batch, padded to a multiple of world samples
                stop = start + math.ceil((n - start) / world) * world
                positions = np.arange(start + rank, stop, world) % n
                idx = positions if order is None else order[positions]
                yield tuple(a[idx] for a in self.arrays)
            elif order is None:  # views, no copy
                yield tuple(a[start + rank : stop : world] for a in self.arrays)
            else:
                idx = order[start + rank : stop : world]
                yield tuple(a[idx] for a in self.arrays)

    def __repr__(self) -> str:
        shapes = ", ".join(str(a.shape) for a in self.arrays)
        shard = "" if self.shard == (0, 1) else f", shard={self.shard}"
        return (
            f"Batches({shapes}, batch_size={self.batch_size}, shuffle={self.shuffle}, "
            f"drop_last={self.drop_last}{shard}; {len(self)} batches)"
        )


def _shard(shard: Any) -> tuple[int, int]:
    """``shard`` checked and as a pair of ints; None is ``(0, 1)``."""
    if shard is None:
        return (0, 1)
    ok = (
        isinstance(shard, tuple | list)
        and len(shard) == 2
        and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in shard)
    )
    if not ok:
        raise LampyTypeError(
            f"Batches: shard must be a pair of ints (rank, world), got {shard!r}; pass "
            "shard=(lampy.distributed.rank(), lampy.distributed.world_size())."
        )
    rank, world = int(shard[0]), int(shard[1])
    if world < 1 or not 0 <= rank < world:
        raise LampyValueError(
            f"Batches: shard=(rank, world) needs world >= 1 and 0 <= rank < world, got "
            f"{(rank, world)}."
        )
    return (rank, world)


def train_test_split(
    *arrays: Any,
    test_size: float | int = 0.25,
    seed: int | None = None,
    shuffle: bool = True,
    stratify: Any = None,
) -> list[np.ndarray]:
    """Split aligned arrays into train and test parts: ``[a_train, a_test, b_train, ...]``.

    The order of the returned list is scikit-learn's. Shuffling draws from
    ``numpy.random.default_rng(seed)``, so a seed gives the same split every time.

    Args:
        *arrays: Arrays with the same length along their first dimension.
        test_size: The fraction of samples in the test part (0 < f < 1; the count is
            rounded up, as scikit-learn does) or an absolute count.
        seed: Seed of the shuffle.
        shuffle: Whether to shuffle before splitting (otherwise the test part is the
            tail).
        stratify: Class labels (one per sample): each class is split in the same
            proportion, so both parts keep the class balance.

    Raises:
        ShapeError: if the lengths differ.
        LampyValueError: if the test or train part would be empty.
    """
    data = _aligned("train_test_split", arrays)
    n = len(data[0])
    if isinstance(test_size, float) and not isinstance(test_size, bool):
        if not 0.0 < test_size < 1.0:
            raise LampyValueError(
                f"train_test_split: a float test_size must lie in (0, 1), got {test_size}."
            )
        n_test = math.ceil(test_size * n)
    else:
        n_test = int(test_size)
    if not 0 < n_test < n:
        raise LampyValueError(
            f"train_test_split: {n_test} test samples out of {n} would leave a part empty; "
            "choose a test_size between 1 and n - 1 samples."
        )
    rng = np.random.default_rng(seed)
    if stratify is not None:
        if not shuffle:
            raise LampyValueError("train_test_split: stratify needs shuffle=True.")
        labels = _aligned("train_test_split", (stratify,))[0]
        if len(labels) != n:
            raise ShapeError(
                f"train_test_split: stratify has {len(labels)} labels for {n} samples."
            )
        test_parts = []
        classes, inverse = np.unique(labels, return_inverse=True)
        # Largest-remainder allocation of the test count over the classes.
        counts = np.bincount(inverse, minlength=len(classes))
        exact = counts * (n_test / n)
        take = np.floor(exact).astype(int)
        for c in np.argsort(-(exact - take), kind="stable")[: n_test - take.sum()]:
            take[c] += 1
        for c in range(len(classes)):
            members = rng.permutation(np.flatnonzero(inverse == c))
            test_parts.append(members[: take[c]])
        test_idx = np.sort(np.concatenate(test_parts))
        mask = np.ones(n, bool)
        mask[test_idx] = False
        train_idx = rng.permutation(np.flatnonzero(mask))
        test_idx = rng.permutation(test_idx)
    else:
        order = rng.permutation(n) if shuffle else np.arange(n)
        train_idx, test_idx = order[: n - n_test], order[n - n_test :]
    out: list[np.ndarray] = []
    for a in data:
        out += [a[train_idx], a[test_idx]]
    return out
