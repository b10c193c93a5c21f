"""find_nonfinite names where nan/inf first appeared in a graph, not where it ended up."""

from __future__ import annotations

import numpy as np

import lampy
from lampy.train import find_nonfinite


def test_finite_graph_gives_none() -> None:
    """A graph of finite values has nothing to report."""
    with lampy.Scope():
        x = lampy.param(np.ones(3))
        assert find_nonfinite((lampy.exp(x) * 2).sum()) is None


def test_names_the_first_op_not_the_later_ones() -> None:
    """sqrt of a negative makes nan; the ops after it are not blamed."""
    with lampy.Scope(keep_values=True), np.errstate(invalid="ignore"):
        x = lampy.param(np.array([1.0, -1.0]))
        y = lampy.exp(lampy.sqrt(x - 0.5) * 3.0).sum()
        msg = find_nonfinite(y)
    assert msg is not None and msg.startswith("op 'sqrt' produced nan")
    assert "from finite inputs (float64[2])" in msg


def test_a_nonfinite_leaf_is_reported() -> None:
    """A param that already holds inf is reported as a leaf."""
    with lampy.Scope():
        x = lampy.param(np.array([1.0, np.inf]))
        msg = find_nonfinite((x * 2).sum())
    assert msg == "a leaf of shape (2,) (float64) already holds nan or inf"
