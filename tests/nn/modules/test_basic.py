"""Basic modules (Linear, Bilinear, Identity, Flatten, Unflatten, Lambda, Embedding,
Dropout, Residual, MLP): PyTorch's state_dict keys, parameter counts and default
initialisation, forward against numpy, gradients, train/eval behaviour and errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.nn._activation_modules import ReLU, Tanh
from lampy.nn._composite import MLP, Residual
from lampy.nn._containers import Sequential
from lampy.nn._dropout import Dropout
from lampy.nn._embedding import Embedding
from lampy.nn._linear import Bilinear, Flatten, Identity, Lambda, Linear, Unflatten
from lampy.nn._normalization import LayerNorm
from lampy.testing import check_grad


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _shapes(m: Any) -> dict[str, tuple[int, ...]]:
    return {k: v.shape for k, v in m.state_dict().items()}


# --- Linear / Bilinear -------------------------------------------------------------


def test_linear_state_dict_matches_torch() -> None:
    """Linear's state_dict keys, shapes and parameter count equal torch 2.13's."""
    with lampy.Scope():
        m = Linear.init(3, 4, rng=_rng())
        assert _shapes(m) == {"weight": (4, 3), "bias": (4,)}
        assert m.num_parameters() == 16 == 4 * 3 + 4
        nb = Linear.init(3, 4, bias=False, rng=_rng())
        assert _shapes(nb) == {"weight": (4, 3)} and nb.num_parameters() == 12
        assert repr(m) == "Linear(in_features=3, out_features=4, bias=True)"
        assert m.weight.dtype == np.float32


def test_linear_default_init_bounds() -> None:
    """Weight and bias lie in PyTorch's U(-1/sqrt(in), 1/sqrt(in)) and fill it."""
    with lampy.Scope():
        m = Linear.init(50, 400, rng=_rng())
        b = 1 / math.sqrt(50)
        w = m.weight.value
        assert np.abs(w).max() <= b and np.abs(w).max() > 0.98 * b
        assert abs(w.std() - b / math.sqrt(3)) < 0.01 * b
        assert m.bias is not None and np.abs(m.bias.value).max() <= b


@given(
    lead=st.lists(st.integers(0, 3), max_size=2),
    n_in=st.integers(1, 4),
    n_out=st.integers(1, 4),
    bias=st.booleans(),
)
def test_linear_forward_and_grad(lead: list[int], n_in: int, n_out: int, bias: bool) -> None:
    """Linear computes x @ W.T + b over leading dims, and its input gradient is right."""
    x = _rng(1).normal(size=(*lead, n_in))
    with lampy.Scope():
        m = Linear.init(n_in, n_out, bias, dtype=np.float64, rng=_rng())
        w = m.weight.value
        ref = x @ w.T + (m.bias.value if m.bias is not None else 0)
        np.testing.assert_allclose(m(x).value, ref, rtol=1e-12, atol=1e-12)
        if x.size:
            check_grad(m, x)


def test_linear_float32_stays_float32() -> None:
    """A float32 Linear maps float32 inputs to float32 outputs."""
    x = _rng(1).normal(size=(5, 3)).astype(np.float32)
    with lampy.Scope():
        m = Linear.init(3, 2, rng=_rng())
        y = m(x)
        assert y.dtype == np.float32
        ref = x.astype(np.float64) @ m.weight.value.T.astype(np.float64) + m.bias.value  # type: ignore[union-attr]
        np.testing.assert_allclose(y.value, ref, rtol=1e-5, atol=1e-6)


def test_linear_round_trip_and_load_errors() -> None:
    """state_dict → another Linear → same outputs; bad keys and shapes change nothing."""
    x = _rng(1).normal(size=(2, 3)).astype(np.float32)
    with lampy.Scope():
        a, b = Linear.init(3, 4, rng=_rng(0)), Linear.init(3, 4, rng=_rng(1))
        assert not np.allclose(a(x).value, b(x).value)
        b.load_state_dict(a.state_dict())
        np.testing.assert_array_equal(a(x).value, b(x).value)
        before = b.weight.value.copy()
        with pytest.raises(LampyValueError, match="Missing"):
            b.load_state_dict({"weight": np.zeros((4, 3))})
        with pytest.raises(ShapeError, match="'weight'"):
            b.load_state_dict({"weight": np.zeros((3, 4)), "bias": np.zeros(4)})
        np.testing.assert_array_equal(b.weight.value, before)


