"""Every method name that ``torch.Tensor`` and ``numpy.ndarray`` share either means the
same on a Variable in both libraries, or computes the one reading that applies, or
raises ``lampy.AmbiguousMethodError`` showing both spellings: never one library's
meaning silently for code written for the other (issue 25, item 1)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy import AmbiguousMethodError

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
PAGE = Path(__file__).resolve().parents[2] / "docs" / "coming-from-pytorch.md"


def _shared_names_on_the_page() -> set[str]:
    """The names of the page's table of shared method names (first column, in backticks)."""
    text = PAGE.read_text()
    table = text[text.index("### Names numpy and PyTorch share") :]
    table = table[: table.index("\n\n", table.index("|---"))]
    return {m.group(1) for m in re.finditer(r"^\| `([A-Za-z_]+)`", table, re.M)}


def test_every_shared_name_is_in_the_docs_table() -> None:
    """The page lists every public name of torch.Tensor that numpy.ndarray has too."""
    torch = pytest.importorskip("torch")
    shared = {n for n in dir(torch.Tensor) if not n.startswith("_")} & {
        n for n in dir(np.ndarray) if not n.startswith("_")
    }
    assert shared - _shared_names_on_the_page() == set()


def test_transpose_of_two_axes_on_a_matrix() -> None:
    """x.transpose(0, 1) on 2-d is numpy's identity but PyTorch's swap: it raises with
    both spellings; (1, 0) means the same in both; on 3-d two axes are PyTorch's swap."""
    with lampy.Scope():
        x = lampy.param(X)
        for axes in ((0, 1), (-2, -1)):
            with pytest.raises(AmbiguousMethodError, match=r"swapaxes.*\n|numpy's meaning"):
                x.transpose(*axes)
        np.testing.assert_array_equal(x.transpose(1, 0).value, X.T)
        np.testing.assert_array_equal(x.transpose(-1, -2).value, X.T)
        np.testing.assert_array_equal(x.transpose((0, 1)).value, X)
        np.testing.assert_array_equal(x.transpose(dim0=0, dim1=1).value, X.T)
        y = lampy.param(np.arange(24.0).reshape(2, 3, 4))
        assert y.transpose(-2, -1).shape == (2, 4, 3) and y.transpose(0, 1).shape == (3, 2, 4)
        assert y.transpose(2, 0, 1).shape == (4, 2, 3) and y.transpose().shape == (4, 3, 2)


def test_repeat_readings() -> None:
    """x.repeat(2, 1) on 2-d raises (numpy's (2, 6), PyTorch's (4, 3)); numpy's keyword
    and PyTorch's three sizes are unambiguous."""
    with lampy.Scope():
        x = lampy.param(X)
        with pytest.raises(AmbiguousMethodError, match=r"lampy.tile\(x, \(2, 1\)\)"):
            x.repeat(2, 1)
        with pytest.raises(AmbiguousMethodError):
            lampy.param(np.arange(3.0)).repeat(2)
        np.testing.assert_array_equal(x.repeat(2, axis=1).value, X.repeat(2, axis=1))
        np.testing.assert_array_equal(x.repeat(2).value, X.repeat(2))  # PyTorch would raise
        np.testing.assert_array_equal(x.repeat(2, 1, 1).value, np.tile(X, (2, 1, 1)))
        np.testing.assert_array_equal(x.repeat(1, 1).value, X)  # the same in both


