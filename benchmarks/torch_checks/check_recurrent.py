"""Cross-check lampy's recurrent modules against PyTorch (needs torch installed).

For each configuration: build the torch module, copy its state_dict into the lampy module
with ``load_state_dict``, run forward and backward on the same input and initial state,
and compare outputs, final states, input and state gradients and every parameter's
gradient, in float64 and float32; then load lampy's state_dict back into torch. Prints a
table of the largest absolute differences and exits non-zero on a mismatch.

Run: ``.venv/bin/python benchmarks/torch_checks/check_recurrent.py``
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import torch

import lampy
from lampy.nn._recurrent import GRU, LSTM, RNN
from lampy.nn._rnn_cells import GRUCell, LSTMCell, RNNCell

TOL = {np.float64: 1e-9, np.float32: 2e-4}

SEQ = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "batch_first": True, "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"bias": False, "proj_size": 2}),
]
CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("GRUCell", {}), ("LSTMCell", {})]
LAMPY = {
    "RNN": RNN,
    "GRU": GRU,
    "LSTM": LSTM,
    "RNNCell": RNNCell,
    "GRUCell": GRUCell,
    "LSTMCell": LSTMCell,
}


def _max_diff(a: Any, b: Any) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def _flat(x: Any) -> list[Any]:
    return [y for item in x for y in _flat(item)] if isinstance(x, tuple | list) else [x]


def check(name: str, kw: dict[str, Any], dtype: Any, unbatched: bool, rng: Any) -> float:
    """Largest difference between lampy and torch over all compared quantities."""
    torch.manual_seed(int(rng.integers(1 << 30)))
    tdt = torch.float64 if dtype == np.float64 else torch.float32
    n_in, hidden, length, batch = 4, 6, 5, 3
    tm = getattr(torch.nn, name)(n_in, hidden, **kw).to(tdt)
    cell = name.endswith("Cell")
    bf = kw.get("batch_first", False)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    out_size = kw.get("proj_size", 0) or hidden
    if cell:
        x = rng.normal(size=(n_in,) if unbatched else (batch, n_in))
        hshape = (hidden,) if unbatched else (batch, hidden)
        states = [rng.normal(size=hshape)] * (2 if name == "LSTMCell" else 1)
    else:
        x = rng.normal(
            size=(length, n_in)
            if unbatched
            else ((batch, length, n_in) if bf else (length, batch, n_in))
        )
        lead = (layers,) if unbatched else (layers, batch)
        states = [rng.normal(size=(*lead, out_size))]
        if name == "LSTM":
            states.append(rng.normal(size=(*lead, hidden)))
    x = x.astype(dtype)
    states = [s.astype(dtype) for s in states]

    tx = torch.tensor(x, requires_grad=True)
    ts = [torch.tensor(s, requires_grad=True) for s in states]
    t_out = _flat(tm(tx, tuple(ts) if name.startswith("LSTM") else ts[0]))
    cots = [rng.normal(size=tuple(o.shape)).astype(dtype) for o in t_out]
    sum(
        ((o * torch.tensor(c)).sum() for o, c in zip(t_out, cots, strict=True)),
        torch.zeros((), dtype=tdt),
    ).backward()

    diffs = []
    with lampy.Scope():
        lm = LAMPY[name].init(n_in, hidden, **kw, dtype=dtype, rng=np.random.default_rng(1))
        lm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
        assert list(lm.state_dict()) == list(tm.state_dict()), "state_dict keys differ"
        assert lm.num_parameters() == sum(p.numel() for p in tm.parameters())
        lx = lampy.param(x)
        ls = [lampy.param(s) for s in states]
        res = lm(lx, tuple(ls) if name.startswith("LSTM") else ls[0])
        l_out = _flat(res)
        for lo, to in zip(l_out, t_out, strict=True):
            assert lo.dtype == dtype
            diffs.append(_max_diff(lo.value, to.detach().numpy()))
        loss = sum(
            (lampy.sum(o * c) for o, c in zip(l_out, cots, strict=True)),
            lampy.const(np.zeros((), dtype)),
        )
        loss.backward()
        diffs.append(_max_diff(lx.grad, tx.grad.numpy()))
        for s, t in zip(ls, ts, strict=True):
            diffs.append(_max_diff(s.grad, t.grad.numpy()))
        tgrads = dict(tm.named_parameters())
        for k, p in lm.named_parameters():
            diffs.append(_max_diff(p.grad, tgrads[k].grad.numpy()))
        back = getattr(torch.nn, name)(n_in, hidden, **kw).to(tdt)
        back.load_state_dict({k: torch.tensor(np.array(v)) for k, v in lm.state_dict().items()})
        for k, v in back.state_dict().items():
            diffs.append(_max_diff(v.numpy(), tm.state_dict()[k].numpy()))
    return max(diffs)


def main() -> int:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    bad = 0
    print(f"{'module':<10} {'config':<72} {'dtype':<8} {'unbatched':<9} max|diff|")
    for name, kw in SEQ + CELLS:
        for dtype in (np.float64, np.float32):
            for unbatched in (False, True):
                d = check(name, kw, dtype, unbatched, rng)
                ok = d <= TOL[dtype]
                bad += not ok
                flag = "" if ok else "  MISMATCH"
                dt = np.dtype(dtype).name
                print(f"{name:<10} {kw!s:<72} {dt:<8} {unbatched!s:<9} {d:.2e}{flag}")
    print("all match" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
