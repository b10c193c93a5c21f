"""Linear and shape modules of ``lampy.nn``: Linear, Bilinear, Identity, Flatten,
Unflatten and Lambda, with PyTorch's constructor arguments, initialisation and
state_dict keys.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn import init as _init
from lampy.nn._helpers import check_dtype, check_size, rng_or_default, shape_of, uniform_bias
from lampy.nn._module import Module
from lampy.nn.functional import bilinear, linear
from lampy.opkit import Operand, Variable, param
from lampy.ops import reshape

__all__ = ["Bilinear", "Flatten", "Identity", "Lambda", "Linear", "Unflatten"]


# ----------------------------------------------------------------- modules
@attrs.frozen(eq=False, repr=False)
class Linear(Module):
    """Affine map ``y = x @ weight.T + bias`` over the last axis (``torch.nn.Linear``).

    Attributes:
        weight: (out_features, in_features), initialised ``U(-k, k)``, ``k =
            1/sqrt(in_features)`` (PyTorch's ``kaiming_uniform(a=sqrt(5))``).
        bias: (out_features,) or None, ``U(-k, k)``.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     layer = nn.Linear.init(3, 2, rng=np.random.default_rng(0))
        ...     print(layer(np.ones((5, 3), np.float32)).shape)
        (5, 2)
    """

    weight: Variable
    bias: Variable | None = None

    @property
    def in_features(self) -> int:
        """Size of the input's last axis."""
        return int(self.weight.shape[1])

    @property
    def out_features(self) -> int:
        """Size of the output's last axis."""
        return int(self.weight.shape[0])

    @classmethod
    def init(
        cls,
        in_features: int,
        out_features: int,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> Linear:
        """A Linear layer with PyTorch's default initialisation.

        Args:
            in_features: Size of each input sample.
            out_features: Size of each output sample.
            bias: Whether to learn an additive bias.
            dtype: The parameters' dtype.
            rng: The generator drawing the initial weights (None: lampy's default generator).
        """
        n_in = check_size("Linear.init", "in_features", in_features, 0)
        n_out = check_size("Linear.init", "out_features", out_features, 0)
        r = rng_or_default("Linear.init", rng)
        w = _init.kaiming_uniform((n_out, n_in), a=math.sqrt(5), rng=r, dtype=dtype)
        b = param(uniform_bias(n_out, n_in, r, dtype)) if bias else None
        return cls(param(w), b)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )

    def forward(self, input: Operand) -> Variable:
        """``linear(input, weight, bias)``: (*, in_features) → (*, out_features).

        Raises:
            ShapeError: if the input's last axis is not ``in_features``.
            DTypeError: if the input's dtype is not the parameters'.
        """
        weight = self.weight
        if type(input) is Variable or type(input) is np.ndarray:  # the checks, inline
            s, dt = input.shape, input.dtype
            if s and s[-1] == weight.shape[1] and (dt == weight.dtype or dt.kind not in "fc"):
                return linear(input, weight, self.bias)
        s = shape_of(input)
        if not s or s[-1] != self.in_features:
            raise ShapeError(
                f"{self!r}: expected input (*, {self.in_features}), got shape {s}: the last "
                f"axis must have in_features = {self.in_features} elements."
            )
        check_dtype(self, self.weight.dtype, ("the input", input))
        return linear(input, self.weight, self.bias)


@attrs.frozen(eq=False, repr=False)
class Bilinear(Module):
    """``y[..., k] = x1 @ weight[k] @ x2 + bias[k]`` (``torch.nn.Bilinear``).

    Attributes:
        weight: (out_features, in1_features, in2_features), ``U(-k, k)``, ``k =
            1/sqrt(in1_features)``.
        bias: (out_features,) or None, ``U(-k, k)``.
    """

    weight: Variable
    bias: Variable | None = None

    @property
    def in1_features(self) -> int:
        """Size of the first input's last axis."""
        return int(self.weight.shape[1])

    @property
    def in2_features(self) -> int:
        """Size of the second input's last axis."""
        return int(self.weight.shape[2])

    @property
    def out_features(self) -> int:
        """Size of the output's last axis."""
        return int(self.weight.shape[0])

    @classmethod
    def init(
        cls,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> Bilinear:
        """A Bilinear layer; weight and bias are ``U(-1/sqrt(in1), 1/sqrt(in1))`` as PyTorch's."""
        n1 = check_size("Bilinear.init", "in1_features", in1_features, 0)
        n2 = check_size("Bilinear.init", "in2_features", in2_features, 0)
        n_out = check_size("Bilinear.init", "out_features", out_features, 0)
        r = rng_or_default("Bilinear.init", rng)
        bound = 1 / math.sqrt(n1) if n1 > 0 else 0.0
        w = _init.uniform((n_out, n1, n2), -bound, bound, rng=r, dtype=dtype)
        b = param(_init.uniform(n_out, -bound, bound, rng=r, dtype=dtype)) if bias else None
        return cls(param(w), b)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )

    def forward(self, input1: Operand, input2: Operand) -> Variable:
        """``bilinear(input1, input2, weight, bias)``: (*, in1), (*, in2) → (*, out).

        Raises:
            ShapeError: if the last axes are not in1/in2_features or the leading
                dimensions differ.
            DTypeError: if an input's dtype is not the parameters'.
        """
        s1, s2 = shape_of(input1), shape_of(input2)
        if not s1 or not s2 or s1[-1] != self.in1_features or s2[-1] != self.in2_features:
            raise ShapeError(
                f"{self!r}: expected inputs (*, {self.in1_features}) and "
                f"(*, {self.in2_features}), got shapes {s1} and {s2}."
            )
        if s1[:-1] != s2[:-1]:
            raise ShapeError(
                f"{self!r}: the inputs' leading dimensions must be equal, got shapes {s1} and {s2}."
            )
        check_dtype(self, self.weight.dtype, ("input1", input1), ("input2", input2))
        return bilinear(input1, input2, self.weight, self.bias)


@attrs.frozen(eq=False, repr=False)
class Identity(Module):
    """Returns its input unchanged (``torch.nn.Identity``); a placeholder layer."""

    @classmethod
    def init(cls) -> Identity:
        """An Identity module."""
        return cls()

    def forward(self, input: Operand) -> Any:
        """``input`` itself."""
        return input


def _dim(owner: object, what: str, d: Any, ndim: int, shape: tuple[int, ...]) -> int:
    """``d`` as an axis in ``[0, ndim)``; ``owner`` names the caller in the error (a
    module is formatted, with its repr, only when raising)."""
    k = operator.index(d)
    if not -max(ndim, 1) <= k < max(ndim, 1):
        raise ShapeError(
            f"{owner}: {what} {k} is out of range for an input of shape {shape} "
            f"({ndim} dimensions)."
        )
    return k % max(ndim, 1)


@attrs.frozen(eq=False, repr=False)
class Flatten(Module):
    """Flattens the dimensions ``start_dim..end_dim`` into one (``torch.nn.Flatten``)."""

    start_dim: int = 1
    end_dim: int = -1
    _repr_fields = ("start_dim", "end_dim")

    @classmethod
    def init(cls, start_dim: int = 1, end_dim: int = -1) -> Flatten:
        """A Flatten module; the default keeps the batch axis 0 and flattens the rest."""
        return cls(operator.index(start_dim), operator.index(end_dim))

    def forward(self, input: Operand) -> Variable:
        """``input`` reshaped with axes ``start_dim..end_dim`` merged.

        Raises:
            ShapeError: if a dim is out of range or ``start_dim`` comes after ``end_dim``.
        """
        s = shape_of(input)
        start = _dim(self, "start_dim", self.start_dim, len(s), s)
        end = _dim(self, "end_dim", self.end_dim, len(s), s)
        if start > end:
            raise ShapeError(
                f"{self!r}: start_dim ({start}) comes after end_dim ({end}) for an input of "
                f"shape {s}."
            )
        new = (*s[:start], math.prod(s[start : end + 1]), *s[end + 1 :])
        return reshape(input, new)


@attrs.frozen(eq=False, repr=False)
class Unflatten(Module):
    """Splits the axis ``dim`` into ``unflattened_size`` (``torch.nn.Unflatten``)."""

    dim: int
    unflattened_size: tuple[int, ...]
    _repr_fields = ("dim", "unflattened_size")

    @classmethod
    def init(cls, dim: int, unflattened_size: Any) -> Unflatten:
        """An Unflatten module; ``unflattened_size`` may hold one -1, as in reshape."""
        try:
            sizes = tuple(operator.index(i) for i in unflattened_size)
        except TypeError:
            raise LampyTypeError(
                f"Unflatten.init: unflattened_size must be a sequence of ints, got "
                f"{unflattened_size!r}."
            ) from None
        if sum(i == -1 for i in sizes) > 1 or any(i < -1 for i in sizes):
            raise LampyValueError(
                f"Unflatten.init: unflattened_size {sizes} may hold non-negative sizes and "
                "at most one -1."
            )
        return cls(operator.index(dim), sizes)

    def forward(self, input: Operand) -> Variable:
        """``input`` with axis ``dim`` reshaped to ``unflattened_size``.

        Raises:
            ShapeError: if ``dim`` is out of range or the sizes do not multiply to it.
        """
        s = shape_of(input)
        if not s:
            raise ShapeError(f"{self!r}: cannot unflatten a 0-d input.")
        d = _dim(self, "dim", self.dim, len(s), s)
        sizes = list(self.unflattened_size)
        known = math.prod(i for i in sizes if i != -1)
        if -1 in sizes and known > 0 and s[d] % known == 0:
            sizes[sizes.index(-1)] = s[d] // known
        if -1 in sizes or math.prod(sizes) != s[d]:
            raise ShapeError(
                f"{self!r}: unflattened_size {self.unflattened_size} does not multiply to "
                f"the size {s[d]} of dim {self.dim} of the input of shape {s}."
            )
        return reshape(input, (*s[:d], *sizes, *s[d + 1 :]))


@attrs.frozen(eq=False, repr=False)
class Lambda(Module):
    """Wraps a function as a module with no parameters (lampy only).

    Use it to put a function (``lambda x: x.reshape(-1)``, ``lampy.tanh``) into a
    Sequential. The function must not hold parameters of its own: they would not appear
    in ``parameters()`` or the state dict.
    """

    fn: Callable[..., Any]

    @classmethod
    def init(cls, fn: Callable[..., Any]) -> Lambda:
        """A Lambda calling ``fn``."""
        if not callable(fn):
            raise LampyTypeError(f"Lambda.init: fn must be callable, got {type(fn).__name__}.")
        return cls(fn)

    def extra_repr(self) -> str:
        return getattr(self.fn, "__qualname__", None) or repr(self.fn)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``."""
        return self.fn(*args, **kwargs)
