"""The ``lampy[scipy]`` extra (``lampy/_scipy.py``): scipy is imported on first use, and
without it lampy.special, lampy.stats, lampy.signal and scipy's functions in
lampy.linalg raise an error naming the extra, while ``import lampy`` works."""

from __future__ import annotations

import subprocess
import sys
import textwrap

_WITHOUT_SCIPY = """
import sys
sys.modules["scipy"] = None  # import scipy now raises ImportError
import numpy as np
import lampy
assert "scipy" not in sys.modules or sys.modules["scipy"] is None
for call in (lambda: lampy.special.erf(np.ones(2)),
             lambda: lampy.stats.norm.logpdf(np.ones(2)),
             lambda: lampy.linalg.sqrtm(np.eye(2)),
             lambda: lampy.signal.convolve(np.ones(2), np.ones(2))):
    with lampy.Scope():
        try:
            call()
        except lampy.MissingExtraError as e:
            print(e)
        else:
            raise SystemExit("no error")
"""


def test_without_scipy_import_works_and_use_names_the_extra() -> None:
    """Without scipy, ``import lampy`` works, and calling lampy.special, lampy.stats,
    lampy.signal or scipy's functions in lampy.linalg raises MissingExtraError naming
    the function and ``pip install "lampy[scipy]"``."""
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_WITHOUT_SCIPY)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 4
    assert "lampy.special.erf" in lines[0]
    assert "lampy.stats.norm.logpdf" in lines[1]
    assert "lampy.linalg.sqrtm" in lines[2]
    assert "lampy.signal.convolve" in lines[3]
    assert all('pip install "lampy[scipy]"' in line for line in lines)


def test_import_lampy_does_not_import_scipy() -> None:
    """``import lampy`` (lampy.special, lampy.stats and lampy.signal included) does not
    import scipy: it is imported on first use."""
    code = (
        "import sys, lampy, lampy.signal, lampy.special, lampy.stats; print('scipy' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"
