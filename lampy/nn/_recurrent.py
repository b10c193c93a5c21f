"""Recurrent modules of ``lampy.nn``: RNN, GRU and LSTM (multi-layer, bidirectional,
LSTM projections), with PyTorch's constructor arguments, initialisation, state_dict keys
and forward semantics (``torch.nn.RNN``, ``GRU``, ``LSTM``).

Each layer and direction computes its input projection ``x @ W_ih.T + b_ih`` for the
whole sequence in one matrix product, then runs one fused op over time
(``lampy.nn.functional``). The cells (RNNCell, GRUCell, LSTMCell) are in
``_rnn_cells.py``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, TypeVar

import attrs
import numpy as np

from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.nn import init as _init
from lampy.nn._helpers import check_dtype, check_size, rng_or_default, shape_of
from lampy.nn._module import Module, inline
from lampy.nn.functional import dropout as _dropout
from lampy.nn.functional import linear
from lampy.nn.functional._recurrent import gru_sequence, lstm_sequence, rnn_sequence
from lampy.opkit import Operand, Variable, param, value_of
from lampy.ops import concatenate, expand_dims, squeeze, stack, swapaxes

__all__ = ["GRU", "LSTM", "RNN", "RNNBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


def _init_weights(
    gates: int,
    input_size: int,
    hidden_size: int,
    num_layers: int,
    bias: bool,
    bidirectional: bool,
    proj_size: int,
    rng: np.random.Generator,
    dtype: Any,
) -> dict[str, Variable]:
    """PyTorch's parameters, in its order, each ``U(-1/sqrt(hidden_size), ...)``."""
    bound = 1 / math.sqrt(hidden_size)
    out_size = proj_size or hidden_size
    d = 2 if bidirectional else 1
    shapes: dict[str, tuple[int, ...]] = {}
    for layer in range(num_layers):
        n_in = input_size if layer == 0 else out_size * d
        for direction in range(d):
            sfx = f"_l{layer}" + ("_reverse" if direction else "")
            shapes["weight_ih" + sfx] = (gates * hidden_size, n_in)
            shapes["weight_hh" + sfx] = (gates * hidden_size, out_size)
            if bias:
                shapes["bias_ih" + sfx] = (gates * hidden_size,)
                shapes["bias_hh" + sfx] = (gates * hidden_size,)
            if proj_size:
                shapes["weight_hr" + sfx] = (proj_size, hidden_size)
    return {
        k: param(_init.uniform(s, -bound, bound, rng=rng, dtype=dtype), copy=False)
        for k, s in shapes.items()
    }


_R = TypeVar("_R", bound="RNNBase")


