"""Composite modules of ``lampy.nn``: Residual (``x + fn(x)``, lampy only) and MLP
(``torchvision.ops.MLP``: Linear, optional norm, activation and Dropout blocks in a
Sequential, numbered as torchvision numbers them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn._activation_modules import ReLU
from lampy.nn._containers import Sequential
from lampy.nn._dropout import Dropout
from lampy.nn._helpers import check_size, rng_or_default, shape_of
from lampy.nn._linear import Linear
from lampy.nn._module import Module
from lampy.opkit import Operand, Variable
from lampy.ops import add

__all__ = ["MLP", "Residual"]


@attrs.frozen(eq=False, repr=False)
class Residual(Module):
    """A skip connection around a module: ``forward(x) = x + fn(x)`` (lampy only).

    The wrapped module's parameters are named ``fn.<name>`` in the state dict.

    Examples:
        >>> from lampy import nn
        >>> rng = np.random.default_rng(0)
        >>> with lampy.Scope():
        ...     block = nn.Residual.init(
        ...         nn.Sequential.init(nn.Linear.init(8, 8, rng=rng), nn.ReLU.init())
        ...     )
        ...     print(block(np.ones((4, 8), np.float32)).shape)
        (4, 8)
    """

    fn: Module

    @classmethod
    def init(cls, fn: Module) -> Residual:
        """A Residual around the module ``fn``, which must keep its input's shape."""
        if not isinstance(fn, Module):
            raise LampyTypeError(
                f"Residual.init: fn must be a lampy.nn.Module, got {type(fn).__name__}; "
                "wrap a function with lampy.nn.Lambda first."
            )
        return cls(fn)

    def forward(self, input: Operand) -> Variable:
        """``input + fn(input)``.

        Raises:
            ShapeError: if ``fn`` changes the shape of its input.
        """
        out = self.fn(input)
        if shape_of(out) != shape_of(input):
            raise ShapeError(
                f"Residual: the wrapped {type(self.fn).__name__} maps shape "
                f"{shape_of(input)} to {shape_of(out)}; a residual block needs fn to keep "
                "its input's shape."
            )
        return add(input, out)


def _build(owner: str, what: str, factory: Any, *args: Any, **kwargs: Any) -> Module:
    """``factory.init(*args, **kwargs)`` for a Module class, else ``factory(*args)``."""
    if isinstance(factory, type) and issubclass(factory, Module):
        m = factory.init(*args, **kwargs)  # type: ignore[attr-defined]
    elif callable(factory):
        m = factory(*args)
    else:
        raise LampyTypeError(f"{owner}: {what} must be a Module class or a callable.")
    if not isinstance(m, Module):
        raise LampyTypeError(
            f"{owner}: {what} returned a {type(m).__name__}, not a lampy.nn.Module."
        )
    return m


@attrs.frozen(eq=False, repr=False)
class MLP(Sequential):
    """A multi-layer perceptron as ``torchvision.ops.MLP`` builds it: for each hidden
    size but the last, ``Linear``, the optional norm layer, the activation and
    ``Dropout``; then a last ``Linear`` and ``Dropout``. It is a Sequential, so its
    parameters are named by position as torchvision's: ``0.weight``, ``0.bias``,
    ``3.weight``... (without a norm layer), ``0``, ``4``, ``8``... with one.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     mlp = nn.MLP.init(4, [32, 32, 2], rng=np.random.default_rng(0))
        ...     print(mlp(np.ones((10, 4), np.float32)).shape)
        (10, 2)
    """

    @classmethod
    def init(  # type: ignore[override]
        cls,
        in_channels: int,
        hidden_channels: Sequence[int],
        norm_layer: Callable[..., Module] | None = None,
        activation_layer: Callable[..., Module] = ReLU,
        bias: bool = True,
        dropout: float = 0.0,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> MLP:
        """An MLP with torchvision's arguments (``inplace`` left out).

        Args:
            in_channels: Size of the input's last axis.
            hidden_channels: The sizes of the Linear layers' outputs; the last one is
                the output size.
            norm_layer: None, or a Module class built as ``norm_layer.init(size,
                dtype=dtype)`` (``LayerNorm``, ``BatchNorm1d``), or a function
                ``size -> Module``; placed after each hidden Linear.
            activation_layer: A Module class built with ``.init()``, or a function of
                no arguments returning a Module; placed after each hidden Linear (and
                norm).
            bias: Whether the Linear layers have biases.
            dropout: The Dropout probability (every Dropout, the last one included).
            dtype: The parameters' dtype.
            rng: The generator initialising the Linear layers and drawing the dropout
                masks (None: lampy's default generator).

        Raises:
            LampyValueError: for an empty ``hidden_channels``.
        """
        owner = "MLP.init"
        sizes = [check_size(owner, "hidden_channels entry", h, 1) for h in hidden_channels]
        if not sizes:
            raise LampyValueError(f"{owner}: hidden_channels must hold at least one size.")
        r = rng_or_default(owner, rng)
        layers: list[Module] = []
        n_in = check_size(owner, "in_channels", in_channels, 1)
        for h in sizes[:-1]:
            layers.append(Linear.init(n_in, h, bias, dtype=dtype, rng=r))
            if norm_layer is not None:
                layers.append(_build(owner, "norm_layer", norm_layer, h, dtype=dtype))
            layers.append(_build(owner, "activation_layer", activation_layer))
            layers.append(Dropout.init(dropout, rng=rng))
            n_in = h
        layers.append(Linear.init(n_in, sizes[-1], bias, dtype=dtype, rng=r))
        layers.append(Dropout.init(dropout, rng=rng))
        return cls(layers=tuple(layers))
