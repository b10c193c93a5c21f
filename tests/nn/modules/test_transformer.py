"""Transformer layers and stacks: forward against plain-numpy references built on the
looped multi-head attention of test_attention, post-norm and pre-norm, masks, gradients,
PyTorch's keys and counts, identical copies in the stacks, dropout in train/eval, errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn._normalization import LayerNorm
from lampy.nn._transformer import (
    TransformerDecoderLayer,
    TransformerEncoderLayer,
    generate_square_subsequent_mask,
)
from lampy.nn._transformer_stacks import TransformerDecoder, TransformerEncoder
from lampy.testing import check_grad
from tests.nn.modules.test_attention import mha_ref


# --- references ---------------------------------------------------------------------
def _sub(sd: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix) :]: v for k, v in sd.items() if k.startswith(prefix)}


def _ln(x: np.ndarray, sd: dict[str, np.ndarray], eps: float = 1e-5) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * sd["weight"] + sd.get("bias", 0.0)


def _act(x: np.ndarray, name: str) -> np.ndarray:
    if name == "relu":
        return np.maximum(x, 0)
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def _ff(x: np.ndarray, sd: dict[str, np.ndarray], act: str) -> np.ndarray:
    h = _act(x @ sd["linear1.weight"].T + sd.get("linear1.bias", 0.0), act)
    return h @ sd["linear2.weight"].T + sd.get("linear2.bias", 0.0)


def encoder_layer_ref(
    x: np.ndarray, sd: dict[str, np.ndarray], heads: int, bf: bool, nf: bool, act: str, **masks: Any
) -> np.ndarray:
    """PyTorch's encoder layer, written out."""
    attn = _sub(sd, "self_attn.")

    def sa(y: np.ndarray) -> np.ndarray:
        return mha_ref(y, y, y, attn, heads, bf, masks.get("kpm"), masks.get("mask"))[0]

    n1, n2 = _sub(sd, "norm1."), _sub(sd, "norm2.")
    if nf:
        x = x + sa(_ln(x, n1))
        return x + _ff(_ln(x, n2), sd, act)
    x = _ln(x + sa(x), n1)
    return _ln(x + _ff(x, sd, act), n2)


def decoder_layer_ref(
    x: np.ndarray, mem: np.ndarray, sd: dict[str, np.ndarray], heads: int, bf: bool, nf: bool
) -> np.ndarray:
    """PyTorch's decoder layer (relu, no masks), written out."""
    sa_sd, ca_sd = _sub(sd, "self_attn."), _sub(sd, "multihead_attn.")
    n1, n2, n3 = _sub(sd, "norm1."), _sub(sd, "norm2."), _sub(sd, "norm3.")

    def sa(y: np.ndarray) -> np.ndarray:
        return mha_ref(y, y, y, sa_sd, heads, bf)[0]

    def ca(y: np.ndarray) -> np.ndarray:
        return mha_ref(y, mem, mem, ca_sd, heads, bf)[0]

    if nf:
        x = x + sa(_ln(x, n1))
        x = x + ca(_ln(x, n2))
        return x + _ff(_ln(x, n3), sd, "relu")
    x = _ln(x + sa(x), n1)
    x = _ln(x + ca(x), n2)
    return _ln(x + _ff(x, sd, "relu"), n3)


def _randomize(m: Any, rng: np.random.Generator) -> dict[str, np.ndarray]:
    sd = {k: rng.normal(size=v.shape) * 0.5 for k, v in m.state_dict().items()}
    m.load_state_dict(sd)
    return sd


