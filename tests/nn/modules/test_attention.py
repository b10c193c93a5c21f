"""MultiheadAttention: forward against a plain-numpy multi-head attention (loops over
batch entries and heads), masks, weights, gradients, PyTorch's keys and
initialisation, dropout in train/eval, errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn._attention import MultiheadAttention
from lampy.nn._linear import Linear
from lampy.testing import check_grad


# --- reference ----------------------------------------------------------------------
def mha_ref(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    sd: dict[str, np.ndarray],
    heads: int,
    batch_first: bool,
    key_padding_mask: np.ndarray | None = None,
    attn_mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(output, per-head weights (N, H, L, S)) of PyTorch's multi-head attention, with
    explicit loops; unbatched inputs return (L, E) and (H, L, S)."""
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query[None], key[None], value[None]
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask[None]
        if attn_mask is not None and attn_mask.ndim == 3:
            attn_mask = attn_mask[None]
    elif not batch_first:
        query, key, value = (x.transpose(1, 0, 2) for x in (query, key, value))
    n, n_l, e = query.shape
    n_s = key.shape[1]
    hd = e // heads
    if "in_proj_weight" in sd:
        wq, wk, wv = np.split(sd["in_proj_weight"], 3)
    else:
        wq, wk, wv = sd["q_proj_weight"], sd["k_proj_weight"], sd["v_proj_weight"]
    bq, bk, bv = np.split(sd.get("in_proj_bias", np.zeros(3 * e)), 3)
    out = np.zeros((n, n_l, e))
    weights = np.zeros((n, heads, n_l, n_s))
    for b in range(n):
        q = query[b] @ wq.T + bq
        k = key[b] @ wk.T + bk
        v = value[b] @ wv.T + bv
        concat = np.zeros((n_l, e))
        for h in range(heads):
            cols = slice(h * hd, (h + 1) * hd)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(hd)
            if attn_mask is not None:
                m = (
                    attn_mask
                    if attn_mask.ndim == 2
                    else attn_mask.reshape(n, heads, n_l, n_s)[b, h]
                )
                scores = scores + (np.where(m, -np.inf, 0.0) if m.dtype == bool else m)
            if key_padding_mask is not None:
                kp = key_padding_mask[b]
                scores = scores + (np.where(kp, -np.inf, 0.0) if kp.dtype == bool else kp)
            w = np.exp(scores - scores.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            weights[b, h] = w
            concat[:, cols] = w @ v[:, cols]
        out[b] = concat @ sd["out_proj.weight"].T + sd.get("out_proj.bias", 0.0)
    if unbatched:
        return out[0], weights[0]
    if not batch_first:
        out = out.transpose(1, 0, 2)
    return out, weights


def _state(m: MultiheadAttention) -> dict[str, np.ndarray]:
    return {k: v.astype(np.float64) for k, v in m.state_dict().items()}


def _randomize(m: MultiheadAttention, rng: np.random.Generator) -> None:
    """Non-zero biases, so the reference checks them too."""
    m.load_state_dict({k: rng.normal(size=v.shape) for k, v in m.state_dict().items()})


# --- forward against the reference ---------------------------------------------------
@given(
    n=st.integers(1, 3),
    n_l=st.integers(1, 4),
    n_s=st.integers(1, 4),
    heads=st.sampled_from([1, 2, 3]),
    hd=st.integers(1, 3),
    batch_first=st.booleans(),
    bias=st.booleans(),
    mode=st.sampled_from(["self", "kv", "cross", "kdim"]),
    kpm=st.sampled_from([None, "bool", "float"]),
    am=st.sampled_from([None, "bool2", "float2", "bool3", "float3"]),
    need_weights=st.booleans(),
    average=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_forward_matches_reference(
    n: int,
    n_l: int,
    n_s: int,
    heads: int,
    hd: int,
    batch_first: bool,
    bias: bool,
    mode: str,
    kpm: str | None,
    am: str | None,
    need_weights: bool,
    average: bool,
    seed: int,
) -> None:
    """Outputs and weights equal the looped reference for every layout, projection
    kind, mask kind and weights option (float64)."""
    rng = np.random.default_rng(seed)
    e = heads * hd
    if mode == "self":
        n_s = n_l
    kd, vd = (e + 1, e + 2) if mode == "kdim" else (None, None)
    with lampy.Scope():
        m = MultiheadAttention.init(
            e,
            heads,
            bias=bias,
            kdim=kd,
            vdim=vd,
            batch_first=batch_first,
            dtype=np.float64,
            rng=rng,
        )
        _randomize(m, rng)
        lead_q = (n, n_l) if batch_first else (n_l, n)
        lead_k = (n, n_s) if batch_first else (n_s, n)
        q = rng.normal(size=(*lead_q, e))
        k = rng.normal(size=(*lead_k, kd or e))
        v = rng.normal(size=(*lead_k, vd or e))
        if mode == "self":
            k = v = q
        elif mode == "kv":
            v = k
        key_padding = None
        if kpm is not None:
            key_padding = rng.random((n, n_s)) < 0.4
            key_padding[:, 0] = False  # never mask a whole row
            if kpm == "float":
                key_padding = np.where(key_padding, -np.inf, rng.normal(size=(n, n_s)))
        mask = None
        if am is not None:
            shape = (n_l, n_s) if am.endswith("2") else (n * heads, n_l, n_s)
            mask = rng.random(shape) < 0.4
            mask[..., 0] = False
            if am.startswith("float"):
                mask = np.where(mask, -np.inf, rng.normal(size=shape))
        out, w = m(
            q,
            k,
            v,
            key_padding_mask=key_padding,
            need_weights=need_weights,
            attn_mask=mask,
            average_attn_weights=average,
        )
        ref, ref_w = mha_ref(q, k, v, _state(m), heads, batch_first, key_padding, mask)
        np.testing.assert_allclose(out.value, ref, rtol=1e-10, atol=1e-12)
        if not need_weights:
            assert w is None
        else:
            assert w is not None
            want = ref_w.mean(axis=1) if average else ref_w
            np.testing.assert_allclose(w.value, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("need_weights", [False, True])
def test_unbatched_matches_reference(need_weights: bool) -> None:
    """Unbatched (L, E) inputs give (L, E) outputs and (L, S) or (H, L, S) weights, with
    a 1-d key padding mask and a 3-d (H, L, S) attention mask."""
    rng = np.random.default_rng(1)
    with lampy.Scope():
        m = MultiheadAttention.init(6, 2, batch_first=True, dtype=np.float64, rng=rng)
        _randomize(m, rng)
        q, k = rng.normal(size=(3, 6)), rng.normal(size=(4, 6))
        kpm = np.array([False, True, False, False])
        am = rng.normal(size=(2, 3, 4))
        out, w = m(q, k, k, key_padding_mask=kpm, attn_mask=am, need_weights=need_weights)
        ref, ref_w = mha_ref(q, k, k, _state(m), 2, True, kpm, am)
        assert out.shape == (3, 6)
        np.testing.assert_allclose(out.value, ref, rtol=1e-10, atol=1e-12)
        if need_weights:
            assert w is not None and w.shape == (3, 4)
            np.testing.assert_allclose(w.value, ref_w.mean(axis=0), rtol=1e-10)
            _, w_heads = m(q, k, k, key_padding_mask=kpm, attn_mask=am, average_attn_weights=False)
            assert w_heads is not None and w_heads.shape == (2, 3, 4)


@pytest.mark.parametrize("batch_first", [False, True])
def test_shapes(batch_first: bool) -> None:
    """Output shapes follow query (L, N, E) or (N, L, E); weights are (N, L, S) or
    (N, H, L, S)."""
    rng = np.random.default_rng(2)
    with lampy.Scope():
        m = MultiheadAttention.init(8, 4, kdim=3, vdim=5, batch_first=batch_first, rng=rng)
        q = np.zeros((2, 7, 8) if batch_first else (7, 2, 8), np.float32)
        k = np.zeros((2, 5, 3) if batch_first else (5, 2, 3), np.float32)
        v = np.zeros((2, 5, 5) if batch_first else (5, 2, 5), np.float32)
        out, w = m(q, k, v)
        assert out.shape == q.shape and out.dtype == np.float32
        assert w is not None and w.shape == (2, 7, 5)
        _, w = m(q, k, v, average_attn_weights=False)
        assert w is not None and w.shape == (2, 4, 7, 5)


def test_float32_matches_reference() -> None:
    """float32 stays float32 and agrees with the float64 reference."""
    rng = np.random.default_rng(3)
    with lampy.Scope():
        m = MultiheadAttention.init(12, 3, batch_first=True, rng=rng)
        q = rng.normal(size=(2, 5, 12)).astype(np.float32)
        mask = np.triu(np.ones((5, 5), bool), 1)
        for nw in (False, True):
            out, _ = m(q, q, q, attn_mask=mask, need_weights=nw)
            assert out.dtype == np.float32
            ref, _ = mha_ref(q.astype(np.float64), q, q, _state(m), 3, True, None, mask)
            np.testing.assert_allclose(out.value, ref, rtol=1e-4, atol=1e-5)


def test_is_causal_hint_equals_the_mask() -> None:
    """is_causal=True with the causal attn_mask gives the same output as the mask alone."""
    rng = np.random.default_rng(4)
    with lampy.Scope():
        m = MultiheadAttention.init(8, 2, batch_first=True, dtype=np.float64, rng=rng)
        x = rng.normal(size=(2, 5, 8))
        mask = np.triu(np.ones((5, 5), bool), 1)
        a, _ = m(x, x, x, attn_mask=mask, need_weights=False)
        b, _ = m(x, x, x, attn_mask=mask, need_weights=False, is_causal=True)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-12, atol=1e-14)


# --- gradients -----------------------------------------------------------------------
@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_grad_query_key_value(need_weights: bool, batch_first: bool) -> None:
    """Gradients w.r.t. query, key and value match finite differences, with masks."""
    rng = np.random.default_rng(5)
    with lampy.Scope():
        m = MultiheadAttention.init(
            4, 2, kdim=3, vdim=2, batch_first=batch_first, dtype=np.float64, rng=rng
        )
        _randomize(m, rng)
        lq, lk = ((2, 3), (2, 4)) if batch_first else ((3, 2), (4, 2))
        q, k, v = rng.normal(size=(*lq, 4)), rng.normal(size=(*lk, 3)), rng.normal(size=(*lk, 2))
        kpm = np.array([[False, False, True, False], [False, False, False, False]])
        am = rng.normal(size=(3, 4))

        def f(q: Any, k: Any, v: Any) -> Any:
            out, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=need_weights)
            return out if w is None else out.sum() + (w * w).sum()

        check_grad(f, q, k, v)


def test_grad_self_attention_and_params() -> None:
    """Self-attention (one packed projection) backpropagates into the input and every
    parameter as finite differences say."""
    rng = np.random.default_rng(6)
    with lampy.Scope():
        m = MultiheadAttention.init(4, 2, dtype=np.float64, rng=rng)
        _randomize(m, rng)
        sd = {k: v.copy() for k, v in m.state_dict().items()}
        x = rng.normal(size=(3, 2, 4))

        def f(x: Any, w: Any, b: Any, wo: Any) -> Any:
            mm = MultiheadAttention(w, None, None, None, b, Linear(wo, None), 4, 2)
            return mm(x, x, x, need_weights=False)[0]

        check_grad(f, x, sd["in_proj_weight"], sd["in_proj_bias"], sd["out_proj.weight"])


# --- PyTorch's keys, counts and initialisation ---------------------------------------
def test_state_dict_keys_and_counts() -> None:
    """Keys, shapes and parameter counts equal torch 2.13's (literals from torch)."""
    rng = np.random.default_rng(7)
    with lampy.Scope():
        m = MultiheadAttention.init(8, 2, rng=rng)
        assert [(k, v.shape) for k, v in m.state_dict().items()] == [
            ("in_proj_weight", (24, 8)),
            ("in_proj_bias", (24,)),
            ("out_proj.weight", (8, 8)),
            ("out_proj.bias", (8,)),
        ]
        assert m.num_parameters() == 288 == 3 * 8 * 8 + 3 * 8 + 8 * 8 + 8
        m = MultiheadAttention.init(8, 2, bias=False, rng=rng)
        assert list(m.state_dict()) == ["in_proj_weight", "out_proj.weight"]
        assert m.num_parameters() == 256
        m = MultiheadAttention.init(8, 2, kdim=3, vdim=5, rng=rng)
        assert [(k, v.shape) for k, v in m.state_dict().items()] == [
            ("q_proj_weight", (8, 8)),
            ("k_proj_weight", (8, 3)),
            ("v_proj_weight", (8, 5)),
            ("in_proj_bias", (24,)),
            ("out_proj.weight", (8, 8)),
            ("out_proj.bias", (8,)),
        ]
        assert m.num_parameters() == 224 == 8 * (8 + 3 + 5) + 24 + 64 + 8


def test_initialisation() -> None:
    """in_proj_weight is Glorot-uniform, out_proj.weight U(±1/sqrt(E)), biases zero."""
    rng = np.random.default_rng(8)
    e = 64
    with lampy.Scope():
        m = MultiheadAttention.init(e, 4, rng=rng)
        w = m.state_dict()["in_proj_weight"]
        bound = math.sqrt(6 / (e + 3 * e))
        assert w.dtype == np.float32
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
        np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.05)
        wo = m.state_dict()["out_proj.weight"]
        assert np.abs(wo).max() <= 1 / math.sqrt(e) and np.abs(wo).max() > 0.95 / math.sqrt(e)
        assert not m.state_dict()["in_proj_bias"].any()
        assert not m.state_dict()["out_proj.bias"].any()


