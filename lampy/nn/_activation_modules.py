"""Activation modules of ``lampy.nn``: one small module per activation of
``lampy.nn.functional`` (ReLU, GELU, Softmax...), with PyTorch's constructor arguments
and reprs, no parameters.

Each class declares its settings as fields and a one-line forward; the shared base
gives them ``init(*args, **kwargs)`` with PyTorch's argument order and the repr.
PyTorch's ``inplace`` keyword is accepted and has no effect: lampy's values are immutable.
"""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

import attrs

import lampy.nn.functional as F
from lampy._errors import LampyTypeError, LampyValueError
from lampy.nn._module import Module
from lampy.opkit import Operand, Variable
from lampy.ops import tanh

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "SELU",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Softsign",
    "Tanh",
]

A = TypeVar("A", bound="_Activation")


@attrs.frozen(eq=False, repr=False)
class _Activation(Module):
    """An elementwise (or per-slice) function as a module with no parameters."""

    @classmethod
    def init(cls: type[A], *args: Any, **kwargs: Any) -> A:
        """The module with PyTorch's constructor arguments (the class's fields, in order).

        Raises:
            LampyTypeError: for an argument the module does not take.
            LampyValueError: for a value it cannot take (GELU's ``approximate``).
        """
        inplace = kwargs.pop("inplace", False)  # PyTorch's flag: accepted, no effect
        if not isinstance(inplace, bool):
            raise LampyTypeError(f"{cls.__name__}.init: inplace must be a bool, got {inplace!r}.")
        try:
            inspect.signature(cls).bind(*args, **kwargs)
        except TypeError as e:
            names = [f.alias for f in attrs.fields(cls) if f.name != "_training"]
            raise LampyTypeError(
                f"{cls.__name__}.init: {e}. It takes {names or 'no arguments'} (PyTorch's "
                "arguments; inplace only as a keyword, with no effect: values are immutable)."
            ) from None
        return cls(*args, **kwargs)

    def extra_repr(self) -> str:
        return ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in attrs.fields(type(self))
            if f.name != "_training"
        )


def _check_dim(cls: str, dim: Any) -> int:
    if dim is None:
        raise LampyValueError(
            f"{cls}.init: pass dim explicitly (e.g. {cls}.init(dim=-1)); PyTorch's "
            "implicit choice for dim=None is deprecated and lampy does not guess."
        )
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise LampyTypeError(f"{cls}.init: dim must be an int, got {dim!r}.")
    return dim


def _approximate(a: str) -> str:
    if a not in ("none", "tanh"):
        raise LampyValueError(f"GELU.init: approximate must be 'none' or 'tanh', got {a!r}.")
    return str(a)


def _softmax_dim(dim: int | None) -> int:
    return _check_dim("Softmax", dim)


def _log_softmax_dim(dim: int | None) -> int:
    return _check_dim("LogSoftmax", dim)


@attrs.frozen(eq=False, repr=False)
class ReLU(_Activation):
    """``max(x, 0)`` (``torch.nn.ReLU``)."""

    def forward(self, input: Operand) -> Variable:
        return F.relu(input)


@attrs.frozen(eq=False, repr=False)
class ReLU6(_Activation):
    """``min(max(x, 0), 6)`` (``torch.nn.ReLU6``)."""

    def forward(self, input: Operand) -> Variable:
        return F.relu6(input)


@attrs.frozen(eq=False, repr=False)
class LeakyReLU(_Activation):
    """``x if x > 0 else negative_slope * x`` (``torch.nn.LeakyReLU(negative_slope=0.01)``)."""

    negative_slope: float = 0.01

    def forward(self, input: Operand) -> Variable:
        return F.leaky_relu(input, self.negative_slope)


@attrs.frozen(eq=False, repr=False)
class ELU(_Activation):
    """``x if x > 0 else alpha * (exp(x) - 1)`` (``torch.nn.ELU(alpha=1.0)``)."""

    alpha: float = 1.0

    def forward(self, input: Operand) -> Variable:
        return F.elu(input, self.alpha)


@attrs.frozen(eq=False, repr=False)
class SELU(_Activation):
    """``scale * elu(x, alpha)`` with the self-normalising constants (``torch.nn.SELU``)."""

    def forward(self, input: Operand) -> Variable:
        return F.selu(input)


