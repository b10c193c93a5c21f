"""embedding: forward against a loop, the scatter-add gradient with repeated ids,
padding_idx, scale_grad_by_freq, max_norm (output-only renormalisation), dtypes, errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import BadIndexError, DTypeError, LampyValueError, ShapeError
from lampy.nn.functional._embedding import embedding
from lampy.testing import check_grad

id_shapes = st.lists(st.integers(0, 4), max_size=3).map(tuple)


def _ref_grad(ids: np.ndarray, g: np.ndarray, n: int, pad: int | None, freq: bool) -> Any:
    """d weight by a loop over positions: row ids[p] += g[p] (/ count, 0 at padding)."""
    flat, g2 = ids.reshape(-1), g.reshape(-1, g.shape[-1])
    counts = np.bincount(flat, minlength=n)
    out = np.zeros((n, g.shape[-1]))
    for p, i in enumerate(flat):
        if pad is not None and i == pad % n:
            continue
        out[i] += g2[p] / (counts[i] if freq else 1)
    return out


@given(
    seed=st.integers(0, 2**32 - 1),
    shape=id_shapes,
    n=st.integers(1, 5),
    dim=st.integers(1, 3),
    pad=st.one_of(st.none(), st.integers(-5, 4)),
    freq=st.booleans(),
)
@settings(max_examples=40)
def test_embedding_forward_and_gradient(
    seed: int, shape: tuple[int, ...], n: int, dim: int, pad: int | None, freq: bool
) -> None:
    """Rows are gathered; repeated ids accumulate; padding rows get none; freq scales."""
    if pad is not None and not -n <= pad < n:
        pad = None
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n, size=shape)
    for dtype in (np.float64, np.float32):
        w = rng.normal(size=(n, dim)).astype(dtype)
        g = rng.normal(size=(*shape, dim)).astype(dtype)
        with lampy.Scope():
            p = lampy.param(w)
            e = embedding(ids, p, padding_idx=pad, scale_grad_by_freq=freq)
            e.backward(g)
            assert e.dtype == dtype and e.shape == (*shape, dim)
            np.testing.assert_array_equal(
                e.value, np.array([w[i] for i in ids.ravel()]).reshape(e.shape)
            )
            assert p.grad is not None and p.grad.dtype == dtype
            tol = 1e-12 if dtype == np.float64 else 1e-5
            np.testing.assert_allclose(p.grad, _ref_grad(ids, g, n, pad, freq), rtol=tol, atol=tol)


def test_embedding_check_grad_repeated_ids() -> None:
    """Without padding or frequency scaling the gradient is the exact derivative."""
    rng = np.random.default_rng(0)
    ids = np.array([[1, 2, 1], [4, 1, 0]])
    check_grad(lambda w: embedding(ids, w), rng.normal(size=(5, 3)))
    check_grad(lambda w: embedding(ids, w), rng.normal(size=(5, 3)).astype(np.float32))


def test_embedding_ids_as_const_variable_and_any_int_dtype() -> None:
    """Ids may be an integer const Variable, and any integer dtype (uint8 too)."""
    w = np.arange(12.0).reshape(4, 3)
    with lampy.Scope():
        a = embedding(lampy.const(np.array([3, 0])), w).value.copy()
        b = embedding(np.array([3, 0], dtype=np.uint8), w).value.copy()
    np.testing.assert_array_equal(a, w[[3, 0]])
    np.testing.assert_array_equal(b, w[[3, 0]])


def _ref_renorm(rows: np.ndarray, max_norm: float, p: float) -> Any:
    """PyTorch's embedding_renorm_ on each row: scale by max_norm / (norm + 1e-7)."""
    out = rows.copy()
    for r in range(rows.shape[0]):
        norm = np.max(np.abs(rows[r])) if p == math.inf else np.sum(np.abs(rows[r]) ** p) ** (1 / p)
        if norm > max_norm:
            out[r] = rows[r] * (max_norm / (norm + 1e-7))
    return out


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_embedding_max_norm(norm_type: float) -> None:
    """max_norm renormalises output rows as PyTorch, leaves weight alone, exact gradient."""
    rng = np.random.default_rng(1)
    w = rng.normal(size=(5, 3))
    ids = np.array([[0, 3, 3], [1, 4, 2]])
    with lampy.Scope():
        p = lampy.param(w)
        got = embedding(ids, p, max_norm=1.0, norm_type=norm_type).value.copy()
        np.testing.assert_array_equal(p.value, w)  # not modified in place
    want = _ref_renorm(w[ids.ravel()], 1.0, norm_type).reshape(got.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    check_grad(lambda v: embedding(ids, v, max_norm=1.0, norm_type=norm_type), w)


def test_embedding_zero_size_input() -> None:
    """No ids give a (0, dim) output and a zero gradient."""
    with lampy.Scope():
        p = lampy.param(np.ones((3, 2)))
        e = embedding(np.zeros((0,), dtype=np.int64), p, max_norm=1.0)
        e.backward(np.zeros((0, 2)))
        assert e.shape == (0, 2) and p.grad is not None and not p.grad.any()


@pytest.mark.parametrize(
    ("ids", "kw", "error", "match"),
    [
        (np.array([0, 3]), {}, BadIndexError, r"embedding: .*\[0, 3\).*got 3"),
        (np.array([-1]), {}, BadIndexError, r"\[0, 3\)"),
        (np.array([0.0, 1.0]), {}, DTypeError, "embedding: input must hold integer ids"),
        (np.array([0]), {"sparse": True}, LampyValueError, "sparse gradients"),
        (np.array([0]), {"padding_idx": 3}, LampyValueError, r"padding_idx.*\[-3, 3\)"),
        (np.array([0]), {"max_norm": -1.0}, LampyValueError, "max_norm must be > 0"),
    ],
)
def test_embedding_errors(ids: Any, kw: dict[str, Any], error: type, match: str) -> None:
    """Bad ids, options and modes raise clear errors naming embedding."""
    with lampy.Scope(), pytest.raises(error, match=match):
        embedding(ids, np.ones((3, 2)), **kw)


def test_embedding_weight_must_be_2d() -> None:
    """A weight that is not (num_embeddings, embedding_dim) is a ShapeError."""
    with lampy.Scope(), pytest.raises(ShapeError, match=r"embedding.*2-d"):
        embedding(np.array([0]), np.ones(3))


def test_zero_width_embedding_backpropagates() -> None:
    """An embedding of dimension 0 looks up empty rows and gets an empty gradient."""
    with lampy.Scope():
        w = lampy.param(np.zeros((3, 0)))
        out = embedding(np.array([[0, 2]]), w)
        assert out.shape == (1, 2, 0)
        out.sum().backward()
        assert w.grad is not None and w.grad.shape == (3, 0)
