"""Pooling modules of ``lampy.nn``: MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d and
AdaptiveAvgPool2d, with PyTorch's constructor arguments and reprs. They have no
parameters; each forward calls the matching op of ``lampy.nn.functional`` and names
the module in its errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.nn._helpers import named_errors as _named
from lampy.nn._helpers import shape_of
from lampy.nn._module import Module
from lampy.nn.functional import adaptive_avg_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from lampy.nn.functional._pool import int_tuple
from lampy.opkit import Operand, Variable

__all__ = ["AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d"]

_Size = int | tuple[int, ...]


def _is_int(i: Any) -> bool:
    return isinstance(i, int | np.integer) and not isinstance(i, bool)


def _check_rank(module: Module, input: Any, nd: int) -> None:
    s = shape_of(input)
    if len(s) not in (nd + 1, nd + 2):
        spatial = "L" if nd == 1 else "H, W"
        raise ShapeError(
            f"{module!r}: expected input (N, C, {spatial}) or (C, {spatial}), got shape {s}: "
            f"{nd + 2} or {nd + 1} dimensions, not {len(s)}."
        )


def _settings(owner: str, nd: int, **kw: Any) -> None:
    """Check the pooling settings at construction (the forward pass checks them again)."""
    minimum = {"kernel_size": 1, "stride": 1, "padding": 0, "dilation": 1}
    for what, v in kw.items():
        if v is not None:
            int_tuple(owner, what, v, nd, minimum[what])


_P = TypeVar("_P", bound="_MaxPool")


@attrs.frozen(eq=False, repr=False)
class _MaxPool(Module):
    kernel_size: _Size
    stride: _Size
    padding: _Size = 0
    dilation: _Size = 1
    return_indices: bool = False
    ceil_mode: bool = False
    _repr_fields = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
    _nd = 2

    @classmethod
    def _make(
        cls: type[_P],
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        ri: bool,
        cm: bool,
    ) -> _P:
        owner = f"{cls.__name__}.init"
        _settings(owner, cls._nd, kernel_size=kernel_size, stride=stride, padding=padding)
        _settings(owner, cls._nd, dilation=dilation)
        stride = kernel_size if stride is None else stride
        return cls(kernel_size, stride, padding, dilation, bool(ri), bool(cm))

    def forward(self, input: Operand) -> Any:
        """The maximum of each window: a Variable, or ``(Variable, indices)`` with
        ``return_indices`` (flat positions in each input plane, as PyTorch's)."""
        _check_rank(self, input, self._nd)
        fn: Callable[..., Any] = max_pool1d if self._nd == 1 else max_pool2d
        with _named(self):
            return fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                      self.ceil_mode, self.return_indices)  # fmt: skip