def test_state_dict_round_trip() -> None:
    """Saving, loading into a module drawn from another rng, gives the same outputs."""
    with lampy.Scope():
        a = MultiheadAttention.init(6, 3, rng=np.random.default_rng(9))
        b = MultiheadAttention.init(6, 3, rng=np.random.default_rng(10))
        x = np.random.default_rng(11).normal(size=(4, 2, 6)).astype(np.float32)
        assert not np.allclose(a(x, x, x)[0].value, b(x, x, x)[0].value)
        b.load_state_dict({k: v.copy() for k, v in a.state_dict().items()})
        np.testing.assert_array_equal(a(x, x, x)[0].value, b(x, x, x)[0].value)
        with pytest.raises(ShapeError, match="in_proj_weight"):
            b.load_state_dict({**a.state_dict(), "in_proj_weight": np.zeros((6, 6))})


# --- dropout ----------------------------------------------------------------------
def test_dropout_train_and_eval() -> None:
    """In training the weights are dropped (returned after dropout, as PyTorch); eval
    mode is deterministic and equals the dropout-free computation."""
    rng = np.random.default_rng(12)
    with lampy.Scope():
        m = MultiheadAttention.init(8, 2, dropout=0.5, batch_first=True, rng=rng)
        x = rng.normal(size=(2, 6, 8)).astype(np.float32)
        _, w = m(x, x, x, average_attn_weights=False)
        _, w_eval = m.with_training(False)(x, x, x, average_attn_weights=False)
        assert w is not None and w_eval is not None
        kept = w.value != 0
        assert 0.3 < kept.mean() < 0.7
        np.testing.assert_allclose(w.value[kept], 2 * w_eval.value[kept], rtol=1e-5)
        o1, _ = m(x, x, x, need_weights=False)
        o2, _ = m(x, x, x, need_weights=False)
        assert not np.allclose(o1.value, o2.value)
        ev = m.with_training(False)
        assert not ev.training and m.training
        e1, ew = ev(x, x, x)
        e2, _ = ev(x, x, x, need_weights=False)
        np.testing.assert_allclose(e1.value, e2.value, rtol=1e-5, atol=1e-6)
        assert ew is not None
        np.testing.assert_allclose(ew.value.sum(axis=-1), 1.0, rtol=1e-5)


