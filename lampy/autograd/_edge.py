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
from itertools import chain
from typing import TYPE_CHECKING, Any, Final, TypeAlias

if TYPE_CHECKING:
    from lampy.autograd._node import Node

PLAIN, CONTRIBUTION, WITH_SAVED = 0, 1, 2
"""An edge's ``KIND``: how the input's gradient is computed (see the module's docstring)."""

Edge: TypeAlias = "tuple[Node, Callable[..., Any], int, bool, Any]"
"""One differentiable input of an op: ``(node, fn, kind, fresh, saved)``, read by the
positions below.

- ``NODE``: the input's node (the graph links nodes, not Variables).
- ``FN``: ``fn(g, out)`` for ``PLAIN``, ``fn(g)`` for ``CONTRIBUTION``, ``fn(g, saved)``
  for ``WITH_SAVED``.
- ``KIND``: ``PLAIN``, ``CONTRIBUTION`` or ``WITH_SAVED``.
- ``FRESH``: for a contribution, whether ``fn`` always returns a new array that nothing
  else references (the engine may keep it as the buffer).
- ``SAVED``: for ``WITH_SAVED``, the value ``fn`` takes (None otherwise).

A plain tuple rather than a ``NamedTuple``: every op builds one per differentiable input,
and a tuple display is one bytecode where a tuple subclass costs a call through its type
(0.12 µs an edge, 5% of an elementwise op on a scalar). The engine unpacks all five at
once (``inp, fn, kind, fresh, saved = edge``), which is also the fastest read.
"""

NODE: Final = 0
FN: Final = 1
KIND: Final = 2
FRESH: Final = 3
SAVED: Final = 4
WIDTH: Final = 5
"""The number of fields of an edge: a node holds its op's edges one after the other in
one flat tuple (``Node.edges``), edge ``j`` at ``edges[WIDTH * j : WIDTH * (j + 1)]``."""


def plain_edge(node: Node, fn: Callable[..., Any]) -> Edge:
    """The edge of a zip-backward closure ``fn(g, out)`` that adds into ``out``."""
    return (node, fn, PLAIN, False, None)


def contribution_edge(node: Node, fn: Callable[..., Any], fresh: bool = True) -> Edge:
    """The edge of a contribution ``fn(g)`` that returns the input's gradient."""
    return (node, fn, CONTRIBUTION, fresh, None)


def saved_edge(node: Node, fn: Callable[..., Any], fresh: bool, saved: Any) -> Edge:
    """The edge of a contribution ``fn(g, saved)`` of a module-level ``fn``."""
    return (node, fn, WITH_SAVED, fresh, saved)


def is_edge(p: Any) -> bool:
    """Whether ``p`` has an edge's shape (a 5-tuple whose kind is one of the three): the
    check ``lampy.op`` makes of a param it did not see made (the node is checked apart)."""
    return type(p) is tuple and len(p) == 5 and p[2] in (PLAIN, CONTRIBUTION, WITH_SAVED)


_chain = chain.from_iterable


def flat_edges(params: tuple[Edge, ...]) -> tuple[Any, ...]:
    """The edges of ``params`` one after the other in one tuple, as a node holds them:
    one edge is itself, and the empty tuple (or ``SPENT``) stays as it is.

    Why flat: a graph held for backward is what the cyclic garbage collector walks, and
    each op leaves it the node and one tuple, not the node, a tuple of edges and each
    edge (a third fewer tracked objects on a chain of one-input ops, so fewer full
    collections of a graph of many ops, each one shorter)."""
    n = len(params)
    if n == 1:
        return params[0]
    if n == 2:
        return params[0] + params[1]
    if not n:
        return params
    return tuple(_chain(params))


def split_edges(edges: tuple[Any, ...]) -> tuple[Edge, ...]:
    """A node's flat ``edges`` as the tuple of its edges (``flat_edges`` undone)."""
    if len(edges) == WIDTH:
        return (edges,)
    return tuple([edges[i : i + WIDTH] for i in range(0, len(edges), WIDTH)])


__all__ = [
    "CONTRIBUTION",
    "FN",
    "FRESH",
    "KIND",
    "NODE",
    "PLAIN",
    "SAVED",
    "WIDTH",
    "WITH_SAVED",
    "Edge",
    "contribution_edge",
    "flat_edges",
    "is_edge",
    "plain_edge",
    "saved_edge",
    "split_edges",
]
