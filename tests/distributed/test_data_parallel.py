"""DataParallel on real processes: K steps on W ranks with per-rank batch B give the
parameters of one process with batch W * B (float64, 1e-6 relative), on every rank alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lampy
import lampy.distributed as dist
from lampy.distributed._data_parallel import plan_buckets
from tests.distributed.mpi import requires_mpi, run_ok

CASES = {
    # name: (ranks, script arguments)
    "mlp-2-default-buckets": (2, ["--model", "mlp"]),
    "cnn-2-one-param-buckets-adam": (
        2,
        ["--model", "cnn", "--bucket-bytes", "0", "--optimizer", "adam"],
    ),
    "mlp-2-no-overlap": (2, ["--model", "mlp", "--bucket-bytes", "600", "--no-overlap"]),
    "mlp-2-accumulate": (2, ["--model", "mlp", "--bucket-bytes", "0", "--accumulate", "2"]),
    "twisted-3-uneven-padded": (
        3,
        ["--model", "twisted", "--samples", "50", "--bucket-bytes", "600"],
    ),
    "cnn-3-drop-last": (
        3,
        ["--model", "cnn", "--samples", "50", "--drop-last", "--bucket-bytes", "0"],
    ),
}


@requires_mpi
@pytest.mark.parametrize("case", list(CASES))
def test_ranks_train_like_one_process_with_the_global_batch(case: str, tmp_path: Path) -> None:
    """Every rank ends with the same parameters (bit for bit) as the others, within 1e-6
    relative of one process training on the global batches, whatever the bucket size,
    overlap, optimizer, gradient accumulation, and with an epoch tail that is padded
    (uneven split) or dropped."""
    n, args = CASES[case]
    reports = run_ok(n, "equivalence.py", tmp_path, "--batch", "4", *args)
    for rep in reports:
        assert rep["rel_err"] < 1e-6, rep
        assert rep["digest"] == reports[0]["digest"]
        assert rep["shard_sizes"] == reports[0]["shard_sizes"]
        assert rep["steps"] > 5
    sizes = reports[0]["shard_sizes"]
    if "padded" in case:  # 50 samples, global batches of 12: 4 full, 2 left padded to 3
        assert sizes == [4, 4, 4, 4, 1] * 2
    if "drop-last" in case:
        assert sizes == [4] * 8
    if case == "twisted-3-uneven-padded":
        # after the first pass: the order rank 0's gradients became final (the head, made
        # first, before the body), not the reverse of the parameters' order, cut at 600
        # bytes (float64 head.weight 3x16, head.bias 3, body.weight 16x6, body.bias 16)
        assert reports[0]["buckets"] == [
            ["head.bias", "head.weight", "body.bias"],
            ["body.weight"],
        ]


@requires_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_parameters_unused_on_some_ranks(n: int, tmp_path: Path) -> None:
    """A parameter that only some ranks' losses use gets, on every rank, the mean with
    zeros from the others (a new gradient where it had none), so training matches one
    process on the mean of the ranks' losses; a parameter no rank uses keeps no
    gradient (weight decay skips it, as in one process)."""
    reports = run_ok(n, "unused.py", tmp_path)
    for rep in reports:
        assert rep["rel_err"] < 1e-6, rep
        assert rep["digest"] == reports[0]["digest"]
        assert not any(rep["c_grads"]) and rep["c_unchanged"]


def test_plan_buckets_cuts_at_the_cap() -> None:
    """Buckets are consecutive runs of at most cap bytes; a larger parameter stands alone;
    cap 0 gives one parameter per bucket."""
    sizes = [100, 50, 300, 20, 20]
    assert plan_buckets([4, 3, 2, 1, 0], sizes, 100) == [[4, 3], [2], [1], [0]]
    assert plan_buckets([0, 1, 2, 3, 4], sizes, 10**6) == [[0, 1, 2, 3, 4]]
    assert plan_buckets([0, 1], sizes, 0) == [[0], [1]]
    assert plan_buckets([], sizes, 10) == []


def test_bad_arguments_before_init_still_name_init(scope: lampy.Scope) -> None:
    """DataParallel checks that init() was called before anything else."""
    with pytest.raises(dist.NotInitializedError):
        dist.DataParallel(lampy.nn.Linear.init(2, 2, rng=np.random.default_rng(0)))
