"""Scopes: the owners of Variables, releasing them deterministically on exit."""

from __future__ import annotations

import dataclasses
from contextvars import ContextVar, Token
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from lampy._errors import LampyError, no_scope

if TYPE_CHECKING:
    from lampy.autograd._variable import Variable

T = TypeVar("T")

_CURRENT: ContextVar[Scope | None] = ContextVar("lampy_current_scope", default=None)

_NEW, _OPEN, _CLOSED = 0, 1, 2


class Scope:
    """Owner of the Variables created while it is the current scope.

    Use it as a context manager. Every Variable created inside the ``with`` block
    (params, constants and op results) belongs to the innermost active scope. When
    the block exits, normally or by an exception, the scope releases them all: their
    values, gradient buffers and ops are dropped at once, so their memory is back
    before the ``with`` statement returns. Later use of a released Variable raises
    [lampy.ReleasedError][]. Move what must outlive the block to the parent scope
    with [keep][].

    The current scope is tracked with a ``contextvars.ContextVar``, so each
    thread and each asyncio task has its own stack of scopes.

    Examples:
        >>> import lampy
        >>> with lampy.Scope() as outer:
        ...     w = lampy.param([1.0, 2.0])
        ...     with lampy.Scope() as inner:
        ...         loss = (w * w).sum()
        ...         loss.backward()
        ...         kept = inner.keep(loss)  # survives the inner block
        ...     print(kept.item(), w.grad)
        5.0 [2. 4.]
    """

    __slots__ = ("__weakref__", "_owned", "_parent", "_state", "_token")

    def __init__(self) -> None:
        self._owned: list[Variable] = []
        self._parent: Scope | None = None
        self._token: Token[Scope | None] | None = None
        self._state = _NEW

    @staticmethod
    def current() -> Scope:
        """Return the innermost active scope of this thread or task.

        Raises:
            NoScopeError: if no scope is active.
        """
        scope = _CURRENT.get()
        if scope is None:
            raise no_scope("Scope.current()")
        return scope

    @property
    def parent(self) -> Scope | None:
        """The scope that was current when this one was entered (None for a root scope)."""
        return self._parent

    @property
    def is_open(self) -> bool:
        """Whether the ``with`` block of this scope is running."""
        return self._state == _OPEN

    def __len__(self) -> int:
        """Number of live Variables this scope owns now."""
        return sum(1 for v in self._owned if v._scope is self)

    @property
    def nbytes(self) -> int:
        """Bytes held by the values and gradient buffers of the Variables this scope owns.

        A view shares memory with the array it views; both are counted.
        """
        return sum(v._nbytes() for v in self._owned if v._scope is self)

    def __enter__(self) -> Scope:
        if self._state != _NEW:
            raise LampyError(
                "Scope.__enter__: this Scope was already entered; a Scope is used for one "
                "`with` block only. Create a new one: `with lampy.Scope(): ...`."
            )
        self._parent = _CURRENT.get()
        self._token = _CURRENT.set(self)
        self._state = _OPEN
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        token = self._token
        self._token = None
        self._state = _CLOSED
        inner = _CURRENT.get()
        try:
            if inner is not self:
                raise LampyError(
                    "Scope.__exit__: a scope nested inside this one is still open; scopes "
                    "must close innermost first. Use each Scope in its own `with` block."
                )
            if token is not None:
                _CURRENT.reset(token)
        finally:
            self._release_all()

    def _adopt(self, variable: Variable) -> None:
        self._owned.append(variable)

    def _release_all(self) -> None:
        owned = self._owned
        self._owned = []
        for v in owned:
            if v._scope is self:
                v._release()
            else:
                v._detach()
        owned.clear()

    def keep(self, obj: T) -> T:
        """Move the Variables in ``obj`` to the parent scope and return ``obj``.

        ``obj`` may be a Variable or any nesting of tuples, lists, dicts, sets, attrs
        records and dataclasses holding Variables; the same object is returned. Other
        objects are not looked into. When this scope
        exits, each kept Variable keeps its value (and its gradient, if it has one) and
        is detached from the released graph: it becomes a leaf of the parent scope. A
        param stays a param; a kept op result becomes a constant.

        Variables already owned by an enclosing scope are left where they are.

        Raises:
            LampyError: if this scope is not open, has no parent scope, or a Variable
                belongs to a scope nested inside this one.
            ReleasedError: if a Variable was already released.
        """
        if self._state != _OPEN:
            raise LampyError(
                "Scope.keep: this scope is not open; call keep inside its `with` block, "
                "before it exits."
            )
        parent = self._parent
        if parent is None:
            raise LampyError(
                "Scope.keep: this is a root scope, there is no parent scope to move Variables "
                "to. Open an enclosing `with lampy.Scope():` around it, or copy the data out "
                "with `v.value.copy()`."
            )
        _walk(obj, self._move)
        return obj

    def _move(self, v: Variable) -> None:
        owner = v._scope
        if owner is self:
            assert self._parent is not None
            v._set_scope(self._parent)
            self._parent._owned.append(v)
            return
        if owner is None:
            raise v._released_error("Scope.keep")
        ancestor = self._parent
        while ancestor is not None:
            if ancestor is owner:
                return
            ancestor = ancestor._parent
        raise LampyError(
            "Scope.keep: this Variable belongs to another scope that is not an enclosing "
            "one (for example a scope nested inside this one). Call keep on the scope that "
            "owns it."
        )


def _walk(obj: Any, visit: Any) -> None:
    """Call ``visit`` on every Variable in a nest of tuples, lists, dicts, sets, attrs
    records and dataclasses."""
    from lampy.autograd._variable import Variable

    if isinstance(obj, Variable):
        visit(obj)
    elif isinstance(obj, (tuple, list, set, frozenset)):
        for item in obj:
            _walk(item, visit)
    elif isinstance(obj, dict):
        for item in obj.values():
            _walk(item, visit)
    elif attrs.has(type(obj)):
        for field in attrs.fields(type(obj)):
            _walk(getattr(obj, field.name), visit)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for dc_field in dataclasses.fields(obj):
            _walk(getattr(obj, dc_field.name), visit)


def current_or_none() -> Scope | None:
    """The innermost active scope, or None."""
    return _CURRENT.get()


__all__ = ["Scope", "current_or_none"]
