"""What an op's params keep beyond the graph's values, for the scope's ledger.

``lampy.op`` asks two things of a new op, once each: what its value is charged when it
is a view (``view_bytes``: the owner's bytes when the op made that owner, 0 when it is
an input's value; ``fresh_view_bytes`` for a view ``lampy.opkit.frozen`` made), and
what its params saved for backward beyond the values of the
graph (``kept_bytes``: the arrays a closure captured, looked into a few levels down,
or the one a ``WITH_SAVED`` edge names), which the ledger counts until the params are
dropped (``Node.kept``).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from threading import get_ident
from typing import Any

import numpy as np

from lampy._memory import owner
from lampy._namespaces import is_foreign, nbytes
from lampy.autograd._edge import NODE, WITH_SAVED
from lampy.autograd._node import Param

_ndarray = np.ndarray


def _captured(cells: Any, found: list[np.ndarray], depth: int) -> None:
    """Append to ``found`` the arrays in closure ``cells``: an array, arrays in a tuple
    or a list, and (``depth`` levels down) what a captured function captured, or what a
    captured object declares it keeps (``captures()``: ``SharedInBackward``, ``Lazy``).
    Arrays, numbers and shapes (tuples of numbers), the common cells, are handled here
    without a call."""
    for c in cells:
        try:
            o = c.cell_contents
        except ValueError:  # an empty cell
            continue
        t = type(o)
        if t is _ndarray:
            found.append(o)
        elif t is tuple:
            for x in o:
                if type(x) not in _ATOMIC:  # not a shape: looked into
                    _found_in(o, found, depth)
                    break
        elif t not in _ATOMIC:
            _found_in(o, found, depth)


def _found_in(o: Any, found: list[np.ndarray], depth: int) -> None:
    t = type(o)
    if t is _ndarray:
        found.append(o)
    elif t is tuple or t is list:
        for x in o:
            tx = type(x)
            if tx is _ndarray:
                found.append(x)
            elif depth and tx not in _ATOMIC:  # a shape's ints: nothing to look into
                _found_in(x, found, depth - 1)
    elif not depth:
        return
    elif t is _function:
        if o.__closure__:
            _captured(o.__closure__, found, depth - 1)
    else:
        declares = _DECLARES.get(t)
        if declares is None:  # once per type: a failed hasattr raises inside, 1 µs
            declares = _DECLARES[t] = callable(getattr(t, "captures", None))
        if declares:
            for x in o.captures():
                _found_in(x, found, depth - 1)


_ATOMIC = frozenset(
    {int, float, bool, str, bytes, complex, type(None)}
    | {np.dtype(c).type for c in np.typecodes["All"] if np.dtype(c).kind not in "OV"}
)
"""Types whose objects hold no array (Python's and numpy's scalars): a closure's cells of
these are not looked into."""

_DECLARES: dict[type, bool] = {}
"""For each type met in a closure, whether it declares what it keeps (``captures()``)."""

_function = type(_captured)


def view_bytes(value: np.ndarray, params: tuple[Param, ...]) -> int:
    """What a value that is a view is charged: the bytes of the array owning its memory
    when that is a new array of the op's (a reshape of its result), 0 when it is an
    input's value (a reshape or a transpose op: counted with the input)."""
    base = owner(value)
    for p in params:
        node = p[NODE]
        v = node.value
        if type(v) is _ndarray and owner(v) is base:
            node.mark_shared()  # this view holds the input's memory too
            return 0
    return base.nbytes


FRESH_NOTES: dict[int, Any] = {}
"""Per thread (by its ident), a weak reference to the array that ``lampy.opkit.frozen``
last made read-only for the value of the op calling it (a view of memory that op made
itself), until that thread's next op whose value is a view takes it
(``fresh_view_bytes``)."""


def note_fresh_owner(owner_array: np.ndarray) -> None:
    """Remember ``owner_array``, a new array whose view is about to be an op's value."""
    FRESH_NOTES[get_ident()] = weakref.ref(owner_array)


def fresh_view_bytes(value: np.ndarray) -> int:
    """What a view value is charged when this thread's ``note_fresh_owner`` noted the
    array owning its memory: that array's bytes, or -1 (the note is taken either way).
    ``lampy.op`` uses it when the op has no params: without them it cannot tell a view
    of its own new array (counted) from a view of an input's value (counted with the
    input); with params, ``view_bytes`` tells."""
    ref = FRESH_NOTES.pop(get_ident(), None)
    o = None if ref is None else ref()
    if o is not None and owner(value) is o:
        return int(o.nbytes)
    return -1