@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple),
    args=st.lists(st.integers(0, 3), min_size=1, max_size=4).map(tuple),
)
def test_repeat_is_never_silently_one_reading(
    shape: tuple[int, ...], args: tuple[int, ...]
) -> None:
    """For any shape and int arguments, x.repeat(*args) equals numpy's reading where only
    numpy's applies, PyTorch's (np.tile) where only PyTorch's applies, either where they
    agree, and raises otherwise."""
    a = np.arange(float(np.prod(shape))).reshape(shape)

    def reading(f: Any) -> np.ndarray | None:
        try:
            return np.asarray(f())
        except (TypeError, ValueError, IndexError):
            return None

    as_numpy = reading(lambda: np.repeat(a, *args)) if len(args) <= 2 else None
    as_torch = np.tile(a, args) if len(args) >= a.ndim else None
    with lampy.Scope():
        x = lampy.param(a)
        if as_numpy is not None and as_torch is not None and not np.array_equal(as_numpy, as_torch):
            with pytest.raises(AmbiguousMethodError):
                x.repeat(*args)
        elif as_numpy is None and as_torch is None:
            with pytest.raises(TypeError):
                x.repeat(*args)
        else:
            want = as_numpy if as_numpy is not None else as_torch
            np.testing.assert_array_equal(x.repeat(*args).value, want)


def test_std_var_need_the_divisor() -> None:
    """std/var without ddof, correction, unbiased or dim raise; each library's unambiguous
    spelling gives its own numbers."""
    with lampy.Scope():
        x = lampy.param(X)
        for call in (x.std, x.var):
            for args, kwargs in (
                ((), {}),
                ((1,), {}),
                ((), {"axis": 1}),
                ((1,), {"keepdims": True}),
            ):
                with pytest.raises(AmbiguousMethodError, match="ddof=0"):
                    call(*args, **kwargs)
        np.testing.assert_allclose(x.std(1, ddof=0).value, X.std(1))
        np.testing.assert_allclose(x.std(dim=1).value, X.std(1, ddof=1))
        np.testing.assert_allclose(x.var(1, correction=0).value, X.var(1))
        np.testing.assert_allclose(x.var(unbiased=False).value, X.var())
        np.testing.assert_allclose(x.var(1, True, True).value, X.var(1, ddof=1, keepdims=True))
        np.testing.assert_allclose(
            x.std(dim=0, keepdim=True).value, X.std(0, ddof=1, keepdims=True)
        )


def test_max_min_readings() -> None:
    """x.max() is the same in both; an axis alone raises; dim= gives PyTorch's
    (values, indices) with the gradient at the index; numpy-only arguments give numpy's;
    another array gives the elementwise maximum."""
    with lampy.Scope():
        x = lampy.param(X)
        assert float(x.max().value) == X.max() and float(x.min().value) == X.min()
        for bad in (lambda: x.max(1), lambda: x.min(axis=0), lambda: x.max(1, keepdims=False)):
            with pytest.raises(AmbiguousMethodError, match=r"x\.amax|x\.amin"):
                bad()
        v, i = x.max(dim=1)
        np.testing.assert_array_equal(v.value, X.max(1))
        np.testing.assert_array_equal(i, X.argmax(1))
        assert i.dtype == np.int64
        out = x.min(1, True)
        assert out.values.shape == (2, 1) and out.indices.tolist() == [[1], [2]]
        mx = x.max(axis=1, keepdims=True, initial=-np.inf)
        np.testing.assert_array_equal(mx.value, X.max(1, keepdims=True))
        np.testing.assert_array_equal(x.max(x * 0.0).value, np.maximum(X, 0))
        with lampy.Scope():
            x.max(dim=1).values.sum().backward()
        np.testing.assert_array_equal(x.grad, [[0, 0, 1], [1, 0, 0]])


def test_size_split_nonzero_sort_and_the_rest() -> None:
    """size is numpy's int and PyTorch's size()/size(dim); split takes PyTorch's piece
    size; nonzero needs as_tuple; sort raises; itemsize, nbytes, device, real, conj."""
    with lampy.Scope():
        x = lampy.param(np.zeros((2, 3, 384), np.float32))
        assert x.size == 2304 and x.size() == (2, 3, 384) and x.size(-1) == 384
        pieces = x.split(128, dim=2)
        assert [p.shape for p in pieces] == [(2, 3, 128)] * 3
        assert [p.shape[1] for p in x.split([1, 2], dim=1)] == [1, 2]
        assert [p.shape[1] for p in x.split(2, 1)] == [2, 1]
        y = lampy.param(X)
        with pytest.raises(AmbiguousMethodError):
            y.nonzero()
        assert len(y.nonzero(as_tuple=True)) == 2 and y.nonzero(as_tuple=False).shape == (6, 2)
        with pytest.raises(AmbiguousMethodError, match=r"lampy\.sort"):
            y.sort()
        assert (y.itemsize, y.nbytes, y.device) == (8, 48, "cpu") and y.real is y and y.conj() is y
        assert y.argsort(1, True).tolist() == [[2, 0, 1], [0, 1, 2]]
        assert y.all(dim=1).tolist() == [True, True] and y.any(axis=0, keepdims=True).shape == (
            1,
            3,
        )
        for name in ("data", "put", "resize", "add_"):
            with pytest.raises(AttributeError, match=f"Variable.{name}: "):
                getattr(y, name)


