"""lampy.distributed's world: clear errors before init and without the extra, a world of
one without mpirun, and ranks, metric reduction and broadcasts under mpirun."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import lampy
import lampy.distributed as dist
from lampy import nn
from tests.distributed.mpi import requires_mpi, run_ok


def test_importing_does_not_start_mpi() -> None:
    """Importing lampy (and lampy.distributed) neither imports mpi4py nor initializes."""
    assert not dist.is_initialized()
    assert "mpi4py.MPI" not in sys.modules
    assert dist.is_main_process()  # before init, every process is its own main process


def test_functions_before_init_name_init(scope: lampy.Scope) -> None:
    """Every distributed function used before init() raises NotInitializedError naming
    the function and the fix."""
    model = nn.Linear.init(2, 2, rng=np.random.default_rng(0))
    calls = {
        "rank": dist.rank,
        "world_size": dist.world_size,
        "barrier": dist.barrier,
        "reduce_metrics": lambda: dist.reduce_metrics({"loss": 1.0}),
        "broadcast_parameters": lambda: dist.broadcast_parameters(model),
        "broadcast_optimizer_state": lambda: dist.broadcast_optimizer_state(
            lampy.optim.SGD(model.parameters(), lr=0.1)
        ),
        "DataParallel": lambda: dist.DataParallel(model),
    }
    for name, call in calls.items():
        with pytest.raises(
            dist.NotInitializedError, match=rf"{name}.*lampy\.distributed\.init\(\)"
        ):
            call()


def test_fit_distributed_before_init_names_init(scope: lampy.Scope) -> None:
    """fit(..., distributed=True) without init() is the same clear error, before training."""
    model = nn.Linear.init(2, 2, rng=np.random.default_rng(0))
    with pytest.raises(dist.NotInitializedError, match=r"distributed=True.*init\(\)"):
        lampy.train.fit(
            model,
            lambda m, b: m(b[0]).sum(),
            lampy.optim.SGD(model.parameters(), lr=0.1),
            lampy.data.Batches(np.zeros((4, 2)), batch_size=2),
            epochs=1,
            distributed=True,
        )


def test_missing_extra_names_the_pip_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without mpi4py, init() raises MissingExtraError (an ImportError) naming
    pip install "lampy[mpi]", and leaves lampy.distributed uninitialized."""
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # makes `import mpi4py` fail
    with pytest.raises(lampy.MissingExtraError, match=r'pip install "lampy\[mpi\]"') as info:
        dist.init()
    assert isinstance(info.value, ImportError)
    assert not dist.is_initialized()


@pytest.mark.parametrize("timeout", [0, -1.0, "10", float("nan")])
def test_init_rejects_a_bad_timeout(timeout: object) -> None:
    """init(timeout=...) takes a positive number of seconds or None."""
    with pytest.raises(lampy.LampyValueError, match="timeout must be a positive number"):
        dist.init(timeout=timeout)  # type: ignore[arg-type]
    assert not dist.is_initialized()


@requires_mpi
@pytest.mark.parametrize("n", [None, 2, 3], ids=["alone", "mpirun-n2", "mpirun-n3"])
def test_world_reductions_and_broadcasts(n: int | None, tmp_path: Path) -> None:
    """Alone a script is rank 0 of a world of 1; under mpirun each rank knows its rank;
    reduce_metrics gives every rank the sample-weighted mean; different metric names are
    an error on every rank; broadcasts leave every rank with rank 0's parameters, buffers
    and optimizer state; DataParallel keeps rank 0's buffers on every rank."""
    reports = run_ok(n, "world.py", tmp_path)
    world = n or 1
    weights = np.arange(world) + 1.0  # rank r reports mean r over r + 1 samples
    expected_loss = float((np.arange(world) * weights).sum() / weights.sum())
    for r, rep in enumerate(reports):
        assert rep["before"] == [False, True]
        assert rep["world"] == world and rep["main"] == (r == 0)
        assert rep["reduced"]["loss"] == pytest.approx(expected_loss, rel=1e-15)
        assert rep["reduced"]["one"] == pytest.approx(1.0, rel=1e-15)
        if world > 1:
            assert (
                "the ranks gave different metrics: rank 0: [only_on_0]; rank 1:"
                in (rep["names_error"])
            )
        for key in ("state_after", "opt_after", "running"):
            assert rep[key] == reports[0][key], key
        assert rep["opt_steps"] == reports[0]["opt_steps"] == [2] * 6  # rank 0's state
    if world > 1:
        assert reports[1]["state_before"] != reports[0]["state_before"]  # it did change


@requires_mpi
def test_mismatched_models_are_an_error_on_every_rank(tmp_path: Path) -> None:
    """A model differing in a shape, a name or a dtype (or a different optimizer) on one
    rank raises DistributedError on every rank, naming the first difference."""
    reports = run_ok(2, "mismatch.py", tmp_path)
    expected = {
        "shape": "rank 1 has '0.weight: float64[5, 3]' where rank 0 has '0.weight: float64[4, 3]'",
        "name": "rank 1 has '2.weight: float64[2, 4]' where rank 0 has '1.weight: float64[2, 4]'",
        "dtype": "rank 1 has '0.weight: float32[4, 3]' where rank 0 has '0.weight: float64[4, 3]'",
        "optimizer": "rank 1 has 'SGD' where rank 0 has 'Adam'",
    }
    for rep in reports:
        for way, text in expected.items():
            assert text in rep["errors"][way], (way, rep["errors"][way])
            assert "the ranks hold different" in rep["errors"][way]
