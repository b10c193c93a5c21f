"""Recurrent modules (RNN, GRU, LSTM and their cells): forward against a plain-numpy loop
over time, gradients against finite differences, PyTorch's state_dict keys, parameter
counts and reprs, dropout between layers, state round trips and bad-input errors."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.nn._recurrent import GRU, LSTM, RNN
from lampy.nn._rnn_cells import GRUCell, LSTMCell, RNNCell
from lampy.nn.functional._recurrent import gru_sequence, lstm_sequence, rnn_sequence
from lampy.testing import check_grad

MODULES = {"RNN": RNN, "GRU": GRU, "LSTM": LSTM}
CELLS = {"RNNCell": RNNCell, "GRUCell": GRUCell, "LSTMCell": LSTMCell}


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


# --- plain-numpy reference --------------------------------------------------------------


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-v))


def _ref_step(
    mode: str, w: dict[str, np.ndarray], sfx: str, x: np.ndarray, h: np.ndarray, c: Any
) -> tuple[np.ndarray, Any]:
    """One step of one layer and direction, written from PyTorch's documented formulas."""
    gi = x @ w["weight_ih" + sfx].T + w.get("bias_ih" + sfx, 0)
    gh = h @ w["weight_hh" + sfx].T + w.get("bias_hh" + sfx, 0)
    if mode in ("tanh", "relu"):
        a = gi + gh
        return (np.tanh(a) if mode == "tanh" else np.maximum(a, 0)), None
    if mode == "GRU":
        ir, iz, inn = np.split(gi, 3, axis=-1)
        hr, hz, hn = np.split(gh, 3, axis=-1)
        r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
        n = np.tanh(inn + r * hn)
        return (1 - z) * n + z * h, None
    i, f, g, o = np.split(gi + gh, 4, axis=-1)
    c_new = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h_new = _sigmoid(o) * np.tanh(c_new)
    if "weight_hr" + sfx in w:
        h_new = h_new @ w["weight_hr" + sfx].T
    return h_new, c_new


def _ref_forward(
    mode: str,
    w: dict[str, np.ndarray],
    x: np.ndarray,
    h0: np.ndarray,
    c0: Any,
    num_layers: int,
    bidirectional: bool,
) -> tuple[np.ndarray, np.ndarray, Any]:
    """Multi-layer, bidirectional loop over time; x is (L, N, H_in), states (rows, N, ·)."""
    d = 2 if bidirectional else 1
    length = x.shape[0]
    hn, cn = [], []
    for layer in range(num_layers):
        outs = []
        for direction in range(d):
            sfx = f"_l{layer}" + ("_reverse" if direction else "")
            row = layer * d + direction
            h, c = h0[row], None if c0 is None else c0[row]
            steps = range(length - 1, -1, -1) if direction else range(length)
            seq: list[Any] = [None] * length
            for t in steps:
                h, c = _ref_step(mode, w, sfx, x[t], h, c)
                seq[t] = h
            outs.append(np.stack(seq))
            hn.append(h)
            cn.append(c)
        x = np.concatenate(outs, axis=-1)
    return x, np.stack(hn), (None if c0 is None else np.stack(cn))


def _mode(m: Any) -> str:
    return {"RNN_TANH": "tanh", "RNN_RELU": "relu"}.get(m.mode, m.mode)


# --- forward ------------------------------------------------------------------------


@st.composite
def _configs(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["RNN", "GRU", "LSTM"]))
    hidden = draw(st.integers(1, 4))
    kw: dict[str, Any] = {
        "input_size": draw(st.integers(1, 3)),
        "hidden_size": hidden,
        "num_layers": draw(st.integers(1, 2)),
        "bias": draw(st.booleans()),
        "batch_first": draw(st.booleans()),
        "bidirectional": draw(st.booleans()),
    }
    if kind == "RNN":
        kw["nonlinearity"] = draw(st.sampled_from(["tanh", "relu"]))
    if kind == "LSTM":
        kw["proj_size"] = draw(st.integers(0, hidden - 1))
    return {"kind": kind, "kw": kw}


