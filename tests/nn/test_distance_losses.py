"""Similarities, distances and margin losses: forward against plain-numpy references,
gradients against finite differences, PyTorch's conventions, dtypes and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyValueError, ShapeError
from lampy.nn.functional._distance_losses import (
    cosine_embedding_loss,
    cosine_similarity,
    hinge_embedding_loss,
    margin_ranking_loss,
    pairwise_distance,
    soft_margin_loss,
    triplet_margin_loss,
)
from lampy.testing import check_grad

REDUCTIONS = ["mean", "sum", "none"]
DTYPES = [np.float64, np.float32]
PS = [1.0, 2.0, 3.0, 0.5]


def _forward(f: Any, *args: Any, **kw: Any) -> Any:
    with lampy.Scope():
        return f(*args, **kw).value.copy()


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 2e-4, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


def _reduce(loss: np.ndarray, reduction: str) -> Any:
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def _pnorm(v: np.ndarray, p: float) -> Any:
    """The p-norm along the last axis, by the textbook formula."""
    if p == float("inf"):
        return np.abs(v).max(axis=-1)
    return (np.abs(v) ** p).sum(axis=-1) ** (1 / p)


def _signs(rng: np.random.Generator, shape: Any, dtype: Any) -> Any:
    return rng.choice([-1.0, 1.0], size=shape).astype(dtype)


# --- cosine_similarity, pairwise_distance -------------------------------------------


@st.composite
def broadcast_pair(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast: a common shape with some sides set to 1 or dropped."""
    full = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    a = [1 if draw(st.booleans()) and i < len(full) - 1 else s for i, s in enumerate(full)]
    b = [1 if draw(st.booleans()) and i < len(full) - 1 else s for i, s in enumerate(full)]
    drop = draw(st.integers(0, len(full) - 1))
    return tuple(a), tuple(b[drop:])


@given(shapes=broadcast_pair(), seed=st.integers(0, 2**32 - 1), data=st.data())
@settings(max_examples=25)
def test_cosine_similarity_forward_and_gradients(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], seed: int, data: st.DataObject
) -> None:
    """cosine_similarity is x1.x2 / (max(|x1|, eps) max(|x2|, eps)) along dim of the
    broadcast; gradients (summed over broadcast dims) match finite differences."""
    s1, s2 = shapes
    ndim = max(len(s1), len(s2))
    dim = data.draw(st.integers(-ndim, ndim - 1))
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        a = rng.normal(size=s1).astype(dtype)
        b = rng.normal(size=s2).astype(dtype)
        a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
        n1 = np.maximum(np.sqrt((a64 * a64).sum(axis=dim)), 1e-8)
        n2 = np.maximum(np.sqrt((b64 * b64).sum(axis=dim)), 1e-8)
        got = _forward(cosine_similarity, a, b, dim=dim)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, (a64 * b64).sum(axis=dim) / (n1 * n2), **_tol(dtype))
    check_grad(lambda x, y: cosine_similarity(x, y, dim=dim), rng.normal(size=s1), b * 1.0)


def test_cosine_similarity_clamped_norm() -> None:
    """A norm below eps is replaced by eps; its radial derivative is 0 at x = 0
    (PyTorch's clamp under no_grad)."""
    with lampy.Scope():
        x1 = lampy.param(np.array([[0.0, 0.0], [3e-10, 4e-10]]))
        x2 = lampy.param(np.array([[3.0, 4.0], [3.0, 4.0]]))
        y = cosine_similarity(x1, x2, eps=1e-8)
        np.testing.assert_allclose(y.value, [0.0, 0.05])
        y.sum().backward()
        np.testing.assert_allclose(x1.grad[0], [0.6e8, 0.8e8])
        np.testing.assert_allclose(x1.grad[1], np.array([0.6, 0.8]) * (1e8 - 0.05 * 1e8))


@given(
    shapes=broadcast_pair(),
    seed=st.integers(0, 2**32 - 1),
    p=st.sampled_from([*PS, float("inf")]),
    keepdim=st.booleans(),
)
@settings(max_examples=25)
def test_pairwise_distance_forward_and_gradients(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], seed: int, p: float, keepdim: bool
) -> None:
    """pairwise_distance is ||x1 - x2 + eps||_p along the last dim of the broadcast."""
    s1, s2 = shapes
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        a = rng.normal(size=s1).astype(dtype)
        b = rng.normal(size=s2).astype(dtype)
        want = _pnorm(a.astype(np.float64) - b + 1e-6, p)
        if keepdim:
            want = want[..., None]
        got = _forward(pairwise_distance, a, b, p=p, keepdim=keepdim)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, **_tol(dtype))
    if p != float("inf"):
        check_grad(lambda x, y: pairwise_distance(x, y, p=p), rng.normal(size=s1), b * 1.0)


