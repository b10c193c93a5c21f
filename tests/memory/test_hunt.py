"""Bugs found by probing the memory features as an independent checker (branch memhunt).

The tests failed before their fixes in the engine files (``lampy/_memory.py``,
``lampy/autograd/_remat.py``); the one strict xfail left names what is still missing.
"""

from __future__ import annotations

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy import nn

# ------------------------------------------------------------------ budget parsing


@pytest.mark.parametrize("budget", ["1e400", "1e400 GiB", "9" * 400])
def test_budget_string_too_large_for_a_float_is_a_value_error(budget):
    with pytest.raises(lampy.LampyValueError, match="budget"):
        lampy.Scope(budget=budget)


@pytest.mark.parametrize("budget", [0, -5, "0", "0.4", "-1 MB", "0 GiB"])
def test_budget_below_one_byte_is_a_value_error(budget):
    with pytest.raises(lampy.LampyValueError, match=r"positive|cannot read"):
        lampy.Scope(budget=budget)


@pytest.mark.parametrize("budget", [True, 1.5, np.float64(100.0), [100]])
def test_budget_of_another_type_is_a_type_error(budget):
    with pytest.raises(lampy.LampyTypeError, match="budget"):
        lampy.Scope(budget=budget)


# ------------------------------------------------------------------ private copies

# Ops whose numpy result is a view of a temporary array numpy made (a reshape that had
# to copy, a squeeze of a keepdims reduction): lampy.own_value takes a private copy laid
# over a new uint8 buffer (private_copy), a view whose .base is that buffer, and
# charge_value charges a view 0 bytes. The result is held but not counted, and a budget
# does not stop it.
PRIVATE_COPY_OPS = {
    "reshape of a transpose": lambda x: x.transpose(2, 0, 1).reshape(-1),
    "reshape order F": lambda x: lampy.reshape(x, (4, 6), order="F"),
    "max(axis)": lambda x: x.amax(axis=1),
    "amax(axis)": lambda x: lampy.amax(x, axis=0),
    "min(axis)": lambda x: lampy.min(x, axis=1),
    "nanmax(axis)": lambda x: lampy.nanmax(x, axis=1),
    "logsumexp(axis)": lambda x: lampy.logsumexp(x, axis=1),
}


@pytest.mark.parametrize("name", list(PRIVATE_COPY_OPS))
def test_a_result_copied_from_a_numpy_temporary_is_counted(name):
    with lampy.Scope() as s:
        x = lampy.param(np.arange(24.0).reshape(2, 3, 4) + 1.0)
        before = s.memory
        y = PRIVATE_COPY_OPS[name](x)
        after = s.memory
        assert not np.shares_memory(y.value, x.value)
        # the value, and what the op's backward saved beyond the graph's values
        assert after.live_bytes - before.live_bytes == y.value.nbytes + y.node.kept
        assert after.arrays - before.arrays == 1


@pytest.mark.parametrize("name", list(PRIVATE_COPY_OPS))
def test_a_result_copied_from_a_numpy_temporary_respects_the_budget(name):
    with lampy.Scope():
        x = lampy.param(np.arange(24.0).reshape(2, 3, 4) + 1.0)
        with lampy.Scope(budget=16) as s:
            with pytest.raises(lampy.MemoryBudgetError):
                PRIVATE_COPY_OPS[name](x)
            assert s.memory.live_bytes == 0


# ------------------------------------------------------------------ remat


def test_remat_returning_a_tuple_with_a_non_variable_names_the_element():
    with lampy.Scope() as s:
        x = lampy.param(np.ones(4))
        before = s.memory
        with pytest.raises(lampy.LampyTypeError, match=r"int"):
            lampy.remat(lambda a: (a * 2.0, 3))(x)
        assert s.memory.live_bytes == before.live_bytes
        assert lampy.Scope.current() is s


def test_remat_raising_inside_leaves_every_scope_consistent():
    def bad(a):
        _ = lampy.tanh(a * 2.0)
        raise ValueError("boom")

    with lampy.Scope() as s:
        x = lampy.param(np.ones(4))
        before = s.memory
        with pytest.raises(ValueError, match="boom"):
            lampy.remat(bad)(x)
        assert lampy.Scope.current() is s
        after = s.memory
        assert (after.live_bytes, after.arrays) == (before.live_bytes, before.arrays)
        y = lampy.remat(lambda a: lampy.tanh(a * 2.0))(x).sum()
        y.backward()
        np.testing.assert_allclose(x.grad, 2.0 * (1.0 - np.tanh(2.0) ** 2))


# ------------------------------------------------------------------ remat_sequential


@pytest.mark.parametrize("segments", [2.0, True, "2"])
def test_remat_sequential_segments_of_another_type_is_a_type_error(segments):
    with lampy.Scope():
        layers = [nn.Linear.init(4, 4, rng=np.random.default_rng(0)) for _ in range(3)]
        with pytest.raises(lampy.LampyTypeError, match="segments must be an int"):
            nn.remat_sequential(layers, np.ones((2, 4), np.float32), segments=segments)


