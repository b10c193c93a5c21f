"""Variable: making leaves, attributes, immutability, operators, comparisons, dtypes, hashing."""

from __future__ import annotations

import gc
import operator
import weakref
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest

import lampy

# --------------------------------------------------------------------- param and const


@pytest.mark.parametrize(
    ("x", "dtype", "shape"),
    [
        (np.array([1.0, 2.0]), np.float64, (2,)),
        (np.array([[1.0], [2.0]], dtype=np.float32), np.float32, (2, 1)),
        (np.array(1.5, dtype=np.float32), np.float32, ()),
        (np.float32(1.5), np.float32, ()),
        (np.float64(1.5), np.float64, ()),
        (np.ones(3, dtype=np.float16), np.float16, (3,)),
        (1.5, np.float64, ()),
        ([1.0, 2.5], np.float64, (2,)),
        ([1, 2.5], np.float64, (2,)),
        ((1.0, 2.0), np.float64, (2,)),
        ([[1.0, 2.0], [3.0, 4.0]], np.float64, (2, 2)),
        (np.zeros((0, 3)), np.float64, (0, 3)),
    ],
)
def test_param_accepts_arrays_array_likes_and_scalars(
    scope: lampy.Scope, x: Any, dtype: Any, shape: tuple[int, ...]
) -> None:
    """param takes floating arrays, array-likes and scalars, keeping float32 as float32."""
    p = lampy.param(x)
    assert p.dtype == dtype
    assert p.shape == shape
    assert p.needs_grad
    assert p.op is None
    assert p.grad is None
    np.testing.assert_array_equal(p.value, np.asarray(x, dtype=dtype))


@pytest.mark.parametrize(
    "x",
    [
        1,
        True,
        [1, 2],
        [True, False],
        np.array([1, 2]),
        np.array([1, 2], dtype=np.int32),
        np.array([True]),
        np.uint8(3),
    ],
)
def test_param_rejects_non_floating_dtypes(scope: lampy.Scope, x: Any) -> None:
    """param of integers or bools raises DTypeError (a TypeError) with a clear fix (complex
    params are taken: tests/autograd/test_complex_engine.py)."""
    with pytest.raises(lampy.DTypeError) as excinfo:
        lampy.param(x)
    assert isinstance(excinfo.value, TypeError)
    message = str(excinfo.value)
    assert "param" in message
    assert str(np.asarray(x).dtype) in message
    assert "float" in message
    assert "dtype=" in message
    assert "lampy.const" in message


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "float32", np.dtype(np.float16)])
def test_param_casts_to_a_floating_dtype(scope: lampy.Scope, dtype: Any) -> None:
    """param(x, dtype=...) casts integers or floats to the floating dtype asked for."""
    p = lampy.param([1, 2, 3], dtype=dtype)
    assert p.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(p.value, [1, 2, 3])


@pytest.mark.parametrize("dtype", [np.int64, bool, "int32"])
def test_param_with_an_integer_dtype_raises(scope: lampy.Scope, dtype: Any) -> None:
    """param(x, dtype=an integer or bool dtype) raises DTypeError."""
    with pytest.raises(lampy.DTypeError, match="float"):
        lampy.param([1.0, 2.0], dtype=dtype)


@pytest.mark.parametrize("x", ["text", None, object(), [[1.0], [1.0, 2.0]]])
def test_param_rejects_things_that_are_not_numbers(scope: lampy.Scope, x: Any) -> None:
    """param of a string, None, an object or a ragged list raises DTypeError (a TypeError)."""
    with pytest.raises(TypeError) as excinfo:
        lampy.param(x)
    assert isinstance(excinfo.value, lampy.LampyError)


def test_param_copies_its_input(scope: lampy.Scope) -> None:
    """param copies the array: later changes to it do not reach the param, and it stays writable."""
    x = np.array([1.0, 2.0])
    p = lampy.param(x)
    assert not np.shares_memory(p.value, x)
    assert x.flags.writeable
    x[0] = 100.0
    np.testing.assert_array_equal(p.value, [1.0, 2.0])