@attrs.frozen(eq=False, repr=False)
class RNNBase(Module):
    """What RNN, GRU and LSTM share: the settings, the weights (named as PyTorch's
    ``weight_ih_l0``, ``weight_hh_l0_reverse``...) and the layer loop.

    Attributes:
        mode: ``"RNN_TANH"``, ``"RNN_RELU"``, ``"GRU"`` or ``"LSTM"``.
        weights: The parameters by PyTorch's names, in its state_dict order.
        rng: The generator drawing inter-layer dropout masks.
    """

    mode: str
    input_size: int
    hidden_size: int
    num_layers: int
    bias: bool
    batch_first: bool
    dropout: float
    bidirectional: bool
    proj_size: int
    weights: dict[str, Variable] = inline()
    rng: np.random.Generator | None = None

    @classmethod
    def _build(
        cls: type[_R],
        mode: str,
        input_size: Any,
        hidden_size: Any,
        num_layers: Any,
        bias: Any,
        batch_first: Any,
        dropout: Any,
        bidirectional: Any,
        proj_size: Any,
        dtype: Any,
        rng: Any,
    ) -> _R:
        name = f"{cls.__name__}.init"
        n_in = check_size(name, "input_size", input_size)
        hidden = check_size(name, "hidden_size", hidden_size)
        layers = check_size(name, "num_layers", num_layers)
        proj = check_size(name, "proj_size", proj_size, 0)
        if proj >= hidden:
            raise LampyValueError(
                f"{name}: proj_size ({proj}) has to be smaller than hidden_size ({hidden})."
            )
        for what, v in (
            ("bias", bias),
            ("batch_first", batch_first),
            ("bidirectional", bidirectional),
        ):
            if not isinstance(v, bool | np.bool_):
                raise LampyTypeError(f"{name}: {what} must be a bool, got {v!r}.")
        if not isinstance(dropout, numbers.Real) or isinstance(dropout, bool):
            raise LampyTypeError(f"{name}: dropout must be a number in [0, 1], got {dropout!r}.")
        p = float(dropout)
        if not 0 <= p <= 1:
            raise LampyValueError(
                f"{name}: dropout must be a number in [0, 1] (the probability of zeroing an "
                f"element), got {dropout!r}."
            )
        if p > 0 and layers == 1:
            warnings.warn(
                f"{name}: dropout is applied after every recurrent layer but the last, so "
                f"dropout={p} with num_layers=1 has no effect.",
                UserWarning,
                stacklevel=3,
            )
        if np.dtype(dtype).kind != "f":
            raise DTypeError(f"{name}: dtype must be a floating dtype, got {np.dtype(dtype)}.")
        r = rng_or_default(name, rng)
        weights = _init_weights(
            _GATES[mode], n_in, hidden, layers, bool(bias), bool(bidirectional), proj, r, dtype
        )
        return cls(
            mode, n_in, hidden, layers, bool(bias), bool(batch_first), p, bool(bidirectional),
            proj, weights, rng,
        )  # fmt: skip

    # ----------------------------------------------------------------- info
    @property
    def num_directions(self) -> int:
        """2 for a bidirectional module, else 1."""
        return 2 if self.bidirectional else 1

    @property
    def dtype(self) -> np.dtype[Any]:
        """The parameters' dtype."""
        return next(iter(self.weights.values())).dtype

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    # ----------------------------------------------------------------- forward
    def _check_input(self, input: Any) -> tuple[int, ...]:
        s = shape_of(input)
        layout = "(N, L, {0}) or (L, {0})" if self.batch_first else "(L, N, {0}) or (L, {0})"
        expected = layout.format(self.input_size)
        if len(s) not in (2, 3):
            raise ShapeError(f"{self!r}: expected input {expected}, got {len(s)}-D shape {s}.")
        if s[-1] != self.input_size:
            raise ShapeError(
                f"{self!r}: expected input {expected}, got shape {s}: the last axis has "
                f"{s[-1]} features, but input_size is {self.input_size}."
            )
        length = s[1] if (len(s) == 3 and self.batch_first) else s[0]
        if length == 0:
            raise ShapeError(
                f"{self!r}: the sequence is empty (input shape {s}); an RNN needs at least "
                "one time step."
            )
        check_dtype(self, self.dtype, ("the input", input))
        return s

    def _check_state(self, what: str, state: Any, batched: bool, batch: int, size: int) -> Any:
        """``state`` as (num_layers * num_directions, N, size), checked."""
        rows = self.num_layers * self.num_directions
        want = (rows, batch, size) if batched else (rows, size)
        s = shape_of(state)
        if s != want:
            unbatched = "" if batched else " (the input is unbatched, so the state is 2-D)"
            last = "proj_size" if size == self.proj_size else "hidden_size"
            raise ShapeError(
                f"{self!r}: expected {what} of shape {want} (num_layers * num_directions, "
                f"{'batch, ' if batched else ''}{last})"
                f"{unbatched}, got {s}."
            )
        check_dtype(self, self.dtype, (what, state))
        if batched:
            return state
        if type(state) is Variable:
            return expand_dims(state, 1)
        return np.asarray(value_of(state, name=f"{type(self).__name__}.forward"))[:, None]

    def _run(self, input: Any, states: list[Any] | None) -> tuple[Any, list[Any]]:
        """Run the layers over (L, N, H_in) ``input`` from ``states`` (one array of
        (layers * directions, N, ·) per state kind, or None for zeros).

        Returns:
            The last layer's output (L, N, D * H_out) and the final states, each
            (layers * directions, N, ·).
        """
        w = self.weights
        n_batch = shape_of(input)[1]
        out_size = self.proj_size or self.hidden_size
        sizes = [out_size, self.hidden_size] if self.mode == "LSTM" else [out_size]
        zeros = [np.zeros((n_batch, s), dtype=self.dtype) for s in sizes]
        finals: list[list[Any]] = [[] for _ in sizes]
        x = input
        d = self.num_directions
        for layer in range(self.num_layers):
            outs = []
            for direction in range(d):
                sfx = f"_l{layer}" + ("_reverse" if direction else "")
                row = layer * d + direction
                init = zeros if states is None else [s[row] for s in states]
                xw = linear(x, w["weight_ih" + sfx], w.get("bias_ih" + sfx))
                reverse = direction == 1
                last = 0 if reverse else -1
                b_hh = w.get("bias_hh" + sfx)
                if self.mode == "LSTM":
                    packed = lstm_sequence(
                        xw, w["weight_hh" + sfx], b_hh, init[0], init[1],
                        w.get("weight_hr" + sfx), reverse,
                    )  # fmt: skip
                    seq = packed[:, :, :out_size]
                    finals[0].append(seq[last])
                    finals[1].append(packed[last, :, out_size:])
                elif self.mode == "GRU":
                    seq = gru_sequence(xw, w["weight_hh" + sfx], b_hh, init[0], reverse)
                    finals[0].append(seq[last])
                else:
                    nl = "tanh" if self.mode == "RNN_TANH" else "relu"
                    seq = rnn_sequence(xw, w["weight_hh" + sfx], b_hh, init[0], nl, reverse)
                    finals[0].append(seq[last])
                outs.append(seq)
            x = outs[0] if d == 1 else concatenate(outs, axis=2)
            if self.training and self.dropout > 0 and layer < self.num_layers - 1:
                x = _dropout(x, self.dropout, True, rng=self.rng)
        return x, [stack(f, axis=0) for f in finals]

    def _forward(self, input: Any, hx: list[Any] | None) -> tuple[Any, list[Any]]:
        s = self._check_input(input)
        batched = len(s) == 3
        batch = (s[0] if self.batch_first else s[1]) if batched else 1
        out_size = self.proj_size or self.hidden_size
        states = None
        if hx is not None:
            names = ["hx"] if self.mode != "LSTM" else ["h_0", "c_0"]
            sizes = [out_size] if self.mode != "LSTM" else [out_size, self.hidden_size]
            states = [
                self._check_state(n, h, batched, batch, size)
                for n, h, size in zip(names, hx, sizes, strict=True)
            ]
        x = input
        if not batched:
            x = expand_dims(x, 1)
        elif self.batch_first:
            x = swapaxes(x, 0, 1)
        out, finals = self._run(x, states)
        if not batched:
            out = squeeze(out, 1)
            finals = [squeeze(f, 1) for f in finals]
        elif self.batch_first:
            out = swapaxes(out, 0, 1)
        return out, finals