@attrs.frozen(eq=False, repr=False)
class MaxPool1d(_MaxPool):
    """Max pooling over ``(N, C, L)`` or ``(C, L)`` (``torch.nn.MaxPool1d``)."""

    _nd = 1

    @classmethod
    def init(
        cls,
        kernel_size: _Size,
        stride: _Size | None = None,
        padding: _Size = 0,
        dilation: _Size = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> MaxPool1d:
        """A MaxPool1d; ``stride`` defaults to ``kernel_size``.

        Args:
            kernel_size: Window length.
            stride: Step between windows (default: ``kernel_size``).
            padding: Implicit ``-inf`` padding on both sides, at most half the kernel.
            dilation: Spacing between window taps.
            return_indices: Also return the argmax positions.
            ceil_mode: Round the output length up (a last partial window).
        """
        return cls._make(kernel_size, stride, padding, dilation, return_indices, ceil_mode)


@attrs.frozen(eq=False, repr=False)
class MaxPool2d(_MaxPool):
    """Max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` (``torch.nn.MaxPool2d``).

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     print(nn.MaxPool2d.init(2)(np.ones((1, 3, 8, 8))).shape)
        (1, 3, 4, 4)
    """

    _nd = 2

    @classmethod
    def init(
        cls,
        kernel_size: _Size,
        stride: _Size | None = None,
        padding: _Size = 0,
        dilation: _Size = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> MaxPool2d:
        """A MaxPool2d; arguments as ``MaxPool1d.init``, each an int or a pair."""
        return cls._make(kernel_size, stride, padding, dilation, return_indices, ceil_mode)


@attrs.frozen(eq=False, repr=False)
class AvgPool1d(Module):
    """Average pooling over ``(N, C, L)`` or ``(C, L)`` (``torch.nn.AvgPool1d``)."""

    kernel_size: tuple[int]
    stride: tuple[int]
    padding: tuple[int] = (0,)
    ceil_mode: bool = False
    count_include_pad: bool = True
    _repr_fields = ("kernel_size", "stride", "padding")

    @classmethod
    def init(
        cls,
        kernel_size: _Size,
        stride: _Size | None = None,
        padding: _Size = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> AvgPool1d:
        """An AvgPool1d; ``stride`` defaults to ``kernel_size``. Sizes are kept as
        1-tuples, as PyTorch's.

        Args:
            kernel_size: Window length.
            stride: Step between windows (default: ``kernel_size``).
            padding: Implicit zero padding on both sides, at most half the kernel.
            ceil_mode: Round the output length up.
            count_include_pad: Count padded zeros in the divisor.
        """
        owner = "AvgPool1d.init"
        (k,) = int_tuple(owner, "kernel_size", kernel_size, 1, 1)
        (s,) = (k,) if stride is None else int_tuple(owner, "stride", stride, 1, 1)
        (p,) = int_tuple(owner, "padding", padding, 1, 0)
        return cls((k,), (s,), (p,), bool(ceil_mode), bool(count_include_pad))

    def forward(self, input: Operand) -> Variable:
        """The mean of each window."""
        _check_rank(self, input, 1)
        with _named(self):
            return avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                              self.ceil_mode, self.count_include_pad)  # fmt: skip


@attrs.frozen(eq=False, repr=False)
class AvgPool2d(Module):
    """Average pooling over ``(N, C, H, W)`` or ``(C, H, W)`` (``torch.nn.AvgPool2d``)."""

    kernel_size: _Size
    stride: _Size
    padding: _Size = 0
    ceil_mode: bool = False
    count_include_pad: bool = True
    divisor_override: int | None = None
    _repr_fields = ("kernel_size", "stride", "padding")

    @classmethod
    def init(
        cls,
        kernel_size: _Size,
        stride: _Size | None = None,
        padding: _Size = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> AvgPool2d:
        """An AvgPool2d; arguments as ``AvgPool1d.init`` (ints or pairs), plus
        ``divisor_override``, a fixed divisor replacing the window's size."""
        owner = "AvgPool2d.init"
        _settings(owner, 2, kernel_size=kernel_size, stride=stride, padding=padding)
        d = divisor_override
        if d is not None and (not _is_int(d) or d == 0):
            raise LampyValueError(f"{owner}: divisor_override must be a non-zero int, got {d!r}.")
        stride = kernel_size if stride is None else stride
        return cls(kernel_size, stride, padding, bool(ceil_mode), bool(count_include_pad), d)

    def forward(self, input: Operand) -> Variable:
        """The mean of each window (or its sum over ``divisor_override``)."""
        _check_rank(self, input, 2)
        with _named(self):
            return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)  # fmt: skip


@attrs.frozen(eq=False, repr=False)
class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size (``torch.nn.AdaptiveAvgPool2d``): output
    cell ``i`` averages input rows ``floor(i H / H_out)`` to ``ceil((i + 1) H / H_out)``,
    and likewise for columns.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     print(nn.AdaptiveAvgPool2d.init(1)(np.ones((2, 8, 7, 5))).shape)
        (2, 8, 1, 1)
    """

    output_size: int | tuple[int | None, int | None]
    _repr_fields = ("output_size",)

    @classmethod
    def init(cls, output_size: int | tuple[int | None, int | None]) -> AdaptiveAvgPool2d:
        """An AdaptiveAvgPool2d; ``output_size`` is an int (square) or a pair whose
        None entries keep the input's size."""
        o: Any = output_size
        items = (o, o) if np.ndim(o) == 0 else tuple(o)
        if len(items) != 2 or not all(i is None or (_is_int(i) and i >= 0) for i in items):
            raise LampyValueError(
                f"AdaptiveAvgPool2d.init: output_size must be an int or a pair of ints >= 0 "
                f"or None, got {output_size!r}."
            )
        return cls(output_size)

    def forward(self, input: Operand) -> Variable:
        """The average over each adaptive window."""
        _check_rank(self, input, 2)
        with _named(self):
            return adaptive_avg_pool2d(input, self.output_size)