def test_param_of_a_variable_is_a_new_independent_leaf(scope: lampy.Scope) -> None:
    """param(v) makes a new leaf with v's value; gradients reach the new leaf only."""
    x = lampy.param([1.0, 2.0])
    y = x * 2.0
    p = lampy.param(y)
    assert p is not y
    assert p.op is None
    (p * p).sum().backward()
    np.testing.assert_array_equal(p.grad, [4.0, 8.0])
    assert x.grad is None


@pytest.mark.parametrize(
    "x",
    [1, True, [1, 2], np.array([1, 2], dtype=np.int8), 2.5, np.float32(2.5), np.ones((2, 2))],
)
def test_const_takes_any_numeric_dtype(scope: lampy.Scope, x: Any) -> None:
    """const takes integers, bools and floats alike (float32 stays float32) and needs no grad."""
    c = lampy.const(x)
    assert c.dtype == np.asarray(x).dtype
    assert not c.needs_grad
    assert c.op is None
    assert c.grad is None
    np.testing.assert_array_equal(c.value, np.asarray(x))


def test_const_copies_its_input(scope: lampy.Scope) -> None:
    """const copies the array: later changes to it do not reach the constant."""
    x = np.array([1.0, 2.0])
    c = lampy.const(x)
    x[0] = 100.0
    np.testing.assert_array_equal(c.value, [1.0, 2.0])


def test_const_gets_no_gradient(scope: lampy.Scope) -> None:
    """A const used in a graph gets no gradient buffer."""
    c = lampy.const([1.0, 2.0])
    x = lampy.param([3.0, 4.0])
    (c * x).sum().backward()
    assert c.grad is None
    np.testing.assert_array_equal(x.grad, [1.0, 2.0])


# --------------------------------------------------------------------- attributes


@pytest.mark.parametrize("shape", [(), (1,), (3,), (2, 3), (2, 0, 4), (1, 2, 3, 4)])
def test_shape_dtype_ndim_size_match_the_value(scope: lampy.Scope, shape: tuple[int, ...]) -> None:
    """.shape, .dtype, .ndim and .size equal those of the numpy value."""
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    for v in (lampy.param(x), lampy.const(x), lampy.param(x) * 1.0):
        assert v.shape == shape
        assert v.dtype == np.float32
        assert v.ndim == len(shape)
        assert v.size == x.size


@pytest.mark.parametrize("x", [2.5, [2.5], [[2.5]], np.float32(2.5)])
def test_item_returns_a_python_scalar(scope: lampy.Scope, x: Any) -> None:
    """.item() of a one-element Variable is a Python float."""
    v = lampy.param(x)
    assert v.item() == 2.5
    assert type(v.item()) is float


def test_item_of_several_elements_raises(scope: lampy.Scope) -> None:
    """.item() of a Variable with more than one element raises ValueError, as in numpy."""
    with pytest.raises(ValueError, match="size"):
        lampy.param([1.0, 2.0]).item()


def test_op_records_name_and_inputs(scope: lampy.Scope) -> None:
    """An op result's .op has the op's name and pairs each differentiable input with a closure."""
    x = lampy.param([1.0, 2.0])
    c = lampy.const([3.0, 4.0])
    y = x * c
    assert y.needs_grad
    assert y.op is not None
    assert y.op.name == "multiply"
    assert [inp for inp, _ in y.op.params] == [x.node]
    assert all(callable(fn) for _, fn in y.op.params)


def test_op_value_and_needs_grad_follow_the_inputs(scope: lampy.Scope) -> None:
    """An op needs a gradient iff some input needs one; constants only give constants."""
    c1, c2 = lampy.const(1.0), lampy.const(2.0)
    p = lampy.param(3.0)
    assert not (c1 + c2).needs_grad
    assert (c1 + p).needs_grad
    assert (p + c1).needs_grad
    assert not lampy.exp(c1).needs_grad