# --- forward ------------------------------------------------------------------------
@given(
    n=st.integers(1, 3),
    s=st.integers(1, 4),
    heads=st.sampled_from([1, 2]),
    hd=st.integers(1, 3),
    ff=st.integers(1, 5),
    bf=st.booleans(),
    nf=st.booleans(),
    act=st.sampled_from(["relu", "gelu"]),
    bias=st.booleans(),
    masked=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_encoder_layer_matches_reference(
    n: int,
    s: int,
    heads: int,
    hd: int,
    ff: int,
    bf: bool,
    nf: bool,
    act: str,
    bias: bool,
    masked: bool,
    seed: int,
) -> None:
    """The encoder layer equals the written-out reference (post- and pre-norm, relu and
    gelu, with and without biases and masks), float64."""
    rng = np.random.default_rng(seed)
    e = heads * hd
    with lampy.Scope():
        layer = TransformerEncoderLayer.init(
            e,
            heads,
            ff,
            0.0,
            act,
            batch_first=bf,
            norm_first=nf,
            bias=bias,
            dtype=np.float64,
            rng=rng,
        )
        sd = _randomize(layer, rng)
        x = rng.normal(size=(n, s, e) if bf else (s, n, e))
        masks: dict[str, Any] = {}
        if masked:
            masks["mask"] = generate_square_subsequent_mask(s, np.float64)
            kpm = rng.random((n, s)) < 0.3
            kpm[:, 0] = False
            masks["kpm"] = kpm
        y = layer(x, masks.get("mask"), masks.get("kpm"))
        ref = encoder_layer_ref(x, sd, heads, bf, nf, act, **masks)
        np.testing.assert_allclose(y.value, ref, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("nf", [False, True])
@pytest.mark.parametrize("bf", [False, True])
def test_decoder_layer_matches_reference(nf: bool, bf: bool) -> None:
    """The decoder layer equals the written-out reference, post- and pre-norm."""
    rng = np.random.default_rng(20)
    with lampy.Scope():
        layer = TransformerDecoderLayer.init(
            6, 2, 5, 0.0, batch_first=bf, norm_first=nf, dtype=np.float64, rng=rng
        )
        sd = _randomize(layer, rng)
        x = rng.normal(size=(2, 3, 6) if bf else (3, 2, 6))
        mem = rng.normal(size=(2, 4, 6) if bf else (4, 2, 6))
        y = layer(x, mem)
        np.testing.assert_allclose(
            y.value, decoder_layer_ref(x, mem, sd, 2, bf, nf), rtol=1e-9, atol=1e-10
        )


def test_unbatched_and_float32() -> None:
    """Unbatched (S, E) input gives (S, E); float32 stays float32 and agrees with the
    reference."""
    rng = np.random.default_rng(21)
    with lampy.Scope():
        layer = TransformerEncoderLayer.init(8, 2, 16, 0.0, batch_first=True, rng=rng)
        sd = {k: v.astype(np.float64) for k, v in layer.state_dict().items()}
        x = rng.normal(size=(5, 8)).astype(np.float32)
        y = layer(x)
        assert y.shape == (5, 8) and y.dtype == np.float32
        ref = encoder_layer_ref(x.astype(np.float64), sd, 2, True, False, "relu")
        np.testing.assert_allclose(y.value, ref, rtol=1e-4, atol=1e-4)


def test_pre_and_post_norm_differ() -> None:
    """With the same weights, norm_first changes the output."""
    rng = np.random.default_rng(22)
    with lampy.Scope():
        post = TransformerEncoderLayer.init(8, 2, 16, 0.0, rng=rng)
        pre = TransformerEncoderLayer.init(8, 2, 16, 0.0, norm_first=True, rng=rng)
        pre.load_state_dict(post.state_dict())
        x = rng.normal(size=(4, 2, 8)).astype(np.float32)
        assert not np.allclose(post(x).value, pre(x).value)


def test_stack_matches_layers_and_causal_detection() -> None:
    """The encoder stack applies its layers then the norm; a causal mask is detected
    and gives the same output as the explicit hint."""
    rng = np.random.default_rng(23)
    with lampy.Scope():
        layer = TransformerEncoderLayer.init(8, 2, 16, 0.0, batch_first=True, rng=rng)
        enc = TransformerEncoder.init(layer, 2, norm=LayerNorm.init(8))
        _randomize(enc, rng)
        x = rng.normal(size=(2, 5, 8)).astype(np.float32)
        mask = generate_square_subsequent_mask(5)
        y = x
        for lay in enc.layers:
            y = lay(y, mask)
        assert enc.norm is not None
        expected = enc.norm(y).value
        np.testing.assert_allclose(enc(x, mask).value, expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(
            enc(x, mask, is_causal=True).value, expected, rtol=1e-5, atol=1e-6
        )
        bool_mask = np.triu(np.ones((5, 5), bool), 1)
        np.testing.assert_allclose(enc(x, bool_mask).value, expected, rtol=1e-5, atol=1e-6)


def test_decoder_stack_shapes() -> None:
    """The decoder stack maps (N, T, E) with memory (N, S, E) to (N, T, E)."""
    rng = np.random.default_rng(24)
    with lampy.Scope():
        dec = TransformerDecoder.init(
            TransformerDecoderLayer.init(8, 2, 16, batch_first=True, rng=rng), 3
        )
        tgt = np.zeros((2, 4, 8), np.float32)
        mem = np.ones((2, 6, 8), np.float32)
        out = dec.with_training(False)(tgt, mem, generate_square_subsequent_mask(4))
        assert out.shape == (2, 4, 8)


# --- gradients ----------------------------------------------------------------------
@pytest.mark.parametrize("nf", [False, True])
def test_grad_encoder_layer(nf: bool) -> None:
    """The encoder layer's gradient w.r.t. its input matches finite differences."""
    rng = np.random.default_rng(25)
    with lampy.Scope():
        layer = TransformerEncoderLayer.init(
            4, 2, 3, 0.0, "gelu", norm_first=nf, dtype=np.float64, rng=rng
        )
        _randomize(layer, rng)
        kpm = np.array([[False, True, False], [False, False, False]])
        check_grad(lambda x: layer(x, None, kpm), rng.normal(size=(3, 2, 4)))


def test_grad_decoder_layer() -> None:
    """The decoder layer's gradients w.r.t. target and memory match finite differences."""
    rng = np.random.default_rng(26)
    with lampy.Scope():
        layer = TransformerDecoderLayer.init(
            4, 2, 3, 0.0, batch_first=True, dtype=np.float64, rng=rng
        )
        _randomize(layer, rng)
        mask = generate_square_subsequent_mask(3, np.float64)
        check_grad(
            lambda t, m: layer(t, m, tgt_mask=mask),
            rng.normal(size=(2, 3, 4)),
            rng.normal(size=(2, 2, 4)),
        )


# --- keys, counts, copies -----------------------------------------------------------
ENCODER_LAYER_KEYS = [
    ("self_attn.in_proj_weight", (24, 8)),
    ("self_attn.in_proj_bias", (24,)),
    ("self_attn.out_proj.weight", (8, 8)),
    ("self_attn.out_proj.bias", (8,)),
    ("linear1.weight", (16, 8)),
    ("linear1.bias", (16,)),
    ("linear2.weight", (8, 16)),
    ("linear2.bias", (8,)),
    ("norm1.weight", (8,)),
    ("norm1.bias", (8,)),
    ("norm2.weight", (8,)),
    ("norm2.bias", (8,)),
]
DECODER_LAYER_KEYS = [
    ("self_attn.in_proj_weight", (24, 8)),
    ("self_attn.in_proj_bias", (24,)),
    ("self_attn.out_proj.weight", (8, 8)),
    ("self_attn.out_proj.bias", (8,)),
    ("multihead_attn.in_proj_weight", (24, 8)),
    ("multihead_attn.in_proj_bias", (24,)),
    ("multihead_attn.out_proj.weight", (8, 8)),
    ("multihead_attn.out_proj.bias", (8,)),
    ("linear1.weight", (16, 8)),
    ("linear1.bias", (16,)),
    ("linear2.weight", (8, 16)),
    ("linear2.bias", (8,)),
    ("norm1.weight", (8,)),
    ("norm1.bias", (8,)),
    ("norm2.weight", (8,)),
    ("norm2.bias", (8,)),
    ("norm3.weight", (8,)),
    ("norm3.bias", (8,)),
]


def _keys(m: Any) -> list[tuple[str, tuple[int, ...]]]:
    return [(k, v.shape) for k, v in m.state_dict().items()]


def test_state_dict_keys_and_counts() -> None:
    """Keys, shapes and parameter counts equal torch 2.13's (literals from torch)."""
    rng = np.random.default_rng(27)
    with lampy.Scope():
        enc_layer = TransformerEncoderLayer.init(8, 2, 16, rng=rng)
        assert _keys(enc_layer) == ENCODER_LAYER_KEYS
        # MHA 288 + linear1 (16*8+16) + linear2 (8*16+8) + 2 norms (2*16)
        assert enc_layer.num_parameters() == 600 == 288 + 144 + 136 + 32
        no_bias = TransformerEncoderLayer.init(8, 2, 16, bias=False, rng=rng)
        assert list(no_bias.state_dict()) == [
            "self_attn.in_proj_weight",
            "self_attn.out_proj.weight",
            "linear1.weight",
            "linear2.weight",
            "norm1.weight",
            "norm2.weight",
        ]
        assert no_bias.num_parameters() == 528
        dec_layer = TransformerDecoderLayer.init(8, 2, 16, rng=rng)
        assert _keys(dec_layer) == DECODER_LAYER_KEYS
        assert dec_layer.num_parameters() == 904 == 2 * 288 + 144 + 136 + 48
        enc = TransformerEncoder.init(enc_layer, 2, norm=LayerNorm.init(8))
        assert _keys(enc) == [
            *[(f"layers.0.{k}", s) for k, s in ENCODER_LAYER_KEYS],
            *[(f"layers.1.{k}", s) for k, s in ENCODER_LAYER_KEYS],
            ("norm.weight", (8,)),
            ("norm.bias", (8,)),
        ]
        assert enc.num_parameters() == 1216 == 2 * 600 + 16
        dec = TransformerDecoder.init(dec_layer, 2)
        assert [k for k, _ in _keys(dec)][:2] == [
            "layers.0.self_attn.in_proj_weight",
            "layers.0.self_attn.in_proj_bias",
        ]
        assert dec.num_parameters() == 1808 == 2 * 904
        big = TransformerEncoder.init(
            TransformerEncoderLayer.init(128, 4, batch_first=True, rng=rng), 2
        )
        assert big.num_parameters() == 1186048


def test_stack_layers_are_identical_copies() -> None:
    """As PyTorch's deep copies: every layer starts with the given layer's values, in
    parameters of its own (loading one layer leaves the others)."""
    rng = np.random.default_rng(28)
    with lampy.Scope():
        layer = TransformerEncoderLayer.init(8, 2, 16, rng=rng)
        enc = TransformerEncoder.init(layer, 3)
        w = [lay.linear1.weight for lay in enc.layers]
        assert len({id(v) for v in [*w, layer.linear1.weight]}) == 4
        for v in w:
            np.testing.assert_array_equal(v.value, layer.linear1.weight.value)
        assert len(enc.parameters()) == 3 * len(layer.parameters())
        sd = enc.state_dict()
        enc.load_state_dict({**sd, "layers.1.linear1.weight": np.zeros((16, 8))})
        assert not enc.layers[1].linear1.weight.value.any()
        assert enc.layers[0].linear1.weight.value.any()


def test_state_dict_round_trip() -> None:
    """Save, load into a stack built from another rng: the same outputs."""
    with lampy.Scope():
        a = TransformerEncoder.init(
            TransformerEncoderLayer.init(8, 2, 16, rng=np.random.default_rng(29)), 2
        ).with_training(False)
        b = TransformerEncoder.init(
            TransformerEncoderLayer.init(8, 2, 16, rng=np.random.default_rng(30)), 2
        ).with_training(False)
        x = np.random.default_rng(31).normal(size=(5, 2, 8)).astype(np.float32)
        assert not np.allclose(a(x).value, b(x).value)
        b.load_state_dict({k: v.copy() for k, v in a.state_dict().items()})
        np.testing.assert_array_equal(a(x).value, b(x).value)
        with pytest.raises(LampyValueError, match=r"layers\.1\.norm2\.bias"):
            b.load_state_dict(
                {k: v for k, v in a.state_dict().items() if "layers.1.norm2" not in k}
            )


# --- dropout ------------------------------------------------------------------------
def test_eval_disables_dropout() -> None:
    """Training mode draws dropout masks (two calls differ); eval mode is deterministic
    and equals a dropout-free layer with the same weights."""
    rng = np.random.default_rng(32)
    with lampy.Scope():
        layer = TransformerEncoderLayer.init(8, 2, 16, dropout=0.3, rng=rng)
        plain = TransformerEncoderLayer.init(8, 2, 16, dropout=0.0, rng=rng)
        plain.load_state_dict(layer.state_dict())
        x = rng.normal(size=(4, 2, 8)).astype(np.float32)
        assert not np.allclose(layer(x).value, layer(x).value)
        ev = layer.with_training(False)
        assert not ev.self_attn.training and not ev.dropout1.training
        np.testing.assert_array_equal(ev(x).value, ev(x).value)
        np.testing.assert_allclose(ev(x).value, plain(x).value, rtol=1e-6, atol=1e-6)


# --- errors -------------------------------------------------------------------------
def test_errors() -> None:
    """Bad arguments and inputs raise clear errors naming the module."""
    rng = np.random.default_rng(33)
    with lampy.Scope():
        with pytest.raises(LampyValueError, match="activation should be"):
            TransformerEncoderLayer.init(8, 2, activation="tanh", rng=rng)
        with pytest.raises(LampyTypeError, match="activation must be"):
            TransformerDecoderLayer.init(8, 2, activation=3, rng=rng)  # type: ignore[arg-type]
        with pytest.raises(LampyValueError, match="divisible by num_heads"):
            TransformerEncoderLayer.init(8, 3, rng=rng)
        layer = TransformerEncoderLayer.init(8, 2, 16, batch_first=True, rng=rng)
        with pytest.raises(
            ShapeError,
            match=r"TransformerEncoderLayer\(d_model=8, nhead=2\).*\(N, S, E\).*\(2, 5, 6\)",
        ):
            layer(np.zeros((2, 5, 6), np.float32))
        with pytest.raises(ShapeError, match=r"attn_mask must be \(L, S\) = \(5, 5\)"):
            layer(np.zeros((2, 5, 8), np.float32), np.zeros((4, 4), bool))
        with pytest.raises(LampyTypeError, match="TransformerEncoderLayer"):
            TransformerEncoder.init(LayerNorm.init(8), 2)  # type: ignore[arg-type]
        with pytest.raises(LampyTypeError, match="norm must be"):
            TransformerEncoder.init(layer, 2, norm=np.ones(8))  # type: ignore[arg-type]
        dec = TransformerDecoderLayer.init(8, 2, 16, rng=rng)
        with pytest.raises(ShapeError, match="memory"):
            dec(np.zeros((3, 2, 8)), np.zeros((3, 2, 7)))
