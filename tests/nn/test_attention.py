"""scaled_dot_product_attention: forward against a per-row numpy loop, gradients against
finite differences, masks (bool, float, broadcast, causal), scale, fully masked rows,
grouped-query attention, dropout on the weights, dtypes and errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional import _attention
from lampy.nn.functional._attention import scaled_dot_product_attention as sdpa
from lampy.testing import check_grad


def _ref(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: Any = None,
    causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    """Attention row by row over the broadcast batch: softmax of the allowed scores
    (zeros for a row with none allowed), times v."""
    n_l, n_s, n_e = q.shape[-2], k.shape[-2], q.shape[-1]
    s = 1 / math.sqrt(n_e) if scale is None else scale
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    full_mask = None if mask is None else np.broadcast_to(mask, (*batch, n_l, n_s))
    out = np.zeros((*batch, n_l, v.shape[-1]))
    for b in np.ndindex(*batch):
        qb = np.broadcast_to(q, (*batch, *q.shape[-2:]))[b].astype(np.float64)
        kb = np.broadcast_to(k, (*batch, *k.shape[-2:]))[b].astype(np.float64)
        vb = np.broadcast_to(v, (*batch, *v.shape[-2:]))[b].astype(np.float64)
        for i in range(n_l):
            scores = [float(qb[i] @ kb[j]) * s for j in range(n_s)]
            allowed = [True] * n_s
            for j in range(n_s):
                if causal and j > i:
                    allowed[j] = False
                if full_mask is not None:
                    m = full_mask[b][i, j]
                    if full_mask.dtype == bool:
                        allowed[j] = allowed[j] and bool(m)
                    else:
                        scores[j] += float(m)
                        allowed[j] = allowed[j] and m != -np.inf
            live = [sc for sc, a in zip(scores, allowed, strict=True) if a]
            if not live:
                continue
            top = max(live)
            w = [math.exp(sc - top) if a else 0.0 for sc, a in zip(scores, allowed, strict=True)]
            total = sum(w)
            out[b][i] = sum(w[j] / total * vb[j] for j in range(n_s))
    return out


@st.composite
def problems(draw: st.DrawFn) -> dict[str, Any]:
    """Small attention problems: shapes with broadcast batch dims, and a mask kind."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    n_l, n_s = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    n_e, n_ev = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    k_batch = tuple(1 if draw(st.booleans()) else d for d in batch)  # broadcast key/value
    q = rng.normal(size=(*batch, n_l, n_e))
    k = rng.normal(size=(*k_batch, n_s, n_e))
    v = rng.normal(size=(*k_batch, n_s, n_ev))
    kind = draw(st.sampled_from(["none", "bool", "float", "causal"]))
    mask_shape = draw(st.sampled_from([(n_l, n_s), (1, n_s), (n_l, 1), (*batch, n_l, n_s)]))
    mask: Any = None
    if kind == "bool":
        mask = rng.random(mask_shape) < 0.7
    elif kind == "float":
        mask = rng.normal(size=mask_shape)
    scale = draw(st.sampled_from([None, 0.5, 1.0, -0.7]))
    return {"q": q, "k": k, "v": v, "mask": mask, "causal": kind == "causal", "scale": scale}


@given(problems())
@settings(max_examples=40)
def test_attention_forward(pr: dict[str, Any]) -> None:
    """The fused op equals the row-by-row reference in float64 and float32."""
    want = _ref(pr["q"], pr["k"], pr["v"], pr["mask"], pr["causal"], pr["scale"])
    for dtype, tol in [(np.float64, 1e-12), (np.float32, 1e-5)]:
        q, k, v = (pr[n].astype(dtype) for n in "qkv")
        with lampy.Scope():
            got = sdpa(
                q, k, v, attn_mask=pr["mask"], is_causal=pr["causal"], scale=pr["scale"]
            ).value.copy()
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@given(problems())
@settings(max_examples=25)
def test_attention_gradients(pr: dict[str, Any]) -> None:
    """Gradients for query, key, value (and a float mask) match finite differences."""
    kw = {"is_causal": pr["causal"], "scale": pr["scale"]}
    mask = pr["mask"]
    if mask is not None and mask.dtype.kind == "f":
        check_grad(
            lambda q, k, v, m: sdpa(q, k, v, attn_mask=m, **kw), pr["q"], pr["k"], pr["v"], mask
        )
    else:
        check_grad(lambda q, k, v: sdpa(q, k, v, attn_mask=mask, **kw), pr["q"], pr["k"], pr["v"])


