"""Variable's operators and methods come from one table, ``lampy._methods.METHODS``,
installed on ``lampy.Variable`` by ``lampy/__init__.py``; type checkers read their
signatures from the declarations in ``lampy/autograd/_operators.py`` (``VariableMethods``,
inside ``if TYPE_CHECKING:``). These tests keep the two in step: every declared method is
installed and nothing else, each with its declared signature, and a method that is an op
has the op's own signature."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy import _methods, _shared_names, _translating
from lampy.autograd import _operators

SOURCE = Path(_operators.__file__)


def _declarations() -> dict[str, Any]:
    """The classes declared under ``if TYPE_CHECKING:`` in ``_operators.py``, made real
    (annotations stay strings, as in the module)."""
    tree = ast.parse(SOURCE.read_text())
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    classes = [node for node in block.body if isinstance(node, ast.ClassDef)]
    module = ast.parse("from __future__ import annotations")
    module.body.extend(classes)
    namespace: dict[str, Any] = {"Any": Any, "NamedTuple": NamedTuple, "NoReturn": NoReturn}
    exec(compile(module, str(SOURCE), "exec"), namespace)
    return {c.name: namespace[c.name] for c in classes}


DECLARED = _declarations()
METHODS_DECLARED = {
    name: m
    for name, m in vars(DECLARED["VariableMethods"]).items()
    if inspect.isfunction(m) or isinstance(m, property)
}


def _function(m: Any) -> Any:
    return m.fget if isinstance(m, property) else m


def _params(fn: Any, *, names: bool) -> list[tuple[Any, ...]]:
    """The parameters after the first (``self``, or an op's operand)."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    if names:
        return [(p.name, p.kind, p.default, p.annotation) for p in params]
    return [(p.kind, p.default) for p in params]


def test_the_declared_methods_are_the_installed_ones() -> None:
    """Every declared method is in the table, every entry of the table is declared, and
    ``lampy.Variable`` has each entry itself."""
    assert set(METHODS_DECLARED) == set(_methods.METHODS)
    parts = [_methods.OPS, vars(_methods.Forwarding), vars(_translating.Translating)]
    found = [n for part in parts for n in part if n in _methods.METHODS]
    assert sorted(found) == sorted(_methods.METHODS), "a name is in two parts of the table"
    own = vars(lampy.Variable)
    assert [n for n, m in _methods.METHODS.items() if own.get(n) is not m] == []
    assert len(_methods.METHODS) > 90
    # Nothing installed hides a method of the mixin or the advice for a missing name.
    advised = {*_shared_names.NO_SUCH_METHOD, *_shared_names.IN_PLACE_NAMES}
    assert set(_methods.METHODS) & {*vars(_operators.VariableOperators), *advised} == set()


@pytest.mark.parametrize("name", sorted(_methods.METHODS))
def test_an_installed_method_has_its_declared_signature(name: str) -> None:
    """A hand-written method has its declaration's signature (names, kinds, defaults,
    annotations); an op installed as a method takes after its first parameter what the
    declaration takes after ``self`` (an operator's declaration keeps Python's names for
    the operand, so only kinds and defaults are compared), and a property's getter takes
    the Variable alone."""
    declared = _function(METHODS_DECLARED[name])
    installed = _function(_methods.METHODS[name])
    assert isinstance(METHODS_DECLARED[name], property) == isinstance(
        _methods.METHODS[name], property
    )
    if isinstance(_methods.METHODS[name], property):  # x.T: the getter takes x alone
        rest = list(inspect.signature(installed).parameters.values())[1:]
        assert all(p.default is not p.empty for p in rest)
        assert inspect.signature(installed).return_annotation == (
            inspect.signature(declared).return_annotation
        )
    elif name in _methods.OPS:
        dunder = name.startswith("__")
        assert _params(installed, names=not dunder) == _params(declared, names=not dunder)
        if not dunder:
            assert inspect.signature(installed).return_annotation == (
                inspect.signature(declared).return_annotation
            )
    else:
        assert inspect.signature(installed) == inspect.signature(declared)


def test_the_methods_that_are_ops_are_the_ops_themselves() -> None:
    """``x.exp()`` is ``lampy.exp(x)`` and ``x * y`` is ``lampy.multiply(x, y)``, with no
    frame in between: the table holds the op functions of ``lampy`` and
    ``lampy.nn.functional``."""
    public = {id(f) for f in (*vars(lampy).values(), *vars(F).values()) if callable(f)}
    for name, m in _methods.OPS.items():
        assert id(_function(m)) in public, name
    assert lampy.Variable.tanh is lampy.tanh
    assert lampy.Variable.__mul__ is lampy.multiply
    assert lampy.Variable.sigmoid is F.sigmoid
    assert lampy.Variable.T.fget is lampy.transpose


def test_the_declared_topk_result_has_the_fields_of_lampy_topk() -> None:
    """The declarations' ``TopK`` (the engine does not import ``lampy.ops``) stands for
    ``lampy.TopK``: the same fields with the same types."""
    twin = DECLARED["TopK"]
    assert twin._fields == lampy.TopK._fields
    assert twin.__annotations__ == lampy.TopK.__annotations__


def test_install_is_idempotent_and_refuses_a_name_variable_defines(monkeypatch) -> None:
    """Installing again changes nothing; an entry named as one of Variable's own
    attributes (``detach``) is refused rather than replacing it."""
    _methods.install()
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0]))
        np.testing.assert_array_equal((x * 2).value, [2.0, 4.0])
    monkeypatch.setitem(_methods.METHODS, "detach", lampy.copy)
    with pytest.raises(lampy.LampyTypeError, match="detach"):
        _methods.install()
    assert lampy.Variable.detach is not lampy.copy