@given(
    cfg=_configs(),
    length=st.integers(1, 4),
    batch=st.integers(0, 3),
    unbatched=st.booleans(),
    with_hx=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=40)
def test_forward_matches_numpy_loop(
    cfg: dict[str, Any], length: int, batch: int, unbatched: bool, with_hx: bool, seed: int
) -> None:
    """output and final states equal a numpy loop over layers, directions and time steps."""
    rng = _rng(seed)
    kind, kw = cfg["kind"], cfg["kw"]
    for dtype in (np.float64, np.float32):
        with lampy.Scope():
            m = MODULES[kind].init(**kw, dtype=dtype, rng=rng)
            w = {k: v.astype(np.float64) for k, v in m.state_dict().items()}
            n = 1 if unbatched else batch
            rows = m.num_layers * m.num_directions
            out_size = kw.get("proj_size", 0) or m.hidden_size
            x = rng.normal(size=(length, n, m.input_size))
            h0 = rng.normal(size=(rows, n, out_size)) if with_hx else np.zeros((rows, n, out_size))
            c0 = None
            if kind == "LSTM":
                c0 = (
                    rng.normal(size=(rows, n, m.hidden_size))
                    if with_hx
                    else np.zeros((rows, n, m.hidden_size))
                )
            want_out, want_h, want_c = _ref_forward(
                _mode(m), w, x, h0, c0, m.num_layers, m.bidirectional
            )

            def arg(a: np.ndarray, axis: int) -> np.ndarray:
                return (a[:, 0] if axis == 1 else a) if unbatched else a

            xin = x[:, 0] if unbatched else (x.swapaxes(0, 1) if m.batch_first else x)
            hx: Any = None
            if with_hx:
                hx = arg(h0, 1).astype(dtype)
                if kind == "LSTM":
                    hx = (hx, arg(c0, 1).astype(dtype))  # type: ignore[arg-type]
            out, state = m(xin.astype(dtype), hx)
            h_n, c_n = state if kind == "LSTM" else (state, None)
            if unbatched:
                want_out, want_h = want_out[:, 0], want_h[:, 0]
                want_c = None if want_c is None else want_c[:, 0]
            elif m.batch_first:
                want_out = want_out.swapaxes(0, 1)
            assert out.dtype == dtype and h_n.dtype == dtype
            np.testing.assert_allclose(out.value, want_out, **_tol(dtype))
            np.testing.assert_allclose(h_n.value, want_h, **_tol(dtype))
            if kind == "LSTM":
                np.testing.assert_allclose(c_n.value, want_c, **_tol(dtype))


@given(
    kind=st.sampled_from(["RNNCell", "GRUCell", "LSTMCell"]),
    n_in=st.integers(1, 3),
    hidden=st.integers(1, 4),
    batch=st.integers(0, 3),
    unbatched=st.booleans(),
    with_hx=st.booleans(),
    bias=st.booleans(),
    relu=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=30)
def test_cells_match_numpy_step(
    kind: str,
    n_in: int,
    hidden: int,
    batch: int,
    unbatched: bool,
    with_hx: bool,
    bias: bool,
    relu: bool,
    seed: int,
) -> None:
    """A cell's step equals one step of the numpy reference, batched or not."""
    rng = _rng(seed)
    extra = {"nonlinearity": "relu" if relu else "tanh"} if kind == "RNNCell" else {}
    lead = () if unbatched else (batch,)
    for dtype in (np.float64, np.float32):
        with lampy.Scope():
            cell = CELLS[kind].init(n_in, hidden, bias, **extra, dtype=dtype, rng=rng)
            w = {k + "_l0": v.astype(np.float64) for k, v in cell.state_dict().items()}
            x = rng.normal(size=(*lead, n_in))
            h = rng.normal(size=(*lead, hidden)) if with_hx else np.zeros((*lead, hidden))
            c = rng.normal(size=(*lead, hidden)) if with_hx else np.zeros((*lead, hidden))
            mode = {"RNNCell": "relu" if relu else "tanh", "GRUCell": "GRU"}.get(kind, "LSTM")
            want_h, want_c = _ref_step(mode, w, "_l0", x, h, c)
            if kind == "LSTMCell":
                hx = (h.astype(dtype), c.astype(dtype)) if with_hx else None
                got_h, got_c = cell(x.astype(dtype), hx)
                np.testing.assert_allclose(got_c.value, want_c, **_tol(dtype))
            else:
                got_h = cell(x.astype(dtype), h.astype(dtype) if with_hx else None)
            assert got_h.shape == (*lead, hidden) and got_h.dtype == dtype
            np.testing.assert_allclose(got_h.value, want_h, **_tol(dtype))


