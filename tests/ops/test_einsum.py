"""einsum: generated subscripts of every kind numpy accepts, the listed special forms,
both contraction paths, and errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
import lampy.ops._einsum as einsum_module
from lampy.autograd import unbroadcast
from lampy.ops._einsum import einsum
from lampy.testing import check_grad
from lampy.testing import strategies as ls

from .table_products import einsum_problems

PATHS = pytest.mark.parametrize("path", ["loop", "optimized"])
"""Run a test with numpy's plain loop, then with numpy's optimiser forced on."""


@contextmanager
def _contraction_path(path: str) -> Iterator[None]:
    old = einsum_module.OPTIMIZE_MIN_WORK
    einsum_module.OPTIMIZE_MIN_WORK = 0 if path == "optimized" else 1 << 62
    try:
        yield
    finally:
        einsum_module.OPTIMIZE_MIN_WORK = old


def _operands(rng: np.random.Generator, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.uniform(-2, 2, s) for s in shapes]


@PATHS
@given(problem=einsum_problems(), data=st.data(), dtype=ls.float_dtypes())
def test_generated_subscripts(
    path: str, problem: tuple[str, list[tuple[int, ...]]], data: st.DataObject, dtype: np.dtype
) -> None:
    """For generated subscripts (1-3 operands, repeated letters, explicit or implicit
    output, ellipsis with broadcast batches, length-1 axes) einsum matches np.einsum
    forward and central differences backward."""
    subscripts, shapes = problem
    arrays = [data.draw(ls.arrays(s, dtype, min_value=-2, max_value=2)) for s in shapes]
    expected = np.einsum(subscripts, *arrays)
    with _contraction_path(path):
        with lampy.Scope():
            out = einsum(subscripts, *[lampy.param(a) for a in arrays])
            assert out.shape == expected.shape
            assert out.dtype == expected.dtype
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(out.value, expected, rtol=tol, atol=tol)
        check_grad(lambda *vs: einsum(subscripts, *vs), *arrays)


CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),  # implicit output: ik
    ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ij", [(3, 3, 2)]),
    ("iji->j", [(2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 2)]),
    ("...ij,...jk", [(4, 2, 3), (3, 2)]),
    ("ij->i", [(2, 3)]),  # j summed within one operand
    ("ij,k->i", [(2, 3), (4,)]),  # k appears in one operand only
    ("i,i", [(1,), (3,)]),  # a length-1 named axis broadcasts
    ("bii,bjj->bij", [(2, 3, 3), (2, 4, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("i,j,k->kji", [(2,), (3,), (4,)]),
    ("a...a", [(2, 3, 2)]),
    ("", [()]),
    ("...,...", [(), (3,)]),
    ("Ab,bA->", [(2, 3), (3, 2)]),
    ("ij,ij->", [(0, 3), (0, 3)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),  # spaces are ignored, as in numpy
]


@PATHS
@pytest.mark.parametrize(("subscripts", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_listed_forms(path: str, subscripts: str, shapes: list[tuple[int, ...]]) -> None:
    """Traces, diagonals, implicit output, ellipsis broadcasting, one-operand sums and
    chains match numpy forward and backward."""
    arrays = _operands(np.random.default_rng(0), *shapes)
    with _contraction_path(path):
        with lampy.Scope():
            out = einsum(subscripts, *[lampy.param(a) for a in arrays])
            np.testing.assert_allclose(out.value, np.einsum(subscripts, *arrays), atol=1e-12)
        check_grad(lambda *vs: einsum(subscripts, *vs), *arrays)


def test_diagonal_gradient_is_exact() -> None:
    """The gradient of 'ii->i' is g on the diagonal and exactly zero elsewhere."""
    a = np.arange(9.0).reshape(3, 3)
    g = np.array([1.0, 2.0, 3.0])
    with lampy.Scope():
        x = lampy.param(a)
        einsum("ii->i", x).backward(g)
        np.testing.assert_array_equal(x.grad, np.diag(g))


def test_trace_gradient_is_identity() -> None:
    """The gradient of 'ii' (a trace) is the identity, exactly."""
    with lampy.Scope():
        x = lampy.param(np.ones((4, 4), np.float32))
        einsum("ii", x).backward()
        assert x.grad.dtype == np.float32
        np.testing.assert_array_equal(x.grad, np.eye(4))


def test_variable_used_twice() -> None:
    """A Variable passed as two operands gets both contributions ('ij,ij->' gives 2x)."""
    a = np.random.default_rng(1).standard_normal((3, 4))
    with lampy.Scope():
        x = lampy.param(a)
        einsum("ij,ij->", x, x).backward()
        np.testing.assert_allclose(x.grad, 2 * a)
    check_grad(lambda v: einsum("ij,jk,kl->il", v, v.T, v), a)


def test_constant_operands() -> None:
    """Arrays, integers and Python numbers are constants; the Variable operand gets its
    gradient, and numpy's result dtype is kept."""
    a = np.random.default_rng(2).standard_normal((2, 3))
    b = np.arange(3)
    check_grad(lambda v: einsum("ij,j->i", v, b), a)
    check_grad(lambda v: einsum(",ij->ij", 2.0, v), a)
    with lampy.Scope():
        out = einsum("i,i", lampy.const(b), b)
        assert out.dtype == np.einsum("i,i", b, b).dtype
        assert not out.needs_grad


