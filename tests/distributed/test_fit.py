"""fit(..., distributed=True): the same training as one process on the global batches,
the same numbers on every rank, one writer of progress, checkpoints and logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.distributed.mpi import requires_mpi, run_ok

pytestmark = requires_mpi


@pytest.mark.parametrize(("n", "accumulate"), [(2, 1), (2, 2), (3, 1)])
def test_fit_distributed_matches_one_process(n: int, accumulate: int, tmp_path: Path) -> None:
    """Weights within 1e-6 relative of fit in one process with batch n * B; every rank
    logs the same loss, validation numbers and learning rate as that process (the
    plateau scheduler acts alike); only rank 0 prints, and writes the checkpoint and the
    log."""
    reports = run_ok(n, "fit.py", tmp_path, "--accumulate", str(accumulate))
    for rep in reports:
        assert rep["rel_err"] < 1e-6
        assert rep["digest"] == reports[0]["digest"]
        for key, values in rep["ref_history"].items():
            assert rep["history"][key] == pytest.approx(values, rel=1e-9), key
        assert rep["files"] == (["best.safetensors", "log.csv"] if rep["rank"] == 0 else [])
    printed = [line for line in reports[0]["stdout"].splitlines() if line.startswith("epoch ")]
    assert [line.split(":")[0] for line in printed] == ["epoch 1/3", "epoch 2/3", "epoch 3/3"]