# --- gradients ----------------------------------------------------------------------


def _with_weight(m: Any, key: str, w: Any) -> Any:
    return attrs.evolve(m, weights={**m.weights, key: w})


@pytest.mark.parametrize(
    ("kind", "kw"),
    [
        ("RNN", {"nonlinearity": "tanh", "num_layers": 2}),
        ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
        ("GRU", {"num_layers": 2, "bidirectional": True}),
        ("GRU", {"bias": False, "batch_first": True}),
        ("LSTM", {"num_layers": 2, "bidirectional": True}),
        ("LSTM", {"proj_size": 2, "bidirectional": True, "batch_first": True}),
    ],
    ids=str,
)
def test_gradients_match_finite_differences(kind: str, kw: dict[str, Any]) -> None:
    """Gradients w.r.t. the input, the initial states and weights match finite differences."""
    rng = _rng(1)
    with lampy.Scope():
        m = MODULES[kind].init(2, 3, **kw, dtype=np.float64, rng=rng)
        rows = m.num_layers * m.num_directions
        out_size = m.proj_size or 3
        x = rng.normal(size=(2, 4, 2) if m.batch_first else (4, 2, 2))
        h0 = rng.normal(size=(rows, 2, out_size))
        c0 = rng.normal(size=(rows, 2, 3))
        last = f"_l{m.num_layers - 1}" + ("_reverse" if m.bidirectional else "")
        keys = ["weight_ih_l0", "weight_hh" + last] + (["weight_hr_l0"] if m.proj_size else [])
        ws = [m.weights[k].value.copy() for k in keys]

        def f(x: Any, h0: Any, c0: Any, *ws: Any) -> Any:
            mm = m
            for k, w in zip(keys, ws, strict=True):
                mm = _with_weight(mm, k, w)
            if kind == "LSTM":
                out, (h, c) = mm(x, (h0, c0))
                return lampy.concatenate([lampy.ravel(out), lampy.ravel(h), lampy.ravel(c)])
            out, h = mm(x, h0)
            return lampy.concatenate([lampy.ravel(out), lampy.ravel(h)]) + 0 * lampy.sum(c0)

        check_grad(f, x, h0, c0, *ws)


@pytest.mark.parametrize("kind", ["RNNCell", "GRUCell", "LSTMCell"])
def test_cell_gradients_match_finite_differences(kind: str) -> None:
    """Cell gradients w.r.t. the input, the states and weight_hh match finite differences."""
    rng = _rng(2)
    with lampy.Scope():
        cell = CELLS[kind].init(2, 3, dtype=np.float64, rng=rng)
        x, h, c = rng.normal(size=(2, 2)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3))

        def f(x: Any, h: Any, c: Any, w: Any) -> Any:
            cc = attrs.evolve(cell, weight_hh=w)
            if kind == "LSTMCell":
                h1, c1 = cc(x, (h, c))
                return lampy.concatenate([h1, c1], axis=1)
            return cc(x, h) + 0 * c

        check_grad(f, x, h, c, cell.weight_hh.value.copy())