def test_zip_backward_pairs_the_variable_with_its_closure(scope: lampy.Scope) -> None:
    """v.zip_backward(fn) is an Edge pairing v's node with fn (a plain closure): the
    graph links nodes, not Variables; a Contribution gives a contribution edge."""
    from lampy.autograd._edge import CONTRIBUTION, PLAIN

    v = lampy.param(1.0)
    with pytest.raises(lampy.LampyTypeError, match="zip_backward"):
        lampy.op("bad", 1.0, (v.node, None, 7, False, None))  # an edge's shape, not an edge

    def fn(g: np.ndarray, out: np.ndarray) -> None:
        np.add(out, g, out=out)

    edge = v.zip_backward(fn)
    assert type(edge) is tuple and len(edge) == 5
    node, closure, kind, _, _ = edge  # (node, fn, kind, fresh, saved)
    assert (node, closure, kind) == (v.node, fn, PLAIN)
    c = v.zip_backward(lampy.contribution(lambda g: g, fresh=False))
    assert (c[0], c[2], c[3]) == (v.node, CONTRIBUTION, False)


def test_custom_op_with_lampy_op_backpropagates(scope: lampy.Scope) -> None:
    """lampy.op records a user op: its closure receives g and an out buffer of the input's shape."""
    x = lampy.param([1.0, 2.0, 3.0])
    seen: list[tuple[Any, ...]] = []

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        seen.append((g.shape, out.shape, out.dtype))
        np.add(out, g * 3 * x.value**2, out=out)

    y = lampy.op("cube", x.value**3, x.zip_backward(d_x))
    assert y.op is not None
    assert y.op.name == "cube"
    y.backward(np.array([1.0, 1.0, 2.0]))
    assert seen == [((3,), (3,), np.dtype(np.float64))]
    np.testing.assert_array_equal(x.grad, [3.0, 12.0, 54.0])


def test_op_whose_inputs_need_no_gradient_records_no_closures(scope: lampy.Scope) -> None:
    """lampy.op with only constant inputs keeps no closure: it is dropped at once."""
    c = lampy.const([1.0, 2.0])

    def d_c(g: np.ndarray, out: np.ndarray) -> None:
        raise AssertionError("never called")

    ref = weakref.ref(d_c)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        y = lampy.op("custom", c.value * 2, c.zip_backward(d_c), None)
        del d_c
        assert ref() is None
    finally:
        if was_enabled:
            gc.enable()
    assert not y.needs_grad
    assert y.op is None or y.op.params == ()


def test_op_skips_none_params(scope: lampy.Scope) -> None:
    """None entries among an op's params (inputs that are not Variables) are skipped."""
    x = lampy.param(2.0)
    y = lampy.op("f", x.value * 5, None, x.zip_backward(lambda g, out: np.add(out, 5 * g, out=out)))
    assert y.op is not None
    assert len(y.op.params) == 1
    y.backward()
    assert x.grad == 5.0


def test_op_with_a_non_float_value_needs_no_gradient(scope: lampy.Scope) -> None:
    """An op whose value is an integer array needs no gradient, even with param inputs."""
    x = lampy.param([1.5, 2.5])
    y = lampy.op("floor", np.floor(x.value).astype(np.int64), x.zip_backward(lambda g, out: None))
    assert y.dtype == np.int64
    assert not y.needs_grad