@attrs.frozen(eq=False, repr=False)
class RNN(RNNBase):
    """A multi-layer Elman RNN (``torch.nn.RNN``): ``h_t = act(x_t @ W_ih.T + b_ih +
    h_{t-1} @ W_hh.T + b_hh)`` with ``act`` tanh or relu.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     rnn = nn.RNN.init(10, 20, num_layers=2, rng=np.random.default_rng(0))
        ...     output, h_n = rnn(np.ones((5, 3, 10), np.float32))
        ...     print(output.shape, h_n.shape)
        (5, 3, 20) (2, 3, 20)
    """

    @property
    def nonlinearity(self) -> str:
        """``"tanh"`` or ``"relu"``."""
        return "relu" if self.mode == "RNN_RELU" else "tanh"

    @classmethod
    def init(
        cls,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> RNN:
        """An RNN with PyTorch's initialisation: every weight and bias ``U(-k, k)``,
        ``k = 1/sqrt(hidden_size)``.

        Args:
            input_size: Features of each input step.
            hidden_size: Features of the hidden state.
            num_layers: Stacked recurrent layers.
            nonlinearity: ``"tanh"`` or ``"relu"``.
            bias: Whether the layers have ``bias_ih`` and ``bias_hh``.
            batch_first: Whether batched input and output are (N, L, ·) instead of (L, N, ·).
            dropout: Dropout probability on each layer's output but the last, in training.
            bidirectional: Whether each layer also runs backwards in time.
            dtype: The parameters' dtype.
            rng: The generator for the initial weights and dropout masks (None: lampy's
                default generator).

        Raises:
            LampyValueError: for non-positive sizes, an unknown nonlinearity, or dropout
                outside [0, 1].
        """
        if nonlinearity not in ("tanh", "relu"):
            raise LampyValueError(
                f"RNN.init: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'."
            )
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        return cls._build(
            mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, dtype, rng,
        )  # fmt: skip

    def forward(self, input: Operand, hx: Operand | None = None) -> tuple[Variable, Variable]:
        """Run the RNN over a sequence.

        Args:
            input: (L, N, input_size), (N, L, input_size) with ``batch_first``, or
                unbatched (L, input_size).
            hx: The initial hidden state (num_layers * num_directions, N, hidden_size)
                ((num_layers * num_directions, hidden_size) when unbatched); zeros if None.

        Returns:
            ``(output, h_n)``: every step's last-layer state (L, N, D * hidden_size), both
            directions concatenated, laid out as the input; and each layer's and
            direction's final state, (num_layers * D, N, hidden_size).

        Raises:
            ShapeError: for an input or hx of the wrong shape, naming the expected one.
            DTypeError: if their dtype is not the parameters'.
        """
        out, finals = self._forward(input, None if hx is None else [hx])
        return out, finals[0]


@attrs.frozen(eq=False, repr=False)
class GRU(RNNBase):
    """A multi-layer gated recurrent unit RNN (``torch.nn.GRU``), gates in PyTorch's
    order r, z, n:

    ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``, ``z = sigmoid(W_iz x + b_iz + W_hz h +
    b_hz)``, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     gru = nn.GRU.init(10, 20, batch_first=True, rng=np.random.default_rng(0))
        ...     output, h_n = gru(np.ones((3, 5, 10), np.float32))
        ...     print(output.shape, h_n.shape)
        (3, 5, 20) (1, 3, 20)
    """

    @classmethod
    def init(
        cls,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> GRU:
        """A GRU with PyTorch's initialisation: every weight and bias ``U(-k, k)``,
        ``k = 1/sqrt(hidden_size)``. The arguments are ``lampy.nn.RNN.init``'s
        without ``nonlinearity``."""
        return cls._build(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, dtype, rng,
        )  # fmt: skip

    def forward(self, input: Operand, hx: Operand | None = None) -> tuple[Variable, Variable]:
        """Run the GRU over a sequence: shapes, result and errors as
        ``lampy.nn.RNN.forward``."""
        out, finals = self._forward(input, None if hx is None else [hx])
        return out, finals[0]


@attrs.frozen(eq=False, repr=False)
class LSTM(RNNBase):
    """A multi-layer long short-term memory RNN (``torch.nn.LSTM``), gates in PyTorch's
    order i, f, g, o:

    ``c' = sigmoid(f) * c + sigmoid(i) * tanh(g)``, ``h' = sigmoid(o) * tanh(c')``, each
    gate's pre-activation ``W_i* x + b_i* + W_h* h + b_h*``. With ``proj_size > 0``,
    ``h' = (sigmoid(o) * tanh(c')) @ W_hr.T`` has ``proj_size`` features.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     lstm = nn.LSTM.init(10, 20, num_layers=2, rng=np.random.default_rng(0))
        ...     output, (h_n, c_n) = lstm(np.ones((5, 3, 10), np.float32))
        ...     print(output.shape, h_n.shape, c_n.shape)
        (5, 3, 20) (2, 3, 20) (2, 3, 20)
    """

    @classmethod
    def init(
        cls,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> LSTM:
        """An LSTM with PyTorch's initialisation: every weight and bias ``U(-k, k)``,
        ``k = 1/sqrt(hidden_size)``. The arguments are ``lampy.nn.GRU.init``'s
        plus ``proj_size``: when positive, each layer's hidden state is projected to
        ``proj_size`` features by ``weight_hr_l{k}`` (must be below ``hidden_size``)."""
        return cls._build(
            "LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, proj_size, dtype, rng,
        )  # fmt: skip

    def forward(
        self, input: Operand, hx: tuple[Operand, Operand] | None = None
    ) -> tuple[Variable, tuple[Variable, Variable]]:
        """Run the LSTM over a sequence.

        Args:
            input: (L, N, input_size), (N, L, input_size) with ``batch_first``, or
                unbatched (L, input_size).
            hx: ``(h_0, c_0)``: (num_layers * D, N, H_out) and (num_layers * D, N,
                hidden_size), without the N axis when unbatched, where ``H_out`` is
                ``proj_size`` or ``hidden_size``; zeros if None.

        Returns:
            ``(output, (h_n, c_n))``: every step's last-layer hidden state (L, N, D *
            H_out) laid out as the input, and each layer's and direction's final hidden
            and cell states.

        Raises:
            LampyTypeError: if ``hx`` is not a pair.
            ShapeError: for an input or state of the wrong shape, naming the expected one.
            DTypeError: if their dtype is not the parameters'.
        """
        if hx is not None and (not isinstance(hx, tuple | list) or len(hx) != 2):
            raise LampyTypeError(
                f"{self!r}: hx must be a pair (h_0, c_0), got {type(hx).__name__}"
                f"{'' if not isinstance(hx, tuple | list) else f' of length {len(hx)}'}."
            )
        out, finals = self._forward(input, None if hx is None else list(hx))
        return out, (finals[0], finals[1])