def test_float32_gradient_path() -> None:
    """float32 modules give float32 gradients that match finite differences loosely."""
    rng = _rng(3)
    with lampy.Scope():
        m = LSTM.init(2, 3, bidirectional=True, rng=rng)
        m64 = LSTM.init(2, 3, bidirectional=True, dtype=np.float64, rng=rng)
        m64.load_state_dict(m.state_dict())  # the finite differences run in float64
        check_grad(
            lambda x: (m if x.dtype == np.float32 else m64)(x)[0],
            rng.normal(size=(3, 2, 2)).astype(np.float32),
        )


# --- state, parameters, repr ----------------------------------------------------------

KEYS = [
    (
        "RNN",
        {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True},
        [
            ("weight_ih_l0", (4, 3)), ("weight_hh_l0", (4, 4)), ("bias_ih_l0", (4,)),
            ("bias_hh_l0", (4,)), ("weight_ih_l0_reverse", (4, 3)),
            ("weight_hh_l0_reverse", (4, 4)), ("bias_ih_l0_reverse", (4,)),
            ("bias_hh_l0_reverse", (4,)), ("weight_ih_l1", (4, 8)), ("weight_hh_l1", (4, 4)),
            ("bias_ih_l1", (4,)), ("bias_hh_l1", (4,)), ("weight_ih_l1_reverse", (4, 8)),
            ("weight_hh_l1_reverse", (4, 4)), ("bias_ih_l1_reverse", (4,)),
            ("bias_hh_l1_reverse", (4,)),
        ],
        184,
    ),
    (
        "GRU",
        {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bias": False},
        [
            ("weight_ih_l0", (12, 3)), ("weight_hh_l0", (12, 4)), ("weight_ih_l1", (12, 4)),
            ("weight_hh_l1", (12, 4)),
        ],
        180,
    ),
    (
        "LSTM",
        {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True},
        [
            ("weight_ih_l0", (16, 3)), ("weight_hh_l0", (16, 4)), ("bias_ih_l0", (16,)),
            ("bias_hh_l0", (16,)), ("weight_ih_l0_reverse", (16, 3)),
            ("weight_hh_l0_reverse", (16, 4)), ("bias_ih_l0_reverse", (16,)),
            ("bias_hh_l0_reverse", (16,)), ("weight_ih_l1", (16, 8)),
            ("weight_hh_l1", (16, 4)), ("bias_ih_l1", (16,)), ("bias_hh_l1", (16,)),
            ("weight_ih_l1_reverse", (16, 8)), ("weight_hh_l1_reverse", (16, 4)),
            ("bias_ih_l1_reverse", (16,)), ("bias_hh_l1_reverse", (16,)),
        ],
        736,
    ),
    (
        "LSTM",
        {"input_size": 3, "hidden_size": 4, "num_layers": 2, "bidirectional": True, "proj_size": 2},
        [
            ("weight_ih_l0", (16, 3)), ("weight_hh_l0", (16, 2)), ("bias_ih_l0", (16,)),
            ("bias_hh_l0", (16,)), ("weight_hr_l0", (2, 4)), ("weight_ih_l0_reverse", (16, 3)),
            ("weight_hh_l0_reverse", (16, 2)), ("bias_ih_l0_reverse", (16,)),
            ("bias_hh_l0_reverse", (16,)), ("weight_hr_l0_reverse", (2, 4)),
            ("weight_ih_l1", (16, 4)), ("weight_hh_l1", (16, 2)), ("bias_ih_l1", (16,)),
            ("bias_hh_l1", (16,)), ("weight_hr_l1", (2, 4)), ("weight_ih_l1_reverse", (16, 4)),
            ("weight_hh_l1_reverse", (16, 2)), ("bias_ih_l1_reverse", (16,)),
            ("bias_hh_l1_reverse", (16,)), ("weight_hr_l1_reverse", (2, 4)),
        ],
        512,
    ),
    (
        "LSTMCell",
        {"input_size": 3, "hidden_size": 4},
        [("weight_ih", (16, 3)), ("weight_hh", (16, 4)), ("bias_ih", (16,)), ("bias_hh", (16,))],
        144,
    ),
    (
        "GRUCell",
        {"input_size": 3, "hidden_size": 4, "bias": False},
        [("weight_ih", (12, 3)), ("weight_hh", (12, 4))],
        84,
    ),
    ("RNNCell", {"input_size": 3, "hidden_size": 4}, None, 36),
]  # fmt: skip


def _formula(kind: str, kw: dict[str, Any]) -> int:
    """Parameter count: per layer and direction G*H*(in + out) (+ 2*G*H biases, + P*H)."""
    g = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind.removesuffix("Cell")]
    h, p = kw["hidden_size"], kw.get("proj_size", 0)
    out = p or h
    d = 2 if kw.get("bidirectional") else 1
    total = 0
    for layer in range(kw.get("num_layers", 1)):
        n_in = kw["input_size"] if layer == 0 else out * d
        total += d * (g * h * (n_in + out) + (2 * g * h if kw.get("bias", True) else 0) + p * h)
    return total