# --------------------------------------------------------------------- immutability


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: lampy.param([1.0, 2.0, 3.0]), id="param"),
        pytest.param(lambda: lampy.const([1.0, 2.0, 3.0]), id="const"),
        pytest.param(lambda: lampy.param([1.0, 2.0, 3.0]) * 2.0, id="multiply"),
        pytest.param(lambda: lampy.param([[1.0, 2.0, 3.0]]).reshape(3), id="reshape-view"),
        pytest.param(lambda: lampy.param([[1.0, 2.0, 3.0]]).T[:, 0], id="transpose-view"),
        pytest.param(lambda: lampy.param([1.0, 2.0, 3.0, 4.0])[1:], id="slice-view"),
        pytest.param(lambda: lampy.op("custom", np.ones(3)), id="lampy.op"),
    ],
)
def test_value_is_read_only(scope: lampy.Scope, make: Callable[[], lampy.Variable]) -> None:
    """Writing into .value raises ValueError, for leaves, op results and views alike."""
    v = make()
    assert not v.value.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        v.value[0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        np.add(v.value, 1.0, out=v.value)


def test_value_of_a_kept_variable_is_read_only() -> None:
    """A Variable kept out of a scope still has a read-only value."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            y = inner.keep(lampy.param([1.0, 2.0]) * 2.0)
        with pytest.raises(ValueError, match="read-only"):
            y.value[0] = 0.0


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(lambda a: lampy.reshape(a, (3, 2)), id="reshape"),
        pytest.param(lambda a: lampy.transpose(a), id="transpose"),
        pytest.param(lambda a: lampy.getitem(a, (slice(None), slice(None))), id="getitem"),
    ],
)
def test_value_does_not_change_when_a_numpy_input_is_modified(
    scope: lampy.Scope, op: Callable[[np.ndarray], lampy.Variable]
) -> None:
    """An op applied to a plain numpy array keeps its value when that array is modified later."""
    a = np.zeros((2, 3))
    v = op(a)
    a[...] = 7.0
    np.testing.assert_array_equal(v.value, np.zeros(v.shape))


@pytest.mark.parametrize(
    ("attr", "new"),
    [("value", None), ("op", None), ("needs_grad", False), ("grad", None), ("shape", (1,))],
)
def test_attributes_cannot_be_assigned(scope: lampy.Scope, attr: str, new: Any) -> None:
    """A Variable is a frozen record: assigning any attribute raises AttributeError."""
    v = lampy.param([1.0, 2.0]) * 2.0
    with pytest.raises(AttributeError):
        setattr(v, attr, new)


def test_variable_is_an_attrs_frozen_record(scope: lampy.Scope) -> None:
    """Variable and Op are attrs classes, frozen."""
    assert attrs.has(lampy.Variable)
    assert attrs.has(lampy.Op)
    y = lampy.param(1.0) * 2.0
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        y.op.name = "other"  # type: ignore[misc, union-attr]


# --------------------------------------------------------------------- operators

BINARY = [
    pytest.param(operator.add, id="+"),
    pytest.param(operator.sub, id="-"),
    pytest.param(operator.mul, id="*"),
    pytest.param(operator.truediv, id="/"),
    pytest.param(operator.pow, id="**"),
]

OPERANDS = [
    pytest.param((2, 3), (2, 3), id="same-shape"),
    pytest.param((2, 3), (3,), id="row"),
    pytest.param((2, 1), (1, 3), id="outer"),
    pytest.param((), (2, 3), id="0d-left"),
    pytest.param((2, 3), (), id="0d-right"),
]


def _positive(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.5, 2.0, size=shape)


@pytest.mark.parametrize("fn", BINARY)
@pytest.mark.parametrize(("sa", "sb"), OPERANDS)
@pytest.mark.parametrize("kinds", ["var-var", "var-array", "array-var", "var-const", "const-var"])
def test_binary_operators_match_numpy_with_broadcasting(
    scope: lampy.Scope,
    fn: Callable[[Any, Any], Any],
    sa: tuple[int, ...],
    sb: tuple[int, ...],
    kinds: str,
) -> None:
    """+ - * / ** broadcast like numpy, with Variables, arrays or consts on either side."""
    a, b = _positive(sa, 1), _positive(sb, 2)
    left_kind, right_kind = kinds.split("-")
    wrap = {"var": lampy.param, "array": lambda x: x, "const": lampy.const}
    out = fn(wrap[left_kind](a), wrap[right_kind](b))
    assert isinstance(out, lampy.Variable)
    assert out.needs_grad == ("var" in kinds)
    np.testing.assert_allclose(out.value, fn(a, b), rtol=1e-15)


@pytest.mark.parametrize("fn", BINARY)
@pytest.mark.parametrize("scalar", [3, 2.5, np.float64(2.5)])
def test_python_scalars_work_on_either_side(
    scope: lampy.Scope, fn: Callable[[Any, Any], Any], scalar: Any
) -> None:
    """Python and numpy scalars work on either side of + - * / **."""
    a = _positive((3,), 3)
    v = lampy.param(a)
    np.testing.assert_allclose(fn(v, scalar).value, fn(a, scalar), rtol=1e-15)
    np.testing.assert_allclose(fn(scalar, v).value, fn(scalar, a), rtol=1e-15)


@pytest.mark.parametrize(
    ("sa", "sb"),
    [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((5, 2, 3), (3, 4))],
)
def test_matmul_operator_on_either_side(
    scope: lampy.Scope, sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    """@ works with Variables and numpy arrays on either side, with numpy's rules."""
    a, b = _positive(sa, 4), _positive(sb, 5)
    expected = a @ b
    for out in (lampy.param(a) @ lampy.param(b), a @ lampy.param(b), lampy.param(a) @ b):
        assert isinstance(out, lampy.Variable)
        np.testing.assert_allclose(out.value, expected, rtol=1e-14)


@pytest.mark.parametrize(
    ("fn", "expected_grad"),
    [
        pytest.param(lambda arr, x: arr + x, lambda arr, x: np.ones_like(x), id="+"),
        pytest.param(lambda arr, x: arr - x, lambda arr, x: -np.ones_like(x), id="-"),
        pytest.param(lambda arr, x: arr * x, lambda arr, x: arr, id="*"),
        pytest.param(lambda arr, x: arr / x, lambda arr, x: -arr / x**2, id="/"),
        pytest.param(lambda arr, x: arr**x, lambda arr, x: arr**x * np.log(arr), id="**"),
        pytest.param(lambda arr, x: x**arr, lambda arr, x: arr * x ** (arr - 1), id="x**arr"),
    ],
)
def test_numpy_array_on_the_left_gives_the_right_gradient(
    scope: lampy.Scope,
    fn: Callable[[Any, Any], Any],
    expected_grad: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> None:
    """`ndarray op Variable` returns a Variable whose gradient is that of the reflected op."""
    arr, xv = _positive((4,), 6), _positive((4,), 7)
    x = lampy.param(xv)
    out = fn(arr, x)
    assert isinstance(out, lampy.Variable)
    out.sum().backward()
    np.testing.assert_allclose(x.grad, expected_grad(arr, xv), rtol=1e-12)


def test_numpy_matrix_on_the_left_of_matmul_gives_the_right_gradient(scope: lampy.Scope) -> None:
    """`A @ x` with a numpy A and a param x gives x the gradient A^T g."""
    a = _positive((3, 4), 8)
    x = lampy.param(_positive((4,), 9))
    g = np.array([1.0, -2.0, 0.5])
    (a @ x).backward(g)
    np.testing.assert_allclose(x.grad, a.T @ g, rtol=1e-14)


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda arr, x: arr + x, id="arr+x"),
        pytest.param(lambda arr, x: x - arr, id="x-arr"),
        pytest.param(lambda arr, x: arr / x, id="arr/x"),
        pytest.param(lambda arr, x: arr * x, id="arr*x"),
        pytest.param(lambda arr, x: x * arr, id="x*arr"),
        pytest.param(lambda arr, x: x / arr, id="x/arr"),
        pytest.param(lambda arr, x: arr**x, id="arr**x"),
        pytest.param(lambda arr, x: x**arr, id="x**arr"),
        pytest.param(lambda arr, x: arr.reshape(2, 2) @ x.reshape(2, 2), id="arr@x"),
        pytest.param(lambda arr, x: x.reshape(2, 2) @ arr.reshape(2, 2), id="x@arr"),
    ],
)
def test_numpy_operand_changed_after_the_forward_pass_does_not_change_the_gradient(
    scope: lampy.Scope, fn: Callable[[Any, Any], lampy.Variable]
) -> None:
    """A numpy operand is taken as a constant at forward time: changing it later has no effect."""
    arr = np.array([1.5, 2.0, 0.5, 3.0])
    xv = np.array([0.5, 1.0, 1.5, 2.0])
    x = lampy.param(xv)
    fn(arr, x).sum().backward()
    expected = x.grad.copy()  # type: ignore[union-attr]
    x.zero_grad()
    y = fn(arr, x).sum()
    arr[...] = 7.0
    y.backward()
    np.testing.assert_array_equal(x.grad, expected)


