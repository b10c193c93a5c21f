"""Edge: one differentiable input of an op, and how its gradient comes from the op's.

An op's params are a tuple of Edges, one per input that needs a gradient. An Edge is a
record with one shape whatever its kind, which says how the engine gets the input's
share of the gradient ``g`` of the op's value:

- ``PLAIN``: ``fn(g, out)`` adds it into the buffer ``out`` (the zip-backward closure of
  ``x.zip_backward(fn)``).
- ``CONTRIBUTION``: ``fn(g)`` returns it (``lampy.contribution(fn, fresh=...)``); the
  engine may keep the array as the input's buffer if ``fresh`` says it is new.
- ``WITH_SAVED``: ``fn(g, saved)`` returns it: a module-level function and the one
  value it needs, so an elementwise op records no closure (``saved`` is visible to
  memory accounting, which reads what the op keeps).

Edges are made by the factories below (``Variable.zip_backward`` and the op library's
``param_of``, ``contrib_of``, ``contrib_with`` call them), never by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from lampy.autograd._node import Node

PLAIN, CONTRIBUTION, WITH_SAVED = 0, 1, 2
"""``Edge.kind``: how the input's gradient is computed (see the module's docstring)."""


class Edge(NamedTuple):
    """One differentiable input of an op: its node, and how its gradient is computed.

    Attributes:
        node: The input's node (the graph links nodes, not Variables).
        fn: ``fn(g, out)`` for ``PLAIN``, ``fn(g)`` for ``CONTRIBUTION``, ``fn(g,
            saved)`` for ``WITH_SAVED``.
        kind: ``PLAIN``, ``CONTRIBUTION`` or ``WITH_SAVED``.
        fresh: For a contribution: whether ``fn`` always returns a new array that
            nothing else references (the engine may keep it as the buffer).
        saved: For ``WITH_SAVED``: the value ``fn`` takes (None otherwise).
    """

    node: Node
    fn: Callable[..., Any]
    kind: int
    fresh: bool
    saved: Any


_make = tuple.__new__  # one C call: the NamedTuple's own __new__ is a Python function


def plain_edge(node: Node, fn: Callable[..., Any]) -> Edge:
    """The edge of a zip-backward closure ``fn(g, out)`` that adds into ``out``."""
    return _make(Edge, (node, fn, PLAIN, False, None))


def contribution_edge(node: Node, fn: Callable[..., Any], fresh: bool = True) -> Edge:
    """The edge of a contribution ``fn(g)`` that returns the input's gradient."""
    return _make(Edge, (node, fn, CONTRIBUTION, fresh, None))


def saved_edge(node: Node, fn: Callable[..., Any], fresh: bool, saved: Any) -> Edge:
    """The edge of a contribution ``fn(g, saved)`` of a module-level ``fn``."""
    return _make(Edge, (node, fn, WITH_SAVED, fresh, saved))


__all__ = [
    "CONTRIBUTION",
    "PLAIN",
    "WITH_SAVED",
    "Edge",
    "contribution_edge",
    "plain_edge",
    "saved_edge",
]
