"""Node: the engine's mutable state of one Variable, apart from the immutable record."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import ReleasedError, released

if TYPE_CHECKING:
    from lampy.autograd._scope import Scope
    from lampy.autograd._variable import Op


class Node:
    """The state of one Variable that the engine changes, in one explicit mutable object.

    A ``lampy.Variable`` is a frozen record pointing to its Node; the graph links
    Nodes, never Variables (an op's params pair input Nodes with closures). So a value
    that no closure saved and no Python object can reach through a Variable any more is
    returned at once, while the graph keeps what backprop needs: op, shape, dtype.

    Only the engine (the autograd package) writes these fields, each through one place:

    - ``value``: the forward value, read-only. Dropped (None) when the scope releases
      the node, or earlier, when the Variable is gone (nothing can read it then).
    - ``op``: the ``lampy.Op`` that computed it, None for a leaf. Dropped on release;
      a kept op result is detached (``op`` None, ``needs_grad`` False).
    - ``needs_grad``: whether gradients flow here.
    - ``grad``: the accumulated gradient of a leaf (or of a retained op result).
    - ``version``: how many in-place writes (``lampy.in_place``) the value has had.
    - ``scope``: the owning ``lampy.Scope``, None once released.
    - ``name``: the op's name (``"param"``, ``"const"``, ``"matmul"``...).
    - ``shape``, ``dtype``: of the value, kept for backprop and error messages.
    - ``handle``: for params, a weak reference to the Variable (for ``lampy.backward_iter``).
    - ``charged``: the bytes of ``value`` counted in the scope's memory (0 for a view);
      set by ``lampy._memory`` when the scope registers the node.
    """

    __slots__ = (
        "__weakref__",
        "charged",
        "dtype",
        "grad",
        "handle",
        "name",
        "needs_grad",
        "op",
        "scope",
        "shape",
        "value",
        "version",
    )

    charged: int  # set by lampy._memory when the node is registered

    def __init__(
        self,
        value: np.ndarray,
        op: Op | None,
        needs_grad: bool,
        scope: Scope,
        name: str,
    ) -> None:
        self.value: np.ndarray | None = value
        self.op = op
        self.needs_grad = needs_grad
        self.scope: Scope | None = scope
        self.name = name
        self.shape: tuple[int, ...] = value.shape
        self.dtype: np.dtype[Any] = value.dtype
        self.grad: np.ndarray | None = None
        self.version = 0
        self.handle: Any = None

    @property
    def is_released(self) -> bool:
        """Whether the owning scope has exited."""
        return self.scope is None

    @property
    def nbytes(self) -> int:
        """Bytes of the value and gradient buffer this node holds now."""
        v, g = self.value, self.grad
        return (0 if v is None else v.nbytes) + (0 if g is None else g.nbytes)

    def describe(self) -> str:
        """``'matmul', shape (2, 3), dtype float64`` for messages."""
        return f"'{self.name}', shape {self.shape}, dtype {self.dtype}"

    def released_error(self, use: str) -> ReleasedError:
        """The ReleasedError for ``use`` (``".value"``, ``"op 'exp'"``) of this node."""
        return released(self.describe(), use)

    # Called by the owning Scope only.
    def release(self) -> None:
        """Drop value, gradient and op: their memory returns now. Idempotent."""
        self.value = None
        self.grad = None
        self.op = None
        self.scope = None
        self.handle = None

    def detach(self) -> None:
        """Make a kept op result a constant: it keeps its value (and retained gradient)."""
        if self.op is not None:
            self.op = None
            self.needs_grad = False

    def __repr__(self) -> str:
        state = "released" if self.scope is None else "live"
        return f"Node({self.describe()}, {state})"


__all__ = ["Node"]