def test_numpy_scalar_on_the_left_gives_a_variable(scope: lampy.Scope) -> None:
    """A numpy scalar on the left of an operator gives a Variable, not an object array."""
    x = lampy.param([1.0, 2.0])
    for scalar in (np.float64(2.0), np.float32(2.0), np.int64(2)):
        out = scalar * x
        assert isinstance(out, lampy.Variable)
        np.testing.assert_array_equal(out.value, [2.0, 4.0])


def test_unary_minus_and_plus(scope: lampy.Scope) -> None:
    """-v negates with gradient -1; +v is v."""
    x = lampy.param([1.0, -2.0])
    y = -x
    np.testing.assert_array_equal(y.value, [-1.0, 2.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [-1.0, -1.0])
    assert +x is x


@pytest.mark.parametrize(
    "index",
    [
        0,
        -1,
        slice(1, None),
        slice(None, None, -2),
        (Ellipsis, 1),
        (None, 0),
        (slice(None), [0, 0, 2]),
        ([1, 0, 1],),
        np.array([True, False, True, True]),
    ],
)
def test_getitem_matches_numpy_and_scatters_the_gradient(scope: lampy.Scope, index: Any) -> None:
    """v[index] equals numpy's value[index]; its gradient adds g back at the indexed places."""
    a = np.arange(12.0).reshape(4, 3)
    x = lampy.param(a)
    y = x[index]
    np.testing.assert_array_equal(y.value, a[index])
    g = np.random.default_rng(0).normal(size=y.shape)
    y.backward(g)
    expected = np.zeros_like(a)
    np.add.at(expected, index, g)
    np.testing.assert_allclose(x.grad, expected, rtol=1e-15)


def test_iteration_and_unpacking_give_rows(scope: lampy.Scope) -> None:
    """Iterating a Variable yields its rows (stopping at the end); unpacking works."""
    x = lampy.param([[1.0, 2.0], [3.0, 4.0]])
    rows = list(x)
    assert len(rows) == 2
    np.testing.assert_array_equal(rows[1].value, [3.0, 4.0])
    first, second = x
    (first * second).sum().backward()
    np.testing.assert_array_equal(x.grad, [[3.0, 4.0], [1.0, 2.0]])


def test_len_of_a_variable(scope: lampy.Scope) -> None:
    """len(v) is the first axis' length; len of a 0-d Variable raises TypeError as in numpy."""
    assert len(lampy.param(np.zeros((3, 2)))) == 3
    with pytest.raises(TypeError):
        len(lampy.param(1.0))


def test_numpy_conversion_of_a_param_is_refused(scope: lampy.Scope) -> None:
    """np.asarray of a param raises TypeError (the gradient would be lost); of a const it works."""
    with pytest.raises(TypeError, match="value"):
        np.asarray(lampy.param([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(lampy.const([1.0, 2.0])), [1.0, 2.0])


# --------------------------------------------------------------------- comparisons

COMPARISONS = [
    pytest.param(operator.eq, id="=="),
    pytest.param(operator.ne, id="!="),
    pytest.param(operator.lt, id="<"),
    pytest.param(operator.le, id="<="),
    pytest.param(operator.gt, id=">"),
    pytest.param(operator.ge, id=">="),
]


@pytest.mark.parametrize("cmp", COMPARISONS)
@pytest.mark.parametrize(
    "other_kind", ["scalar", "array", "param", "const", "array-left", "scalar-left"]
)
def test_comparisons_return_boolean_numpy_arrays(
    scope: lampy.Scope, cmp: Callable[[Any, Any], Any], other_kind: str
) -> None:
    """Comparisons of a Variable with anything give a plain numpy bool array, as numpy would."""
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([2.0, 2.0, 2.0])
    v = lampy.param(a)
    if other_kind == "scalar":
        result, expected = cmp(v, 2.0), cmp(a, 2.0)
    elif other_kind == "array":
        result, expected = cmp(v, b), cmp(a, b)
    elif other_kind == "param":
        result, expected = cmp(v, lampy.param(b)), cmp(a, b)
    elif other_kind == "const":
        result, expected = cmp(v, lampy.const(b)), cmp(a, b)
    elif other_kind == "array-left":
        result, expected = cmp(b, v), cmp(b, a)
    else:
        result, expected = cmp(2.0, v), cmp(2.0, a)
    assert type(result) is np.ndarray
    assert result.dtype == np.bool_
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("cmp", COMPARISONS[2:])
def test_ordering_comparisons_of_0d_variables_return_numpy_arrays(
    scope: lampy.Scope, cmp: Callable[[Any, Any], Any]
) -> None:
    """< <= > >= of a 0-d Variable give a 0-d numpy bool array."""
    result = cmp(lampy.param(1.0), 2.0)
    assert type(result) is np.ndarray
    assert result.dtype == np.bool_
    assert result.shape == ()


@pytest.mark.parametrize("cmp", COMPARISONS[:2])
def test_equality_of_0d_variables_returns_numpy_arrays(
    scope: lampy.Scope, cmp: Callable[[Any, Any], Any]
) -> None:
    """== and != of a 0-d Variable give a 0-d numpy bool array, like the other comparisons."""
    result = cmp(lampy.param(1.0), 2.0)
    assert type(result) is np.ndarray
    assert result.dtype == np.bool_


def test_comparisons_are_not_recorded(scope: lampy.Scope) -> None:
    """A comparison records nothing: its result is a plain array, not a Variable."""
    v = lampy.param([1.0, 2.0])
    mask = v > 1.5
    assert not isinstance(mask, lampy.Variable)
    assert mask.flags.writeable


# --------------------------------------------------------------------- hashing


def test_variables_hash_and_compare_by_identity_in_sets_and_dicts(scope: lampy.Scope) -> None:
    """Variables are set members and dict keys by identity, even with equal values."""
    a = lampy.param([1.0, 2.0])
    b = lampy.param([1.0, 2.0])
    c = lampy.const([1.0, 2.0])
    s = {a, b, c, a}
    assert len(s) == 3
    assert a in s
    assert lampy.param([1.0, 2.0]) not in s
    d = {a: "a", b: "b"}
    assert d[a] == "a"
    assert d[b] == "b"
    assert hash(a) == object.__hash__(a)
    assert hash(a) != hash(b)


def test_hash_is_stable_across_release(scope: lampy.Scope) -> None:
    """A Variable's hash does not change when it is released or kept."""
    with lampy.Scope():
        v = lampy.param(1.0)
        before = hash(v)
        members = {v}
    assert hash(v) == before
    assert v in members


# --------------------------------------------------------------------- repr


def test_repr_shows_value_dtype_and_origin(scope: lampy.Scope) -> None:
    """repr names the value, dtype and whether the Variable is a param, const or op result."""
    p = lampy.param(np.array([1.5, 2.0], dtype=np.float32))
    text = repr(p)
    assert "1.5" in text
    assert "float32" in text
    assert "param" in text
    assert "const" in repr(lampy.const([1, 2]))
    assert "multiply" in repr(p * 2.0)


def test_repr_of_a_large_variable_is_summarised(scope: lampy.Scope) -> None:
    """repr of a large Variable is short (numpy summarisation)."""
    assert len(repr(lampy.param(np.zeros(100_000)))) < 300


# --------------------------------------------------------------------- float32

F32_BINARY = [
    pytest.param(lambda v, s: v + s, id="v+s"),
    pytest.param(lambda v, s: s + v, id="s+v"),
    pytest.param(lambda v, s: v - s, id="v-s"),
    pytest.param(lambda v, s: s - v, id="s-v"),
    pytest.param(lambda v, s: v * s, id="v*s"),
    pytest.param(lambda v, s: s * v, id="s*v"),
    pytest.param(lambda v, s: v / s, id="v/s"),
    pytest.param(lambda v, s: s / v, id="s/v"),
    pytest.param(lambda v, s: v**s, id="v**s"),
    pytest.param(lambda v, s: s**v, id="s**v"),
    pytest.param(lambda v, s: lampy.add(v, s), id="lampy.add"),
    pytest.param(lambda v, s: lampy.power(s, v), id="lampy.power"),
]


@pytest.mark.parametrize("fn", F32_BINARY)
@pytest.mark.parametrize("scalar", [2.5, 3, 1e-3, 1e300])
@pytest.mark.parametrize("shape", [(), (1,), (3,)])
@pytest.mark.parametrize("kind", ["param", "const"])
def test_python_scalars_never_promote_float32(
    scope: lampy.Scope,
    fn: Callable[[Any, Any], lampy.Variable],
    scalar: float,
    shape: tuple[int, ...],
    kind: str,
) -> None:
    """A Python float or int next to a float32 Variable (0-d included) gives float32."""
    make = lampy.param if kind == "param" else lampy.const
    v = make(np.full(shape, 1.5, dtype=np.float32))
    with np.errstate(all="ignore"):
        out = fn(v, scalar)
        assert out.dtype == np.float32
        if kind == "param":
            out.sum().backward()
            assert v.grad is not None
            assert v.grad.dtype == np.float32


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lampy.exp, id="exp"),
        pytest.param(lampy.log, id="log"),
        pytest.param(lampy.tanh, id="tanh"),
        pytest.param(lampy.sum, id="sum"),
        pytest.param(lampy.mean, id="mean"),
        pytest.param(lambda v: -v, id="negative"),
        pytest.param(lambda v: v.reshape(-1), id="reshape"),
        pytest.param(lambda v: v.T, id="transpose"),
        pytest.param(lambda v: v[..., 0], id="getitem"),
        pytest.param(lambda v: v @ v.T, id="matmul"),
        pytest.param(lambda v: (v * v).mean(axis=0) / 2, id="chain"),
    ],
)
@pytest.mark.parametrize("shape", [(2, 3), (1, 1)])
def test_float32_stays_float32_through_ops_and_gradients(
    scope: lampy.Scope, fn: Callable[[lampy.Variable], lampy.Variable], shape: tuple[int, ...]
) -> None:
    """float32 inputs give float32 values, float32 seeds and float32 gradients."""
    x = lampy.param(np.full(shape, 0.75, dtype=np.float32))
    y = fn(x)
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad is not None
    assert x.grad.dtype == np.float32


