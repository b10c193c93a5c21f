"""Error classes and messages: one hierarchy under LampyError, messages that say what, why and
how to fix it, naming the op, the shapes and the dtypes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy

# --------------------------------------------------------------------- hierarchy


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (lampy.NoScopeError, RuntimeError),
        (lampy.ReleasedError, RuntimeError),
        (lampy.ShapeError, ValueError),
        (lampy.DTypeError, TypeError),
    ],
)
def test_error_classes_derive_from_lampy_error_and_a_builtin(
    cls: type[Exception], builtin: type[Exception]
) -> None:
    """Each lampy error is a LampyError and also the builtin exception numpy users expect."""
    assert issubclass(cls, lampy.LampyError)
    assert issubclass(cls, builtin)


def test_lampy_error_is_an_exception() -> None:
    """LampyError is an Exception, not a BaseException-only class."""
    assert issubclass(lampy.LampyError, Exception)


def test_error_classes_are_distinct() -> None:
    """The error classes are distinct: catching one does not catch the others."""
    classes = [lampy.NoScopeError, lampy.ReleasedError, lampy.ShapeError, lampy.DTypeError]
    for a in classes:
        for b in classes:
            assert issubclass(a, b) == (a is b)


def _with_scope(fn: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        with lampy.Scope():
            return fn()

    return run


def _released_param() -> lampy.Variable:
    with lampy.Scope():
        return lampy.param([1.0, 2.0])


def _keep_on_root() -> None:
    with lampy.Scope() as root:
        root.keep(lampy.param(1.0))


_NOT_LAMPY = "BUG: raised on purpose as a plain builtin exception, not a LampyError subclass"

ON_PURPOSE: list[Any] = [
    pytest.param(lambda: lampy.param(1.0), lampy.NoScopeError, id="no-scope"),
    pytest.param(lambda: _released_param().value, lampy.ReleasedError, id="released"),
    pytest.param(_keep_on_root, lampy.LampyError, id="keep-on-root"),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones(2)) + np.ones(3)), ValueError, id="broadcast"
    ),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones((2, 3))) @ np.ones((2, 3))),
        ValueError,
        id="matmul-shapes",
    ),
    pytest.param(
        _with_scope(lambda: lampy.matmul(lampy.param(1.0), np.ones(2))),
        ValueError,
        id="matmul-0d",
    ),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones(6)).reshape(4, 2)), ValueError, id="reshape-size"
    ),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones((2, 3))).transpose(0, 2)),
        ValueError,
        id="transpose-axes",
    ),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones((2, 3))).sum(axis=2)),
        ValueError,
        id="sum-axis-out-of-bounds",
    ),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones((2, 3)))[5]), IndexError, id="index-out-of-range"
    ),
    pytest.param(_with_scope(lambda: lampy.param([1, 2])), TypeError, id="int-param"),
    pytest.param(
        _with_scope(lambda: (lampy.param(np.ones(2)) * 2.0).backward()),
        ValueError,
        id="backward-non-scalar",
    ),
    pytest.param(
        _with_scope(lambda: (lampy.param(np.ones(2)) * 2.0).backward(np.ones(3))),
        ValueError,
        id="backward-grad-shape",
    ),
    pytest.param(
        _with_scope(lambda: (lampy.param(np.ones(2)) * 2.0).backward(np.ones(2, dtype=np.float32))),
        TypeError,
        id="backward-grad-dtype",
    ),
    pytest.param(
        _with_scope(lambda: lampy.backward([lampy.param(1.0)], [None, None])),
        lampy.LampyError,
        id="backward-grads-count",
    ),
    pytest.param(
        lambda: lampy.grad(lambda v: v.sum(), argnums=3)(np.ones(2)),
        lampy.LampyError,
        id="grad-argnums",
    ),
    pytest.param(
        _with_scope(lambda: lampy.backward([1.0])),
        TypeError,
        id="backward-non-variable-root",
    ),
    pytest.param(
        _with_scope(lambda: np.asarray(lampy.param([1.0, 2.0]))),
        TypeError,
        id="numpy-conversion-of-param",
    ),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones(6)).reshape(6, order="K")),
        ValueError,
        id="reshape-order",
    ),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones(6)).sum(axis="0")),
        TypeError,
        id="sum-axis-type",
    ),
    pytest.param(
        _with_scope(lambda: lampy.param(np.ones(6)).sum(dtype=np.int64)),
        TypeError,
        id="sum-int-dtype",
    ),
]


@pytest.mark.parametrize(("fn", "builtin"), ON_PURPOSE)
def test_errors_raised_on_purpose_are_lampy_errors(
    fn: Callable[[], Any], builtin: type[Exception]
) -> None:
    """Every error lampy raises on purpose is a LampyError, and also the builtin numpy raises."""
    with pytest.raises(lampy.LampyError) as excinfo:
        fn()
    assert isinstance(excinfo.value, builtin)


# --------------------------------------------------------------------- messages


def test_no_scope_message_names_the_call_and_shows_the_fix() -> None:
    """NoScopeError names what was attempted and shows `with lampy.Scope():`."""
    with pytest.raises(lampy.NoScopeError) as excinfo:
        lampy.param(1.0)
    message = str(excinfo.value)
    assert "lampy.param()" in message
    assert "with lampy.Scope():" in message
    with pytest.raises(lampy.NoScopeError, match="'my_op'"):
        lampy.op("my_op", np.ones(2))
    with pytest.raises(lampy.NoScopeError, match="exp"):
        lampy.exp(np.ones(2))


def test_released_message_names_op_shape_dtype_and_keep() -> None:
    """ReleasedError names the op that made the Variable, its shape and dtype, and scope.keep."""
    with lampy.Scope():
        y = lampy.tanh(lampy.param(np.ones((2, 3), dtype=np.float32)))
    with pytest.raises(lampy.ReleasedError) as excinfo:
        y.value
    message = str(excinfo.value)
    assert "'tanh'" in message
    assert "(2, 3)" in message
    assert "float32" in message
    assert "scope.keep(" in message


def test_broadcast_message_names_op_shapes_and_fix(scope: lampy.Scope) -> None:
    """A broadcasting failure names the op and both shapes, and says how to line them up."""
    x = lampy.param(np.ones((2, 3)))
    with pytest.raises(lampy.ShapeError) as excinfo:
        x * np.ones((4,))
    message = str(excinfo.value)
    assert "multiply" in message
    assert "(2, 3)" in message
    assert "(4,)" in message
    assert "broadcast" in message.lower()
    assert "reshape" in message


def test_matmul_message_names_the_shapes(scope: lampy.Scope) -> None:
    """A matmul shape mismatch names matmul, both shapes and the axes that must agree."""
    with pytest.raises(lampy.ShapeError) as excinfo:
        lampy.param(np.ones((2, 3))) @ lampy.param(np.ones((4, 5)))
    message = str(excinfo.value)
    assert "matmul" in message
    assert "(2, 3)" in message
    assert "(4, 5)" in message
    assert "axis" in message


def test_int_param_message_names_dtype_and_fix(scope: lampy.Scope) -> None:
    """An integer param's DTypeError names lampy.param, the dtype, and both fixes."""
    with pytest.raises(lampy.DTypeError) as excinfo:
        lampy.param(np.array([1, 2], dtype=np.int32))
    message = str(excinfo.value)
    assert "lampy.param" in message
    assert "int32" in message
    assert "dtype=" in message
    assert "lampy.const" in message