def test_attention_float32_gradients() -> None:
    """The float32 path keeps float32 gradients that match finite differences."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(2, 3, 4)).astype(np.float32) for _ in range(3))
    check_grad(lambda q, k, v: sdpa(q, k, v, is_causal=True), q, k, v)


def test_attention_fully_masked_rows_give_zeros() -> None:
    """A row with every key masked (bool or -inf) gives zeros and zero gradients, as PyTorch."""
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    bool_mask = np.ones((3, 4), bool)
    bool_mask[1] = False
    float_mask = np.where(bool_mask, 0.0, -np.inf)
    for mask in (bool_mask, float_mask):
        with lampy.Scope():
            ps = [lampy.param(a) for a in (q, k, v)]
            y = sdpa(ps[0], ps[1], ps[2], attn_mask=mask)
            y.backward(np.ones(y.shape))
            assert not y.value[1].any() and np.isfinite(y.value).all()
            assert ps[0].grad is not None and not ps[0].grad[1].any()
            assert all(np.isfinite(p.grad).all() for p in ps if p.grad is not None)
        check_grad(lambda q, k, v, m=mask: sdpa(q, k, v, attn_mask=m), q, k, v)


def test_attention_causal_is_top_left() -> None:
    """is_causal uses tril(ones(L, S)): with L > S the first query sees the first key only."""
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(5, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    with lampy.Scope():
        got = sdpa(q, k, v, is_causal=True).value.copy()
    np.testing.assert_allclose(got[0], v[0], rtol=1e-12)
    np.testing.assert_allclose(got, _ref(q, k, v, np.tri(5, 3, dtype=bool)), rtol=1e-12)


@pytest.mark.parametrize(("hq", "hk", "hv"), [(4, 2, 2), (6, 3, 1), (2, 2, 2)])
def test_attention_grouped_query(hq: int, hk: int, hv: int) -> None:
    """enable_gqa equals attention with key/value heads repeated; gradients sum per group."""
    rng = np.random.default_rng(3)
    q = rng.normal(size=(2, hq, 3, 2))
    k = rng.normal(size=(2, hk, 4, 2))
    v = rng.normal(size=(2, hv, 4, 3))
    with lampy.Scope():
        got = sdpa(q, k, v, enable_gqa=True).value.copy()
    want = _ref(q, np.repeat(k, hq // hk, axis=1), np.repeat(v, hq // hv, axis=1))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    check_grad(lambda q, k, v: sdpa(q, k, v, enable_gqa=True, is_causal=True), q, k, v)


def test_attention_dropout() -> None:
    """Dropout on the weights: same seed same result, exact gradients, p = 1 gives zeros."""
    rng = np.random.default_rng(4)
    q, k, v = (rng.normal(size=(2, 6, 3)) for _ in range(3))
    with lampy.Scope():
        a = sdpa(q, k, v, dropout_p=0.4, rng=np.random.default_rng(7)).value.copy()
        b = sdpa(q, k, v, dropout_p=0.4, rng=np.random.default_rng(7)).value.copy()
        c = sdpa(q, k, v, dropout_p=1.0).value.copy()
    np.testing.assert_array_equal(a, b)
    assert not c.any() and not np.allclose(a, _ref(q, k, v))
    check_grad(lambda q, k, v: sdpa(q, k, v, dropout_p=0.4, rng=np.random.default_rng(7)), q, k, v)


def test_attention_zero_sizes() -> None:
    """Zero-size batch, L = 0 and S = 0 (output zeros) all work, as matmul would give."""
    for shapes in [
        ((0, 2, 3), (0, 4, 3), (0, 4, 2)),
        ((0, 3), (4, 3), (4, 2)),
        ((2, 3), (0, 3), (0, 2)),
    ]:
        with lampy.Scope():
            ps = [lampy.param(np.ones(s)) for s in shapes]
            y = sdpa(ps[0], ps[1], ps[2])
            y.backward(np.ones(y.shape))
            assert y.shape == (*shapes[0][:-1], shapes[2][-1]) and not y.value.any()


@pytest.mark.parametrize(
    ("args", "kw", "error", "match"),
    [
        (((2, 3), (4, 5), (4, 2)), {}, ShapeError, r"\(2, 3\), \(4, 5\).*query's last axis"),
        (((2, 3), (4, 3), (5, 2)), {}, ShapeError, "same sequence length S"),
        (((2, 2, 3), (3, 4, 3), (3, 4, 2)), {}, ShapeError, "enable_gqa=True"),
        (((3,), (4, 3), (4, 2)), {}, ShapeError, "at least 2 dimensions"),
        (((3, 2, 3), (2, 4, 3), (2, 4, 2)), {"enable_gqa": True}, ShapeError, "multiple of"),
        (((2, 3), (4, 3), (4, 2)), {"attn_mask": np.ones((3, 4), bool)}, ShapeError, "attn_mask"),
        (((2, 3), (4, 3), (4, 2)), {"attn_mask": np.ones((2, 4), int)}, DTypeError, "boolean"),
        (
            ((2, 3), (4, 3), (4, 2)),
            {"attn_mask": np.ones((2, 4), bool), "is_causal": True},
            LampyValueError,
            "not both",
        ),
        (((2, 3), (4, 3), (4, 2)), {"dropout_p": 1.5}, LampyValueError, "between 0 and 1"),
        (
            ((2, 3), (4, 3), (4, 2)),
            {"dropout_p": 0.5, "rng": 0},
            LampyTypeError,
            "numpy.random.Generator",
        ),
    ],
)
def test_attention_errors(
    args: tuple[tuple[int, ...], ...], kw: dict[str, Any], error: type, match: str
) -> None:
    """Shape, mask, dropout and gqa mistakes raise clear errors naming the op."""
    q, k, v = (np.ones(s) for s in args)
    with lampy.Scope(), pytest.raises(error, match=f"scaled_dot_product_attention: .*{match}"):
        sdpa(q, k, v, **kw)


def test_backward_keeps_no_reference_to_g(monkeypatch: Any) -> None:
    """A backward pass that stops after the query's closure does not keep ``g`` alive
    (only a weak reference recognises it), and a new ``g`` gets fresh gradients."""
    import gc
    import weakref

    import lampy.nn.functional._attention as att

    captured: list[dict[int, Any]] = []
    real_op = att.op

    def spy(name: str, value: Any, *params: Any) -> Any:
        captured.append({id(p[0]): p[1] for p in params if p is not None})
        return real_op(name, value, *params)

    monkeypatch.setattr(att, "op", spy)
    rng = np.random.default_rng(0)
    with lampy.Scope():
        q, k, v = (lampy.param(rng.normal(size=(2, 3, 4))) for _ in range(3))
        sdpa(q, k, v)
        sdpa(q, k, v)
    first, second = captured
    g = np.ones((2, 3, 4))
    first[id(q.node)](g)  # the pass stops here: the key's closure does not run
    ref = weakref.ref(g)
    del g
    gc.collect()
    assert ref() is None
    g2 = np.full((2, 3, 4), 2.0)
    np.testing.assert_allclose(first[id(k.node)](g2), second[id(k.node)](np.full((2, 3, 4), 2.0)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("n_l", "n_s"), [(5, 5), (3, 6), (6, 3), (1, 4)])
def test_attention_compiled_and_numpy_softmax_agree(
    monkeypatch: Any, dtype: Any, n_l: int, n_s: int
) -> None:
    """The compiled softmax of the scores (lampy[fast]) and the numpy one give the same
    outputs and gradients (to rounding): causal, a boolean mask with fully masked rows,
    a float mask with -inf and nan, in float32 and float64."""
    from lampy.nn.functional import _shared

    pytest.importorskip("numba")
    rng = np.random.default_rng(7)
    q, k = rng.normal(size=(2, 3, n_l, 4)), rng.normal(size=(2, 3, n_s, 4))
    v, g = rng.normal(size=(2, 3, n_s, 2)), rng.normal(size=(2, 3, n_l, 2))
    allowed = rng.random((n_l, n_s)) < 0.6
    allowed[0] = False  # a row with nothing allowed
    bias = np.where(allowed, rng.normal(size=(n_l, n_s)), -np.inf)
    bias[-1, 0] = np.nan
    runs = []
    for kernels in (True, False):
        if not kernels:
            monkeypatch.setattr(_shared, "numba_kernels", lambda: None)
        for kw in ({"is_causal": True}, {"attn_mask": allowed}, {"attn_mask": bias}):
            with lampy.Scope():
                ps = [lampy.param(a.astype(dtype)) for a in (q, k, v)]
                out = sdpa(*ps, **kw)
                out.backward(g.astype(dtype))
                runs.append([out.value, *(p.grad for p in ps)])
    half = len(runs) // 2
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(runs[:half], runs[half:], strict=True):
        for x, y in zip(a, b, strict=True):
            assert x.dtype == dtype
            np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


@pytest.mark.parametrize("kernels", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal", [True, False])
def test_attention_large_scores_keep_their_softmax(
    monkeypatch: Any, kernels: bool, dtype: Any, causal: bool
) -> None:
    """Scores of 1e10 and more (queries and keys of size 1e5, heads of 128: the default
    scale 1/sqrt(128) is not a power of two) give each row's softmax, nearly one-hot,
    as the float64 reference: no inf over inf, no row lost to zeros. The scale goes in
    after the row's max is taken off (``exp((s - max) * scale)``), on the compiled path
    and on numpy's."""
    from lampy.nn.functional import _shared

    if kernels:
        pytest.importorskip("numba")
    else:
        monkeypatch.setattr(_shared, "numba_kernels", lambda: None)
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(scale=1e5, size=(2, 2, 6, 128)) for _ in range(3))
    q, k, v = (a.astype(dtype) for a in (q, k, v))
    with lampy.Scope():
        out = sdpa(q, k, v, is_causal=causal).value.copy()
    want = _ref(*(a.astype(np.float64) for a in (q, k, v)), causal=causal)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.abs(v).max())


