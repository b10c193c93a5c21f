"""Fault case of issue 23, #0: on another CPU (an AMD EPYC with OpenBLAS's Haswell-class
kernels and no AVX-512) the digits-CNN tutorial printed ``loss 0.3229`` where the page
showed ``0.3228``. Shown output must not depend on float32's last digits. The test runs
the page as another machine would: OpenBLAS forced to older kernels
(``OPENBLAS_CORETYPE``) and numpy's dispatched SIMD paths above its baseline switched off
(``NPY_DISABLE_CPU_FEATURES``); the docs checker stays strict (no numeric tolerance)."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest

from tests.docs.markdown import steps
from tests.docs.test_markdown_pages import ROOT, mismatches, run_page

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="x86 kernels and SIMD features"
)


def _dispatched_features() -> str:
    """numpy's SIMD targets above its baseline that this CPU has (what can be disabled)."""
    umath = np.__dict__.get("_core") or np.core  # numpy 2 / 1
    features = umath._multiarray_umath.__cpu_features__
    dispatch = umath._multiarray_umath.__cpu_dispatch__
    return " ".join(f for f in dispatch if features.get(f))


# The pages whose output comes from float32 training or float32 arithmetic (audited: the
# other pages print float64 results, integers or text).
PAGES = [
    "docs/tutorials/digits-cnn.md",
    "docs/tutorials/digits-mlp.md",
    "docs/tutorials/memory-bounded.md",
    "docs/tutorials/regression.md",
    "docs/tutorials/sequence-transformer.md",
    "docs/getting-started.md",
    "docs/optim.md",
]


@pytest.mark.parametrize("page", PAGES)
def test_a_tutorial_prints_the_same_with_other_kernels(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page (the digits-CNN tutorial failed on a fresh clone elsewhere) prints what
    it shows under Sandy Bridge BLAS kernels and numpy's baseline SIMD only."""
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Sandybridge")
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", _dispatched_features())
    path = ROOT / page
    plan = steps(path)
    result = run_page(path, plan, tmp_path)
    assert result["error"] is None, result["error"]
    problems = mismatches(plan, result["outputs"], page)
    assert not problems, "\n\n".join(problems)