# --- errors -------------------------------------------------------------------------
def test_init_errors() -> None:
    """Bad constructor arguments raise clear errors naming MultiheadAttention."""
    rng = np.random.default_rng(13)
    with lampy.Scope():
        with pytest.raises(LampyValueError, match="divisible by num_heads"):
            MultiheadAttention.init(10, 3, rng=rng)
        with pytest.raises(LampyValueError, match="add_bias_kv"):
            MultiheadAttention.init(8, 2, add_bias_kv=True, rng=rng)
        with pytest.raises(LampyValueError, match="add_zero_attn"):
            MultiheadAttention.init(8, 2, add_zero_attn=True, rng=rng)
        with pytest.raises(LampyValueError, match="dropout"):
            MultiheadAttention.init(8, 2, dropout=1.5, rng=rng)
        with pytest.raises(LampyValueError, match="num_heads"):
            MultiheadAttention.init(8, 0, rng=rng)


def test_forward_errors() -> None:
    """Wrong shapes and masks name the module, the expected and the actual shape; a
    failing call records nothing."""
    rng = np.random.default_rng(14)
    with lampy.Scope() as scope:
        m = MultiheadAttention.init(8, 2, batch_first=True, rng=rng)
        x = np.zeros((2, 5, 8), np.float32)
        before = len(scope)
        with pytest.raises(ShapeError, match=r"MultiheadAttention\(embed_dim=8.*embed_dim"):
            m(np.zeros((2, 5, 6)), x, x)
        with pytest.raises(ShapeError, match=r"3-d\).*2-d"):
            m(x, np.zeros((5, 8)), np.zeros((5, 8)))
        with pytest.raises(ShapeError, match=r"\(N, L, E\)"):
            m(np.zeros(8), x, x)
        with pytest.raises(ShapeError, match=r"batch sizes"):
            m(x, np.zeros((3, 5, 8)), np.zeros((3, 5, 8)))
        with pytest.raises(
            ShapeError, match=r"attn_mask must be \(L, S\) = \(5, 5\), got shape \(5, 4\)"
        ):
            m(x, x, x, attn_mask=np.zeros((5, 4), bool))
        with pytest.raises(ShapeError, match=r"\(N \* num_heads, L, S\) = \(4, 5, 5\)"):
            m(x, x, x, attn_mask=np.zeros((2, 5, 5), bool))
        with pytest.raises(ShapeError, match=r"key_padding_mask must be \(N, S\) = \(2, 5\)"):
            m(x, x, x, key_padding_mask=np.zeros((5,), bool))
        with pytest.raises(LampyTypeError, match="boolean or floating"):
            m(x, x, x, key_padding_mask=np.zeros((2, 5), int))
        with pytest.raises(LampyValueError, match="is_causal"):
            m(x, x, x, is_causal=True)
        with pytest.raises(ShapeError, match="same sequence and batch"):
            m(x, x, np.zeros((2, 4, 8)))
        assert len(scope) == before


def test_merge_heads_takes_its_result_without_a_copy(monkeypatch: Any) -> None:
    """The merged heads (a fresh array, reshaped) are handed to the op read-only, so the
    op keeps them without a copy."""
    import lampy.autograd._variable as variable
    from lampy.nn._attention import _merge_heads

    copied: list[bool] = []
    real_own = variable._own

    def spy(value: Any, shared: bool = False) -> Any:
        out = real_own(value, shared)
        copied.append(not np.shares_memory(out, value))
        return out

    monkeypatch.setattr(variable, "_own", spy)
    a = np.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)  # (B, H, T, hd)
    with lampy.Scope():
        for batch_first in (True, False):
            y = _merge_heads(lampy.param(a), batch_first)
            assert copied[-1] is False
            want = a.transpose(0, 2, 1, 3) if batch_first else a.transpose(2, 0, 1, 3)
            np.testing.assert_array_equal(y.value, want.reshape(*want.shape[:2], 15))