def kept_bytes(params: tuple[Param, ...], value: Any) -> int:
    """Bytes of the arrays an op's params saved for backward beyond the graph's values:
    the arrays a closure captured (its cells, and tuples or lists in them) or a
    ``WITH_SAVED`` edge saved, each counted once by the array owning its memory (an
    edge's vjp keeps no array its closure does not: nodes, shapes, constants),
    leaving out the op's value and its inputs' values (counted with their nodes)."""
    found: list[np.ndarray] = []
    for _, fn, kind, _, saved in params:
        if kind == WITH_SAVED:
            if type(saved) is _ndarray:
                found.append(saved)
        else:
            cells = getattr(fn, "__closure__", None)
            if cells:
                _captured(cells, found, 3)
    return _beyond_graph(found, params, value)


def _beyond_graph(arrays: list[np.ndarray], params: tuple[Param, ...], value: Any) -> int:
    """Bytes of ``arrays``, each counted once by the array owning its memory, leaving out
    the op's ``value`` and its inputs' values (counted with their nodes)."""
    if not arrays:
        return 0
    counted = {id(owner(value))} if type(value) is _ndarray else set()
    for q in params:
        v = q[NODE].value
        if type(v) is _ndarray:
            counted.add(id(v if v.base is None else owner(v)))
    total = 0
    for a in arrays:
        o = a if a.base is None else owner(a)
        if id(o) not in counted:
            counted.add(id(o))
            total += o.nbytes
    return total


CHECK_DECLARED = False
"""Whether ``declared_bytes`` also runs ``kept_bytes``' scan of the closures and raises
``AssertionError`` when the two differ. Off in use (the declaration exists to skip the
scan); the test suite turns it on, so every op that declares what it keeps is checked
against the scan on every call the tests make."""


def declared_bytes(
    keeps: Iterable[np.ndarray | None], params: tuple[Param, ...], value: Any
) -> int:
    """``kept_bytes`` for an op that declares the arrays its params' closures keep
    (``lampy.op(..., keeps=...)``, None entries skipped): those arrays and the one each
    ``WITH_SAVED`` edge saved, counted as ``kept_bytes`` counts them. No closure is
    looked into: an op with several closures over a few arrays saves the scan's walk of
    their cells (1 to 3 µs an op)."""
    found = [a for a in keeps if type(a) is _ndarray]
    for _, _, kind, _, saved in params:
        if kind == WITH_SAVED and type(saved) is _ndarray:
            found.append(saved)
    total = _beyond_graph(found, params, value)
    if CHECK_DECLARED:
        scanned = kept_bytes(params, value)
        if scanned != total:
            names = [getattr(p[1], "__qualname__", p[1]) for p in params]
            raise AssertionError(
                f"an op's declared keeps count {total} bytes, the scan of its closures "
                f"{names} finds {scanned}: declare every array the closures keep."
            )
    return total


def namespace_kept_bytes(params: tuple[Param, ...], value: Any) -> int:
    """``kept_bytes`` for an op whose arrays belong to another namespace (the array API
    standard's): the arrays of that namespace a ``WITH_SAVED`` edge saved (one, or a
    tuple of them) or a closure captured (in its cells, or tuples and lists in them),
    each counted once, leaving out the op's value and its inputs' values. The standard
    says nothing of views, so each array object counts as its own memory (an upper
    bound where two of them share it)."""
    graph = {id(value), *(id(p[NODE].value) for p in params)}
    found: dict[int, Any] = {}
    for _, fn, kind, _, saved in params:
        if kind == WITH_SAVED:
            candidates = list(saved) if type(saved) is tuple else [saved]
        else:
            candidates = []
            for c in getattr(fn, "__closure__", None) or ():
                try:
                    o = c.cell_contents
                except ValueError:  # an empty cell
                    continue
                candidates.extend(o if type(o) in (tuple, list) else (o,))
        for a in candidates:
            if is_foreign(a) and id(a) not in graph:
                found[id(a)] = a
    return sum(nbytes(a) for a in found.values())


__all__ = [
    "CHECK_DECLARED",
    "FRESH_NOTES",
    "declared_bytes",
    "fresh_view_bytes",
    "kept_bytes",
    "namespace_kept_bytes",
    "note_fresh_owner",
    "view_bytes",
]