def test_pairwise_distance_inf_ties_and_zero_norm() -> None:
    """The max norm splits its gradient among tied entries; p = 0 and a zero distance
    give zero gradients."""
    with lampy.Scope():
        x = lampy.param(np.array([[2.0, -2.0, 1.0]]))
        pairwise_distance(x, np.zeros(3), p=float("inf"), eps=0.0).sum().backward()
        np.testing.assert_allclose(x.grad, [[0.5, -0.5, 0.0]])
    with lampy.Scope():
        x = lampy.param(np.array([[1.0, 0.0], [3.0, 4.0]]))
        d = pairwise_distance(x, np.array([1.0, 0.0]), eps=0.0)
        np.testing.assert_allclose(d.value, [0.0, np.sqrt(20.0)])
        d0 = pairwise_distance(x, np.zeros(2), p=0)
        np.testing.assert_allclose(d0.value, [2.0, 2.0])
        (d + d0).sum().backward()
        np.testing.assert_allclose(x.grad, [[0.0, 0.0], np.array([2.0, 4.0]) / np.sqrt(20.0)])


# --- cosine_embedding_loss ----------------------------------------------------------


@given(
    n=st.integers(0, 4),
    d=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    margin=st.floats(-0.5, 0.5),
    reduction=st.sampled_from(REDUCTIONS),
)
@settings(max_examples=25)
def test_cosine_embedding_loss(n: int, d: int, seed: int, margin: float, reduction: str) -> None:
    """1 - cos for target 1, max(0, cos - margin) for target -1, per row; gradients
    match finite differences."""
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        a = rng.normal(size=(n, d)).astype(dtype)
        b = rng.normal(size=(n, d)).astype(dtype)
        t = _signs(rng, n, dtype)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        cos = np.array(
            [a64[i] @ b64[i] / np.sqrt((a64[i] @ a64[i] + 1e-12) * (b64[i] @ b64[i] + 1e-12))
             for i in range(n)]
        )  # fmt: skip
        want = np.where(t == 1, 1 - cos, np.maximum(cos - margin, 0))
        got = _forward(cosine_embedding_loss, a, b, t, margin=margin, reduction=reduction)
        assert got.dtype == dtype
        if reduction == "mean" and n == 0:
            assert np.isnan(got)
        else:
            np.testing.assert_allclose(got, _reduce(want, reduction), **_tol(dtype))
    if n:
        f = lambda x, y: cosine_embedding_loss(x, y, t, margin=margin, reduction=reduction)
        check_grad(f, rng.normal(size=(n, d)), rng.normal(size=(n, d)))


def test_cosine_embedding_loss_single_pair_and_errors() -> None:
    """1-d inputs take a 0-d target; mismatched shapes raise ShapeError naming them."""
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    np.testing.assert_allclose(_forward(cosine_embedding_loss, a, b, np.array(1.0)), 1.0)
    with lampy.Scope():
        with pytest.raises(ShapeError, match=r"cosine_embedding_loss: .*\(3, 4\) and \(3, 5\)"):
            cosine_embedding_loss(np.ones((3, 4)), np.ones((3, 5)), np.ones(3))
        with pytest.raises(ShapeError, match=r"target of shape \(2,\)"):
            cosine_embedding_loss(np.ones((3, 4)), np.ones((3, 4)), np.ones(2))
        with pytest.raises(ShapeError, match="cosine_embedding_loss"):
            cosine_embedding_loss(np.ones((3, 4, 2)), np.ones((3, 4, 2)), np.ones(3))
        with pytest.raises(LampyValueError, match="reduction must be one of"):
            cosine_embedding_loss(a, b, np.array(1.0), reduction="avg")


# --- margin_ranking_loss ------------------------------------------------------------


@given(
    shape=st.lists(st.integers(1, 4), max_size=2),
    seed=st.integers(0, 2**32 - 1),
    margin=st.floats(-1.0, 1.0),
    reduction=st.sampled_from(REDUCTIONS),
)
@settings(max_examples=20)
def test_margin_ranking_loss(shape: list[int], seed: int, margin: float, reduction: str) -> None:
    """max(0, -t (x1 - x2) + margin); gradients for x1, x2 and the target."""
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        a = rng.normal(size=shape).astype(dtype)
        b = rng.normal(size=shape).astype(dtype)
        t = _signs(rng, shape, dtype)
        want = np.maximum(-t.astype(np.float64) * (a.astype(np.float64) - b) + margin, 0)
        got = _forward(margin_ranking_loss, a, b, t, margin=margin, reduction=reduction)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, _reduce(want, reduction), **_tol(dtype))
    f = lambda x, y, t: margin_ranking_loss(x, y, t, margin=margin, reduction=reduction)
    # keep the hinge 0.05 away from its kink
    a64 = rng.normal(size=shape)
    b64 = a64 - t * (margin + np.where(rng.random(size=shape) < 0.5, 0.3, -0.3))
    check_grad(f, a64, b64, t.astype(np.float64) * 1.5)


