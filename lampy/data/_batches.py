"""Mini-batches of aligned numpy arrays, and a seeded train/test split."""

from __future__ import annotations

import math
import mmap
import queue
import threading
from collections.abc import Generator, Iterator
from typing import Any

import numpy as np

from lampy._errors import LampyError, LampyTypeError, LampyValueError, ShapeError
from lampy.random import resolve_rng

__all__ = ["Batches", "train_test_split"]


def _lazy(a: Any) -> bool:
    """Whether ``a`` is a dataset object (not an array or a list): it has ``__len__`` and
    ``__getitem__`` and is indexed with integer index arrays, one batch at a time."""
    return (
        not isinstance(a, np.ndarray | list | tuple)
        and hasattr(a, "__len__")
        and hasattr(a, "__getitem__")
        and not hasattr(a, "__array__")
    )


def _read_only_mapping(a: Any) -> mmap.mmap | None:
    """The mapping under a read-only ``numpy.memmap`` (``np.load(path, mmap_mode="r")``),
    whose pages can be handed back to the OS after each batch; None for anything else."""
    while isinstance(a, np.ndarray) and not isinstance(a, np.memmap):
        a = a.base  # np.asarray(memmap) is a plain view of the memmap
    if (
        isinstance(a, np.memmap)
        and a.mode == "r"
        and isinstance(a.base, mmap.mmap)
        and hasattr(mmap, "MADV_DONTNEED")
    ):
        return a.base
    return None


