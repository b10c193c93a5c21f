"""Accept what numpy accepts: a list (or nested lists) of Variables where numpy takes an
array-like, and one array where numpy takes a sequence of arrays. Each function is
checked for numpy's value and for gradients reaching every Variable in the list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import ShapeError
from lampy.testing import check_grad

P = np.array([0.5, -1.25, 2.0])
Q = np.array([1.5, 0.25, -3.0])

# (name, lampy function of a list, numpy reference of the same list)
OF_A_LIST: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("mean", lampy.mean, np.mean),
    ("std", lampy.std, np.std),
    ("var", lampy.var, np.var),
    ("sum", lampy.sum, np.sum),
    ("prod", lampy.prod, np.prod),
    ("mean-axis", lambda xs: lampy.mean(xs, axis=0), lambda xs: np.mean(xs, axis=0)),
    ("std-ddof", lambda xs: lampy.std(xs, ddof=1), lambda xs: np.std(xs, ddof=1)),
    ("var-axis", lambda xs: lampy.var(xs, axis=1), lambda xs: np.var(xs, axis=1)),
    ("average", lampy.average, np.average),
    (
        "average-weights",
        lambda xs: lampy.average(P, weights=xs[0]),
        lambda xs: np.average(P, weights=xs[0]),
    ),
    ("norm", lampy.norm, np.linalg.norm),
    ("linalg.norm", lampy.linalg.norm, np.linalg.norm),
    ("norm-ord-1", lambda xs: lampy.linalg.norm(xs, 1), lambda xs: np.linalg.norm(xs, 1)),
    ("vstack", lampy.vstack, np.vstack),
    ("hstack", lampy.hstack, np.hstack),
    ("stack", lampy.stack, np.stack),
    ("concatenate", lampy.concatenate, np.concatenate),
    ("column_stack", lampy.column_stack, np.column_stack),
]


@pytest.mark.parametrize(("fn", "ref"), [c[1:] for c in OF_A_LIST], ids=[c[0] for c in OF_A_LIST])
def test_a_list_of_variables_is_an_array_like(fn: Any, ref: Any) -> None:
    """fn([x, y]) is numpy's ref([x, y]) and differentiates both x and y."""
    with lampy.Scope():
        x, y = lampy.param(P), lampy.param(Q)
        np.testing.assert_allclose(fn([x, y]).value, ref([P, Q]), rtol=1e-14)
    check_grad(lambda x, y: fn([x, y]), P, Q)


@pytest.mark.parametrize(
    "fn", [lampy.mean, lampy.std, lampy.var, lampy.linalg.norm], ids=["mean", "std", "var", "norm"]
)
def test_lists_of_scalars_numbers_and_nested_lists(fn: Any) -> None:
    """Python numbers mix with 0-d Variables, and nested lists stack into a matrix, as
    numpy.array would build them; every Variable gets its gradient."""
    check_grad(lambda a, b: fn([a, 2.0, b]), np.array(1.0), np.array(-0.5))
    check_grad(lambda a, b: fn([[a, b], [b, 1.5]]), np.array(1.0), np.array(-0.5))
    with lampy.Scope():
        a, b = lampy.param(1.0), lampy.param(-0.5)
        ref = {lampy.mean: np.mean, lampy.std: np.std, lampy.var: np.var}.get(fn, np.linalg.norm)
        np.testing.assert_allclose(fn([[a, b], [b, 1.5]]).value, ref([[1.0, -0.5], [-0.5, 1.5]]))


def test_the_same_variable_twice_gets_both_gradients() -> None:
    """A Variable listed twice receives the gradient of both positions."""
    with lampy.Scope():
        x = lampy.param(3.0)
        lampy.sum([x, x, 1.0]).backward()
        assert x.grad == 2.0


def test_join_items_may_be_lists_of_variables() -> None:
    """vstack([[a, b], [c, d]]) stacks rows built from 0-d Variables, as numpy would."""
    check_grad(
        lambda a, b: lampy.vstack([[a, b], [b, a]]) * np.array([[1.0, 2.0], [3.0, 4.0]]),
        np.array(1.0),
        np.array(2.0),
    )


def test_ragged_lists_raise_a_shape_error() -> None:
    """Variables of different shapes do not make an array: a ShapeError naming the
    function and the shapes, as numpy refuses ragged sequences."""
    with lampy.Scope() as scope:
        x, y = lampy.param(P), lampy.param(P[:2])
        with pytest.raises(ShapeError, match=r"mean: the sequence .* shapes \(3,\), \(2,\)"):
            lampy.mean([x, y])
        assert len(scope) == 2


def test_lists_without_variables_are_plain_constants() -> None:
    """A list of numbers is still taken as numpy takes it, with no extra op recorded."""
    with lampy.Scope() as scope:
        m = lampy.mean([1.0, 2.0, 4.0])
        assert m.item() == pytest.approx(7 / 3)
        assert len(scope) == 1


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(lampy.vstack, np.vstack), (lampy.hstack, np.hstack)],
    ids=["vstack", "hstack"],
)
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 2)])
def test_vstack_hstack_of_one_array(fn: Any, ref: Any, shape: tuple[int, ...]) -> None:
    """vstack(a) and hstack(a) of one array (a Variable) join its rows, as numpy does,
    and differentiate a (more cases in test_shape_more.py)."""
    a = np.arange(float(np.prod(shape))).reshape(shape) / 7
    with lampy.Scope():
        np.testing.assert_array_equal(fn(lampy.param(a)).value, ref(a))
    check_grad(fn, a)
