"""Every script in examples/ runs to completion (with small sizes where it takes them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.distributed.mpi import ENV as MPI_ENV
from tests.distributed.mpi import HAVE_MPI4PY, MPIRUN, mpirun_command

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))

# Arguments that keep a run to a few seconds; an example not listed runs with its
# defaults. "{tmp}" stands for the test's temporary directory (plots are written there).
SMOKE_ARGS: dict[str, list[str]] = {
    "fit_curve.py": ["--steps", "60"],
    "digits_mlp.py": ["--epochs", "1", "--plot", "{tmp}/digits_mlp.png"],
    "digits_cnn.py": ["--epochs", "1", "--plot", "{tmp}/digits_cnn.png"],
    "sequence_transformer.py": ["--epochs", "1", "--steps-per-epoch", "10", "--test", "200"],
    "char_gpt.py": ["--iters", "10", "--n-layer", "1", "--n-embd", "32", "--batch-size", "4"],
    "regression.py": ["--linear-epochs", "20", "--mlp-epochs", "5"],
    "memory_bounded.py": ["--steps", "3", "--plot", "{tmp}/memory.png", "--data-mb", "16"],
    "distributed_digits.py": ["--epochs", "1", "--checkpoint", "{tmp}/best.safetensors"],
}

# Examples that train on several processes: launched with `mpirun -n <ranks>`, skipped
# without the mpi extra.
MPI_RANKS: dict[str, int] = {"distributed_digits.py": 2}


def test_examples_exist() -> None:
    """The examples folder holds the demos the README promises."""
    names = {p.name for p in EXAMPLES}
    assert {"fit_curve.py", "custom_op.py"} <= names


def test_smoke_args_name_examples() -> None:
    """Every entry of SMOKE_ARGS names an existing example (a renamed one is not skipped)."""
    assert set(SMOKE_ARGS) <= {p.name for p in EXAMPLES}
    assert set(MPI_RANKS) <= {p.name for p in EXAMPLES}


def _run(path: Path, args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    # One BLAS thread: these models are tiny, and threads only slow them down.
    env = {**os.environ, "PYTHONWARNINGS": "error", "OPENBLAS_NUM_THREADS": "1"}
    command = [sys.executable, str(path), *args]
    if path.name in MPI_RANKS:
        if MPIRUN is None or not HAVE_MPI4PY:
            pytest.skip(f'{path.name} runs under mpirun: needs pip install -e ".[dev,mpi]"')
        command = mpirun_command(MPI_RANKS[path.name]) + command
        env.update(MPI_ENV)
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,  # anything written by default lands in the temporary directory
        check=False,
    )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path: Path, tmp_path: Path) -> None:
    """The example exits with status 0, prints its progress, emits no warning and writes
    the files it is asked to."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in SMOKE_ARGS.get(path.name, [])]
    result = _run(path, args, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the example printed nothing"
    assert "Warning" not in result.stderr, result.stderr
    for a in args:
        if a.endswith((".png", ".safetensors")):
            assert Path(a).is_file(), f"{path.name} did not write {a}"


def test_digits_with_zero_epochs_evaluates_the_untrained_model(tmp_path: Path) -> None:
    """``--epochs 0`` reports the untrained model's accuracy and writes no plot (it used
    to fail with a KeyError); a negative count is refused by argparse."""
    path = next(p for p in EXAMPLES if p.name == "digits_mlp.py")
    plot = tmp_path / "p.png"
    result = _run(path, ["--epochs", "0", "--plot", str(plot)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "untrained; no epochs, so no plot" in result.stdout
    assert not plot.exists()
    refused = _run(path, ["--epochs", "-1"], tmp_path)
    assert refused.returncode == 2 and "0 or more" in refused.stderr
