"""Normalisation modules of ``lampy.nn``: BatchNorm1d, BatchNorm2d, LayerNorm,
GroupNorm and RMSNorm, with PyTorch's constructor arguments, initialisation (weights
1, biases 0, running mean 0, running variance 1) and state_dict keys.

BatchNorm's running statistics are ``lampy.nn.Buffer`` objects, which only its
training-mode forward pass writes (``Buffer.update``) besides ``load_state_dict``; every
``with_training`` and ``copy.copy`` copy of a module shares them, and sees the same
statistics.
"""

from __future__ import annotations

import operator
from contextlib import ExitStack
from typing import Any, ClassVar, TypeVar

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn._buffer import Buffer, as_buffer
from lampy.nn._helpers import check_dtype, check_size, named_errors, shape_of
from lampy.nn._module import Module
from lampy.nn.functional import batch_norm, group_norm, layer_norm, rms_norm
from lampy.opkit import Operand, Variable, param

__all__ = ["BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm", "RMSNorm"]

B = TypeVar("B", bound="_BatchNorm")


def _shape(owner: str, normalized_shape: Any) -> tuple[int, ...]:
    try:
        if np.ndim(normalized_shape) == 0:
            return (operator.index(normalized_shape),)
        return tuple(operator.index(i) for i in normalized_shape)
    except TypeError:
        raise LampyTypeError(
            f"{owner}: normalized_shape must be an int or a sequence of ints, got "
            f"{normalized_shape!r}."
        ) from None


def _ones_zeros(
    shape: tuple[int, ...], affine: bool, bias: bool, dtype: Any
) -> tuple[Variable | None, Variable | None]:
    w = param(np.ones(shape, dtype), copy=False) if affine else None
    b = param(np.zeros(shape, dtype), copy=False) if affine and bias else None
    return w, b


@attrs.frozen(eq=False, repr=False)
class _BatchNorm(Module):
    """Batch normalisation per channel of an input ``(N, C, *)``.

    In training mode the batch's mean and biased variance normalise the input, and the
    running statistics (if tracked) are updated in place: ``running = (1 - momentum) *
    running + momentum * batch_stat`` (unbiased variance), or a cumulative average for
    ``momentum=None``; ``num_batches_tracked`` counts the updates. In evaluation mode
    the running statistics are used. With ``track_running_stats=False`` there are no
    buffers and batch statistics are used in both modes. From Ioffe & Szegedy (2015),
    "Batch normalization".

    Attributes:
        weight: (num_features,) scale, ones; None unless ``affine``.
        bias: (num_features,) shift, zeros; None unless ``affine``.
        running_mean: (num_features,) ``lampy.nn.Buffer``, zeros; None unless
            ``track_running_stats``.
        running_var: (num_features,) Buffer, ones.
        num_batches_tracked: 0-d int64 Buffer counting training batches.
    """

    weight: Variable | None
    bias: Variable | None
    # A record built from arrays (or a module pickled when buffers were arrays) gets
    # Buffers holding copies of them.
    running_mean: Buffer | None = attrs.field(converter=as_buffer)
    running_var: Buffer | None = attrs.field(converter=as_buffer)
    num_batches_tracked: Buffer | None = attrs.field(converter=as_buffer)
    num_features: int
    eps: float = 1e-5
    momentum: float | None = 0.1

    _ranks: ClassVar[tuple[int, ...]] = (4,)
    _layout: ClassVar[str] = "(N, C, H, W)"

    @property
    def affine(self) -> bool:
        """Whether the module has a learnable weight and bias."""
        return self.weight is not None

    def _dtype(self) -> np.dtype[Any] | None:
        """The dtype of the parameters, else of the running statistics (None if neither)."""
        if self.weight is not None:
            return self.weight.dtype
        return None if self.running_mean is None else self.running_mean.dtype

    @property
    def track_running_stats(self) -> bool:
        """Whether the module keeps running statistics."""
        return self.running_mean is not None

    @classmethod
    def init(
        cls: type[B],
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> B:
        """A batch-norm module with PyTorch's arguments and initialisation.

        Args:
            num_features: The number of channels C.
            eps: Added to the variance for stability.
            momentum: Weight of the batch statistic in the running-statistics update;
                None for a cumulative average.
            affine: Whether to learn a per-channel weight (ones) and bias (zeros).
            track_running_stats: Whether to keep running statistics for evaluation.
            dtype: The dtype of the parameters and running statistics.
        """
        c = check_size(f"{cls.__name__}.init", "num_features", num_features, 1)
        w, b = _ones_zeros((c,), affine, True, dtype)
        rm = rv = nbt = None
        if track_running_stats:
            rm, rv = Buffer(np.zeros(c, dtype)), Buffer(np.ones(c, dtype))
            nbt = Buffer(np.zeros((), np.int64))
        mom = None if momentum is None else float(momentum)
        return cls(w, b, rm, rv, nbt, c, float(eps), mom)

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )

    def forward(self, input: Operand) -> Variable:
        """Normalise ``input`` per channel (batch statistics in training mode or without
        running statistics, else the running ones); updates the buffers in place.

        Raises:
            ShapeError: for a wrong rank or channel count.
            DTypeError: if the input's dtype is not the parameters' (or statistics').
            LampyValueError: for a single value per channel in training mode.
        """
        s = shape_of(input)
        if len(s) not in self._ranks or s[1] != self.num_features:
            why = (
                f"{len(s)} dimensions, not {' or '.join(map(str, self._ranks))}"
                if len(s) not in self._ranks
                else f"the channel count {s[1]} differs from num_features {self.num_features}"
            )
            raise ShapeError(
                f"{self!r}: expected input {self._layout.replace('C', str(self.num_features))}"
                f", got shape {s}: {why}."
            )
        check_dtype(self, self._dtype(), ("the input", input))
        batch_stats = self.training or self.running_mean is None
        # Batch statistics update the running ones: this forward pass is the one writer
        # of the buffers (besides load_state_dict), through their update() blocks.
        with named_errors(self), ExitStack() as writes:
            rm, rv, nbt = (
                None if b is None else writes.enter_context(b.update()) if batch_stats else b.value
                for b in (self.running_mean, self.running_var, self.num_batches_tracked)
            )
            return batch_norm(
                input,
                rm,
                rv,
                self.weight,
                self.bias,
                batch_stats,
                self.momentum,
                self.eps,
                num_batches_tracked=nbt if batch_stats else None,
            )


