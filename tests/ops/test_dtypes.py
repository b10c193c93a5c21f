"""No silently dropped gradients: every op path where a dtype could turn a result that
needs a gradient into a constant (an object result, an integer ``dtype=``) or give the
real rule's wrong answer (a complex result of an op not declared for complex values)
raises DTypeError instead; an op declared for complex values gives PyTorch's gradient
(the real part, for a real input), checked by finite differences; without a gradient to
lose, numpy's results stand.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy import linalg as la
from lampy.testing import check_grad

C = np.array([1 + 0.2j, 2.0])  # a complex constant
OBJ = np.array([1.0, 2.0], dtype=object)  # an object constant
M = np.eye(2)

# Each takes x, a float64 param of shape (2,): a complex result, which the ops declared
# for complex values compute (gradient checked), and the others refuse (REFUSED).
COMPLEX: dict[str, Callable[[lampy.Variable], Any]] = {
    "add": lambda x: x + C,
    "subtract": lambda x: C - x,
    "multiply-python-complex": lambda x: x * (1 + 0.2j),
    "multiply-numpy-complex64": lambda x: x * np.complex64(1j),
    "divide": lambda x: x / C,
    "power": lambda x: x**C,
    "remainder": lambda x: lampy.remainder(x, C),
    "maximum": lambda x: lampy.maximum(x, C),
    "fmin": lambda x: lampy.fmin(C, x),
    "arctan2": lambda x: lampy.arctan2(x, C),
    "where": lambda x: lampy.where([True, False], x, C),
    "select": lambda x: lampy.select([np.array([True, False])], [x], C),
    "clip": lambda x: lampy.clip(x, C, None),
    "matmul": lambda x: x @ (M * 1j),
    "dot": lambda x: lampy.dot(x, C),
    "vdot": lambda x: lampy.vdot(C, x),
    "inner": lambda x: lampy.inner(x, C),
    "outer": lambda x: lampy.outer(x, C),
    "kron": lambda x: lampy.kron(C, x),
    "tensordot": lambda x: lampy.tensordot(x, C, 1),
    "einsum": lambda x: lampy.einsum("i,i->", x, C),
    "cross": lambda x: lampy.cross(lampy.concatenate([x, [0.0]]), [1j, 0.0, 0.0]),
    "concatenate": lambda x: lampy.concatenate([x, C]),
    "stack": lambda x: lampy.stack([x, C]),
    "hstack": lambda x: lampy.hstack([x, C]),
    "vstack": lambda x: lampy.vstack([x, C]),
    "column_stack": lambda x: lampy.column_stack([x, C]),
    "append": lambda x: lampy.append(x, C),
    "diff-prepend": lambda x: lampy.diff(x, prepend=1j),
    "a-list-of-variables": lambda x: lampy.mean([x, C]),
    "average-weights": lambda x: lampy.average(x, weights=C),
    "index_add": lambda x: lampy.index_add(x, 0, np.array([0]), np.array([1j])),
    "scatter_add": lambda x: lampy.scatter_add(x, 0, np.array([0]), np.array([1j])),
    "linalg.solve": lambda x: la.solve(lampy.outer(x, x) + 3 * M, C),
    "linalg.lstsq": lambda x: la.lstsq(lampy.outer(x, x) + 3 * M, C)[0],
    "linalg.multi_dot": lambda x: la.multi_dot([x, M, C]),
    "astype-complex": lambda x: x.astype(np.complex128),
    "sum-dtype": lambda x: x.sum(dtype=complex),
    "mean-dtype": lambda x: lampy.mean(x, dtype=np.complex64),
    "var-dtype": lambda x: lampy.var(x, dtype=complex),
    "std-dtype": lambda x: lampy.std(x, dtype=complex),
    "prod-dtype": lambda x: lampy.prod(x, dtype=complex),
    "cumsum-dtype": lambda x: lampy.cumsum(x, dtype=complex),
    "cumprod-dtype": lambda x: lampy.cumprod(x, dtype=complex),
    "trace-dtype": lambda x: lampy.trace(lampy.outer(x, x), dtype=complex),
    "concatenate-dtype": lambda x: lampy.concatenate([x, x], dtype=complex),
    "full-dtype": lambda x: lampy.full(2, x[0], dtype=complex),
    "linspace-dtype": lambda x: lampy.linspace(x[0], x[1], 3, dtype=complex),
}

REFUSED = {
    "remainder",
    "maximum",
    "fmin",
    "arctan2",
    "clip",
    "sum-dtype",
    "mean-dtype",
    "var-dtype",
    "std-dtype",
    "prod-dtype",
    "cumsum-dtype",
    "cumprod-dtype",
    "full-dtype",
    "linspace-dtype",
}

OBJECT: dict[str, Callable[[lampy.Variable], Any]] = {
    "multiply-object-array": lambda x: x * OBJ,
    "multiply-fraction": lambda x: x * Fraction(1, 2),
    "add-object-array": lambda x: OBJ + x,
    "minimum": lambda x: lampy.minimum(x, OBJ),
    "where": lambda x: lampy.where(True, x, OBJ),
    "concatenate": lambda x: lampy.concatenate([x, OBJ]),
}

INTEGER: dict[str, Callable[[lampy.Variable], Any]] = {
    "linspace": lambda x: lampy.linspace(x[0], 10.0, 4, dtype=int),
    "full": lambda x: lampy.full(3, x[0], dtype=np.int32),
    "concatenate": lambda x: lampy.concatenate([x, x], dtype=int),
    "stack": lambda x: lampy.stack([x, x], dtype=np.int16),
    "sum": lambda x: x.sum(dtype=int),
    "mean": lambda x: x.mean(dtype=int),
    "cumsum": lambda x: lampy.cumsum(x, dtype=int),
    "trace": lambda x: lampy.trace(lampy.outer(x, x), dtype=int),
}


def _raises_before_recording(fn: Callable[[lampy.Variable], Any], match: str) -> None:
    with lampy.Scope():
        x = lampy.param([0.5, 1.5])
        with pytest.raises(lampy.DTypeError, match=match):
            fn(x)


@pytest.mark.parametrize("name", list(COMPLEX))
def test_a_complex_operand_next_to_a_param(name: str) -> None:
    """A complex constant (or dtype=) that makes the result complex while x needs a
    gradient: an op declared for complex values records it, and x's gradient is the real
    part of PyTorch's (finite differences agree); any other op raises DTypeError instead
    of returning a constant or the real rule's answer."""
    fn = COMPLEX[name]
    if name in REFUSED:
        _raises_before_recording(fn, "complex")
        return
    with lampy.Scope():
        assert fn(lampy.param([0.5, 1.5])).dtype.kind == "c"
    check_grad(fn, np.array([0.5, 1.5]))


