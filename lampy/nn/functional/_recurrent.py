"""Fused recurrent ops: one op runs a whole RNN, GRU or LSTM layer over a sequence.

Each op takes the input projection of every time step, ``xw = x @ W_ih.T + b_ih`` of
shape (L, N, G*H) (computed by the caller in one matrix product over the sequence), the
recurrent weight ``W_hh``, its bias and the initial state, and loops over time in numpy
for the recurrent part only. Backward is hand-written backpropagation through time: one
loop over the steps in reverse, then the weight gradients as single matrix products over
all steps. The gates follow PyTorch's order and formulas (``torch.nn.RNN``, ``GRU``,
``LSTM``): LSTM i, f, g, o; GRU r, z, n with ``n = tanh(xw_n + r * (W_hn h + b_hn))``.

These are the building blocks of ``lampy.nn.RNN``, ``GRU``, ``LSTM`` and their cells;
PyTorch has no public functional counterpart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.autograd import scratch
from lampy.nn.functional._shared import SharedInBackward
from lampy.opkit import Variable, contrib_of, needs_grad, op, value_of

__all__ = ["gru_sequence", "lstm_sequence", "rnn_sequence"]

_matmul = np.matmul


def _attach(
    name: str,
    value: np.ndarray,
    compute: Callable[[np.ndarray], dict[str, np.ndarray]],
    **inputs: Any,
) -> Variable:
    """``op(name, value, ...)`` with one Contribution per input that needs a gradient, all
    served by one shared backward computation (keyed by the input's keyword)."""
    wanted = [k for k, x in inputs.items() if needs_grad(x)]
    shared = SharedInBackward(compute, len(wanted))

    def taker(key: str) -> Callable[[np.ndarray], np.ndarray]:
        return lambda g: shared(g).pop(key)

    return op(name, value, *(contrib_of(inputs[k], taker(k)) for k in wanted))


def _order(n: int, reverse: bool) -> range:
    return range(n - 1, -1, -1) if reverse else range(n)


def _previous(seq: np.ndarray, first: np.ndarray, reverse: bool) -> np.ndarray:
    """The state entering each step: ``first`` at the first processed step, then the
    state produced by the step before (in processing order)."""
    prev = np.empty_like(seq)
    if reverse:
        prev[-1] = first
        prev[:-1] = seq[1:]
    else:
        prev[0] = first
        prev[1:] = seq[:-1]
    return prev


def _check(
    name: str,
    xw: np.ndarray,
    gates: int,
    w_hh: np.ndarray,
    b_hh: np.ndarray | None,
    states: list[tuple[str, np.ndarray, int]],
) -> tuple[int, int, int]:
    """Validate the shapes; returns (L, N, H)."""
    if xw.ndim != 3 or xw.shape[2] % gates:
        raise ShapeError(
            f"{name}: xw (the input projection) must have shape (L, N, {gates}*hidden_size), "
            f"got {xw.shape}."
        )
    if xw.dtype.kind != "f":
        raise LampyValueError(f"{name}: xw must be floating point, got {xw.dtype}.")
    length, batch, g = xw.shape
    hidden = g // gates
    width = w_hh.shape[1] if w_hh.ndim == 2 else -1
    if w_hh.shape != (g, width):
        raise ShapeError(f"{name}: w_hh must have shape ({g}, H_out), got {w_hh.shape}.")
    if b_hh is not None and b_hh.shape != (g,):
        raise ShapeError(f"{name}: b_hh must have shape ({g},), got {b_hh.shape}.")
    for label, s, size in states:
        if s.shape != (batch, size):
            raise ShapeError(
                f"{name}: {label} must have shape ({batch}, {size}) (batch, state size), "
                f"got {s.shape}."
            )
    return length, batch, hidden


def _state_width(w_hh: np.ndarray) -> int:
    """The state width ``W_hh`` multiplies (its second axis)."""
    return int(w_hh.shape[1]) if w_hh.ndim == 2 else -1


def rnn_sequence(
    xw: Any,
    w_hh: Any,
    b_hh: Any,
    h0: Any,
    nonlinearity: str = "tanh",
    reverse: bool = False,
) -> Variable:
    """An Elman RNN layer over a sequence: ``h_t = act(xw_t + h_{t-1} @ W_hh.T + b_hh)``.

    Args:
        xw: The input projection ``x @ W_ih.T + b_ih`` of every step, (L, N, H).
        w_hh: The recurrent weight, (H, H).
        b_hh: The recurrent bias (H,), or None.
        h0: The initial state, (N, H).
        nonlinearity: ``"tanh"`` or ``"relu"``.
        reverse: Run from the last step to the first (the backward direction of a
            bidirectional RNN); outputs stay at their steps' positions.

    Returns:
        Every step's state, (L, N, H).

    Raises:
        ShapeError: if the shapes do not fit together.
        LampyValueError: for an unknown nonlinearity.

    Gradient:
        Backpropagation through time: with ``d_t = (G_t + dh_t) * act'(.)``,
        ``dh_{t-1} = d_t @ W_hh``; ``d xw = d``, ``d W_hh = sum_t d_t.T @ h_{t-1}``,
        ``d b_hh = sum d``, ``d h0`` the state gradient left at the first step. relu's
        derivative is 0 where the output is 0, as PyTorch's.
    """
    if nonlinearity not in ("tanh", "relu"):
        raise LampyValueError(
            f"rnn_sequence: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'."
        )
    x, w, h_0 = (
        value_of(xw, name="rnn_sequence"),
        value_of(w_hh, name="rnn_sequence"),
        value_of(h0, name="rnn_sequence"),
    )
    b = None if b_hh is None else value_of(b_hh, name="rnn_sequence")
    length, _, hidden = _check("rnn_sequence", x, 1, w, b, [("h0", h_0, _state_width(w))])
    if w.shape[1] != hidden:
        raise ShapeError(f"rnn_sequence: w_hh must have shape {(hidden, hidden)}, got {w.shape}.")
    out = x + b if b is not None else x.copy()
    tanh = nonlinearity == "tanh"
    wt = w.T
    h = h_0
    for t in _order(length, reverse):
        a = out[t]
        a += _matmul(h, wt)
        if tanh:
            np.tanh(a, out=a)
        else:
            np.maximum(a, 0, out=a)
        h = a

    def backward(g: np.ndarray) -> dict[str, np.ndarray]:
        deriv = 1 - out * out if tanh else (out > 0).astype(out.dtype)
        d = np.empty_like(out)
        dh = np.zeros_like(h_0)
        for t in _order(length, not reverse):
            np.multiply(g[t] + dh, deriv[t], out=d[t])
            dh = _matmul(d[t], w)
        flat = d.reshape(-1, hidden)
        res = {"h0": dh}
        if needs_grad(w_hh):
            res["w_hh"] = _matmul(flat.T, _previous(out, h_0, reverse).reshape(-1, hidden))
        if needs_grad(b_hh):
            res["b_hh"] = flat.sum(axis=0)
        res["xw"] = d
        return res

    return _attach("rnn_sequence", out, backward, xw=xw, w_hh=w_hh, b_hh=b_hh, h0=h0)


def gru_sequence(xw: Any, w_hh: Any, b_hh: Any, h0: Any, reverse: bool = False) -> Variable:
    """A GRU layer over a sequence, with PyTorch's gates and formulas.

    With ``hw = h_{t-1} @ W_hh.T + b_hh`` split as (r, z, n) like ``xw``:
    ``r = sigmoid(xw_r + hw_r)``, ``z = sigmoid(xw_z + hw_z)``,
    ``n = tanh(xw_n + r * hw_n)``, ``h_t = (1 - z) * n + z * h_{t-1}``.

    Args:
        xw: The input projection ``x @ W_ih.T + b_ih`` of every step, (L, N, 3H).
        w_hh: The recurrent weight, (3H, H).
        b_hh: The recurrent bias (3H,), or None.
        h0: The initial state, (N, H).
        reverse: Run from the last step to the first; outputs stay in place.

    Returns:
        Every step's state, (L, N, H).

    Raises:
        ShapeError: if the shapes do not fit together.

    Gradient:
        Backpropagation through time through the formulas above; the reset gate's
        share reaches ``hw_n`` (and so ``W_hh``, ``b_hh``) as ``d n_pre * r``. Weight and
        bias gradients are one matrix product / sum over all steps.
    """
    x, w, h_0 = (
        value_of(xw, name="gru_sequence"),
        value_of(w_hh, name="gru_sequence"),
        value_of(h0, name="gru_sequence"),
    )
    b = None if b_hh is None else value_of(b_hh, name="gru_sequence")
    length, batch, hidden = _check("gru_sequence", x, 3, w, b, [("h0", h_0, _state_width(w))])
    if w.shape[1] != hidden:
        raise ShapeError(
            f"gru_sequence: w_hh must have shape {(3 * hidden, hidden)}, got {w.shape}."
        )
    hh2 = 2 * hidden
    rz = np.empty((length, batch, hh2), dtype=x.dtype)
    hwn = np.empty((length, batch, hidden), dtype=x.dtype)
    ns = np.empty_like(hwn)
    out = np.empty_like(hwn)
    wt = w.T
    neg_x = np.negative(x[..., :hh2])  # sigmoid(v) = 1 / (1 + exp(-v)) on r and z
    one = x.dtype.type(1)
    h = h_0
    with np.errstate(over="ignore"):
        for t in _order(length, reverse):
            hw = _matmul(h, wt)
            if b is not None:
                hw += b
            a = rz[t]
            np.subtract(neg_x[t], hw[:, :hh2], out=a)
            np.exp(a, out=a)
            a += one
            np.reciprocal(a, out=a)
            hwn[t] = hw[:, hh2:]
            n = ns[t]
            np.multiply(a[:, :hidden], hw[:, hh2:], out=n)
            n += x[t, :, hh2:]
            np.tanh(n, out=n)
            hn = out[t]
            np.subtract(h, n, out=hn)
            hn *= a[:, hidden:]
            hn += n
            h = hn

    def backward(g: np.ndarray) -> dict[str, np.ndarray]:
        r, z = rz[..., :hidden], rz[..., hidden:]
        prev = _previous(out, h_0, reverse)
        q_n = (1 - z) * (1 - ns * ns)
        q_z = (prev - ns) * z * (1 - z)
        q_r = hwn * r * (1 - r)
        dx = np.empty_like(x, shape=(length, batch, 3 * hidden))
        dhw = np.empty_like(dx)
        dh = np.zeros_like(h_0)
        for t in _order(length, not reverse):
            dht = g[t] + dh
            dxt, dhwt = dx[t], dhw[t]
            dan = dxt[:, hh2:]
            np.multiply(dht, q_n[t], out=dan)
            np.multiply(dht, q_z[t], out=dxt[:, hidden:hh2])
            np.multiply(dan, q_r[t], out=dxt[:, :hidden])
            dhwt[:, :hh2] = dxt[:, :hh2]
            np.multiply(dan, r[t], out=dhwt[:, hh2:])
            dh = dht * z[t]
            dh += _matmul(dhwt, w)
        res = {"h0": dh}
        flat = dhw.reshape(-1, 3 * hidden)
        if needs_grad(w_hh):
            res["w_hh"] = _matmul(flat.T, prev.reshape(-1, hidden))
        if needs_grad(b_hh):
            res["b_hh"] = flat.sum(axis=0)
        res["xw"] = dx
        return res

    return _attach("gru_sequence", out, backward, xw=xw, w_hh=w_hh, b_hh=b_hh, h0=h0)


def lstm_sequence(
    xw: Any,
    w_hh: Any,
    b_hh: Any,
    h0: Any,
    c0: Any,
    w_hr: Any = None,
    reverse: bool = False,
) -> Variable:
    """An LSTM layer over a sequence, with PyTorch's gates (i, f, g, o) and projection.

    With ``a = xw_t + h_{t-1} @ W_hh.T + b_hh`` split as (i, f, g, o):
    ``c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)``,
    ``h_t = sigmoid(o) * tanh(c_t)``, then ``h_t = h_t @ W_hr.T`` with a projection.

    Args:
        xw: The input projection ``x @ W_ih.T + b_ih`` of every step, (L, N, 4H).
        w_hh: The recurrent weight, (4H, P) where P is the projection size (H without).
        b_hh: The recurrent bias (4H,), or None.
        h0: The initial hidden state, (N, P).
        c0: The initial cell state, (N, H).
        w_hr: The projection weight (P, H), or None.
        reverse: Run from the last step to the first; outputs stay in place.

    Returns:
        Hidden and cell states of every step packed on the last axis, (L, N, P + H):
        ``[..., :P]`` is ``h_t``, ``[..., P:]`` is ``c_t``.

    Raises:
        ShapeError: if the shapes do not fit together.

    Gradient:
        Backpropagation through time; the cell state's gradient flows back through
        ``sigmoid(f)``. Gradients reaching the packed output's ``c_t`` (e.g. through
        ``c_n``) join the cell-state gradient. Weight and bias gradients are one matrix
        product / sum over all steps.
    """
    x, w, h_0, c_0 = (
        value_of(xw, name="lstm_sequence"),
        value_of(w_hh, name="lstm_sequence"),
        value_of(h0, name="lstm_sequence"),
        value_of(c0, name="lstm_sequence"),
    )
    b = None if b_hh is None else value_of(b_hh, name="lstm_sequence")
    wr = None if w_hr is None else value_of(w_hr, name="lstm_sequence")
    p = _state_width(w)
    hidden = x.shape[2] // 4 if x.ndim == 3 else -1
    length, batch, hidden = _check(
        "lstm_sequence", x, 4, w, b, [("h0", h_0, p), ("c0", c_0, hidden)]
    )
    if wr is None and p != hidden:
        raise ShapeError(
            f"lstm_sequence: without w_hr, w_hh must have shape {(4 * hidden, hidden)}, "
            f"got {w.shape}."
        )
    if wr is not None and wr.shape != (p, hidden):
        raise ShapeError(f"lstm_sequence: w_hr must have shape {(p, hidden)}, got {wr.shape}.")
    h3 = 3 * hidden
    # All four gates through one exp: sigmoid(v) = 1 / (1 + exp(-v)) on i, f, o and
    # tanh(v) = 2 / (1 + exp(-2 v)) - 1 on g. The pre-activations are kept negated and
    # scaled (-1, -1, -2, -1 per gate), so each step adds h @ (W_hh.T * scale) and
    # exponentiates; exp overflowing to inf gives the correct limits 0 and -1.
    scale = np.full(4 * hidden, -1, dtype=x.dtype)
    scale[2 * hidden : h3] = -2
    numerator = np.ones(4 * hidden, dtype=x.dtype)
    numerator[2 * hidden : h3] = 2
    acts = np.multiply(x + b if b is not None else x, scale)
    out = np.empty((length, batch, p + hidden), dtype=x.dtype)
    tcs = np.empty((length, batch, hidden), dtype=x.dtype)
    ms = tcs if wr is None else np.empty_like(tcs)
    wt = w.T * scale
    wrt = None if wr is None else wr.T
    one = x.dtype.type(1)
    h, c = h_0, c_0
    with np.errstate(over="ignore"):
        for t in _order(length, reverse):
            a = acts[t]
            a += _matmul(h, wt)
            np.exp(a, out=a)
            a += one
            np.divide(numerator, a, out=a)
            a[:, 2 * hidden : h3] -= one
            cn = out[t, :, p:]
            np.multiply(a[:, hidden : 2 * hidden], c, out=cn)
            cn += a[:, :hidden] * a[:, 2 * hidden : h3]
            tc = tcs[t]
            np.tanh(cn, out=tc)
            if wrt is None:
                h = out[t, :, :p]
                np.multiply(a[:, h3:], tc, out=h)
            else:
                m = ms[t]
                np.multiply(a[:, h3:], tc, out=m)
                h = out[t, :, :p]
                h[...] = _matmul(m, wrt)
            c = cn

    def backward(g: np.ndarray) -> dict[str, np.ndarray]:
        gh, gc = g[..., :p], g[..., p:]
        hs, cs = out[..., :p], out[..., p:]
        i, f, gg, o = (acts[..., k * hidden : (k + 1) * hidden] for k in range(4))
        cprev = _previous(cs, c_0, reverse)
        # partner * derivative for each gate's pre-activation.
        pd = np.empty_like(acts)
        np.multiply(gg, i * (1 - i), out=pd[..., :hidden])
        np.multiply(cprev, f * (1 - f), out=pd[..., hidden : 2 * hidden])
        np.multiply(i, 1 - gg * gg, out=pd[..., 2 * hidden : h3])
        np.multiply(tcs, o * (1 - o), out=pd[..., h3:])
        otc = o * (1 - tcs * tcs)
        da = np.empty_like(acts)
        dhs = np.empty((length, batch, p), dtype=x.dtype) if wr is not None else None
        mult = np.empty((batch, 4, hidden), dtype=x.dtype)
        mult_flat = mult.reshape(batch, 4 * hidden)
        dh = np.zeros_like(h_0)
        dc = np.zeros_like(c_0)
        held = pd.nbytes + da.nbytes + otc.nbytes + (0 if dhs is None else dhs.nbytes)
        with scratch(held):  # the step gradients, counted in the scope while they live
            for t in _order(length, not reverse):
                dht = gh[t] + dh
                if dhs is not None and wr is not None:
                    dhs[t] = dht
                    dht = _matmul(dht, wr)
                dc = dc + gc[t]
                dc += dht * otc[t]
                mult[:, :3] = dc[:, None, :]
                mult[:, 3] = dht
                np.multiply(mult_flat, pd[t], out=da[t])
                dc *= f[t]
                dh = _matmul(da[t], w)
        res = {"h0": dh, "c0": dc}
        flat = da.reshape(-1, 4 * hidden)
        if needs_grad(w_hh):
            res["w_hh"] = _matmul(flat.T, _previous(hs, h_0, reverse).reshape(-1, p))
        if needs_grad(b_hh):
            res["b_hh"] = flat.sum(axis=0)
        if dhs is not None and needs_grad(w_hr):
            res["w_hr"] = _matmul(dhs.reshape(-1, p).T, ms.reshape(-1, hidden))
        res["xw"] = da
        return res

    return _attach(
        "lstm_sequence", out, backward, xw=xw, w_hh=w_hh, b_hh=b_hh, h0=h0, c0=c0, w_hr=w_hr
    )