@pytest.mark.parametrize(("kind", "kw", "keys", "count"), KEYS, ids=lambda v: str(v)[:40])
def test_state_dict_keys_and_counts_match_pytorch(
    kind: str, kw: dict[str, Any], keys: Any, count: int
) -> None:
    """state_dict keys, order and shapes and the parameter count equal torch 2.13's."""
    cls = {**MODULES, **CELLS}[kind]
    with lampy.Scope():
        m = cls.init(**kw, rng=_rng())
        if keys is not None:
            assert [(k, v.shape) for k, v in m.state_dict().items()] == keys
        assert m.num_parameters() == count == _formula(kind, kw)
        assert all(v.dtype == np.float32 for v in m.state_dict().values())


def test_init_bounds_are_one_over_sqrt_hidden() -> None:
    """Every weight and bias is drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    with lampy.Scope():
        m = LSTM.init(50, 16, num_layers=2, proj_size=8, rng=_rng())
        allv = np.concatenate([v.ravel() for v in m.state_dict().values()])
        assert np.abs(allv).max() <= 0.25 and np.abs(allv).max() > 0.24
        assert abs(allv.mean()) < 0.01
        cell = GRUCell.init(5, 4, rng=_rng())
        assert np.abs(cell.weight_ih.value).max() <= 0.5


def test_reprs_match_pytorch() -> None:
    """reprs list non-default settings as PyTorch's do."""
    with lampy.Scope():
        r = _rng()
        assert repr(LSTM.init(3, 4, proj_size=2, num_layers=2, bidirectional=True, rng=r)) == (
            "LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True)"
        )
        assert repr(LSTM.init(3, 4, 2, False, True, 0.5, rng=r)) == (
            "LSTM(3, 4, num_layers=2, bias=False, batch_first=True, dropout=0.5)"
        )
        assert repr(GRU.init(3, 4, rng=r)) == "GRU(3, 4)"
        assert repr(GRUCell.init(3, 4, bias=False, rng=r)) == "GRUCell(3, 4, bias=False)"
        assert repr(RNNCell.init(3, 4, nonlinearity="relu", rng=r)) == (
            "RNNCell(3, 4, nonlinearity='relu')"
        )


def test_state_dict_round_trip() -> None:
    """A state dict loaded into a module made with another rng gives the same outputs."""
    x = _rng(5).normal(size=(4, 2, 3)).astype(np.float32)
    with lampy.Scope():
        a = LSTM.init(3, 4, num_layers=2, bidirectional=True, proj_size=2, rng=_rng(1))
        b = LSTM.init(3, 4, num_layers=2, bidirectional=True, proj_size=2, rng=_rng(2))
        assert not np.array_equal(a(x)[0].value, b(x)[0].value)
        b.load_state_dict({k: v.copy() for k, v in a.state_dict().items()})
        np.testing.assert_array_equal(a(x)[0].value, b(x)[0].value)
        np.testing.assert_array_equal(a(x)[1][1].value, b(x)[1][1].value)
        with pytest.raises(LampyValueError, match="weight_hr_l1_reverse"):
            LSTM.init(3, 4, num_layers=2, bidirectional=True, rng=_rng()).load_state_dict(
                a.state_dict()
            )
        with pytest.raises(ShapeError, match="weight_ih_l0"):
            GRU.init(5, 4, rng=_rng()).load_state_dict(GRU.init(3, 4, rng=_rng()).state_dict())