@pytest.mark.parametrize("fn", OBJECT.values(), ids=OBJECT.keys())
def test_an_object_operand_next_to_a_param_raises(fn: Callable[[lampy.Variable], Any]) -> None:
    """Object arrays (Fractions, mixed objects) cannot carry a gradient: DTypeError saying
    to convert them to floats."""
    _raises_before_recording(fn, "object")


@pytest.mark.parametrize("fn", INTEGER.values(), ids=INTEGER.keys())
def test_an_integer_dtype_for_a_result_needing_a_gradient_raises(
    fn: Callable[[lampy.Variable], Any],
) -> None:
    """dtype= integer arguments that would truncate a differentiable result raise."""
    _raises_before_recording(fn, "dtype")


def test_the_issues_example() -> None:
    """grad of x * (1 + 0.2j) raised nothing and returned 0.0. Its root is complex now, so
    the implicit seed is refused (PyTorch's rule: only a real loss seeds itself), and
    the real part's gradient is 1."""
    with pytest.raises(lampy.DTypeError, match="real loss"):
        lampy.grad(lambda x: (x * (1 + 0.2j)).sum())(1.0)
    assert lampy.grad(lambda x: lampy.real(x * (1 + 0.2j)).sum())(1.0) == 1.0


def test_the_message_names_the_op_the_dtype_and_what_to_do() -> None:
    """The error of an op not declared for complex values says what (op, result dtype),
    why and what to do."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        with pytest.raises(lampy.DTypeError) as info:
            lampy.maximum(x, C)
    message = str(info.value)
    assert message.startswith("op 'maximum' does not support complex values")
    assert "complex128" in message
    assert "lampy.real" in message
    assert "Complex numbers and FFT" in message


@pytest.mark.parametrize(
    "fn",
    [COMPLEX["add"], COMPLEX["matmul"], COMPLEX["concatenate"]],
    ids=["add", "matmul", "concatenate"],
)
def test_without_a_gradient_to_lose_numpys_result_stands(fn: Any) -> None:
    """Constants only, or any input under no_grad: complex results are numpy's, as
    constants (nothing is lost). (Object operands are refused in any case: see
    tests/ops/test_operands.py.)"""
    with lampy.Scope():
        c = fn(lampy.const([0.5, 1.5]))
        assert c.dtype.kind in "cO"
        assert not c.needs_grad
        with lampy.no_grad():
            y = fn(lampy.param([0.5, 1.5]))
        assert y.dtype.kind in "cO"


def test_an_explicit_cast_to_integer_stays_a_constant() -> None:
    """astype(int) is the one deliberate way to leave the graph by dtype (documented, as
    PyTorch's .long()): it gives a constant, without an error."""
    with lampy.Scope():
        y = lampy.param([0.5, 1.5]).astype(np.int64)
        assert y.dtype == np.int64
        assert not y.needs_grad


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: lampy.masked_fill(x, np.array([True, False]), 1j),
        lambda x: lampy.put_along_axis(x, np.array([0]), np.array([1j]), 0),
    ],
    ids=["masked_fill", "put_along_axis"],
)
def test_complex_values_written_into_a_float_array_raise(fn: Any) -> None:
    """Where the result keeps x's float dtype, numpy would cast a complex fill value and
    drop its imaginary part (with a ComplexWarning); lampy raises a DTypeError saying to
    cast x first."""
    with lampy.Scope():
        x = lampy.param([0.5, 1.5])
        with pytest.raises(lampy.DTypeError, match="would drop the imaginary part"):
            fn(x)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: lampy.op("custom", x.value * 1j, x.zip_backward(lambda g, out: None)),
        lambda x: lampy.op("custom", x.value.astype(object), x.zip_backward(lambda g, out: None)),
        lambda x: F.linear(x, np.ones((2, 2)) * (1 + 1j)),
        lambda x: F.mse_loss(x, C),
        lambda x: F.bilinear(x, x, np.ones((1, 2, 2)) * 1j),
    ],
    ids=["custom-op-complex", "custom-op-object", "nn.linear", "nn.mse_loss", "nn.bilinear"],
)
def test_ops_outside_lampy_ops_raise_through_the_engine(fn: Any) -> None:
    """An op built directly on lampy.op (a user's, or lampy.nn's numpy code) whose value
    is complex or object while a param needs a gradient raises DTypeError."""
    _raises_before_recording(fn, "complex|object")
