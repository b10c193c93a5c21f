"""Batches(prefetch=k): a background thread reads ahead at most k batches, in the same
order as without prefetching; its exceptions reach the loop; it stops with the loop."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lampy._errors import LampyTypeError, LampyValueError
from lampy.data import Batches

THREAD = "lampy-Batches-prefetch"


def prefetch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD]


class Recording:
    """A dataset object that records which batches were asked for, and may fail."""

    def __init__(self, n: int, fail_at: int | None = None, gate: threading.Event | None = None):
        self.n, self.fail_at, self.gate = n, fail_at, gate
        self.asked: list[int] = []

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, idx: np.ndarray) -> np.ndarray:
        if self.gate is not None and self.asked:
            self.gate.wait(timeout=10)
        self.asked.append(int(idx[0]))
        if self.fail_at is not None and len(self.asked) - 1 == self.fail_at:
            raise OSError(f"cannot read batch {self.fail_at}")
        return np.asarray(idx, dtype=np.float64)


@given(
    n=st.integers(0, 30),
    batch_size=st.integers(1, 7),
    prefetch=st.integers(1, 4),
    shuffle=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_prefetch_gives_the_same_batches_in_the_same_order(
    n: int, batch_size: int, prefetch: int, shuffle: bool, seed: int
) -> None:
    """Two epochs with prefetching equal two epochs without, batch for batch."""
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    y = np.arange(n)

    def epochs(k: int) -> list[list[tuple[np.ndarray, ...]]]:
        rng = np.random.default_rng(seed) if shuffle else None
        b = Batches(x, y, batch_size=batch_size, shuffle=shuffle, rng=rng, prefetch=k)
        return [list(b), list(b)]

    plain, ahead = epochs(0), epochs(prefetch)
    for e_plain, e_ahead in zip(plain, ahead, strict=True):
        assert len(e_plain) == len(e_ahead)
        for bp, ba in zip(e_plain, e_ahead, strict=True):
            assert all(np.array_equal(p, a) for p, a in zip(bp, ba, strict=True))
    assert prefetch_threads() == []


def test_prefetch_reads_at_most_k_batches_ahead() -> None:
    """While the loop holds its first batch, the thread gathers at most k more (k in the
    queue, plus one gathered and waiting for a slot), then waits."""
    data = Recording(100)
    it = iter(Batches(data, batch_size=1, prefetch=2))
    next(it)
    for _ in range(200):  # let the thread fill the queue (bounded wait, no timing)
        if len(data.asked) >= 4:
            break
        threading.Event().wait(0.005)
    assert len(data.asked) <= 1 + 2 + 1
    it.close()  # type: ignore[attr-defined]
    assert prefetch_threads() == []
    assert len(data.asked) <= 4


def test_an_exception_while_gathering_is_raised_in_the_loop_in_order() -> None:
    """The batches before the failing one arrive; then the loop gets the thread's error,
    and the thread is gone."""
    data = Recording(10, fail_at=3)
    got: list[float] = []

    def consume() -> None:
        for (xb,) in Batches(data, batch_size=2, prefetch=2):
            got.append(float(xb[0]))

    with pytest.raises(OSError, match="cannot read batch 3"):
        consume()
    assert got == [0.0, 2.0, 4.0]
    assert prefetch_threads() == []


class Interrupted(BaseException):
    """Not an Exception: as KeyboardInterrupt or SystemExit raised by a dataset."""


class Raising:
    """A dataset whose third batch raises ``error``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __len__(self) -> int:
        return 10

    def __getitem__(self, idx: np.ndarray) -> np.ndarray:
        if idx[0] == 4:
            raise self.error
        return np.asarray(idx)


@pytest.mark.parametrize("error", [Interrupted("stop"), KeyboardInterrupt(), SystemExit(3)])
def test_a_base_exception_while_gathering_reaches_the_loop(error: BaseException) -> None:
    """KeyboardInterrupt, SystemExit or another BaseException raised while gathering is
    raised in the loop after the batches before it, and the thread is gone (the loop used
    to wait forever for a batch the dead thread would never send). The loop runs in a
    thread of its own here, so a hang fails the test instead of stopping the suite."""
    got: list[int] = []
    caught: list[BaseException] = []

    def consume() -> None:
        try:
            for (xb,) in Batches(Raising(error), batch_size=2, prefetch=2):
                got.append(int(xb[0]))
        except BaseException as e:
            caught.append(e)

    loop = threading.Thread(target=consume, daemon=True)
    loop.start()
    loop.join(timeout=30)
    assert not loop.is_alive(), "the loop hangs waiting for the prefetch thread"
    assert caught == [error] and got == [0, 2]
    assert prefetch_threads() == []


def test_stopping_early_stops_the_thread() -> None:
    """Closing the iterator after two batches (a for loop left by break or an exception
    does this) stops the thread, which reads nothing more."""
    gate = threading.Event()
    data = Recording(1000, gate=gate)
    it = iter(Batches(data, batch_size=10, prefetch=3))
    next(it)
    gate.set()
    next(it)
    it.close()  # type: ignore[attr-defined]
    assert prefetch_threads() == []
    assert len(data.asked) <= 2 + 3 + 1  # consumed, queued, one waiting for a slot


def test_an_exception_in_the_loop_stops_the_thread() -> None:
    """An exception raised by the loop body stops the thread as the iterator closes."""
    x = np.zeros((100, 2))

    def train() -> Any:
        it = iter(Batches(x, batch_size=4, prefetch=2))
        try:
            for _ in it:
                raise RuntimeError("step failed")
        finally:
            it.close()  # type: ignore[attr-defined]

    with pytest.raises(RuntimeError, match="step failed"):
        train()
    assert prefetch_threads() == []


def test_prefetch_errors() -> None:
    """prefetch must be a non-negative int."""
    with pytest.raises(LampyValueError, match="prefetch must be 0"):
        Batches(np.zeros(4), batch_size=2, prefetch=-1)
    with pytest.raises(LampyTypeError, match="prefetch must be an int"):
        Batches(np.zeros(4), batch_size=2, prefetch=1.5)  # type: ignore[arg-type]
