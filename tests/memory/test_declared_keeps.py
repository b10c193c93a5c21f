"""``lampy.op(..., keeps=...)``: an op declares the arrays its closures keep, and the
scope's memory counts them without scanning the closures. The declared count is the
scan's (the suite checks every declaration against it: ``CHECK_DECLARED``, on in
``tests/conftest.py``); here, the counting rules themselves, a wrong declaration caught,
and the ledger's figures with the check off (as users run)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy.autograd import _saved
from lampy.opkit import contrib_of, op


@pytest.fixture
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The declarations taken as they are, as in use (no scan beside them)."""
    monkeypatch.setattr(_saved, "CHECK_DECLARED", False)


def _scaled(x: lampy.Variable, extra: np.ndarray, keeps: Any) -> lampy.Variable:
    """``x * 2``, whose closure also keeps ``extra`` (an array beyond the graph's values)
    and ``x``'s value (a graph value: not counted)."""
    a = x.value

    def d_x(g: np.ndarray) -> Any:
        assert extra.shape and a.shape
        return g * 2

    return op("scaled", a * 2, contrib_of(x, d_x), keeps=keeps)


def test_declared_arrays_are_counted_once_by_owner_without_graph_values(unchecked: None) -> None:
    """Declared arrays count by the array owning their memory, once (a view and its
    base together count once); the op's value and its inputs' values do not count, and
    None entries are skipped."""
    extra = np.ones(1000)  # 8000 bytes
    with lampy.Scope() as s:
        x = lampy.param(np.ones(10))
        before = s.memory.live_bytes
        y = _scaled(x, extra, keeps=(extra, extra[:10], x.value, None))
        assert y.node.kept == 8000
        assert s.memory.live_bytes - before == 8000 + y.node.charged
        y.sum().backward()  # the params are dropped: their kept arrays refunded
        assert y.node.kept == 0


def test_a_declaration_matches_the_scan() -> None:
    """With the check on, a declaration that names what the closure keeps passes: the
    declared count and the scan's are the same."""
    extra = np.ones(100)
    with lampy.Scope():
        x = lampy.param(np.ones(3))
        y = _scaled(x, extra, keeps=(extra,))
        assert y.node.kept == extra.nbytes


@pytest.mark.parametrize(
    "keeps", [(), (np.ones(7),)], ids=["an array left out", "an array not kept"]
)
def test_a_wrong_declaration_is_caught_by_the_check(keeps: tuple[np.ndarray, ...]) -> None:
    """With the check on (the test suite), a declaration that leaves out an array the
    closure keeps, or names one it does not keep, raises AssertionError naming the
    closure."""
    extra = np.ones(100)
    with lampy.Scope():
        x = lampy.param(np.ones(3))
        with pytest.raises(AssertionError, match="d_x"):
            _scaled(x, extra, keeps=keeps)


def test_with_saved_edges_count_their_saved_array(unchecked: None) -> None:
    """An op mixing a closure and a ``WITH_SAVED`` edge: the declared arrays and the
    edge's saved array both count."""
    from lampy.opkit import contrib_with, times

    extra, saved = np.ones(50), np.full(3, 2.0)
    with lampy.Scope():
        x, w = lampy.param(np.ones(3)), lampy.param(np.ones(3))
        a = x.value

        def d_x(g: np.ndarray) -> Any:
            assert extra.size
            return g * saved

        y = op(
            "mixed",
            a * saved,
            contrib_of(x, d_x),
            contrib_with(w, times, saved),
            keeps=(extra, saved),
        )
        assert y.node.kept == extra.nbytes + saved.nbytes