@st.composite
def causal_problems(draw: st.DrawFn) -> dict[str, Any]:
    """Causal attention problems with more rows than two blocks of 2 (the block size the
    tests below set), broadcast batch dims, S below, equal to and above L."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    k_batch = tuple(1 if draw(st.booleans()) else d for d in batch)
    n_l, n_s = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    n_e, n_ev = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return {
        "q": rng.normal(size=(*batch, n_l, n_e)),
        "k": rng.normal(size=(*k_batch, n_s, n_e)),
        "v": rng.normal(size=(*k_batch, n_s, n_ev)),
        "scale": draw(st.sampled_from([None, 2.0, -0.7])),
    }


@given(causal_problems())
@settings(max_examples=30)
def test_causal_blocks_forward_and_gradients(pr: dict[str, Any]) -> None:
    """The causal products by blocks of query rows (each block times the keys it sees:
    here blocks of 2 rows) give the row-by-row reference and finite differences'
    gradients, on the compiled path and on numpy's."""
    from lampy.nn.functional import _shared

    q, k, v, scale = pr["q"], pr["k"], pr["v"], pr["scale"]
    want = _ref(q, k, v, causal=True, scale=scale)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_attention, "_CAUSAL_BLOCK", 2)
        for kernels in (True, False):
            if not kernels:
                mp.setattr(_shared, "numba_kernels", lambda: None)
            with lampy.Scope():
                got = sdpa(q, k, v, is_causal=True, scale=scale).value.copy()
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            check_grad(lambda q, k, v: sdpa(q, k, v, is_causal=True, scale=scale), q, k, v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("n_l", "n_s"), [(128, 128), (160, 40), (130, 200)])
def test_causal_blocks_agree_with_one_product(
    monkeypatch: Any, dtype: Any, n_l: int, n_s: int
) -> None:
    """At the default block size (32 rows, from 128), the blocked causal attention gives the
    outputs and gradients of one product over all rows (blocks turned off), to
    rounding, with dropout too (the same mask)."""
    rng = np.random.default_rng(3)
    q = rng.normal(size=(2, 3, n_l, 8)).astype(dtype)
    k, v = (rng.normal(size=(1, 3, n_s, 8)).astype(dtype) for _ in range(2))
    g = rng.normal(size=(2, 3, n_l, 8)).astype(dtype)
    assert _attention._causal_blocks(n_l, n_s) is not None  # blocks at the default size
    runs = []
    for block in (_attention._CAUSAL_BLOCK, 10**9):
        monkeypatch.setattr(_attention, "_CAUSAL_BLOCK", block)
        for p in (0.0, 0.3):
            with lampy.Scope():
                ps = [lampy.param(a) for a in (q, k, v)]
                out = sdpa(*ps, is_causal=True, dropout_p=p, rng=np.random.default_rng(5))
                out.backward(g)
                runs.append([out.value, *(x.grad for x in ps)])
    tol = 3e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(runs[:2], runs[2:], strict=True):
        for x, y in zip(a, b, strict=True):
            assert x.dtype == dtype
            np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    ("q_shape", "v_shape", "inside"),
    [
        ((2, 3, 5, 4), (2, 3, 5, 2), True),  # (B, H, L, E): the heads laid out inside
        ((2, 1, 5, 4), (2, 1, 5, 2), False),  # one head: nothing to merge
        ((3, 5, 4), (3, 5, 2), False),  # (B, L, E)
        # the value's extra batch axis (a 4-d result): the compiled softmax backward read
        # the weights' rows out of bounds (nan or wrong gradients) before the fix
        ((3, 5, 4), (2, 3, 5, 2), False),
        ((1, 2, 128, 2), (1, 2, 128, 1), True),  # causal: in blocks of rows (_causal_blocks)
    ],
)
def test_attention_output_keeps_heads_inside(
    q_shape: tuple[int, ...], v_shape: tuple[int, ...], inside: bool, causal: bool
) -> None:
    """A (B, H, L, Ev) result of several heads is laid out as (B, L, H, Ev), as PyTorch's
    flash attention: merging the heads (``swapaxes(1, 2).reshape(B, L, H * Ev)``) is a
    view, not a copy. Values and gradients are the same as for any other layout."""
    rng = np.random.default_rng(3)
    k_shape = (*q_shape[:-2], v_shape[-2], q_shape[-1])
    q, k, v = (rng.normal(size=s) for s in (q_shape, k_shape, v_shape))
    with lampy.Scope():
        y = sdpa(lampy.param(q), lampy.param(k), lampy.param(v), is_causal=causal)
        np.testing.assert_allclose(y.value, _ref(q, k, v, causal=causal), rtol=1e-12, atol=1e-14)
        assert not y.value.flags.writeable
        if inside:
            b, h, n_l, n_v = y.shape
            merged = y.swapaxes(1, 2).reshape(b, n_l, h * n_v)
            assert np.shares_memory(merged.value, y.value)
            assert merged.value.flags.c_contiguous
        else:
            assert y.value.flags.c_contiguous
    check_grad(lambda a, b, c: sdpa(a, b, c, is_causal=causal), q, k, v)
