"""Fixtures of the nn tests: ``path``, which runs a test on both paths of the ops that
have compiled kernels (Numba, the lampy[fast] extra) and a numpy fallback, and
``always_concurrent``, which makes every backward pass with several workers concurrent."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from lampy.autograd import _pass
from lampy.nn.functional import _shared


@pytest.fixture(params=["compiled", "numpy"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Run the test on one path: "compiled" yields a Counter of the compiled kernels'
    calls by name (every public kernel of ``_numba_kernels`` is wrapped), "numpy" turns
    the kernels off (``numba_kernels()`` is None) and yields None."""
    if request.param == "numpy":
        monkeypatch.setattr(_shared, "numba_kernels", lambda: None)
        yield None
        return
    pytest.importorskip("numba")
    real = _shared.numba_kernels()
    assert real is not None
    calls: Counter[str] = Counter()

    def counted(name: str) -> Any:
        kernel = getattr(real, name)

        def call(*args: Any) -> Any:
            calls[name] += 1
            return kernel(*args)

        return call

    spy = SimpleNamespace(**{name: counted(name) for name in real.__all__})
    monkeypatch.setattr(_shared, "numba_kernels", lambda: spy)
    yield calls


@pytest.fixture
def always_concurrent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every graph, however small, take the concurrent path when workers > 1."""
    monkeypatch.setattr(_pass, "BIG_NODE_BYTES", 0)
    monkeypatch.setattr(_pass, "CONCURRENT_MIN_BYTES", 0)
