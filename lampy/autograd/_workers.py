"""Worker threads: the process default for backward, the pool, and parallel_map."""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from lampy._errors import LampyTypeError, LampyValueError, ReleasedError, no_scope
from lampy.autograd._scope import current_or_none

T = TypeVar("T")
R = TypeVar("R")

_default_workers = 1
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _check(workers: Any, what: str) -> int:
    if workers == "auto":
        return _cores()
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise LampyTypeError(
            f"{what}: workers must be a positive int or 'auto' (the number of cores), got "
            f"{workers!r} of type {type(workers).__name__}."
        )
    if workers < 1:
        raise LampyValueError(
            f"{what}: workers must be at least 1 (1 runs serially), got {workers}; use "
            "'auto' for one per core."
        )
    return workers


def set_num_workers(workers: int | str) -> None:
    """Set the process default of ``workers`` for backward passes (initially 1).

    Args:
        workers: A positive number of threads, or ``"auto"`` for the number of cores.
            Backward passes of graphs with big independent branches then run them in
            that many threads at once; gradients are bitwise the same as with 1.

    Raises:
        LampyTypeError: ``workers`` is not an int or ``"auto"``.
        LampyValueError: ``workers`` is below 1.
    """
    global _default_workers
    _default_workers = _check(workers, "set_num_workers")


def get_num_workers() -> int:
    """The process default of ``workers`` for backward passes (see ``lampy.set_num_workers``)."""
    return _default_workers


def resolve_workers(workers: int | str | None, what: str = "backward") -> int:
    """``workers`` checked (errors name ``what``, the caller), or the process default for
    None."""
    if workers is None:
        return _default_workers
    return _check(workers, what)


def pool(threads: int) -> ThreadPoolExecutor:
    """lampy's thread pool, with at least ``threads`` threads (made on first use)."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < threads:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lampy")
            _pool_size = threads
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def parallel_map(
    fn: Callable[[T], R], items: Iterable[T], *, workers: int | str | None = None
) -> list[R]:
    """Run ``fn`` on every item in worker threads, under the caller's current scope.

    Each call runs in a copy of the caller's context: the caller's scope is current
    (Variables ``fn`` makes belong to it, so they outlive the call like the caller's
    own) and grad mode is the caller's. numpy releases the GIL in its kernels, so
    branches made of big ops (attention heads, parallel towers) build at once. The
    results come back in the order of ``items``; the call returns once every ``fn``
    has finished, so the scope cannot exit while a worker still uses it.

    Args:
        fn: Called once per item; it may make Variables and run ops.
        items: The inputs.
        workers: Threads to use (None: ``lampy.get_num_workers``, at least 1; ``"auto"``: one
            per core). With 1, the calls run in the caller's thread, in order.

    Returns:
        ``[fn(item) for item in items]``, computed in parallel.

    Raises:
        NoScopeError: no scope is open.
        ReleasedError: the current scope has exited.
        Exception: the first exception raised by ``fn`` (in the order of ``items``),
            after every call has finished.
    """
    n = resolve_workers(workers, "parallel_map")
    scope = current_or_none()
    if scope is None:
        raise no_scope("parallel_map")
    if not scope.is_open:
        raise ReleasedError(
            "parallel_map: the current scope has already exited (its Variables are "
            "released), so the work would make Variables no one owns. Call parallel_map "
            "inside an open `with lampy.Scope():` block."
        )
    work = list(items)
    n = min(n, len(work))
    if n <= 1:
        return [fn(item) for item in work]
    results: list[Any] = [None] * len(work)
    errors: dict[int, BaseException] = {}
    next_index = iter(range(len(work)))
    lock = threading.Lock()

    def runner() -> None:
        while True:
            with lock:
                i = next(next_index, None)
            if i is None:
                return
            try:
                results[i] = fn(work[i])
            except BaseException as e:  # re-raised in the caller, in the order of items
                errors[i] = e

    executor = pool(n - 1)
    helpers = [executor.submit(contextvars.copy_context().run, runner) for _ in range(n - 1)]
    runner()  # the caller's thread works too
    for h in helpers:  # a helper still queued (the pool is busy) is not waited for
        if not h.cancel():
            h.result()
    if errors:
        raise errors[min(errors)]
    return results


__all__ = ["get_num_workers", "parallel_map", "resolve_workers", "set_num_workers"]
