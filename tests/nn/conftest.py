"""Fixtures of the nn tests: ``path``, which runs a test on both paths of the ops that
have compiled kernels (Numba, the lampy[fast] extra) and a numpy fallback,
``always_concurrent``, which makes every backward pass with several workers concurrent,
and ``in_two_threads``, which runs work in two threads at once."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
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


@pytest.fixture
def in_two_threads() -> Callable[[Callable[[int], Any]], list[Any]]:
    """``run(work)``: ``[work(0), work(1)]``, each called in its own thread, the two
    started together (None for a call that raised)."""

    def run(work: Callable[[int], Any]) -> list[Any]:
        results: list[Any] = [None, None]
        barrier = threading.Barrier(2)

        def target(k: int) -> None:
            barrier.wait()
            results[k] = work(k)

        threads = [threading.Thread(target=target, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    return run
