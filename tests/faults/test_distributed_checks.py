"""The distributed fault checks without MPI (a stand-in world): the dataset-length
agreement ``fit(..., distributed=True)`` makes first, and the error a waiting rank
raises once another has announced its exit (issue 23, #3 and #4)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lampy.data import Batches
from lampy.distributed import DistributedError
from lampy.distributed._training import _check_same_data
from lampy.distributed._world import World


class _TwoRanks:
    """Answers ``disagreement`` as two ranks would, the other rank's text given."""

    def __init__(self, other: str) -> None:
        self.other = other

    def disagreement(self, text: str, what: str) -> list[str] | None:
        return None if text == self.other else [text, self.other]


def test_datasets_of_different_lengths_are_named() -> None:
    """64 samples here, 80 on rank 1: a DistributedError naming both and the fix."""
    batches = Batches(np.zeros((64, 2)), batch_size=4, shard=(0, 2))
    w: Any = _TwoRanks("80 samples, 10 batches per epoch")
    with pytest.raises(DistributedError) as info:
        _check_same_data(w, "fit(..., distributed=True)", batches)
    message = str(info.value)
    assert "rank 0: 64 samples, 8 batches per epoch" in message
    assert "rank 1: 80 samples, 10 batches per epoch" in message
    assert "shard=" in message


def test_the_same_data_passes() -> None:
    """Equal lengths: nothing raised."""
    batches = Batches(np.zeros((64, 2)), batch_size=4, shard=(0, 2))
    _check_same_data(_TwoRanks("64 samples, 8 batches per epoch"), "fit", batches)  # type: ignore[arg-type]


def test_the_left_error_names_the_rank_and_the_collective() -> None:
    """The error of a rank left waiting names who left and where it waited."""
    w = World.__new__(World)
    w.rank, w.size, w.left = 0, 2, [1]
    message = str(w._left_error("DataParallel.backward"))
    assert message.startswith("lampy.distributed: rank 1 of 2 left")
    assert "DataParallel.backward" in message
