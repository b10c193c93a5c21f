"""MPI fault cases (issue 23, #3 and #4), run under mpirun (skipped without the ``mpi``
extra): a rank that leaves with ``sys.exit`` does not leave the others waiting for the
collective timeout, and ranks with datasets of different lengths get a DistributedError
naming the mismatch on every rank, not a raw MPI error on one and a wait on the other."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.distributed.mpi import launch, requires_mpi

pytestmark = requires_mpi


def test_sys_exit_on_one_rank_ends_the_job_quickly(tmp_path: Path) -> None:
    """Rank 1 calls sys.exit(3) at step 3 with a 600 s collective timeout: rank 0 raises
    a DistributedError naming rank 1's exit within seconds (it waited the full timeout,
    as the abort hook does not see SystemExit), and the job ends with an error."""
    start = time.monotonic()
    result = launch(2, "faults.py", "--out", str(tmp_path), "--how", "exit", timeout=90)
    assert time.monotonic() - start < 60
    assert result.returncode != 0
    report = json.loads((tmp_path / "rank0.json").read_text())
    assert report["step"] == 3
    assert report["error"].startswith("DistributedError: lampy.distributed: rank 1 of 2 left")
    assert "DataParallel.backward" in report["error"]


def test_datasets_of_different_lengths_raise_on_every_rank(tmp_path: Path) -> None:
    """fit(..., distributed=True) with 64 samples on rank 0 and 80 on rank 1: both ranks
    raise the same DistributedError naming each rank's length, before any step."""
    result = launch(2, "faults.py", "--out", str(tmp_path), "--how", "lengths", timeout=90)
    assert result.returncode == 0, result.stderr
    errors = [json.loads((tmp_path / f"rank{r}.json").read_text())["error"] for r in (0, 1)]
    assert errors[0] == errors[1]
    assert "rank 0: 64 samples" in errors[0] and "rank 1: 80 samples" in errors[0]
    assert errors[0].startswith("DistributedError: fit(..., distributed=True)")