@attrs.frozen(eq=False, repr=False)
class CELU(_Activation):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``torch.nn.CELU(alpha=1.0)``)."""

    alpha: float = 1.0

    def forward(self, input: Operand) -> Variable:
        return F.celu(input, self.alpha)


@attrs.frozen(eq=False, repr=False)
class GELU(_Activation):
    """``x * Phi(x)``, or its tanh approximation (``torch.nn.GELU(approximate='none')``)."""

    approximate: str = attrs.field(default="none", converter=_approximate)

    def forward(self, input: Operand) -> Variable:
        return F.gelu(input, self.approximate)


@attrs.frozen(eq=False, repr=False)
class SiLU(_Activation):
    """``x * sigmoid(x)`` (``torch.nn.SiLU``)."""

    def forward(self, input: Operand) -> Variable:
        return F.silu(input)


@attrs.frozen(eq=False, repr=False)
class Mish(_Activation):
    """``x * tanh(softplus(x))`` (``torch.nn.Mish``)."""

    def forward(self, input: Operand) -> Variable:
        return F.mish(input)


@attrs.frozen(eq=False, repr=False)
class Softplus(_Activation):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (``torch.nn.Softplus``)."""

    beta: float = 1.0
    threshold: float = 20.0

    def forward(self, input: Operand) -> Variable:
        return F.softplus(input, self.beta, self.threshold)


@attrs.frozen(eq=False, repr=False)
class Sigmoid(_Activation):
    """``1 / (1 + exp(-x))`` (``torch.nn.Sigmoid``)."""

    def forward(self, input: Operand) -> Variable:
        return F.sigmoid(input)


@attrs.frozen(eq=False, repr=False)
class LogSigmoid(_Activation):
    """``log(sigmoid(x))`` (``torch.nn.LogSigmoid``)."""

    def forward(self, input: Operand) -> Variable:
        return F.log_sigmoid(input)


@attrs.frozen(eq=False, repr=False)
class Tanh(_Activation):
    """``tanh(x)`` (``torch.nn.Tanh``)."""

    def forward(self, input: Operand) -> Variable:
        return tanh(input)


@attrs.frozen(eq=False, repr=False)
class Hardtanh(_Activation):
    """``clip(x, min_val, max_val)`` (``torch.nn.Hardtanh(min_val=-1.0, max_val=1.0)``)."""

    min_val: float = -1.0
    max_val: float = 1.0

    def forward(self, input: Operand) -> Variable:
        return F.hardtanh(input, self.min_val, self.max_val)


@attrs.frozen(eq=False, repr=False)
class Hardsigmoid(_Activation):
    """``clip(x / 6 + 1 / 2, 0, 1)`` (``torch.nn.Hardsigmoid``)."""

    def forward(self, input: Operand) -> Variable:
        return F.hardsigmoid(input)


@attrs.frozen(eq=False, repr=False)
class Hardswish(_Activation):
    """``x * hardsigmoid(x)`` (``torch.nn.Hardswish``)."""

    def forward(self, input: Operand) -> Variable:
        return F.hardswish(input)


@attrs.frozen(eq=False, repr=False)
class Softsign(_Activation):
    """``x / (1 + |x|)`` (``torch.nn.Softsign``)."""

    def forward(self, input: Operand) -> Variable:
        return F.softsign(input)


@attrs.frozen(eq=False, repr=False)
class Softmax(_Activation):
    """``exp(x) / sum(exp(x))`` along ``dim`` (``torch.nn.Softmax(dim)``; ``dim`` is
    required, where PyTorch guesses one for None)."""

    dim: int = attrs.field(default=None, converter=_softmax_dim)

    def forward(self, input: Operand) -> Variable:
        return F.softmax(input, self.dim)


@attrs.frozen(eq=False, repr=False)
class LogSoftmax(_Activation):
    """``log(softmax(x))`` along ``dim`` (``torch.nn.LogSoftmax(dim)``; ``dim`` required)."""

    dim: int = attrs.field(default=None, converter=_log_softmax_dim)

    def forward(self, input: Operand) -> Variable:
        return F.log_softmax(input, self.dim)


@attrs.frozen(eq=False, repr=False)
class GLU(_Activation):
    """``a * sigmoid(b)`` for the halves ``a, b`` of ``dim`` (``torch.nn.GLU(dim=-1)``)."""

    dim: int = -1

    def forward(self, input: Operand) -> Variable:
        return F.glu(input, self.dim)
