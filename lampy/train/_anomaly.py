"""Finding where a non-finite value first appeared in a graph (anomaly detection)."""

from __future__ import annotations

import numpy as np

from lampy._errors import LampyError
from lampy.autograd._variable import Variable

__all__ = ["NonFiniteError", "find_nonfinite"]


class NonFiniteError(LampyError, FloatingPointError):
    """Training produced a nan or infinite loss (or gradient)."""


def _finite(v: Variable) -> bool:
    a = v.value
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def find_nonfinite(root: Variable) -> str | None:
    """Describe the first op of ``root``'s graph whose value is not finite although
    every input it records is, or None if every value in the graph is finite.

    The graph is walked in forward (topological) order from the leaves, so the op named
    is where nan or inf first appeared, not where it ended up. Inputs that need no
    gradient (constants) are not recorded by ops, so an op fed a non-finite constant
    is named as the source.
    """
    order: list[Variable] = []
    seen: set[int] = set()
    stack: list[tuple[Variable, bool]] = [(root, False)]
    while stack:  # iterative post-order: inputs before the ops that use them
        v, expanded = stack.pop()
        if expanded:
            order.append(v)
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.append((v, True))
        if v.op is not None:
            stack.extend((x, False) for x, _ in reversed(v.op.params) if id(x) not in seen)
    for v in order:
        if v.op is None or _finite(v):
            if v.op is None and not _finite(v):
                return f"a leaf of shape {v.shape} ({v.dtype}) already holds nan or inf"
            continue
        inputs = [x for x, _ in v.op.params]
        if all(_finite(x) for x in inputs):
            shapes = ", ".join(f"{x.dtype}{list(x.shape)}" for x in inputs) or "no recorded inputs"
            bad = v.value
            kinds = sorted(
                {"nan" if np.isnan(bad).any() else "", "inf" if np.isinf(bad).any() else ""} - {""}
            )
            return (
                f"op '{v.op.name}' produced {' and '.join(kinds)} in its output "
                f"{v.dtype}{list(v.shape)} from finite inputs ({shapes})"
            )
    return None