def test_item_assignment_points_to_masked_fill() -> None:
    """x[mask] = v raises, naming masked_fill (PyTorch's answer without mutation)."""
    with lampy.Scope():
        x = lampy.param(X)
        with pytest.raises(TypeError, match="masked_fill"):
            x[X > 1] = 0.0


@pytest.mark.parametrize("bad", ["a", (2, "a"), 2.5, None])
def test_reshape_and_view_of_non_ints_name_the_op(bad: Any) -> None:
    """x.reshape('a') is a lampy error naming the op and what it accepts (issue 23, 4)."""
    with lampy.Scope():
        x = lampy.param(X)
        for method in ("reshape", "view"):
            with pytest.raises(lampy.LampyTypeError, match=rf"{method}: .*x\.{method}\(2, 3\)"):
                getattr(x, method)(bad)
        with pytest.raises(lampy.LampyTypeError, match="astype"):
            x.view(np.float32)


def test_torch_forms_match_torch() -> None:
    """The PyTorch forms lampy computes give PyTorch's numbers."""
    torch = pytest.importorskip("torch")
    t = torch.tensor(X)
    with lampy.Scope():
        x = lampy.param(X)
        pairs = [
            (x.std(dim=1), t.std(dim=1)),
            (x.var(1, True, True), t.var(1, True, True)),
            (x.std(unbiased=False), t.std(unbiased=False)),
            (x.max(dim=0).values, t.max(dim=0).values),
            (x.transpose(1, 0), t.transpose(1, 0)),
            (x.repeat(2, 1, 1), t.repeat(2, 1, 1)),
            (x.split(2, dim=1)[1], t.split(2, dim=1)[1]),
        ]
        for mine, theirs in pairs:
            np.testing.assert_allclose(mine.value, theirs.numpy())
        assert np.array_equal(x.max(dim=0).indices, t.max(dim=0).indices.numpy())
        assert x.size(-1) == t.size(-1) and tuple(x.size()) == tuple(t.size())
        assert np.array_equal(x.nonzero(as_tuple=False), t.nonzero().numpy())
        assert np.array_equal(x.argsort(1, True), t.argsort(1, True).numpy())


@given(
    ndim=st.integers(1, 4),
    a=st.integers(-4, 3),
    b=st.integers(-4, 3),
)
def test_transpose_of_two_axes_is_pytorchs_swap_or_raises(ndim: int, a: int, b: int) -> None:
    """x.transpose(a, b) swaps the two axes (PyTorch's meaning) for any rank; only on a
    2-d Variable where numpy's permutation reading keeps the order does it raise."""
    shape = tuple(range(2, 2 + ndim))
    x0 = np.arange(float(np.prod(shape))).reshape(shape)
    in_range = -ndim <= a < ndim and -ndim <= b < ndim
    with lampy.Scope():
        x = lampy.param(x0)
        if not in_range:
            with pytest.raises((ValueError, TypeError, IndexError)):
                x.transpose(a, b)
        elif ndim == 2 and a % 2 != b % 2 and (a % 2, b % 2) == (0, 1):
            with pytest.raises(AmbiguousMethodError):
                x.transpose(a, b)
        else:
            np.testing.assert_array_equal(x.transpose(a, b).value, np.swapaxes(x0, a, b))