def test_float32_0d_stays_float32_through_a_long_expression(scope: lampy.Scope) -> None:
    """A 0-d float32 param mixed with Python floats and ints stays float32 everywhere."""
    x = lampy.param(np.float32(1.5))
    y = ((x * 2.5 + 1.5) / 3.0 - 0.5) ** 2.0
    y = 1.5**y + 2.0 / y - 3 * lampy.tanh(y) + lampy.exp(-y) * 0.1
    assert y.dtype == np.float32
    y.backward()
    assert x.grad is not None
    assert x.grad.dtype == np.float32


def test_param_copy_false_shares_memory_read_only() -> None:
    """param(x, copy=False) reads x in place through a read-only view; x stays writable."""
    x = np.arange(3.0)
    with lampy.Scope():
        p = lampy.param(x, copy=False)
        assert np.shares_memory(p.value, x)
        assert not p.value.flags.writeable
        assert x.flags.writeable
        q = lampy.param(x)
        assert not np.shares_memory(q.value, x)
        (p * p).sum().backward()
        np.testing.assert_array_equal(p.grad, 2 * x)


def test_param_copy_false_still_converts() -> None:
    """copy=False with a list or another dtype makes the array it needs."""
    with lampy.Scope():
        assert lampy.param([1.0, 2.0], copy=False).shape == (2,)
        p = lampy.param(np.ones(2, np.float32), dtype=np.float64, copy=False)
        assert p.dtype == np.float64
        c = lampy.const(np.arange(2), copy=False)
        assert c.dtype.kind == "i"
