"""Single-step recurrent cells of ``lampy.nn``: RNNCell, GRUCell and LSTMCell, with
PyTorch's constructor arguments, initialisation (every weight and bias ``U(-k, k)``,
``k = 1/sqrt(hidden_size)``), state_dict keys (``weight_ih``, ``weight_hh``, ``bias_ih``,
``bias_hh``) and forward semantics (``torch.nn.RNNCell``, ``GRUCell``, ``LSTMCell``).

A cell step is the one-step case of the fused sequence ops of
``lampy.nn.functional``: one matrix product for the input projection, one op
for the recurrence.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.nn import init as _init
from lampy.nn._helpers import check_dtype, check_size, rng_or_default, shape_of
from lampy.nn._module import Module
from lampy.nn.functional import linear
from lampy.nn.functional._recurrent import gru_sequence, lstm_sequence, rnn_sequence
from lampy.opkit import Operand, Variable, param, value_of
from lampy.ops import reshape

__all__ = ["GRUCell", "LSTMCell", "RNNCell", "RNNCellBase"]


def _weights(
    owner: str, gates: int, input_size: Any, hidden_size: Any, bias: Any, dtype: Any, rng: Any
) -> tuple[Variable, Variable, Variable | None, Variable | None]:
    n_in = check_size(owner, "input_size", input_size)
    hidden = check_size(owner, "hidden_size", hidden_size)
    if not isinstance(bias, bool | np.bool_):
        raise LampyTypeError(f"{owner}: bias must be a bool, got {bias!r}.")
    if np.dtype(dtype).kind != "f":
        raise DTypeError(f"{owner}: dtype must be a floating dtype, got {np.dtype(dtype)}.")
    r = rng_or_default(owner, rng)
    k = 1 / math.sqrt(hidden)

    def draw(*shape: int) -> Variable:
        return param(_init.uniform(shape, -k, k, rng=r, dtype=dtype), copy=False)

    w_ih, w_hh = draw(gates * hidden, n_in), draw(gates * hidden, hidden)
    if not bias:
        return w_ih, w_hh, None, None
    return w_ih, w_hh, draw(gates * hidden), draw(gates * hidden)


@attrs.frozen(eq=False, repr=False)
class RNNCellBase(Module):
    """What the cells share: the four parameters, in PyTorch's order, and input checks.

    Attributes:
        weight_ih: (G * hidden_size, input_size), G the number of gates (1, 3 or 4).
        weight_hh: (G * hidden_size, hidden_size).
        bias_ih: (G * hidden_size,) or None.
        bias_hh: (G * hidden_size,) or None.
    """

    weight_ih: Variable
    weight_hh: Variable
    bias_ih: Variable | None = None
    bias_hh: Variable | None = None

    @property
    def input_size(self) -> int:
        """Features of the input."""
        return int(self.weight_ih.shape[1])

    @property
    def hidden_size(self) -> int:
        """Features of the hidden state."""
        return int(self.weight_hh.shape[1])

    @property
    def bias(self) -> bool:
        """Whether the cell has biases."""
        return self.bias_ih is not None

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={getattr(self, 'nonlinearity', 'tanh')!r}"
        return s

    def _check(self, input: Any, states: list[tuple[str, Any]]) -> tuple[Any, list[Any]]:
        """The input as (1, N, input_size) and the states as (N, hidden_size)."""
        s = shape_of(input)
        dtype = self.weight_ih.dtype
        want = f"(N, {self.input_size}) or ({self.input_size},)"
        if len(s) not in (1, 2):
            raise ShapeError(f"{self!r}: expected input {want}, got {len(s)}-D shape {s}.")
        if s[-1] != self.input_size:
            raise ShapeError(
                f"{self!r}: expected input {want}, got shape {s}: the last axis has {s[-1]} "
                f"features, but input_size is {self.input_size}."
            )
        batch = s[0] if len(s) == 2 else 1
        check_dtype(self, dtype, ("the input", input), *states)
        out: list[Any] = []
        h_want = (batch, self.hidden_size) if len(s) == 2 else (self.hidden_size,)
        for what, h in states:
            if h is None:
                out.append(np.zeros((batch, self.hidden_size), dtype=dtype))
                continue
            if shape_of(h) != h_want:
                raise ShapeError(
                    f"{self!r}: expected {what} of shape {h_want} for input of shape {s}, "
                    f"got {shape_of(h)}."
                )
            if len(s) == 2:
                out.append(h)
            elif type(h) is Variable:
                out.append(reshape(h, (1, self.hidden_size)))
            else:
                out.append(
                    np.asarray(value_of(h, name=f"{type(self).__name__}.forward")).reshape(
                        1, self.hidden_size
                    )
                )
        return reshape(input, (1, batch, self.input_size)), out

    def _finish(self, h: Variable, batched: bool) -> Variable:
        return h if batched else reshape(h, (self.hidden_size,))


@attrs.frozen(eq=False, repr=False)
class RNNCell(RNNCellBase):
    """One Elman RNN step (``torch.nn.RNNCell``):
    ``h' = act(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh)``, ``act`` tanh or relu.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     cell = nn.RNNCell.init(10, 20, rng=np.random.default_rng(0))
        ...     h = cell(np.ones((3, 10), np.float32))
        ...     h = cell(np.ones((3, 10), np.float32), h)
        ...     print(h.shape)
        (3, 20)
    """

    nonlinearity: str = "tanh"

    @classmethod
    def init(
        cls,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> RNNCell:
        """An RNNCell with PyTorch's initialisation (every parameter ``U(-k, k)``,
        ``k = 1/sqrt(hidden_size)``).

        Args:
            input_size: Features of the input.
            hidden_size: Features of the hidden state.
            bias: Whether the cell has ``bias_ih`` and ``bias_hh``.
            nonlinearity: ``"tanh"`` or ``"relu"``.
            dtype: The parameters' dtype.
            rng: The generator drawing the initial weights (None: lampy's default generator).
        """
        if nonlinearity not in ("tanh", "relu"):
            raise LampyValueError(
                f"RNNCell.init: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'."
            )
        w = _weights("RNNCell.init", 1, input_size, hidden_size, bias, dtype, rng)
        return cls(*w, nonlinearity=nonlinearity)

    def forward(self, input: Operand, hx: Operand | None = None) -> Variable:
        """One step.

        Args:
            input: (N, input_size) or unbatched (input_size,).
            hx: The hidden state (N, hidden_size) or (hidden_size,); zeros if None.

        Returns:
            The next hidden state, shaped as ``hx``.

        Raises:
            ShapeError: for an input or state of the wrong shape.
            DTypeError: if their dtype is not the parameters'.
        """
        x, (h,) = self._check(input, [("hx", hx)])
        xw = linear(x, self.weight_ih, self.bias_ih)
        seq = rnn_sequence(xw, self.weight_hh, self.bias_hh, h, self.nonlinearity)
        return self._finish(seq[0], len(shape_of(input)) == 2)


@attrs.frozen(eq=False, repr=False)
class GRUCell(RNNCellBase):
    """One GRU step (``torch.nn.GRUCell``), gates r, z, n as in ``lampy.nn.GRU``:
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     cell = nn.GRUCell.init(10, 20, rng=np.random.default_rng(0))
        ...     print(cell(np.ones((3, 10), np.float32)).shape)
        (3, 20)
    """

    @classmethod
    def init(
        cls,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> GRUCell:
        """A GRUCell with PyTorch's initialisation; arguments as
        ``lampy.nn.RNNCell.init`` without ``nonlinearity``."""
        return cls(*_weights("GRUCell.init", 3, input_size, hidden_size, bias, dtype, rng))

    def forward(self, input: Operand, hx: Operand | None = None) -> Variable:
        """One step; shapes, result and errors as ``lampy.nn.RNNCell.forward``."""
        x, (h,) = self._check(input, [("hx", hx)])
        xw = linear(x, self.weight_ih, self.bias_ih)
        seq = gru_sequence(xw, self.weight_hh, self.bias_hh, h)
        return self._finish(seq[0], len(shape_of(input)) == 2)


@attrs.frozen(eq=False, repr=False)
class LSTMCell(RNNCellBase):
    """One LSTM step (``torch.nn.LSTMCell``), gates i, f, g, o as in ``lampy.nn.LSTM``:
    ``c' = sigmoid(f) * c + sigmoid(i) * tanh(g)``, ``h' = sigmoid(o) * tanh(c')``.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     cell = nn.LSTMCell.init(10, 20, rng=np.random.default_rng(0))
        ...     h, c = cell(np.ones((3, 10), np.float32))
        ...     h, c = cell(np.ones((3, 10), np.float32), (h, c))
        ...     print(h.shape, c.shape)
        (3, 20) (3, 20)
    """

    @classmethod
    def init(
        cls,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> LSTMCell:
        """An LSTMCell with PyTorch's initialisation; arguments as
        ``lampy.nn.RNNCell.init`` without ``nonlinearity``."""
        return cls(*_weights("LSTMCell.init", 4, input_size, hidden_size, bias, dtype, rng))

    def forward(
        self, input: Operand, hx: tuple[Any, Any] | None = None
    ) -> tuple[Variable, Variable]:
        """One step.

        Args:
            input: (N, input_size) or unbatched (input_size,).
            hx: ``(h, c)``, each (N, hidden_size) or (hidden_size,); zeros if None.

        Returns:
            ``(h', c')``, shaped as the states.

        Raises:
            LampyTypeError: if ``hx`` is not a pair.
            ShapeError: for an input or state of the wrong shape.
            DTypeError: if their dtype is not the parameters'.
        """
        if hx is not None and (not isinstance(hx, tuple | list) or len(hx) != 2):
            raise LampyTypeError(f"{self!r}: hx must be a pair (h, c), got {hx!r:.60}.")
        pair = (None, None) if hx is None else hx
        x, (h, c) = self._check(input, [("hx[0] (h)", pair[0]), ("hx[1] (c)", pair[1])])
        xw = linear(x, self.weight_ih, self.bias_ih)
        packed = lstm_sequence(xw, self.weight_hh, self.bias_hh, h, c)
        n = self.hidden_size
        batched = len(shape_of(input)) == 2
        return (
            self._finish(packed[0, :, :n], batched),
            self._finish(packed[0, :, n:], batched),
        )
