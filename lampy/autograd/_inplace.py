"""In-place writes into params, with version counters that catch stale graphs."""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.autograd._node import Node
from lampy.autograd._variable import Variable


class in_place:
    """Open the values of params for an in-place write, for one ``with`` block.

    Values of Variables are read-only; optimizers, ``lampy.nn.Module.load_state_dict`` and
    ``lampy.load`` change params in place through this block (as PyTorch's optimizers
    do), so every holder of a param sees its new values without a copy. Inside the
    block the arrays are writable; on exit, even by an exception, they are read-only
    again and each param's ``lampy.Variable.version`` goes up by one. An op that read a param
    records its version, so backpropagating through a graph built before the write
    raises ``lampy.StaleGraphError`` instead of giving gradients computed from the new
    values.

    lampy never writes into memory it does not own: a param made with
    ``param(x, copy=False)`` from a read-only array (a read-only view of a writable
    array, a read-only memory map, an ``np.frombuffer`` of bytes) or from an array whose
    elements overlap (``np.broadcast_to``, ``sliding_window_view``) cannot be opened, and
    the block raises before it opens anything.

    Only params' versions are checked by backprop (ops record the versions of the
    inputs they differentiate); a constant (a frozen embedding, say) may also be written
    in place, but a graph that read it before is not checked.

    Args:
        params: Params (or other leaf Variables) to write into.

    Raises:
        LampyTypeError: if an item is not a leaf Variable.
        LampyValueError: if a param's memory is read-only (not lampy's to write).
        ReleasedError: if a param was released.

    Examples:
        >>> import lampy
        >>> with lampy.Scope():
        ...     w = lampy.param([1.0, 2.0])
        ...     with lampy.in_place([w]) as (value,):
        ...         value *= 0.5
        ...     print(w.value, w.version)
        [0.5 1. ] 1
    """

    __slots__ = ("_nodes", "_opened")

    def __init__(self, params: Iterable[Variable]) -> None:
        nodes: list[Node] = []
        for p in params:
            if type(p) is not Variable:
                raise LampyTypeError(
                    f"in_place: expected params (Variables), got {type(p).__name__}."
                )
            node = p.node
            if node.scope is None:
                raise node.released_error("in_place")
            if node.params is not None:
                raise LampyTypeError(
                    f"in_place: only leaves (params and constants) can be written in place, "
                    f"not a Variable made by {node.describe()}: its value belongs to a "
                    "graph. Make a new Variable instead."
                )
            nodes.append(node)
        self._nodes = nodes
        self._opened: list[np.ndarray] = []

    def __enter__(self) -> list[np.ndarray]:
        opened = self._opened
        for node in self._nodes:
            value = node.value
            if value is None:
                self._close()
                raise node.released_error("in_place")
            try:
                value.setflags(write=True)
            except ValueError:
                self._close()
                raise LampyValueError(
                    f"in_place: the param ({node.describe()}) shares the memory of an array "
                    "it was made from with `param(x, copy=False)` that lampy must not write: "
                    "read-only (a read-only view, a read-only memory map) or with elements "
                    "sharing memory (np.broadcast_to, a sliding window); lampy does not write "
                    "into memory it does not own. Make the param with `lampy.param(x)` (a copy "
                    "lampy owns), or from a writable array whose elements do not overlap."
                ) from None
            opened.append(value)
        return list(opened)

    def _close(self) -> None:
        for a in self._opened:
            a.setflags(write=False)
        self._opened = []

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close()
        for node in self._nodes:
            node.bump_version()


__all__ = ["in_place"]