def test_linear_errors() -> None:
    """Wrong feature counts, a generator that is not one and bad sizes are clear errors."""
    with lampy.Scope():
        m = Linear.init(3, 4, rng=_rng())
        with pytest.raises(ShapeError, match=r"Linear\(in_features=3.*expected input \(\*, 3\)"):
            m(np.ones((2, 5)))
        with pytest.raises(LampyTypeError, match="Generator"):
            Linear.init(3, 4, rng=0)  # type: ignore[arg-type]
        with pytest.raises(LampyValueError, match="out_features"):
            Linear.init(3, -1, rng=_rng())


def test_bilinear_matches_numpy_and_torch_keys() -> None:
    """Bilinear gives x1 W[k] x2 + b[k], torch's keys, count 28, and right gradients."""
    x1, x2 = _rng(1).normal(size=(5, 2)), _rng(2).normal(size=(5, 3))
    with lampy.Scope():
        m = Bilinear.init(2, 3, 4, dtype=np.float64, rng=_rng())
        assert _shapes(m) == {"weight": (4, 2, 3), "bias": (4,)}
        assert m.num_parameters() == 28 == 4 * 2 * 3 + 4
        w, b = m.weight.value, m.bias.value  # type: ignore[union-attr]
        ref = np.array([[x1[n] @ w[k] @ x2[n] + b[k] for k in range(4)] for n in range(5)])
        np.testing.assert_allclose(m(x1, x2).value, ref, rtol=1e-12)
        check_grad(m, x1, x2)
        assert np.abs(w).max() <= 1 / math.sqrt(2)
        with pytest.raises(ShapeError, match="leading dimensions"):
            m(x1, x2[:4])
        with pytest.raises(ShapeError, match=r"\(\*, 3\)"):
            m(x1, x1)


# --- shape modules -------------------------------------------------------------------


def test_identity_returns_its_input() -> None:
    """Identity returns the very object it is given and has no state."""
    x = np.ones(3)
    m = Identity.init()
    assert m(x) is x and m.state_dict() == {} and repr(m) == "Identity()"


@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=4), data=st.data())
def test_flatten_matches_numpy(shape: list[int], data: st.DataObject) -> None:
    """Flatten merges start_dim..end_dim as torch.flatten does (negative dims too)."""
    nd = len(shape)
    start = data.draw(st.integers(-nd, nd - 1))
    end = data.draw(st.integers(start % nd, nd - 1)) - data.draw(st.sampled_from([0, nd]))
    x = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    s, e = start % nd, end % nd
    ref = x.reshape(*shape[:s], math.prod(shape[s : e + 1]), *shape[e + 1 :])
    with lampy.Scope():
        np.testing.assert_array_equal(Flatten.init(start, end)(x).value, ref)


def test_flatten_unflatten_round_trip_and_errors() -> None:
    """Unflatten undoes Flatten (with a -1 entry); bad dims and sizes are clear errors."""
    x = _rng().normal(size=(2, 3, 4, 5))
    with lampy.Scope():
        f = Flatten.init()
        y = f(x)
        assert y.shape == (2, 60)
        np.testing.assert_array_equal(Unflatten.init(1, (3, -1, 5))(y).value, x)
        check_grad(lambda v: Unflatten.init(-1, (2, 2))(f(v)), x[:, :1, :2, :2])
        with pytest.raises(ShapeError, match="comes after"):
            Flatten.init(2, 1)(x)
        with pytest.raises(ShapeError, match="out of range"):
            Flatten.init(1)(np.ones(3))
        with pytest.raises(ShapeError, match="does not multiply"):
            Unflatten.init(1, (7, -1))(y)
        with pytest.raises(LampyValueError, match="at most one -1"):
            Unflatten.init(1, (-1, -1))
    assert repr(Flatten.init()) == "Flatten(start_dim=1, end_dim=-1)"


def test_lambda_wraps_a_function() -> None:
    """Lambda calls its function, holds no parameters and rejects non-callables."""
    with lampy.Scope():
        m = Lambda.init(lampy.tanh)
        np.testing.assert_allclose(m(np.array([0.5])).value, np.tanh([0.5]))
        assert m.state_dict() == {} and "tanh" in repr(m)
        seq = Sequential.init(Lambda.init(lambda v: v * 2), Tanh.init())
        np.testing.assert_allclose(seq(np.array([0.25])).value, np.tanh([0.5]))
    with pytest.raises(LampyTypeError, match="callable"):
        Lambda.init(3)  # type: ignore[arg-type]


# --- Embedding -----------------------------------------------------------------------


def test_embedding_init_keys_and_padding_row() -> None:
    """Embedding: N(0, 1) rows, the padding row zero, torch's key and count, torch repr."""
    with lampy.Scope():
        m = Embedding.init(1000, 8, padding_idx=-1, rng=_rng())
        assert _shapes(m) == {"weight": (1000, 8)} and m.num_parameters() == 8000
        w = m.weight.value
        assert m.padding_idx == 999 and not w[999].any()
        assert abs(w[:999].std() - 1) < 0.05 and abs(w[:999].mean()) < 0.05
        assert repr(Embedding.init(10, 3, padding_idx=0, rng=_rng())) == (
            "Embedding(10, 3, padding_idx=0)"
        )