@pytest.mark.parametrize("segments", [0, -1])
def test_remat_sequential_segments_below_one_is_a_value_error(segments):
    with lampy.Scope():
        layers = [nn.Linear.init(4, 4, rng=np.random.default_rng(0)) for _ in range(3)]
        with pytest.raises(lampy.LampyValueError, match="at least 1"):
            nn.remat_sequential(layers, np.ones((2, 4), np.float32), segments=segments)


# ------------------------------------------------------------------ budgets checked first

PRECHECKED = {
    "matmul 2-d": (lambda a, b: a @ b, (3, 4), (4, 5)),
    "matmul 1-d @ 2-d": (lambda a, b: a @ b, (4,), (4, 5)),
    "matmul 2-d @ 1-d": (lambda a, b: a @ b, (3, 4), (4,)),
    "matmul 1-d @ 1-d": (lambda a, b: lampy.matmul(a, b), (4,), (4,)),
    "matmul batch broadcast": (lambda a, b: a @ b, (2, 1, 3, 4), (5, 4, 2)),
    "sum axis": (lambda a, b: lampy.sum(a, axis=1), (3, 4), (1,)),
    "sum keepdims": (lambda a, b: lampy.sum(a, axis=(0, 1), keepdims=True), (3, 4), (1,)),
    "sum all": (lambda a, b: a.sum(), (3, 4), (1,)),
    "sum float32 of float64": (lambda a, b: lampy.sum(a, axis=0, dtype=np.float32), (3, 4), (1,)),
}


@pytest.mark.parametrize("name", list(PRECHECKED))
def test_matmul_and_sum_are_refused_before_allocating(name):
    """Exactly the output's size fits; one byte less is refused before the output
    exists (the scope's peak does not move), and the scope stays usable. A 0-d output
    is held as a numpy scalar, not counted: it fits any budget."""
    f, sa, sb = PRECHECKED[name]
    rng = np.random.default_rng(0)
    with lampy.Scope():
        a = lampy.param(rng.standard_normal(sa))
        b = lampy.param(rng.standard_normal(sb))
        expected = np.asarray(f(a, b).value)
        if not expected.shape:
            with lampy.Scope(budget=1) as tiny:
                np.testing.assert_array_equal(f(a, b).value, expected)
                assert (tiny.memory.live_bytes, tiny.memory.arrays) == (0, 0)
            return
        with lampy.Scope(budget=expected.nbytes) as fits:
            np.testing.assert_array_equal(f(a, b).value, expected)
            assert fits.memory.peak_bytes == expected.nbytes
        with lampy.Scope(budget=expected.nbytes - 1 if expected.nbytes > 1 else 1) as s:
            with pytest.raises(lampy.MemoryBudgetError, match=r"asks .* but its scope") as e:
                f(a, b)
            assert "was dropped" not in str(e.value)
            assert "lampy.remat" in str(e.value)
            assert (s.memory.live_bytes, s.memory.peak_bytes, s.memory.arrays) == (0, 0, 0)


def test_matmul_mismatch_under_a_budget_is_still_a_shape_error():
    with lampy.Scope(budget="1 MiB"):
        a = lampy.param(np.ones((3, 4)))
        with pytest.raises(lampy.ShapeError, match="matmul"):
            a @ a


UNARY = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "positive",
    "absolute",
    "fabs",
    "sqrt",
    "cbrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinc",
    "deg2rad",
    "rad2deg",
    "negative",
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY)
def test_unary_elementwise_ops_are_refused_before_allocating(name, dtype):
    """Exactly the output's size fits; one byte less is refused before the output
    exists, the error naming the op as its result does."""
    f = getattr(lampy, name)
    with lampy.Scope():
        x = lampy.param(np.full((4, 8), 1.5 if name == "arccosh" else 0.5, dtype))
        ref = f(x)
        with lampy.Scope(budget=ref.value.nbytes) as fits:
            np.testing.assert_array_equal(f(x).value, ref.value)
            assert fits.memory.peak_bytes == ref.value.nbytes
        with lampy.Scope(budget=ref.value.nbytes - 1) as s:
            with pytest.raises(lampy.MemoryBudgetError, match=f"op '{ref.node.name}' asks") as e:
                f(x)
            assert "was dropped" not in str(e.value)
            assert (s.memory.live_bytes, s.memory.peak_bytes, s.memory.arrays) == (0, 0, 0)


JOINS_AND_GATHERS = {
    "concatenate": lambda x: lampy.concatenate([x, x]),
    "concatenate axis 1": lambda x: lampy.concatenate([x, x[:, :3]], axis=1),
    "concatenate flat": lambda x: lampy.concatenate([x, x], axis=None),
    "append": lambda x: lampy.append(x, x, axis=0),
    "hstack": lambda x: lampy.hstack([x, x]),
    "vstack": lambda x: lampy.vstack([x, x]),
    "column_stack": lambda x: lampy.column_stack([x, x]),
    "stack": lambda x: lampy.stack([x, x], axis=1),
    "stack float32": lambda x: lampy.stack([x, x], dtype=np.float32),
    "fancy getitem": lambda x: x[[0, 1, 2]],
    "fancy getitem 2-d": lambda x: x[[[0], [1]], [2, 3, 4]],
    "mask getitem": lambda x: x[x.value > 0.5],
    "mixed getitem": lambda x: x[1:, [0, 0, 7]],
}


