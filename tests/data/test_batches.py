"""lampy.data: Batches covers every sample once per epoch in aligned batches, reshuffles
reproducibly, and train_test_split partitions (stratified or not) with a seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.data import Batches, train_test_split


@given(
    n=st.integers(0, 40),
    batch_size=st.integers(1, 12),
    shuffle=st.booleans(),
    drop_last=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_an_epoch_visits_each_sample_once_in_aligned_batches(
    n: int, batch_size: int, shuffle: bool, drop_last: bool, seed: int
) -> None:
    """Batches are aligned across arrays, sized batch_size (but the last), len() counts them."""
    x = np.arange(n * 2).reshape(n, 2)
    y = np.arange(n) * 10
    rng = np.random.default_rng(seed) if shuffle else None
    b = Batches(x, y, batch_size=batch_size, shuffle=shuffle, rng=rng, drop_last=drop_last)
    batches = list(b)
    assert len(batches) == len(b)
    assert len(b) == (n // batch_size if drop_last else math.ceil(n / batch_size))
    seen = []
    for i, (xb, yb) in enumerate(batches):
        assert len(xb) == len(yb)
        assert len(xb) == batch_size or (i == len(batches) - 1 and not drop_last)
        np.testing.assert_array_equal(xb[:, 0] // 2 * 10, yb)
        seen += list(yb // 10)
    if drop_last:
        assert len(set(seen)) == len(seen) == len(b) * batch_size
    else:
        assert sorted(seen) == list(range(n))
    if not shuffle:
        assert seen == list(range(len(seen)))


def test_shuffle_differs_between_epochs_and_repeats_with_the_seed() -> None:
    """Each epoch draws a new order; the same seed gives the same sequence of orders."""
    x = np.arange(50)

    def epochs(seed: int) -> list[list[int]]:
        b = Batches(x, batch_size=7, shuffle=True, rng=np.random.default_rng(seed))
        return [np.concatenate([xb for (xb,) in b]).tolist() for _ in range(3)]

    first = epochs(1)
    assert first == epochs(1)
    assert first[0] != first[1] != first[2]
    assert first != epochs(2)


def test_batches_errors() -> None:
    """Mismatched lengths, bad batch sizes and shuffled shards without rng are clear
    errors."""
    with pytest.raises(ShapeError, match=r"different lengths \[3, 4\]"):
        Batches(np.zeros(3), np.zeros(4), batch_size=2)
    with pytest.raises(LampyValueError, match="batch_size must be at least 1, got 0"):
        Batches(np.zeros(3), batch_size=0)
    with pytest.raises(LampyTypeError, match="batch_size must be an int"):
        Batches(np.zeros(3), batch_size=2.0)  # type: ignore[arg-type]
    with pytest.raises(LampyValueError, match="shuffle=True with shard= needs rng"):
        Batches(np.zeros(4), batch_size=2, shuffle=True, shard=(0, 2))
    with pytest.raises(ShapeError, match="0-d"):
        Batches(np.float64(1.0), batch_size=1)
    with pytest.raises(LampyValueError, match="at least one array"):
        Batches(batch_size=1)


@given(
    n=st.integers(0, 50),
    batch_size=st.integers(1, 6),
    world=st.integers(1, 4),
    shuffle=st.booleans(),
    drop_last=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_shards_together_make_the_global_batches(
    n: int, batch_size: int, world: int, shuffle: bool, drop_last: bool, seed: int
) -> None:
    """With shard=(rank, world) every rank gets as many batches, of equal sizes, and the
    ranks' k-th batches together are one process's k-th batch of batch_size * world
    samples; a last global batch that falls short is dropped or padded by wrapping to the
    start of the epoch's order (to ceil(m / world) samples per rank)."""
    x = np.arange(n * 2).reshape(n, 2)
    y = np.arange(n)

    def make(shard: tuple[int, int] | None, size: int) -> Batches:
        rng = np.random.default_rng(seed) if shuffle else None
        return Batches(
            x, y, batch_size=size, shuffle=shuffle, rng=rng, drop_last=drop_last, shard=shard
        )

    whole = [yb for _, yb in make(None, batch_size * world)]
    ranks = [[(xb, yb) for xb, yb in make((r, world), batch_size)] for r in range(world)]
    for r, batches in enumerate(ranks):
        assert len(batches) == len(whole) == len(make((r, world), batch_size))
    for k, global_batch in enumerate(whole):
        parts = [ranks[r][k][1] for r in range(world)]
        for xb, yb in (ranks[r][k] for r in range(world)):
            np.testing.assert_array_equal(xb[:, 0] // 2, yb)  # aligned
            assert len(yb) == len(parts[0])  # equal sizes on every rank
        if len(global_batch) == batch_size * world:
            assert all(len(p) == batch_size for p in parts)
            interleaved = np.stack(parts, axis=1).ravel()  # rank r takes positions r::world
            np.testing.assert_array_equal(interleaved, global_batch)
        else:  # the padded tail of an epoch (drop_last=False)
            assert not drop_last and k == len(whole) - 1
            m = len(global_batch)
            assert len(parts[0]) == math.ceil(m / world)
            interleaved = np.stack(parts, axis=1).ravel()
            np.testing.assert_array_equal(interleaved[:m], global_batch)
            first = np.concatenate(whole)  # the epoch's order, to wrap around to
            np.testing.assert_array_equal(interleaved[m:], np.resize(first, len(interleaved) - m))


def test_shard_of_one_is_the_plain_batches_and_errors() -> None:
    """shard=(0, 1) changes nothing (batches are still views when not shuffled); a bad
    shard is a clear error."""
    x = np.arange(10.0)
    plain, sharded = Batches(x, batch_size=4), Batches(x, batch_size=4, shard=(0, 1))
    for (a,), (b,) in zip(plain, sharded, strict=True):
        np.testing.assert_array_equal(a, b)
        assert np.shares_memory(b, x)
    assert "shard" not in repr(sharded) and "shard=(1, 2)" in repr(
        Batches(x, batch_size=4, shard=(1, 2))
    )
    (view,) = next(iter(plain))
    with pytest.raises(ValueError, match="read-only"):
        view /= 2.0  # would have halved x's first rows
    np.testing.assert_array_equal(x, np.arange(10.0))
    with pytest.raises(LampyValueError, match=r"0 <= rank < world, got \(2, 2\)"):
        Batches(x, batch_size=2, shard=(2, 2))
    with pytest.raises(LampyValueError, match="world >= 1"):
        Batches(x, batch_size=2, shard=(0, 0))
    with pytest.raises(LampyTypeError, match="pair of ints"):
        Batches(x, batch_size=2, shard=3)  # type: ignore[arg-type]


@given(n=st.integers(2, 60), frac=st.floats(0.05, 0.95), seed=st.integers(0, 2**16))
def test_split_partitions_the_samples(n: int, frac: float, seed: int) -> None:
    """Train and test are disjoint, cover every sample, keep alignment; the seed repeats."""
    n_test = math.ceil(frac * n)
    if not 0 < n_test < n:
        return
    x, y = np.arange(n), np.arange(n) * 3
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=frac, seed=seed)
    assert len(x_te) == n_test and len(x_tr) == n - n_test
    assert sorted(np.concatenate([x_tr, x_te]).tolist()) == list(range(n))
    np.testing.assert_array_equal(y_tr, x_tr * 3)
    np.testing.assert_array_equal(y_te, x_te * 3)
    again = train_test_split(x, y, test_size=frac, seed=seed)
    np.testing.assert_array_equal(again[1], x_te)