@given(ids=st.lists(st.integers(0, 5), min_size=0, max_size=8), pad=st.none() | st.integers(0, 5))
def test_embedding_lookup_and_grad(ids: list[int], pad: int | None) -> None:
    """Lookup returns weight[ids]; repeated ids accumulate; the padding row gets none."""
    idx = np.array(ids, dtype=np.int64).reshape(-1, 1)
    with lampy.Scope():
        m = Embedding.init(6, 3, padding_idx=pad, dtype=np.float64, rng=_rng())
        out = m(idx)
        np.testing.assert_array_equal(out.value, m.weight.value[idx])
        lampy.sum(out).backward()
        ref = np.zeros((6, 3))
        np.add.at(ref, idx[:, 0], 1.0)
        if pad is not None:
            ref[pad] = 0
        np.testing.assert_array_equal(m.weight.grad if m.weight.grad is not None else 0 * ref, ref)


def test_embedding_from_pretrained_frozen() -> None:
    """from_pretrained(freeze=True) holds a const weight: no parameters, still in state_dict."""
    vectors = _rng().normal(size=(4, 2))
    with lampy.Scope():
        m = Embedding.from_pretrained(vectors)
        assert m.parameters() == [] and m.num_parameters() == 0
        assert list(m.state_dict()) == ["weight"] and not m.weight.needs_grad
        np.testing.assert_array_equal(m(np.array([3, 1])).value, vectors[[3, 1]])
        assert m.weight.dtype == np.float64
        m.load_state_dict({"weight": np.zeros((4, 2))})
        assert not m.weight.value.any()
        trainable = Embedding.from_pretrained(vectors, freeze=False, padding_idx=1)
        assert trainable.num_parameters() == 8 and trainable.padding_idx == 1
        np.testing.assert_array_equal(trainable.weight.value[1], vectors[1])


def test_embedding_errors() -> None:
    """Float ids, out-of-range ids, a bad padding_idx and non-2-d vectors are errors."""
    with lampy.Scope():
        m = Embedding.init(5, 2, rng=_rng())
        with pytest.raises(DTypeError, match="integer ids"):
            m(np.array([1.0]))
        with pytest.raises(LampyValueError, match="id 5 is outside"):
            m(np.array([0, 5]))
        with pytest.raises(LampyValueError, match="padding_idx"):
            Embedding.init(5, 2, padding_idx=5, rng=_rng())
        with pytest.raises(ShapeError, match="2-d"):
            Embedding.from_pretrained(np.ones(3))


# --- Dropout -------------------------------------------------------------------------


def test_dropout_train_and_eval() -> None:
    """Training zeroes about p of the elements and scales the rest; eval is identity."""
    x = np.ones((200, 50), np.float32)
    with lampy.Scope():
        m = Dropout.init(0.25, rng=_rng())
        y = m(x).value
        kept = y != 0
        assert abs(kept.mean() - 0.75) < 0.02
        np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
        np.testing.assert_array_equal(m.with_training(False)(x).value, x)
        assert not m.with_training(False).training and m.training
        assert repr(m) == "Dropout(p=0.25)" and m.state_dict() == {}
        np.testing.assert_array_equal(Dropout.init(0.0)(x).value, x)


def test_dropout_errors() -> None:
    """p outside [0, 1] is a clear error, from init and from the class call."""
    with pytest.raises(LampyValueError, match=r"\[0, 1\]"):
        Dropout(1.5)
    with pytest.raises(LampyValueError, match=r"\[0, 1\]"):
        Dropout.init(1.5, rng=_rng())


# --- Residual and MLP ----------------------------------------------------------------


def test_residual_adds_the_input() -> None:
    """Residual computes x + fn(x), names parameters fn.*, and checks fn keeps the shape."""
    x = _rng(1).normal(size=(3, 4))
    with lampy.Scope():
        lin = Linear.init(4, 4, dtype=np.float64, rng=_rng())
        m = Residual.init(lin)
        assert list(m.state_dict()) == ["fn.weight", "fn.bias"]
        np.testing.assert_allclose(m(x).value, x + lin(x).value, rtol=1e-12)
        check_grad(m, x)
        with pytest.raises(ShapeError, match="keep its input's shape"):
            Residual.init(Linear.init(4, 2, dtype=np.float64, rng=_rng()))(x)
    with pytest.raises(LampyTypeError, match="Module"):
        Residual.init(np.tanh)  # type: ignore[arg-type]


