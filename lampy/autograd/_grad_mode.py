"""Whether ops record a graph: switched off by ``lampy.no_grad``."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from functools import wraps
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")

GRAD_ENABLED: ContextVar[bool] = ContextVar("lampy_grad_enabled", default=True)


class no_grad:
    """Context manager (and decorator) in which ops record no graph.

    Inside it every op result is a constant: no closures are kept, so no memory is
    held for backpropagation. Like the current scope, the setting is per thread and
    per asyncio task. As a decorator, ``@lampy.no_grad()`` and ``@lampy.no_grad`` (as
    PyTorch's) are the same.

    Examples:
        >>> import lampy
        >>> with lampy.Scope():
        ...     w = lampy.param([1.0, 2.0])
        ...     with lampy.no_grad():
        ...         y = w * 2.0
        ...     print(y.needs_grad, y.op)
        False None
        >>> @lampy.no_grad
        ... def recording():
        ...     return lampy.is_grad_enabled()
        >>> recording()
        False
    """

    __slots__ = ("_tokens",)

    @overload
    def __new__(cls, orig_func: None = None) -> no_grad: ...
    @overload
    def __new__(cls, orig_func: F) -> F: ...  # type: ignore[misc]
    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        """``no_grad()`` a context manager; ``no_grad(fn)`` (a bare decorator) ``fn``
        running under ``no_grad()``."""
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self) -> None:
        self._tokens: list[Token[bool]] = []

    def __enter__(self) -> None:
        self._tokens.append(GRAD_ENABLED.set(False))

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        GRAD_ENABLED.reset(self._tokens.pop())

    def __call__(self, fn: Callable[P, R]) -> Callable[P, R]:
        @wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with no_grad():
                return fn(*args, **kwargs)

        return wrapper


def is_grad_enabled() -> bool:
    """Whether ops record a graph here (False inside ``lampy.no_grad``)."""
    return GRAD_ENABLED.get()
