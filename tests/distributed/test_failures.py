"""A failing rank ends the whole job with its error instead of leaving the others waiting."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.distributed.mpi import launch, requires_mpi

pytestmark = requires_mpi


def test_an_uncaught_error_on_one_rank_aborts_every_rank(tmp_path: Path) -> None:
    """Rank 1 raising in the middle of training ends the job (non-zero exit, within the
    launch timeout) with rank 1's traceback and lampy's abort notice."""
    result = launch(2, "failure.py", "--out", str(tmp_path), "--how", "raise", timeout=60)
    assert result.returncode != 0
    assert "RuntimeError: rank 1 failed at step 3" in result.stderr
    assert "rank 1 of 2 raised RuntimeError; aborting every rank (MPI_Abort)" in result.stderr
    assert not list(tmp_path.glob("rank*.json"))  # no rank finished


def test_a_rank_left_waiting_times_out(tmp_path: Path) -> None:
    """With abort_on_error=False and rank 1 stuck, rank 0 raises DistributedTimeoutError
    after init's timeout (4 s), naming what it waited in and how to fix it."""
    result = launch(2, "failure.py", "--out", str(tmp_path), "--how", "timeout", timeout=60)
    assert result.returncode != 0  # rank 0 aborts the job once it has reported
    report = (tmp_path / "rank0.json").read_text()
    assert "rank 0 of 2 waited more than 4 s for the other ranks in DataParallel.backward" in report
    assert "init(timeout=...)" in report
    assert '"step": 3' in report


@pytest.mark.parametrize("how", ["raise"])
def test_a_failure_does_not_depend_on_the_world_size(how: str, tmp_path: Path) -> None:
    """With 3 ranks (2 cores, oversubscribed) one rank's error still ends the job."""
    result = launch(3, "failure.py", "--out", str(tmp_path), "--how", how, timeout=60)
    assert result.returncode != 0
    assert "rank 1 of 3 raised RuntimeError" in result.stderr