def test_split_stratified_keeps_class_proportions() -> None:
    """With stratify, each class is split in the test fraction (largest remainders)."""
    labels = np.repeat([0, 1, 2], [50, 30, 20])
    x = np.arange(100)
    _, x_te, _, y_te = train_test_split(x, labels, test_size=0.2, seed=0, stratify=labels)
    assert np.bincount(y_te).tolist() == [10, 6, 4]
    np.testing.assert_array_equal(labels[x_te], y_te)


def test_split_without_shuffle_takes_the_tail_and_errors() -> None:
    """shuffle=False puts the last samples in the test part; empty parts are errors."""
    x_tr, x_te = train_test_split(np.arange(10), test_size=3, shuffle=False)
    assert x_te.tolist() == [7, 8, 9] and x_tr.tolist() == list(range(7))
    with pytest.raises(LampyValueError, match="would leave a part empty"):
        train_test_split(np.arange(3), test_size=3)
    with pytest.raises(LampyValueError, match=r"must lie in \(0, 1\)"):
        train_test_split(np.arange(3), test_size=1.5)


class _Squares:
    """A lazily computed dataset: rows made on demand from an index array."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.asked: list[int] = []

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx)
        self.asked.append(len(idx))
        return (idx.astype(np.float64) ** 2)[:, None]


@pytest.mark.parametrize("shuffle", [False, True])
def test_batches_over_a_dataset_object_ask_one_batch_at_a_time(shuffle):
    """Any object with __len__ and index-array __getitem__ is batched lazily."""
    data = _Squares(10)
    labels = np.arange(10)
    b = Batches(data, labels, batch_size=4, shuffle=shuffle, rng=np.random.default_rng(0))
    got = list(b)
    assert data.asked == [4, 4, 2]
    for xb, yb in got:
        np.testing.assert_array_equal(xb[:, 0], yb.astype(float) ** 2)


def test_batches_read_a_memmap_batch_by_batch(tmp_path):
    """A memory-mapped array stays on disk: each batch is a small in-memory copy."""
    path = tmp_path / "x.npy"
    np.save(path, np.arange(1000, dtype=np.float32).reshape(100, 10))
    x = np.load(path, mmap_mode="r")
    b = Batches(x, batch_size=16, shuffle=True, rng=np.random.default_rng(0))
    assert np.shares_memory(b.arrays[0], x)  # the mapping itself, not a loaded copy
    rows = np.concatenate([xb for (xb,) in b])
    assert not isinstance(rows, np.memmap)
    np.testing.assert_array_equal(np.sort(rows[:, 0]), np.arange(0, 1000, 10))
