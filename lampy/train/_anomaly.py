"""Finding where a non-finite value first appeared in a graph (anomaly detection)."""

from __future__ import annotations

import numpy as np

from lampy._errors import LampyError
from lampy.autograd import Node
from lampy.autograd._edge import NODE
from lampy.opkit import Variable

__all__ = ["NonFiniteError", "find_nonfinite"]


class NonFiniteError(LampyError, FloatingPointError):
    """Training produced a nan or infinite loss (or gradient)."""


def _finite(a: np.ndarray | None) -> bool:
    return a is None or a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def find_nonfinite(root: Variable) -> str | None:
    """Describe the first op of ``root``'s graph whose value is not finite although
    every input it records is, or None if every value in the graph is finite.

    The graph is walked in forward (topological) order from the leaves, so the op named
    is where nan or inf first appeared, not where it ended up. Inputs that need no
    gradient (constants) are not recorded by ops, so an op fed a non-finite constant
    is named as the source. Values of intermediate results are only all there if the
    graph was built in a ``lampy.Scope(keep_values=True)`` (``fit`` does that with
    ``detect_anomaly=True``); a value already returned is treated as finite.
    """
    root.value  # noqa: B018 - a released root raises ReleasedError
    order: list[Node] = []
    seen: set[Node] = set()
    stack: list[tuple[Node, bool]] = [(root.node, False)]
    while stack:  # iterative post-order: inputs before the ops that use them
        n, expanded = stack.pop()
        if expanded:
            order.append(n)
            continue
        if n in seen:
            continue
        seen.add(n)
        stack.append((n, True))
        if n.params is not None:
            stack.extend((e[NODE], False) for e in reversed(n.params) if e[NODE] not in seen)
    for n in order:
        if n.params is None or _finite(n.value):
            if n.params is None and not _finite(n.value):
                return f"a leaf of shape {n.shape} ({n.dtype}) already holds nan or inf"
            continue
        inputs = [e[NODE] for e in n.params]
        if all(_finite(x.value) for x in inputs):
            shapes = ", ".join(f"{x.dtype}{list(x.shape)}" for x in inputs) or "no recorded inputs"
            bad = n.value
            assert bad is not None
            kinds = sorted(
                {"nan" if np.isnan(bad).any() else "", "inf" if np.isinf(bad).any() else ""} - {""}
            )
            return (
                f"op '{n.name}' produced {' and '.join(kinds)} in its output "
                f"{n.dtype}{list(n.shape)} from finite inputs ({shapes})"
            )
    return None
