"""The one place where lampy allocates gradient buffers and takes ownership of values.

Every gradient buffer is allocated by ``grad_buffer`` (zero-filled) or taken over by
``own_grad`` (a first contribution an op computed), and every forward value
enters the graph through ``own_value`` (called by ``lampy.op``, ``lampy.param`` and
``lampy.const``). An allocation policy (buffer reuse, another array library) changes
here without touching any op. The counting of what each scope owns is the scopes'
(``lampy.autograd._ledger``); this module knows nothing of scopes or nodes, and imports
nothing from the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_zeros = np.zeros
_ndarray = np.ndarray
_asarray = np.asarray


def grad_buffer(shape: tuple[int, ...], dtype: Any, node: Any = None) -> np.ndarray:
    """A zero-filled gradient buffer of ``shape`` and ``dtype`` (for ``node``, if known:
    the memory profile then names its op)."""
    buf = _zeros(shape, dtype)
    if PROFILE is not None:
        PROFILE.grad(buf, node)
    return buf


set_writeable: Callable[[np.ndarray, bool], None] = np.ndarray.setflags  # type: ignore[assignment]
"""``set_writeable(a, False)``: ``a.setflags(write=False)`` with ``write`` positional,
which numpy's stubs do not declare; numpy parses a keyword argument at as much cost as
the call itself (0.1 µs), and an op makes its value read-only once per call."""


def owner(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (``a`` itself unless it is a view)."""
    b = a.base
    while type(b) is _ndarray:
        a = b
        b = a.base
    return a


def own_grad(buffer: np.ndarray, node: Any = None) -> np.ndarray:
    """Take an array an op computed (a first gradient contribution) as a gradient buffer.

    The engine calls this instead of ``grad_buffer`` when a
    ``lampy.autograd.Contribution`` hands it a new array, so every gradient buffer passes
    through this module either way.
    """
    if PROFILE is not None:
        PROFILE.grad(buffer, node)
    return buffer


def own_value(value: Any, shared: bool = False) -> Any:
    """Take ``value`` as the value of a Variable: an ndarray, made read-only.

    A view of memory that is still writable through another array (for example a
    reshape of the caller's own array) is copied, so nothing outside the graph can
    change the value, unless ``shared`` says the caller asked for no copy
    (``param(x, copy=False)``): then a read-only view of it is taken.
    """
    if type(value) is not _ndarray:
        value = _asarray(value)
        if type(value) is not _ndarray:  # an ndarray subclass: take a plain view
            value = value.view(_ndarray)
    if shared:
        # Always a view: the caller's own array keeps its flags. A read-only or
        # self-overlapping one gets a view numpy cannot make writable again, whatever its
        # base (lampy.in_place then refuses it): a read-only input is never written.
        writable = value.flags.writeable and not _overlaps(value)
        value = value.view() if writable else sealed_view(value)
    elif value.base is not None and reaches_writable(value):
        value = value.copy(order="K")  # a new array: charged as the op's own
    set_writeable(value, False)
    return value


class _ReadOnlyInterface:
    """Holds an array's memory behind a read-only ``__array_interface__``: an array made
    from it has this holder as its base, which exports no buffer, so numpy refuses to make
    that array writable (``setflags(write=True)`` raises ValueError)."""

    __slots__ = ("__array_interface__", "base")

    def __init__(self, a: np.ndarray) -> None:
        interface = dict(a.__array_interface__)
        interface["data"] = (interface["data"][0], True)
        self.__array_interface__ = interface
        self.base = a  # keeps the memory alive; reaches_writable walks on through it


def sealed_view(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` that cannot be made writable (for ``param(x, copy=False)``
    of a read-only or self-overlapping ``x``, and ``Module.state_dict``'s arrays)."""
    view: np.ndarray = _asarray(_ReadOnlyInterface(a))
    return view


def _overlaps(a: np.ndarray) -> bool:
    """Whether two elements of ``a`` may share memory (a broadcast, a window view): True
    unless the strides, sorted, each step over everything the smaller ones span."""
    dims = sorted((abs(st), n) for n, st in zip(a.shape, a.strides, strict=True) if n > 1)
    span = a.itemsize
    for stride, n in dims:
        if stride < span:
            return True
        span = stride * (n - 1) + span
    return False


def reaches_writable(a: np.ndarray) -> bool:
    """Whether some array or buffer that ``a``'s memory belongs to can still be written.

    ``a`` itself may be read-only: a read-only *view* (``np.broadcast_to``,
    ``sliding_window_view``, a view whose flag was cleared) of a writable array still
    changes when that array is written. Walks ``a.base`` down to the memory's owner: a
    writable ndarray, or a buffer that is not read-only (a ``bytearray``, a writable
    ``mmap``), or an owner of unknown kind, answers True.
    """
    if a.flags.writeable:
        return True
    b = a.base
    while b is not None:
        if isinstance(b, _ndarray):
            if b.flags.writeable:
                return True
            b = b.base
            continue
        try:
            with memoryview(b) as m:
                return not m.readonly
        except TypeError:  # no buffer: numpy's stride-tricks holder keeps the array in .base
            b = getattr(b, "base", None)
            if b is None:
                return True
    return False


def private_copy(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` that nothing else can write, as small as the memory ``a`` spans.

    A view keeps its layout: the bytes it can reach in its owner's memory are copied
    once and ``a``'s shape and strides are laid over the copy, so a broadcast or a
    window view does not grow into a full array (``np.broadcast_to(x, (1000, n))``
    copies ``x``, not a thousand rows of it), and a slice of a large array copies the
    slice, not the array. Otherwise (no contiguous owning ndarray, or ``a`` reaching
    outside it) ``a`` is copied into a new array.
    """
    root: np.ndarray = a
    b: Any = a.base
    while b is not None:
        if isinstance(b, _ndarray):
            root = b
        b = getattr(b, "base", None)
    if root is not a and a.size and (root.flags.c_contiguous or root.flags.f_contiguous):
        lo, hi = _byte_bounds(a)
        start = root.__array_interface__["data"][0]
        if start <= lo and hi <= start + root.nbytes:
            raw = root.ravel(order="K").view(np.uint8)  # root's memory, byte by byte
            span = raw[lo - start : hi - start].copy()
            span.flags.writeable = False  # nothing else reaches it: its views need no copy
            offset = a.__array_interface__["data"][0] - lo
            laid: np.ndarray = np.ndarray(a.shape, a.dtype, span, offset, a.strides)
            return laid
    copied: np.ndarray = a.copy(order="K")
    return copied


def _byte_bounds(a: np.ndarray) -> tuple[int, int]:
    """The first and one-past-last byte addresses ``a`` can reach."""
    lo = hi = a.__array_interface__["data"][0]
    if a.size:
        for n, st in zip(a.shape, a.strides, strict=True):
            if st < 0:
                lo += (n - 1) * st
            else:
                hi += (n - 1) * st
        hi += a.itemsize
    return lo, hi


PROFILE: Any = None
"""The active ``lampy.memory_profile`` recorder, or None (set by ``lampy._profile``)."""


class backward_phase:
    """Marks a backward pass for the active memory profile (nothing without one)."""

    __slots__ = ("prof",)

    def __enter__(self) -> None:
        prof = self.prof = PROFILE
        if prof is not None:
            prof.begin_backward()

    def __exit__(self, *exc: object) -> None:
        if self.prof is not None:
            self.prof.end_backward()


def set_profile(recorder: Any) -> Any:
    """Install ``recorder`` as the active profile; return the previous one."""
    global PROFILE
    previous, PROFILE = PROFILE, recorder
    return previous