def test_mlp_layout_matches_torchvision() -> None:
    """MLP numbers its layers as torchvision.ops.MLP (keys, counts taken from torch)."""
    with lampy.Scope():
        m = MLP.init(4, [8, 6, 3], rng=_rng())
        assert list(m.state_dict()) == [
            "0.weight",
            "0.bias",
            "3.weight",
            "3.bias",
            "6.weight",
            "6.bias",
        ]
        assert m.num_parameters() == 115 == (4 * 8 + 8) + (8 * 6 + 6) + (6 * 3 + 3)
        kinds = [type(layer).__name__ for layer in m]
        assert kinds == ["Linear", "ReLU", "Dropout"] * 2 + ["Linear", "Dropout"]
        n = MLP.init(4, [8, 6, 3], norm_layer=LayerNorm, rng=_rng())
        assert list(n.state_dict()) == [
            "0.weight",
            "0.bias",
            "1.weight",
            "1.bias",
            "4.weight",
            "4.bias",
            "5.weight",
            "5.bias",
            "8.weight",
            "8.bias",
        ]
        assert n.num_parameters() == 143 == 115 + 2 * 8 + 2 * 6


def test_mlp_forward_and_modes() -> None:
    """MLP applies its layers in order; eval disables its dropout; gradients are right."""
    x = _rng(1).normal(size=(5, 4))
    with lampy.Scope():
        m = MLP.init(4, [6, 2], activation_layer=Tanh, dropout=0.5, dtype=np.float64, rng=_rng())
        e = m.with_training(False)
        l0, l2 = e[0], e[3]
        ref = np.tanh(x @ l0.weight.value.T + l0.bias.value) @ l2.weight.value.T + l2.bias.value
        np.testing.assert_allclose(e(x).value, ref, rtol=1e-12)
        check_grad(e, x)
        assert not np.allclose(m(x).value, ref)  # dropout active in training mode
        r = MLP.init(4, [3], activation_layer=lambda: ReLU.init(), bias=False, rng=_rng())
        assert list(r.state_dict()) == ["0.weight"]
    with pytest.raises(LampyValueError, match="at least one"):
        MLP.init(4, [], rng=_rng())


def test_shape_and_dtype_of_inputs_are_read_without_copying() -> None:
    """Module forwards read a writable array's shape and dtype without copying it (as
    value_of would, to freeze it), and give the same answers for every kind of input."""
    import tracemalloc

    from lampy.nn._helpers import check_dtype, dtype_of, shape_of

    big = np.zeros(1_000_000)  # 8 MB, writable
    tracemalloc.start()
    try:
        assert shape_of(big) == (1_000_000,)
        assert dtype_of(big) == np.float64
        check_dtype("RNN", np.dtype(np.float64), ("the input", big))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    with lampy.Scope():
        v = lampy.param(np.ones((2, 3), np.float32))
        assert shape_of(v) == (2, 3) and dtype_of(v) == np.float32
    assert shape_of([[1.0, 2.0]]) == (1, 2) and shape_of(3.0) == ()
    assert dtype_of([1.0]) == np.float64 and dtype_of(np.float32(1)) == np.float32
    assert dtype_of(True) == np.bool_ and dtype_of(np.ma.ones(2, np.float32)) == np.float32


def test_forwards_build_no_repr_unless_raising(monkeypatch: Any) -> None:
    """Flatten, Unflatten, RNN and MultiheadAttention describe themselves only to build
    an error message, not on every call."""
    from lampy.nn._attention import MultiheadAttention
    from lampy.nn._recurrent import RNN

    def boom(self: Any) -> str:
        raise AssertionError(f"{type(self).__name__} built its description")

    rng = np.random.default_rng(0)
    with lampy.Scope():
        rnn = RNN.init(3, 4, rng=rng, dtype=np.float64)
        mha = MultiheadAttention.init(4, 2, rng=rng, dtype=np.float64)
        for cls in (Flatten, Unflatten, RNN, MultiheadAttention):
            monkeypatch.setattr(cls, "__repr__", boom)
        monkeypatch.setattr(MultiheadAttention, "_describe", boom)
        assert Flatten.init()(np.ones((2, 3, 4))).shape == (2, 12)
        assert Unflatten.init(1, (2, 2))(np.ones((3, 4))).shape == (3, 2, 2)
        out, _ = rnn(np.ones((5, 2, 3)), np.zeros((1, 2, 4)))
        assert out.shape == (5, 2, 4)
        x = np.ones((3, 2, 4))
        mask = np.triu(np.ones((3, 3), bool), 1)
        padding = np.zeros((2, 3), bool)
        y, _ = mha(x, x, x, attn_mask=mask, key_padding_mask=padding)
        assert y.shape == (3, 2, 4)