def test_interleaved_form() -> None:
    """einsum(op0, sublist0, op1, sublist1, [out]) works as in numpy, ellipsis included."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3, 5))
    with lampy.Scope():
        out = einsum(lampy.param(a), [0, 1], lampy.param(b), [Ellipsis, 1, 2], [Ellipsis, 0, 2])
        np.testing.assert_allclose(
            out.value, np.einsum(a, [0, 1], b, [Ellipsis, 1, 2], [Ellipsis, 0, 2])
        )
        assert einsum(lampy.param(a), [1, 0]).shape == (3, 2)  # implicit output
    check_grad(lambda u, v: einsum(u, [0, 1], v, [Ellipsis, 1, 2], [Ellipsis, 0, 2]), a, b)


def test_large_contraction_uses_blas_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above OPTIMIZE_MIN_WORK numpy's optimiser is used, forward and backward."""
    calls: list[object] = []
    real = np.einsum

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(kwargs.get("optimize"))
        return real(*args, **kwargs)

    monkeypatch.setattr(einsum_module, "_einsum", spy)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((40, 40)), rng.standard_normal((40, 40))
    with lampy.Scope():
        x, y = lampy.param(a), lampy.param(b)
        out = einsum("ij,jk->ik", x, y)
        out.backward(np.ones((40, 40)))
        np.testing.assert_allclose(out.value, a @ b)
        np.testing.assert_allclose(x.grad, np.ones((40, 40)) @ b.T)
    assert calls == [True, True, True]


ERRORS = [
    ("ij,jk", [(2, 3)], lampy.LampyValueError, r"2 operand terms but 1 operands"),
    ("i1", [(2, 3)], lampy.LampyValueError, r"labels are the letters"),
    ("i..", [(2, 3)], lampy.LampyValueError, r"'\.' that is not part of an ellipsis"),
    ("...i...", [(2, 3)], lampy.LampyValueError, r"more than one ellipsis"),
    ("i->j", [(3,)], lampy.LampyValueError, r"output label 'j' is in no operand"),
    ("i,i->ii", [(3,), (3,)], lampy.LampyValueError, r"repeats a label"),
    ("i-j", [(3,)], lampy.LampyValueError, r"'->'"),
    ("ij", [(3,)], lampy.ShapeError, r"operand 0 has shape \(3,\)"),
    ("i,i", [(2,), (3,)], lampy.ShapeError, r"label 'i' has length 2 .* and 3"),
    ("ii", [(2, 3)], lampy.ShapeError, r"repeats label 'i' on axes of lengths 2 and 3"),
    ("...i->i", [(2, 3)], lampy.ShapeError, r"output needs an ellipsis"),
]


@pytest.mark.parametrize(("subscripts", "shapes", "error", "message"), ERRORS, ids=str)
def test_errors(subscripts: str, shapes: list[tuple[int, ...]], error: type, message: str) -> None:
    """Subscripts numpy rejects raise a LampyValueError (a ValueError; ShapeError for
    shapes) naming einsum and the problem, before anything is recorded."""
    with pytest.raises(ValueError, match=r"."):  # numpy rejects them too
        np.einsum(subscripts, *[np.ones(s) for s in shapes])
    with lampy.Scope() as scope:
        params = [lampy.param(np.ones(s)) for s in shapes]
        with pytest.raises(error, match=r"einsum: .*" + message):
            einsum(subscripts, *params)
        assert len(scope) == len(params)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_length_1_axis_broadcast_against_an_empty_one(dtype):
    """'a,a' with a of length 1 in one operand and 0 in the other: numpy broadcasts 1
    against 0 (an empty sum, 0); the empty operand's gradient is empty and the other's
    is 0 (its contribution of length 1 was reshaped into (0,) and raised)."""
    with lampy.Scope():
        x = lampy.param(np.array([2.0], dtype))
        y = lampy.param(np.zeros(0, dtype))
        z = lampy.einsum("a,a", x, y)
        assert z.item() == np.einsum("a,a", np.array([2.0]), np.zeros(0)) == 0.0
        z.backward()
        assert x.grad.shape == (1,) and x.grad[0] == 0 and x.grad.dtype == dtype
        assert y.grad.shape == (0,) and y.grad.dtype == dtype


@pytest.mark.parametrize(
    ("g_shape", "shape"), [((1,), (0,)), ((3, 1), (3, 0)), ((2, 1, 1), (1, 0)), ((1, 1), (0, 4))]
)
def test_unbroadcast_spreads_a_length_1_axis_over_an_empty_one(g_shape, shape):
    out = unbroadcast(np.ones(g_shape), shape)
    assert out.shape == shape