# --- training behaviour ---------------------------------------------------------------


def test_dropout_between_layers_only_in_training() -> None:
    """Training applies dropout to every layer's output but the last; eval is deterministic."""
    x = _rng(7).normal(size=(5, 3, 4)).astype(np.float32)
    with lampy.Scope():
        m = GRU.init(4, 6, num_layers=2, dropout=0.5, rng=_rng(8))
        ev = m.with_training(False)
        plain = GRU.init(4, 6, num_layers=2, rng=_rng(8))
        np.testing.assert_array_equal(ev(x)[0].value, plain(x)[0].value)
        np.testing.assert_array_equal(ev(x)[0].value, ev(x)[0].value)
        a, b = m(x)[0].value, m(x)[0].value
        assert not np.array_equal(a, b)
        assert not np.array_equal(a, ev(x)[0].value)
        one_layer = GRU.init(4, 6, rng=_rng(8))
        np.testing.assert_array_equal(
            one_layer(x)[0].value, one_layer.with_training(False)(x)[0].value
        )
        assert m.with_training(False).weights["weight_ih_l0"] is m.weights["weight_ih_l0"]


def test_dropout_with_one_layer_warns() -> None:
    """dropout > 0 with num_layers=1 warns, as PyTorch does (it has no effect)."""
    with lampy.Scope(), pytest.warns(UserWarning, match="no effect"):
        LSTM.init(3, 4, dropout=0.2, rng=_rng())


def test_training_reduces_loss() -> None:
    """A few gradient steps on an LSTM lower a regression loss (gradients reach all weights)."""
    rng = _rng(9)
    x = rng.normal(size=(6, 8, 2))
    y = np.cumsum(x[..., :1], axis=0)
    with lampy.Scope():
        m = LSTM.init(2, 8, dtype=np.float64, rng=rng)
        head = lampy.param(rng.normal(size=(8, 1)) * 0.3)
        params = [*m.parameters(), head]
        losses = []
        for _ in range(30):
            with lampy.Scope():
                out, _ = m(x)
                loss = lampy.mean((out @ head - y) ** 2)
                losses.append(float(loss.value))
                loss.backward()
            with lampy.in_place(params) as values:
                for p, value in zip(params, values, strict=True):
                    assert p.grad is not None and np.all(np.isfinite(p.grad))
                    value -= 0.1 * p.grad
                    p.zero_grad()
        assert losses[-1] < 0.7 * losses[0]


# --- errors -------------------------------------------------------------------------