@pytest.mark.parametrize("name", list(JOINS_AND_GATHERS))
def test_joins_and_gathers_are_refused_before_allocating(name):
    """Exactly the output's size fits; one byte less is refused before the output is
    made (the peak does not move), and the scope stays usable."""
    with lampy.Scope():
        x = lampy.param(np.linspace(0.0, 1.0, 64).reshape(8, 8))
        _checked_before_allocating(JOINS_AND_GATHERS[name], x)


def _checked_before_allocating(f, x):
    """``f(x)``'s output size exactly fits a budget; one byte less is refused before the
    output is made (the peak does not move), and the scope stays usable."""
    ref = f(x)
    n = ref.value.nbytes
    kept = ref.node.kept  # what its backward saved beyond the values: counted after it
    with lampy.Scope(budget=n + kept) as fits:
        np.testing.assert_array_equal(f(x).value, ref.value)
        assert fits.memory.peak_bytes == n + kept
    with lampy.Scope(budget=n - 1) as s:
        with pytest.raises(lampy.MemoryBudgetError, match="asks") as e:
            f(x)
        assert "was dropped" not in str(e.value)
        assert (s.memory.live_bytes, s.memory.peak_bytes) == (0, 0)
        assert float(lampy.sum(x)) == pytest.approx(float(np.sum(x.value)))  # still works


def test_a_dropped_array_is_not_in_the_live_bytes_the_error_reports():
    """The budget is on an enclosing scope; the op (its size known only after) runs in
    a child: 'already own' must be the bytes owned without the refused array."""
    with lampy.Scope(budget=1000) as outer:
        x = lampy.param(np.ones(50))  # 400 B
        with lampy.Scope():
            h = x * 1.0  # 400 B
            with pytest.raises(lampy.MemoryBudgetError) as e:
                lampy.cumsum(h)  # 400 B more is 1200 B: refused after computing
            assert outer.memory.live_bytes == 800
        assert "was dropped" in str(e.value)
        assert "already own 800 B of a budget of 1000 B" in str(e.value)


def test_views_of_a_result_copied_from_a_numpy_temporary_are_views():
    """The result owns its private buffer once: a reshape, a transpose or a slice of it
    is a view of that buffer (not one more copy), charged 0 bytes."""
    with lampy.Scope() as s:
        x = lampy.param(np.arange(24.0).reshape(2, 3, 4))
        y = x.amax(axis=1)
        before = s.memory
        assert before.live_bytes == x.value.nbytes + y.value.nbytes + y.node.kept
        views = [y.reshape(-1), y.T, y[0]]
        for v in views:
            assert np.shares_memory(v.value, y.value)
        after = s.memory
        assert (after.live_bytes, after.arrays) == (before.live_bytes, before.arrays)


def test_remat_sequential_takes_a_numpy_integer_and_segments_past_the_length():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    with lampy.Scope():
        layers = [nn.Linear.init(4, 4, rng=np.random.default_rng(1)) for _ in range(3)]
        plain = nn.remat_sequential(layers, x, segments=1).value
        for k in (np.int64(2), 3, 10):
            np.testing.assert_array_equal(nn.remat_sequential(layers, x, segments=k).value, plain)


ACTIVATIONS = {
    "relu": lambda x: F.relu(x),
    "relu6": lambda x: F.relu6(x),
    "leaky_relu": lambda x: F.leaky_relu(x),
    "elu": lambda x: F.elu(x),
    "selu": lambda x: F.selu(x),
    "celu": lambda x: F.celu(x),
    "gelu": lambda x: F.gelu(x),
    "gelu tanh": lambda x: F.gelu(x, approximate="tanh"),
    "sigmoid": lambda x: F.sigmoid(x),
    "silu": lambda x: F.silu(x),
    "mish": lambda x: F.mish(x),
    "softplus": lambda x: F.softplus(x),
    "log_sigmoid": lambda x: F.log_sigmoid(x),
    "hardtanh": lambda x: F.hardtanh(x),
    "hardsigmoid": lambda x: F.hardsigmoid(x),
    "hardswish": lambda x: F.hardswish(x),
    "softsign": lambda x: F.softsign(x),
    "softmax": lambda x: F.softmax(x, dim=1),
    "log_softmax": lambda x: F.log_softmax(x, dim=1),
    "glu": lambda x: F.glu(x, dim=1),
    "dropout": lambda x: F.dropout(x, 0.5, rng=np.random.default_rng(0)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations_are_refused_before_allocating(name, dtype):
    """nn.functional's elementwise activations (and softmax, glu, dropout) know their
    output's size in advance: exactly it fits, one byte less is refused before the
    output exists."""
    with lampy.Scope():
        x = lampy.param(np.linspace(-2.0, 2.0, 32, dtype=dtype).reshape(4, 8))
        _checked_before_allocating(ACTIVATIONS[name], x)
