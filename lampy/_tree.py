"""Trees: the one definition of nested containers that every lampy walker follows.

``Scope.keep``, ``lampy.remat``'s arguments, ``lampy.grad``'s ``aux``, a module's
parameters, state dict, copies and pickles all visit nested containers through this
module, with these rules (JAX's pytrees, as equinox uses them):

- **Containers** are, in this order of precedence: types registered with
  ``lampy.tree.register``; objects whose class defines ``__lampy_children__()``
  (``lampy.nn.Module``); ``None`` (a container with nothing in it); namedtuples (their
  fields, rebuilt as the same type); tuples, lists, dicts (values in insertion order,
  keys are not walked), sets and frozensets (in iteration order); attrs records and
  dataclasses (their fields, in declaration order).
- **Leaves** are everything else: Variables (their class says so with
  ``__lampy_leaf__ = True``), numpy arrays, numbers, strings, functions, generators...
  A walker's ``is_leaf`` predicate can stop the walk earlier (at Modules, say).
- **Rebuilding** (``map_leaves``): tuples, lists, dicts, sets and namedtuples are always
  new objects of the same type. A record (registered type, ``__lampy_children__``
  object, attrs record, dataclass) in which no leaf changed (``fn(leaf) is leaf``)
  is returned itself, so its identity, and state kept beside it such as a module's
  ``eval()`` switch, stays; otherwise it is rebuilt (``attrs.evolve``,
  ``dataclasses.replace``, ``__lampy_rebuild__``, the registered ``unflatten``).
- A container that holds itself is an error, not an endless walk.

Nothing here is on the per-op path: the walkers run once per ``keep``, ``remat`` call,
``grad`` call or module method.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

import attrs

from lampy._errors import LampyTypeError

T = TypeVar("T")
Flatten = Callable[[Any], tuple[Iterable[Any], Any]]
"""``flatten(obj) -> (children, aux)``: what ``obj`` holds, and the rest needed to rebuild it."""
Unflatten = Callable[[Any, list[Any]], Any]
"""``unflatten(aux, children) -> obj``: the object rebuilt around new children."""
IsLeaf = Callable[[Any], bool] | None


class TreeError(LampyTypeError):
    """A tree could not be walked or rebuilt (a cycle, a container that cannot be rebuilt)."""


@attrs.frozen
class _Kind:
    """How to open one type of container and rebuild it: ``open(obj)`` gives
    ``(keys, children, aux)``; ``rebuild(obj, aux, children)`` the new container."""

    name: str
    open: Callable[[Any], tuple[list[Hashable], list[Any], Any]]
    rebuild: Callable[[Any, Any, list[Any]], Any]
    record: bool  # rebuilt only when a leaf below it changed


_REGISTERED: dict[type, tuple[Flatten, Unflatten]] = {}
_KINDS: dict[type, _Kind | None] = {}  # per type (None: a leaf); cleared by register


def register(cls: type, flatten: Flatten, unflatten: Unflatten) -> None:
    """Make instances of ``cls`` containers of every lampy tree walk, as JAX's
    ``register_pytree_node``.

    Args:
        cls: The type (exactly this type, not its subclasses).
        flatten: ``flatten(obj) -> (children, aux)``: the objects ``obj`` holds, in a
            fixed order, and anything else needed to rebuild it (settings, names).
        unflatten: ``unflatten(aux, children) -> obj``: a new instance from ``aux`` and
            a list of children in ``flatten``'s order.

    Examples:
        >>> import numpy as np, lampy
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> lampy.tree.register(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
        >>> lampy.tree.leaves(Pair(1, [2, 3]))
        [1, 2, 3]
    """
    if not isinstance(cls, type):
        raise LampyTypeError(f"lampy.tree.register: cls must be a type, got {type(cls).__name__}.")
    if not (callable(flatten) and callable(unflatten)):
        raise LampyTypeError(
            "lampy.tree.register: flatten and unflatten must be callables: "
            "flatten(obj) -> (children, aux) and unflatten(aux, children) -> obj."
        )
    _REGISTERED[cls] = (flatten, unflatten)
    _KINDS.clear()


# ----------------------------------------------------------------- the kinds
def _open_registered(obj: Any) -> tuple[list[Hashable], list[Any], Any]:
    children, aux = _REGISTERED[type(obj)][0](obj)
    children = list(children)
    return list(range(len(children))), children, aux


def _open_children(obj: Any) -> tuple[list[Hashable], list[Any], Any]:
    children = list(obj.__lampy_children__())
    return list(range(len(children))), children, None


def _rebuild_children(obj: Any, _: Any, children: list[Any]) -> Any:
    rebuild = getattr(obj, "__lampy_rebuild__", None)
    if rebuild is None:
        raise TreeError(
            f"lampy.tree: {type(obj).__name__} lists what it holds with __lampy_children__() "
            "but cannot be rebuilt with new children. Define __lampy_rebuild__(self, "
            "children) returning a new instance, or register the type with "
            "lampy.tree.register(type, flatten, unflatten)."
        )
    return rebuild(children)


def _rebuild_fields(obj: Any, names: list[str], children: list[Any]) -> Any:
    """``obj`` with its fields ``names`` set to ``children``, through its ``__init__``."""
    cls = type(obj)
    is_attrs = attrs.has(cls)
    fields = {f.name: f for f in (attrs.fields(cls) if is_attrs else dataclasses.fields(obj))}
    init: dict[str, Any] = {}
    for name, child in zip(names, children, strict=True):
        field = fields[name]
        if field.init:
            init[getattr(field, "alias", None) or name] = child
        elif child is not getattr(obj, name):
            raise TreeError(
                f"lampy.tree: cannot rebuild a {cls.__name__} with a new value for its field "
                f"{name!r}, which its __init__ does not take (init=False). Register the type "
                "with lampy.tree.register(type, flatten, unflatten) to say how it is built."
            )
    return attrs.evolve(obj, **init) if is_attrs else dataclasses.replace(obj, **init)


def _open_fields(obj: Any) -> tuple[list[Hashable], list[Any], Any]:
    cls = type(obj)
    names = [f.name for f in (attrs.fields(cls) if attrs.has(cls) else dataclasses.fields(obj))]
    return list(names), [getattr(obj, n) for n in names], names


def _rebuilt_as(cls: type, make: Callable[[], Any]) -> Any:
    try:
        return make()
    except TypeError as e:
        raise TreeError(
            f"lampy.tree: cannot rebuild a {cls.__name__} from its items ({e}). Register the "
            "type with lampy.tree.register(type, flatten, unflatten) to say how it is built, "
            "or make it a leaf with is_leaf."
        ) from e


def _seq_kind(name: str, base: type) -> _Kind:
    def rebuild(obj: Any, _: Any, children: list[Any]) -> Any:
        cls = type(obj)
        return base(children) if cls is base else _rebuilt_as(cls, lambda: cls(children))

    def open_(obj: Any) -> tuple[list[Hashable], list[Any], Any]:
        items = list(obj)
        return list(range(len(items))), items, None

    return _Kind(name, open_, rebuild, record=False)


def _open_dict(obj: Any) -> tuple[list[Hashable], list[Any], Any]:
    keys = list(obj)
    return keys, [obj[k] for k in keys], keys


def _rebuild_dict(obj: Any, keys: list[Hashable], children: list[Any]) -> Any:
    cls = type(obj)
    if cls is dict:
        return dict(zip(keys, children, strict=True))
    return _rebuilt_as(cls, lambda: cls(zip(keys, children, strict=True)))


def _open_namedtuple(obj: Any) -> tuple[list[Hashable], list[Any], Any]:
    return list(obj._fields), list(obj), None


_REGISTERED_KIND = _Kind(
    "registered",
    _open_registered,
    lambda obj, aux, children: _REGISTERED[type(obj)][1](aux, children),
    record=True,
)
_CHILDREN_KIND = _Kind("__lampy_children__", _open_children, _rebuild_children, record=True)
_NONE_KIND = _Kind("None", lambda _: ([], [], None), lambda obj, aux, children: None, record=False)
_NAMEDTUPLE_KIND = _Kind(
    "namedtuple",
    _open_namedtuple,
    lambda obj, _, children: _rebuilt_as(type(obj), lambda: type(obj)(*children)),
    record=False,
)
_TUPLE_KIND = _seq_kind("tuple", tuple)
_LIST_KIND = _seq_kind("list", list)
_SET_KIND = _seq_kind("set", set)
_FROZENSET_KIND = _seq_kind("frozenset", frozenset)
_DICT_KIND = _Kind("dict", _open_dict, _rebuild_dict, record=False)
_FIELDS_KIND = _Kind("record", _open_fields, _rebuild_fields, record=True)


def _kind_of(cls: type) -> _Kind | None:
    """The container kind of ``cls``, or None for a leaf type (found once per type)."""
    try:
        return _KINDS[cls]
    except KeyError:
        pass
    kind: _Kind | None
    if cls in _REGISTERED:
        kind = _REGISTERED_KIND
    elif getattr(cls, "__lampy_leaf__", False):
        kind = None
    elif cls is type(None):
        kind = _NONE_KIND
    elif hasattr(cls, "__lampy_children__"):
        kind = _CHILDREN_KIND
    elif issubclass(cls, tuple):
        kind = _NAMEDTUPLE_KIND if hasattr(cls, "_fields") else _TUPLE_KIND
    elif issubclass(cls, list):
        kind = _LIST_KIND
    elif issubclass(cls, dict):
        kind = _DICT_KIND
    elif issubclass(cls, frozenset):
        kind = _FROZENSET_KIND
    elif issubclass(cls, set):
        kind = _SET_KIND
    elif attrs.has(cls) or dataclasses.is_dataclass(cls):
        kind = _FIELDS_KIND
    else:
        kind = None
    _KINDS[cls] = kind
    return kind


def is_container(obj: Any) -> bool:
    """Whether the walks open ``obj`` (without ``is_leaf``): False for a leaf.

    Examples:
        >>> import numpy as np, lampy
        >>> lampy.tree.is_container([1]), lampy.tree.is_container(np.ones(2))
        (True, False)
    """
    return _kind_of(type(obj)) is not None


def _cycle(obj: Any) -> TreeError:
    return TreeError(
        f"lampy.tree: a {type(obj).__name__} contains itself (a cycle), so walking it would "
        "never end. A tree must not hold itself: break the cycle, or stop the walk at that "
        "object with is_leaf=."
    )


# ----------------------------------------------------------------- walks
def _visit(
    tree: Any,
    path: tuple[Hashable, ...],
    out: list[tuple[tuple[Hashable, ...], Any]],
    is_leaf: IsLeaf,
    active: set[int],
) -> None:
    kind = None if is_leaf is not None and is_leaf(tree) else _kind_of(type(tree))
    if kind is None:
        out.append((path, tree))
        return
    if id(tree) in active:
        raise _cycle(tree)
    active.add(id(tree))
    keys, children, _ = kind.open(tree)
    for key, child in zip(keys, children, strict=True):
        _visit(child, (*path, key), out, is_leaf, active)
    active.discard(id(tree))


def leaves_with_paths(tree: Any, is_leaf: IsLeaf = None) -> list[tuple[tuple[Hashable, ...], Any]]:
    """Each leaf of ``tree`` with its path, in ``leaves``' order.

    A path is the tuple of keys from the root: positions in tuples, lists, sets and
    ``__lampy_children__``/registered children, dict keys, field names of namedtuples,
    attrs records and dataclasses.

    Raises:
        TreeError: if a container holds itself.
    """
    out: list[tuple[tuple[Hashable, ...], Any]] = []
    _visit(tree, (), out, is_leaf, set())
    return out


def leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """The leaves of ``tree``, depth first, in container order.

    Args:
        tree: Any nesting of containers (see ``lampy.tree``'s rules) and leaves.
        is_leaf: Called on each object before it is opened; True makes it a leaf.

    Raises:
        TreeError: if a container holds itself.

    Examples:
        >>> import lampy
        >>> lampy.tree.leaves({"a": (1, None, [2]), "b": 3})
        [1, 2, 3]
    """
    return [leaf for _, leaf in leaves_with_paths(tree, is_leaf)]


def _map(
    fn: Callable[[Any], Any], tree: Any, is_leaf: IsLeaf, active: set[int]
) -> tuple[Any, bool]:
    """The mapped tree, and whether a leaf in it changed (``fn(leaf) is not leaf``)."""
    kind = None if is_leaf is not None and is_leaf(tree) else _kind_of(type(tree))
    if kind is None:
        new_leaf = fn(tree)
        return new_leaf, new_leaf is not tree
    if id(tree) in active:
        raise _cycle(tree)
    active.add(id(tree))
    _, children, aux = kind.open(tree)
    mapped = [_map(fn, c, is_leaf, active) for c in children]
    active.discard(id(tree))
    changed = any(c for _, c in mapped)
    if kind.record and not changed:
        return tree, False
    return kind.rebuild(tree, aux, [new for new, _ in mapped]), changed


def map_leaves(fn: Callable[[Any], Any], tree: T, is_leaf: IsLeaf = None) -> T:
    """``tree`` with each leaf replaced by ``fn(leaf)``, containers rebuilt around them.

    Tuples, lists, dicts, sets and namedtuples are new objects of the same type; a
    record in which no leaf changed (``fn(leaf) is leaf`` for each) is returned itself.

    Args:
        fn: Called once per leaf, in ``leaves``' order.
        tree: Any nesting of containers and leaves.
        is_leaf: Called on each object before it is opened; True makes it a leaf.

    Raises:
        TreeError: if a container holds itself or cannot be rebuilt.

    Examples:
        >>> import lampy
        >>> lampy.tree.map_leaves(lambda x: x * 10, {"a": (1, None, [2]), "b": 3})
        {'a': (10, None, [20]), 'b': 30}
    """
    return _map(fn, tree, is_leaf, set())[0]  # type: ignore[no-any-return]


@attrs.frozen(eq=False)
class Structure:
    """The containers of a flattened tree: ``unflatten`` puts new leaves in them."""

    tree: Any
    is_leaf: IsLeaf
    num_leaves: int

    def unflatten(self, new_leaves: Iterable[Any]) -> Any:
        """The tree rebuilt with ``new_leaves`` in place of its leaves, in order.

        Raises:
            TreeError: if the number of leaves differs from the flattened tree's.
        """
        given = list(new_leaves)
        if len(given) != self.num_leaves:
            raise TreeError(
                f"lampy.tree: unflatten got {len(given)} leaves for a structure of "
                f"{self.num_leaves}; pass exactly one per leaf of the flattened tree."
            )
        it = iter(given)
        return map_leaves(lambda _: next(it), self.tree, self.is_leaf)


def flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], Structure]:
    """The leaves of ``tree`` and its ``Structure``, as JAX's ``tree_flatten``.

    Examples:
        >>> import lampy
        >>> values, structure = lampy.tree.flatten((1, {"x": 2}))
        >>> structure.unflatten([v + 1 for v in values])
        (2, {'x': 3})
    """
    found = leaves(tree, is_leaf)
    return found, Structure(tree, is_leaf, len(found))


__all__ = [
    "Structure",
    "TreeError",
    "flatten",
    "is_container",
    "leaves",
    "leaves_with_paths",
    "map_leaves",
    "register",
]
