"""Every script in examples/ runs to completion (with small sizes where it takes them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))

# Arguments that keep a run short; an example not listed runs with its defaults.
SMOKE_ARGS: dict[str, list[str]] = {"fit_curve.py": ["--steps", "60"]}


def test_examples_exist() -> None:
    """The examples folder holds the demos the README promises."""
    names = {p.name for p in EXAMPLES}
    assert {"fit_curve.py", "custom_op.py"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path: Path) -> None:
    """The example exits with status 0, prints its progress and emits no warning."""
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    result = subprocess.run(
        [sys.executable, str(path), *SMOKE_ARGS.get(path.name, [])],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the example printed nothing"
    assert "Warning" not in result.stderr, result.stderr