def test_forward_shape_errors_name_the_module() -> None:
    """Bad inputs and states raise ShapeError naming the module, expected and actual shapes."""
    with lampy.Scope():
        lstm = LSTM.init(3, 4, num_layers=2, rng=_rng())
        x = np.zeros((5, 2, 3), np.float32)
        with pytest.raises(ShapeError, match=r"LSTM\(3, 4, num_layers=2\).*input_size is 3"):
            lstm(np.zeros((5, 2, 7), np.float32))
        with pytest.raises(ShapeError, match="4-D"):
            lstm(np.zeros((5, 2, 3, 1), np.float32))
        with pytest.raises(ShapeError, match="empty"):
            lstm(np.zeros((0, 2, 3), np.float32))
        h, c = np.zeros((2, 2, 4), np.float32), np.zeros((2, 2, 4), np.float32)
        with pytest.raises(ShapeError, match=r"h_0 of shape \(2, 2, 4\).*got \(1, 2, 4\)"):
            lstm(x, (h[:1], c))
        with pytest.raises(ShapeError, match=r"c_0 of shape \(2, 2, 4\).*got \(2, 3, 4\)"):
            lstm(x, (h, np.zeros((2, 3, 4), np.float32)))
        with pytest.raises(ShapeError, match="unbatched"):
            lstm(x[:, 0], (h, c))
        with pytest.raises(LampyTypeError, match="pair"):
            lstm(x, h)
        proj = LSTM.init(3, 4, proj_size=2, rng=_rng())
        with pytest.raises(ShapeError, match=r"\(1, 2, 2\).*proj_size"):
            proj(x, (np.zeros((1, 2, 4), np.float32), np.zeros((1, 2, 4), np.float32)))
        gru = GRU.init(3, 4, batch_first=True, rng=_rng())
        with pytest.raises(ShapeError, match=r"GRU\(3, 4, batch_first=True\).*\(1, 5, 4\)"):
            gru(np.zeros((5, 2, 3), np.float32), np.zeros((1, 2, 4), np.float32))
        with pytest.raises(DTypeError, match="float64"):
            gru(np.zeros((5, 2, 3)))


def test_cell_errors() -> None:
    """Cells reject wrong input sizes, dimensions and state shapes, naming the cell."""
    with lampy.Scope():
        cell = LSTMCell.init(3, 4, rng=_rng())
        with pytest.raises(ShapeError, match=r"LSTMCell\(3, 4\).*3-D"):
            cell(np.zeros((2, 3, 1), np.float32))
        with pytest.raises(ShapeError, match="input_size is 3"):
            cell(np.zeros((2, 5), np.float32))
        z = np.zeros((2, 4), np.float32)
        with pytest.raises(ShapeError, match=r"hx\[0\] \(h\) of shape \(2, 4\).*got \(3, 4\)"):
            cell(np.zeros((2, 3), np.float32), (np.zeros((3, 4), np.float32), z))
        with pytest.raises(LampyTypeError, match="pair"):
            cell(np.zeros((2, 3), np.float32), z)
        rnn = RNNCell.init(3, 4, rng=_rng())
        with pytest.raises(ShapeError, match=r"hx of shape \(4,\)"):
            rnn(np.zeros(3, np.float32), z)


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: LSTM.init(3, 4, rng=0), LampyTypeError, "Generator"),
        (lambda: LSTM.init(3, 4, proj_size=4, rng=_rng()), LampyValueError, "smaller"),
        (lambda: RNN.init(3, 4, nonlinearity="gelu", rng=_rng()), LampyValueError, "gelu"),
        (lambda: GRU.init(3, 0, rng=_rng()), LampyValueError, "hidden_size"),
        (lambda: GRU.init(3, 4, num_layers=0, rng=_rng()), LampyValueError, "num_layers"),
        (lambda: GRU.init(3, 4, dropout=1.5, rng=_rng()), LampyValueError, "dropout"),
        (lambda: GRU.init(3, 4, bias=1, rng=_rng()), LampyTypeError, "bias"),
        (lambda: GRU.init(3.5, 4, rng=_rng()), LampyTypeError, "input_size"),
        (lambda: GRU.init(3, 4, dtype=np.int32, rng=_rng()), DTypeError, "floating"),
        (lambda: GRUCell.init(3, 4, rng=0), LampyTypeError, "Generator"),
        (
            lambda: RNNCell.init(3, 4, nonlinearity="sigmoid", rng=_rng()),
            LampyValueError,
            "sigmoid",
        ),
    ],
)
def test_init_errors(make: Any, error: type[Exception], match: str) -> None:
    """Invalid constructor arguments raise clear errors."""
    with lampy.Scope(), pytest.raises(error, match=match):
        make()


