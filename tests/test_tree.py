"""lampy.tree: one definition of nested containers, and every walker following it."""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, NamedTuple

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy.tree import TreeError

Point = collections.namedtuple("Point", ["x", "y"])


@attrs.frozen
class Record:
    left: Any
    right: Any


@dataclasses.dataclass(frozen=True)
class Data:
    first: Any
    second: Any


class Box:
    """A user type that is not a record: registered with lampy.tree.register."""

    def __init__(self, label: str, items: list[Any]) -> None:
        self.label, self.items = label, items

    def __eq__(self, other: object) -> bool:
        return type(other) is Box and (self.label, self.items) == (other.label, other.items)

    __hash__ = None  # type: ignore[assignment]


lampy.tree.register(Box, lambda b: (b.items, b.label), lambda label, items: Box(label, items))


def _trees(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Nests of every container kind around ``leaf``."""

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, max_size=3),
            st.lists(children, max_size=3).map(tuple),
            st.dictionaries(st.text(max_size=2), children, max_size=3),
            st.builds(Point, children, children),
            st.builds(Record, children, children),
            st.builds(Data, children, children),
            st.builds(Box, st.text(max_size=2), st.lists(children, max_size=2)),
        )

    return st.recursive(leaf | st.none(), extend, max_leaves=12)


def _same(a: Any, b: Any) -> bool:
    """Equal values in containers of exactly the same types."""
    if type(a) is not type(b):
        return False
    if lampy.tree.is_container(a):
        la, lb = lampy.tree.leaves(a), lampy.tree.leaves(b)
        paths = [p for p, _ in lampy.tree.leaves_with_paths(a)]
        return paths == [p for p, _ in lampy.tree.leaves_with_paths(b)] and all(
            _same(x, y) for x, y in zip(la, lb, strict=True)
        )
    return bool(a == b)


@given(_trees(st.integers()))
def test_map_leaves_identity_rebuilds_an_equal_tree(tree: Any) -> None:
    """map_leaves(identity) gives the same structure, container types and leaves."""
    assert _same(lampy.tree.map_leaves(lambda x: x, tree), tree)
    assert tree == lampy.tree.map_leaves(lambda x: x, tree)


@given(_trees(st.integers()))
def test_leaves_order_is_the_flatten_and_map_order(tree: Any) -> None:
    """leaves, flatten and the calls of map_leaves' fn all go in one order, and
    unflatten puts new leaves back in that order."""
    seen: list[Any] = []
    lampy.tree.map_leaves(seen.append, tree)
    found, structure = lampy.tree.flatten(tree)
    assert seen == found == lampy.tree.leaves(tree)
    assert [leaf for _, leaf in lampy.tree.leaves_with_paths(tree)] == found
    doubled = structure.unflatten([2 * v for v in found])
    assert lampy.tree.leaves(doubled) == [2 * v for v in found]
    assert _same(structure.unflatten(found), tree)


def test_namedtuples_records_and_registered_types_keep_their_type() -> None:
    """Containers are rebuilt as the same type: namedtuple, attrs record, dataclass,
    registered type; dicts keep their insertion order, None stays None."""
    tree = {"z": Point(1, Record(2, Data(3, Box("b", [4, None])))), "a": [5]}
    out = lampy.tree.map_leaves(lambda v: v * 10, tree)
    assert list(out) == ["z", "a"]
    assert out == {"z": Point(10, Record(20, Data(30, Box("b", [40, None])))), "a": [50]}
    assert type(out["z"]) is Point
    assert lampy.tree.leaves(tree) == [1, 2, 3, 4, 5]


def test_unchanged_records_are_returned_themselves() -> None:
    """A record whose leaves come back unchanged is the same object; builtins are new."""
    rec, lst = Record(1, 2), [1]
    out = lampy.tree.map_leaves(lambda v: v, (rec, lst))
    assert out[0] is rec and out[1] is not lst


def test_paths_name_positions_keys_and_fields() -> None:
    """Paths are positions, dict keys and field names."""
    paths = [p for p, _ in lampy.tree.leaves_with_paths({"a": [Point(1, 2)], "r": Record(3, 4)})]
    assert paths == [("a", 0, "x"), ("a", 0, "y"), ("r", "left"), ("r", "right")]


def test_is_leaf_stops_the_walk() -> None:
    """is_leaf makes an object a leaf before it is opened."""
    tree = [Point(1, 2), (3,)]
    assert lampy.tree.leaves(tree, is_leaf=lambda x: type(x) is Point) == [Point(1, 2), 3]


def test_a_cycle_is_an_error_naming_the_type() -> None:
    """A container holding itself raises TreeError naming its type and the fix."""
    loop: list[Any] = [1]
    loop.append({"again": loop})
    for walk in (lampy.tree.leaves, lambda t: lampy.tree.map_leaves(lambda x: x, t)):
        with pytest.raises(TreeError, match=r"a list contains itself.*is_leaf"):
            walk(loop)


def test_a_container_that_cannot_be_rebuilt_is_an_error_naming_the_type() -> None:
    """A tuple subclass whose constructor takes other arguments, a __lampy_children__
    object without __lampy_rebuild__, and an init=False field name the type and say
    how to register it."""

    class Strict(tuple):  # type: ignore[type-arg]
        def __new__(cls, a: int, b: int) -> Strict:
            return super().__new__(cls, (a, b))

    class Holder:
        def __init__(self, v: Any) -> None:
            self.v = v

        def __lampy_children__(self) -> list[Any]:
            return [self.v]

    @attrs.frozen
    class Derived:
        a: int
        b: int = attrs.field(init=False, default=0)

    assert lampy.tree.leaves(Holder(Strict(1, 2))) == [1, 2]
    for tree, name in ((Strict(1, 2), "Strict"), (Holder(1), "Holder"), (Derived(1), "Derived")):
        with pytest.raises(TreeError, match=rf"{name}.*lampy.tree.register"):
            lampy.tree.map_leaves(lambda v: v + 1, tree)


def test_register_checks_its_arguments() -> None:
    """register takes a type and two callables."""
    with pytest.raises(lampy.LampyTypeError, match="must be a type"):
        lampy.tree.register(Box("x", []), lambda b: ((), None), lambda a, c: a)  # type: ignore[arg-type]
    with pytest.raises(lampy.LampyTypeError, match="callables"):
        lampy.tree.register(Box, None, None)  # type: ignore[arg-type]


def test_unflatten_checks_the_number_of_leaves() -> None:
    """unflatten wants exactly one new leaf per leaf."""
    _, structure = lampy.tree.flatten([1, (2, 3)])
    with pytest.raises(TreeError, match="got 2 leaves for a structure of 3"):
        structure.unflatten([1, 2])


# ------------------------------------------------------------------ the walkers


class Pair(NamedTuple):
    a: Any
    b: Any


def _containers(u: Any, v: Any) -> list[Any]:
    return [Pair(u, v), Box("box", [u, v])]


@pytest.mark.parametrize("kind", [0, 1], ids=["namedtuple", "registered"])
def test_keep_follows_the_tree_rules(kind: int) -> None:
    """Scope.keep moves Variables held in a namedtuple and in a registered type."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            u, v = lampy.param(1.0), lampy.exp(lampy.param(0.0))
            held = inner.keep(_containers(u, v)[kind])
        assert [x.item() for x in lampy.tree.leaves(held)] == [1.0, 1.0]


@pytest.mark.parametrize("kind", [0, 1], ids=["namedtuple", "registered"])
def test_remat_follows_the_tree_rules(kind: int) -> None:
    """remat takes Variables in a namedtuple or registered argument (an op result
    among them) and returns its result's own container type, with the gradients of
    the plain function."""

    def fn(pair: Any) -> Any:
        u, v = lampy.tree.leaves(pair)
        return lampy.tree.map_leaves(lambda x: lampy.tanh(x * u * v), pair)

    grads = []
    for wrap in (fn, lampy.remat(fn)):
        with lampy.Scope():
            u = lampy.param(np.array([0.3, -0.2]))
            v = lampy.exp(lampy.param(np.array([0.1, 0.4])))
            out = wrap(_containers(u, v)[kind])
            assert type(out) is type(_containers(u, v)[kind])
            sum(x.sum() for x in lampy.tree.leaves(out)).backward()
            grads.append(u.grad.copy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("kind", [0, 1], ids=["namedtuple", "registered"])
def test_grad_aux_follows_the_tree_rules(kind: int) -> None:
    """grad(has_aux=True) turns the Variables of a namedtuple or registered aux into
    arrays, keeping its type."""

    def f(x: lampy.Variable) -> tuple[lampy.Variable, Any]:
        return (x * x).sum(), _containers(x, 2 * x)[kind]

    g, aux = lampy.grad(f, has_aux=True)(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g, [2.0, 4.0])
    assert type(aux) is type(_containers(0, 0)[kind])
    assert all(type(a) is np.ndarray for a in lampy.tree.leaves(aux))
    np.testing.assert_array_equal(lampy.tree.leaves(aux)[1], [2.0, 4.0])


def test_module_state_follows_the_tree_rules() -> None:
    """A module's parameters and state dict reach Variables in a namedtuple field, named
    by the path's field names."""

    @attrs.frozen(eq=False, repr=False)
    class Holder(lampy.nn.Module):
        pair: Any

    with lampy.Scope():
        m = Holder(Pair(lampy.param(np.ones(2)), {"w": lampy.param(np.zeros(1))}))
        assert list(m.state_dict()) == ["pair.a", "pair.b.w"]
        assert len(m.parameters()) == 2
        assert lampy.tree.map_leaves(lambda x: x, m) is m  # unchanged: the module itself
        doubled = lampy.tree.map_leaves(lambda x: x * 2.0, m)
        assert type(doubled) is Holder and type(doubled.pair) is Pair
        np.testing.assert_array_equal(doubled.pair.a.value, [2.0, 2.0])