def _aligned(owner: str, arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arrays as numpy arrays, checked to share a first dimension."""
    if not arrays:
        raise LampyValueError(f"{owner}: give at least one array, e.g. {owner}(x, y, ...).")
    out = tuple(a if _lazy(a) else np.asarray(a) for a in arrays)
    for i, a in enumerate(out):
        if _lazy(a):
            continue
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

    In file order (``shuffle=False``, no ``shard``) a batch of an in-memory array is a
    *read-only view* of it, not a copy: ``xb /= 255`` raises instead of changing your
    data (write ``xb = xb / 255``); a shuffled batch is a new array.

    Only one batch is in memory at a time: each batch is gathered with one index
    array, so a ``numpy.memmap`` (``np.load(path, mmap_mode="r")``) is read batch by
    batch from disk, never whole. The pages of a file read through a memory map count
    in the process's resident memory for as long as they stay mapped, so after
    gathering each batch (a copy), ``Batches`` hands the pages of a *read-only* memmap
    back to the OS (``madvise(MADV_DONTNEED)``; the data stays in the OS's file cache):
    the process's resident memory stays at about one batch whatever the file's size
    (tested: one epoch over a 2 GB file peaks under 400 MB). In file order
    (``shuffle=False``) this costs almost nothing; with ``shuffle=True`` each scattered
    row maps its neighbourhood again (the kernel's fault-around), which made an epoch
    over 2 GB in batches of 4096 rows of 1 KiB about 20 s instead of 1 s: shuffle such a
    file offline, or read it in order. Any other object with ``__len__`` and a
    ``__getitem__`` taking an integer index array (a lazily decoded dataset) works too.

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
        *arrays: Arrays (or dataset objects, see above) with the same length along
            their first dimension (samples).
        batch_size: Samples per batch (per rank with ``shard``; the last batch may be
            smaller).
        shuffle: Whether to visit the samples in a new random order each epoch.
        rng: The ``numpy.random.Generator`` the orders are drawn from; lampy's default
            generator (``lampy.manual_seed``) at each epoch when None, as PyTorch's
            ``DataLoader``. Required with ``shuffle`` and ``shard``: seed it the same on
            every rank.
        drop_last: Whether to leave out a last batch smaller than ``batch_size`` (with
            ``shard``: a last global batch smaller than ``batch_size * world``).
        prefetch: Batches a background thread gathers ahead of the loop (0: none, each
            batch is gathered when the loop asks for it). Useful when gathering is slow
            (reading a memmap from disk, decoding): it overlaps with the training step.
            At most ``prefetch`` batches wait in memory; the order is the same as without
            prefetching; an exception raised while gathering is raised in the loop, at the
            batch it concerns. The thread stops when the epoch ends, when the loop raises,
            and when the iterator is closed (``it.close()``; a ``for`` loop left with
            ``break`` closes it when the iterator is collected).
        shard: ``(rank, world)``: this process's rank and the number of processes, as
            given by ``lampy.distributed.rank()`` and ``lampy.distributed.world_size()``.
            None (the default) is ``(0, 1)``: every batch whole.

    Raises:
        ShapeError: if the arrays' lengths differ.
        LampyValueError: for a batch size below 1, a negative ``prefetch``, ``shuffle``
            and ``shard`` without ``rng``, or a ``shard`` whose rank is not in ``[0, world)``.

    Examples:
        >>> x, y = np.zeros((100, 3), np.float32), np.arange(100)
        >>> batches = Batches(x, y, batch_size=32, shuffle=True, rng=np.random.default_rng(0))
        >>> [xb.shape for xb, yb in batches]
        [(32, 3), (32, 3), (32, 3), (4, 3)]
        >>> len(batches)
        4
    """

    def __init__(
        self,
        *arrays: Any,
        batch_size: int,
        shuffle: bool = False,
        rng: np.random.Generator | None = None,
        drop_last: bool = False,
        prefetch: int = 0,
        shard: tuple[int, int] | None = None,
    ) -> None:
        self.arrays = _aligned("Batches", arrays)
        if isinstance(prefetch, bool) or not isinstance(prefetch, int | np.integer):
            raise LampyTypeError(
                f"Batches: prefetch must be an int, got {type(prefetch).__name__}."
            )
        if prefetch < 0:
            raise LampyValueError(
                f"Batches: prefetch must be 0 (no background thread) or a positive number of "
                f"batches to read ahead, got {prefetch}."
            )
        self.prefetch = int(prefetch)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
            raise LampyTypeError(
                f"Batches: batch_size must be an int, got {type(batch_size).__name__}."
            )
        if batch_size < 1:
            raise LampyValueError(f"Batches: batch_size must be at least 1, got {batch_size}.")
        self.shard = _shard(shard)
        if rng is not None:
            resolve_rng("Batches", rng)  # the type check
        elif shuffle and self.shard[1] > 1:
            raise LampyValueError(
                "Batches: shuffle=True with shard= needs rng=numpy.random.default_rng(seed), "
                "the same seed on every rank: the ranks must draw the same order to split "
                "it, and each process's default generator is seeded apart."
            )
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.rng = rng
        self.drop_last = drop_last

    @property
    def num_samples(self) -> int:
        """The number of samples (rows) in each array."""
        return len(self.arrays[0])

    def __len__(self) -> int:
        """Batches per epoch (on each rank, with ``shard``)."""
        n, g = self.num_samples, self.batch_size * self.shard[1]
        return n // g if self.drop_last else math.ceil(n / g)

    def __iter__(self) -> Iterator[tuple[np.ndarray, ...]]:
        # The order is drawn here, in the caller's thread, when the epoch starts.
        order = None
        if self.shuffle:
            order = resolve_rng("Batches", self.rng).permutation(self.num_samples)
        batches = self._gather(order)
        if self.prefetch:
            return _prefetched(batches, self.prefetch)
        return batches

    def _gather(self, order: np.ndarray | None) -> Generator[tuple[np.ndarray, ...], None, None]:
        n, b = self.num_samples, self.batch_size
        rank, world = self.shard
        stop = len(self) * b * world
        mappings = [_read_only_mapping(a) for a in self.arrays]
        mapped = [m for m in mappings if m is not None]
        for start in range(0, stop, b * world):
            if world > 1:  # positions rank, rank + world... of the global batch at start
                end = start + b * world
                if end > n:  # the last global batch, padded to a multiple of world samples
                    end = start + math.ceil((n - start) / world) * world
                positions = np.arange(start + rank, end, world) % n
                idx = positions if order is None else order[positions]
                batch = tuple(a[idx] for a in self.arrays)
            elif order is not None:
                idx = order[start : start + b]
                batch = tuple(a[idx] for a in self.arrays)
            else:
                idx = np.arange(start, min(start + b, n))
                batch = tuple(
                    a[idx] if _lazy(a) else _rows(a, start, start + b, m is not None)
                    for a, m in zip(self.arrays, mappings, strict=True)
                )
            for m in mapped:  # the batch is a copy: the file's pages can go back
                m.madvise(mmap.MADV_DONTNEED)
            yield batch

    def __repr__(self) -> str:
        shapes = ", ".join(str(getattr(a, "shape", len(a))) for a in self.arrays)
        shard = "" if self.shard == (0, 1) else f", shard={self.shard}"
        return (
            f"Batches({shapes}, batch_size={self.batch_size}, shuffle={self.shuffle}, "
            f"drop_last={self.drop_last}, prefetch={self.prefetch}{shard}; {len(self)} batches)"
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


def _rows(a: np.ndarray, start: int, stop: int, mapped: bool) -> np.ndarray:
    """Rows ``start:stop`` of ``a``: a read-only view (an in-place change of the batch
    would change the caller's data), or a copy of a read-only memory-mapped array (whose
    pages are handed back to the OS after the batch is gathered)."""
    rows = a[start:stop]
    if mapped:
        return np.array(rows)
    rows.flags.writeable = False
    return rows


_DONE = object()


def _prefetched(
    source: Generator[tuple[np.ndarray, ...], None, None], depth: int
) -> Iterator[tuple[np.ndarray, ...]]:
    """The items of ``source``, produced by a background thread at most ``depth`` ahead.

    The thread stops at the source's end, at its first exception (re-raised here, in
    order) and when this generator is closed or left by an exception.
    """
    slots: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: tuple[Any, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in source:
                if not put((item, None)):
                    return
        # Any exception, KeyboardInterrupt and SystemExit too, is handed to the consumer
        # and raised there: one that ended this thread unreported left the loop waiting
        # for the next batch forever.
        except BaseException as e:
            put((_DONE, e))
            return
        finally:
            source.close()
        put((_DONE, None))

    thread = threading.Thread(target=work, name="lampy-Batches-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            try:
                item, error = slots.get(timeout=0.1)
            except queue.Empty:
                if thread.is_alive() or not slots.empty():
                    continue
                raise LampyError(  # not expected: the thread always says why it stops
                    "Batches: the prefetch thread stopped without a batch or an error."
                ) from None
            if error is not None:
                raise error
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        thread.join()


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