# --- the fused sequence ops -------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("kind", ["tanh", "relu", "gru", "lstm", "lstm_proj"])
def test_sequence_ops_gradients(kind: str, reverse: bool) -> None:
    """The fused ops' gradients (every output step, incl. LSTM's packed c_t) match finite
    differences for every input."""
    rng = _rng(4)
    length, n, h, p = 3, 2, 3, 2
    if kind in ("tanh", "relu"):
        check_grad(
            lambda x, w, b, h0: rnn_sequence(x, w, b, h0, kind, reverse),
            rng.normal(size=(length, n, h)), rng.normal(size=(h, h)) * 0.5,
            rng.normal(size=h), rng.normal(size=(n, h)),
        )  # fmt: skip
    elif kind == "gru":
        check_grad(
            lambda x, w, b, h0: gru_sequence(x, w, b, h0, reverse),
            rng.normal(size=(length, n, 3 * h)), rng.normal(size=(3 * h, h)) * 0.5,
            rng.normal(size=3 * h), rng.normal(size=(n, h)),
        )  # fmt: skip
    else:
        q = p if kind == "lstm_proj" else h
        wr = [rng.normal(size=(p, h))] if kind == "lstm_proj" else []
        check_grad(
            lambda x, w, b, h0, c0, *wr: lstm_sequence(x, w, b, h0, c0, *wr, reverse=reverse),
            rng.normal(size=(length, n, 4 * h)), rng.normal(size=(4 * h, q)) * 0.5,
            rng.normal(size=4 * h), rng.normal(size=(n, q)), rng.normal(size=(n, h)), *wr,
        )  # fmt: skip


def test_sequence_ops_errors() -> None:
    """The fused ops reject inconsistent shapes and unknown nonlinearities."""
    z = np.zeros
    with lampy.Scope():
        with pytest.raises(ShapeError, match="xw"):
            lstm_sequence(z((3, 2, 5)), z((4, 1)), None, z((2, 1)), z((2, 1)))
        with pytest.raises(ShapeError, match="h0"):
            gru_sequence(z((3, 2, 6)), z((6, 2)), None, z((3, 2)))
        with pytest.raises(ShapeError, match="w_hr"):
            lstm_sequence(z((3, 2, 8)), z((8, 1)), None, z((2, 1)), z((2, 2)), z((2, 2)))
        with pytest.raises(LampyValueError, match="nonlinearity"):
            rnn_sequence(z((3, 2, 2)), z((2, 2)), None, z((2, 2)), "sigmoid")


def test_shared_backward_is_not_fooled_by_a_reused_address(monkeypatch: Any) -> None:
    """A backward pass that stops after one closure of a fused recurrent op, then a new
    ``g`` at the dead one's address (same id): the shared computation is redone for the
    new ``g`` rather than served stale."""
    import lampy.nn.functional._recurrent as rec

    captured: list[dict[int, Any]] = []
    real_op = rec.op

    def spy(name: str, value: Any, *params: Any) -> Any:
        captured.append({id(p[0]): p[1] for p in params if p is not None})
        return real_op(name, value, *params)

    monkeypatch.setattr(rec, "op", spy)
    rng = _rng()
    with lampy.Scope():
        xw = lampy.param(rng.normal(size=(3, 2, 4)))
        w = lampy.param(rng.normal(size=(4, 4)))
        h0 = lampy.param(rng.normal(size=(2, 4)))
        rnn_sequence(xw, w, None, h0)
        rnn_sequence(xw, w, None, h0)
    first, second = captured
    g1 = np.ones((3, 2, 4))
    first[id(xw.node)](g1)  # the pass stops here: w's and h0's closures do not run
    address = id(g1)
    del g1
    kept = []
    for _ in range(1000):
        g2 = np.empty((3, 2, 4))
        g2.fill(2.0)
        if id(g2) == address:
            break
        kept.append(g2)
    else:
        pytest.skip("CPython did not reuse the address of the dropped g")
    want = second[id(w.node)](np.full((3, 2, 4), 2.0))
    np.testing.assert_allclose(first[id(w.node)](g2), want)