def test_backward_non_scalar_message_names_shape_and_fix(scope: lampy.Scope) -> None:
    """backward on a non-scalar root says its shape and suggests grad= or a reduction."""
    with pytest.raises(lampy.ShapeError) as excinfo:
        (lampy.param(np.ones((4, 5))) * 2.0).backward()
    message = str(excinfo.value)
    assert "backward" in message
    assert "(4, 5)" in message
    assert "grad=" in message
    assert ".sum()" in message


def test_backward_grad_dtype_message_names_both_dtypes_and_fix(scope: lampy.Scope) -> None:
    """A grad of the wrong dtype names both dtypes and the cast to apply."""
    y = lampy.param(np.ones(2, dtype=np.float32)) * 2.0
    with pytest.raises(lampy.DTypeError) as excinfo:
        y.backward(np.ones(2))
    message = str(excinfo.value)
    assert "float64" in message
    assert "float32" in message
    assert "astype(float32)" in message


def test_backward_without_params_message_says_why(scope: lampy.Scope) -> None:
    """backward on a root that needs no gradient says so and suggests lampy.param."""
    with pytest.raises(lampy.LampyError) as excinfo:
        (lampy.const(1.0) * 2.0).backward()
    message = str(excinfo.value)
    assert "does not need a gradient" in message
    assert "lampy.param" in message


def test_keep_messages_say_how_to_fix() -> None:
    """keep errors say what is wrong and what to do instead."""
    with lampy.Scope() as root:
        v = lampy.param(1.0)
        with pytest.raises(lampy.LampyError) as excinfo:
            root.keep(v)
    message = str(excinfo.value)
    assert "Scope.keep" in message
    assert "with lampy.Scope():" in message
    with pytest.raises(lampy.LampyError, match="inside its `with` block"):
        root.keep(v)


def test_errors_can_be_caught_as_numpy_style_builtins(scope: lampy.Scope) -> None:
    """Code catching ValueError / TypeError, as it would for numpy, catches lampy's errors."""
    x = lampy.param(np.ones((2, 3)))
    with pytest.raises(ValueError, match="add"):
        x + np.ones(4)
    with pytest.raises(TypeError, match="float"):
        lampy.param([1, 2])
    with pytest.raises(IndexError):
        x[7]