@attrs.frozen(eq=False, repr=False)
class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` inputs (``torch.nn.BatchNorm1d``).

    Examples:
        >>> from lampy import nn
        >>> x = np.random.default_rng(0).normal(3.0, 1.0, size=(8, 4)).astype(np.float32)
        >>> with lampy.Scope():
        ...     bn = nn.BatchNorm1d.init(4)
        ...     y = bn(x)              # batch statistics; updates the running ones
        ...     with nn.eval_mode(bn):
        ...         z = bn(x)          # the running statistics
        ...     print(bn.num_batches_tracked, bn.running_mean.value.round(2))
        1 [0.25 0.3  0.28 0.31]
    """

    _ranks = (2, 3)
    _layout = "(N, C) or (N, C, L)"


@attrs.frozen(eq=False, repr=False)
class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)`` inputs (``torch.nn.BatchNorm2d``)."""

    _ranks = (4,)
    _layout = "(N, C, H, W)"


def _dtype(weight: Variable | None) -> np.dtype[Any] | None:
    return None if weight is None else weight.dtype


def _check_trailing(module: Module, input: Any, shape: tuple[int, ...]) -> None:
    s = shape_of(input)
    if len(s) < len(shape) or s[len(s) - len(shape) :] != shape:
        raise ShapeError(
            f"{module!r}: expected input (*, {', '.join(map(str, shape))}), got shape {s}: "
            f"its trailing dimensions must equal normalized_shape {shape}."
        )


@attrs.frozen(eq=False, repr=False)
class LayerNorm(Module):
    """Normalisation over the trailing ``normalized_shape`` dimensions of each sample
    (``torch.nn.LayerNorm``): ``(x - mean) / sqrt(var + eps) * weight + bias``. From Ba
    et al. (2016), "Layer normalization".

    Attributes:
        weight: ``normalized_shape`` scale, ones; None without ``elementwise_affine``.
        bias: ``normalized_shape`` shift, zeros; None without ``elementwise_affine`` or
            with ``bias=False``.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     print(nn.LayerNorm.init(16)(np.ones((2, 5, 16), np.float32)).shape)
        (2, 5, 16)
    """

    weight: Variable | None
    bias: Variable | None
    normalized_shape: tuple[int, ...]
    eps: float = 1e-5

    @property
    def elementwise_affine(self) -> bool:
        """Whether the module has a learnable weight."""
        return self.weight is not None

    @classmethod
    def init(
        cls,
        normalized_shape: int | tuple[int, ...],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> LayerNorm:
        """A LayerNorm with PyTorch's arguments and initialisation.

        Args:
            normalized_shape: The trailing dimensions to normalise over (an int for one).
            eps: Added to the variance for stability.
            elementwise_affine: Whether to learn a weight (ones) and a bias (zeros).
            bias: Whether to learn the bias (with ``elementwise_affine``).
            dtype: The parameters' dtype.
        """
        shape = _shape("LayerNorm.init", normalized_shape)
        w, b = _ones_zeros(shape, elementwise_affine, bias, dtype)
        return cls(w, b, shape, float(eps))

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )

    def forward(self, input: Operand) -> Variable:
        """``layer_norm(input, normalized_shape, weight, bias, eps)``.

        Raises:
            ShapeError: if the input's trailing dimensions are not ``normalized_shape``.
            DTypeError: if the input's dtype is not the parameters'.
        """
        shape, weight, bias = self.normalized_shape, self.weight, self.bias
        if type(input) is Variable or type(input) is np.ndarray:  # the checks, inline
            s, dt = input.shape, input.dtype
            k = len(shape)
            if (
                0 < k <= len(s)
                and s[len(s) - k :] == shape
                and dt.kind == "f"
                and (weight is None or (dt == weight.dtype and weight.shape == shape))
                and (bias is None or bias.shape == shape)
            ):  # anything else: checked below, its errors naming the module
                return layer_norm(input, shape, weight, bias, self.eps)
        _check_trailing(self, input, shape)
        check_dtype(self, _dtype(weight), ("the input", input))
        with named_errors(self):
            return layer_norm(input, shape, weight, bias, self.eps)


@attrs.frozen(eq=False, repr=False)
class GroupNorm(Module):
    """Normalisation over groups of channels of each sample (``torch.nn.GroupNorm``):
    the C channels of an ``(N, C, *)`` input are split into ``num_groups`` groups,
    each standardised over its channels and positions, then scaled and shifted per
    channel. From Wu & He (2018), "Group normalization".

    Attributes:
        weight: (num_channels,) ones; None unless ``affine``.
        bias: (num_channels,) zeros; None unless ``affine``.
    """

    weight: Variable | None
    bias: Variable | None
    num_groups: int
    num_channels: int
    eps: float = 1e-5

    @property
    def affine(self) -> bool:
        """Whether the module has a learnable weight and bias."""
        return self.weight is not None

    @classmethod
    def init(
        cls,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> GroupNorm:
        """A GroupNorm with PyTorch's arguments and initialisation.

        Raises:
            LampyValueError: if ``num_groups`` does not divide ``num_channels``.
        """
        g = check_size("GroupNorm.init", "num_groups", num_groups, 1)
        c = check_size("GroupNorm.init", "num_channels", num_channels, 1)
        if c % g:
            raise LampyValueError(
                f"GroupNorm.init: num_channels={c} must be divisible by num_groups={g}."
            )
        w, b = _ones_zeros((c,), affine, True, dtype)
        return cls(w, b, g, c, float(eps))

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"

    def forward(self, input: Operand) -> Variable:
        """``group_norm(input, num_groups, weight, bias, eps)`` over ``(N, C, *)``.

        Raises:
            ShapeError: for fewer than 2 dimensions or a channel count other than
                ``num_channels``.
            DTypeError: if the input's dtype is not the parameters'.
        """
        s = shape_of(input)
        if len(s) < 2 or s[1] != self.num_channels:
            raise ShapeError(
                f"{self!r}: expected input (N, {self.num_channels}, *), got shape {s}: "
                + (
                    "it needs at least 2 dimensions."
                    if len(s) < 2
                    else f"the channel count {s[1]} differs from num_channels {self.num_channels}."
                )
            )
        check_dtype(self, _dtype(self.weight), ("the input", input))
        with named_errors(self):
            return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


@attrs.frozen(eq=False, repr=False)
class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dimensions
    (``torch.nn.RMSNorm``): ``x / sqrt(mean(x**2) + eps) * weight``. From Zhang &
    Sennrich (2019), "Root mean square layer normalization".

    Attributes:
        weight: ``normalized_shape`` scale, ones; None without ``elementwise_affine``.
    """

    weight: Variable | None
    normalized_shape: tuple[int, ...]
    eps: float | None = None

    @property
    def elementwise_affine(self) -> bool:
        """Whether the module has a learnable weight."""
        return self.weight is not None

    @classmethod
    def init(
        cls,
        normalized_shape: int | tuple[int, ...],
        eps: float | None = None,
        elementwise_affine: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> RMSNorm:
        """An RMSNorm with PyTorch's arguments; ``eps=None`` means the machine epsilon
        of the input's dtype, as in PyTorch."""
        shape = _shape("RMSNorm.init", normalized_shape)
        w, _ = _ones_zeros(shape, elementwise_affine, False, dtype)
        return cls(w, shape, None if eps is None else float(eps))

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )

    def forward(self, input: Operand) -> Variable:
        """``rms_norm(input, normalized_shape, weight, eps)``.

        Raises:
            ShapeError: if the input's trailing dimensions are not ``normalized_shape``.
            DTypeError: if the input's dtype is not the parameters'.
        """
        _check_trailing(self, input, self.normalized_shape)
        check_dtype(self, _dtype(self.weight), ("the input", input))
        with named_errors(self):
            return rms_norm(input, self.normalized_shape, self.weight, self.eps)