def test_margin_ranking_loss_errors() -> None:
    """The three arguments need the same number of dimensions and to broadcast."""
    with lampy.Scope():
        with pytest.raises(ShapeError, match="same number of dimensions"):
            margin_ranking_loss(np.ones((3, 1)), np.ones(3), np.ones(3))
        with pytest.raises(ShapeError, match=r"\(3,\), \(4,\), \(3,\) do not broadcast"):
            margin_ranking_loss(np.ones(3), np.ones(4), np.ones(3))


# --- triplet_margin_loss ------------------------------------------------------------


@given(
    n=st.integers(1, 4),
    d=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    p=st.sampled_from([1.0, 2.0, 3.0]),
    swap=st.booleans(),
    reduction=st.sampled_from(REDUCTIONS),
)
@settings(max_examples=25)
def test_triplet_margin_loss(
    n: int, d: int, seed: int, p: float, swap: bool, reduction: str
) -> None:
    """max(0, margin + d(a, p) - d(a, n)), with swap min(d(a, n), d(p, n)); gradients
    for anchor, positive and negative match finite differences."""
    rng = np.random.default_rng(seed)
    margin = 0.7
    for dtype in DTYPES:
        a, po, ne = (rng.normal(size=(n, d)).astype(dtype) for _ in range(3))
        a64, p64, n64 = (v.astype(np.float64) for v in (a, po, ne))
        d_an = _pnorm(a64 - n64 + 1e-6, p)
        if swap:
            d_an = np.minimum(d_an, _pnorm(p64 - n64 + 1e-6, p))
        want = np.maximum(margin + _pnorm(a64 - p64 + 1e-6, p) - d_an, 0)
        got = _forward(
            triplet_margin_loss, a, po, ne, margin=margin, p=p, swap=swap, reduction=reduction
        )
        assert got.dtype == dtype
        np.testing.assert_allclose(got, _reduce(want, reduction), **_tol(dtype))
    f = lambda a, b, c: triplet_margin_loss(a, b, c, margin, p, swap=swap, reduction=reduction)
    check_grad(f, *(rng.normal(size=(n, d)) * 2 for _ in range(3)))


def test_triplet_margin_loss_broadcast_and_errors() -> None:
    """A (1, D) negative broadcasts over the batch; margin must be > 0; the inputs need
    the same number of dimensions."""
    rng = np.random.default_rng(3)
    a, po, ne = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(1, 4))
    check_grad(lambda x, y, z: triplet_margin_loss(x, y, z, reduction="none"), a, po, ne)
    with lampy.Scope():
        with pytest.raises(LampyValueError, match="margin must be greater than 0"):
            triplet_margin_loss(a, po, ne, margin=0)
        with pytest.raises(ShapeError, match="same number of dimensions"):
            triplet_margin_loss(a, po[0], ne)


# --- hinge_embedding_loss, soft_margin_loss -----------------------------------------


@given(
    shape=st.lists(st.integers(1, 4), max_size=2),
    seed=st.integers(0, 2**32 - 1),
    reduction=st.sampled_from(REDUCTIONS),
)
@settings(max_examples=20)
def test_hinge_and_soft_margin_losses(shape: list[int], seed: int, reduction: str) -> None:
    """hinge: x for t = 1, max(0, margin - x) for t = -1; soft margin:
    log(1 + exp(-t x)); gradients match finite differences."""
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        x = (rng.normal(size=shape) * 3).astype(dtype)
        t = _signs(rng, shape, dtype)
        x64 = x.astype(np.float64)
        hinge = np.where(t == 1, x64, np.maximum(0.5 - x64, 0))
        got = _forward(hinge_embedding_loss, x, t, margin=0.5, reduction=reduction)
        np.testing.assert_allclose(got, _reduce(hinge, reduction), **_tol(dtype))
        soft = np.log1p(np.exp(-t * x64))
        got = _forward(soft_margin_loss, x, t, reduction=reduction)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, _reduce(soft, reduction), **_tol(dtype))
    x = rng.normal(size=shape)
    x = np.where(np.abs(x - 0.5) < 0.05, x + 0.2, x)  # away from the hinge's kink
    check_grad(lambda v: hinge_embedding_loss(v, t, margin=0.5, reduction=reduction), x)
    check_grad(lambda v: soft_margin_loss(v, t, reduction=reduction), x)


def test_soft_margin_is_stable_and_hinge_other_targets() -> None:
    """soft_margin_loss does not overflow for large |x|; a hinge target other than
    +-1 gets both terms, as PyTorch."""
    x = np.array([1000.0, -1000.0])
    np.testing.assert_allclose(
        _forward(soft_margin_loss, x, np.array([-1.0, -1.0]), reduction="none"), [1000.0, 0.0]
    )
    got = _forward(hinge_embedding_loss, np.array([0.25]), np.array([0.0]), reduction="none")
    np.testing.assert_allclose(got, [0.25 + 0.75])
    with lampy.Scope(), pytest.raises(LampyValueError, match="soft_margin_loss: reduction"):
        soft_margin_loss(x, x, reduction="bad")
