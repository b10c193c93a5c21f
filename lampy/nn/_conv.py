"""Convolution modules of ``lampy.nn``: Conv1d, Conv2d, ConvTranspose1d and
ConvTranspose2d, with PyTorch's constructor arguments (``padding_mode`` included),
default initialisation, state_dict keys and ``extra_repr``.

The four share one N-d implementation (``_ConvNd``); the subclasses fix the number of
spatial dimensions and the direction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import attrs
import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.nn import init as _init
from lampy.nn._helpers import check_dtype, check_size, rng_or_default, shape_of, uniform_bias
from lampy.nn._module import Module
from lampy.nn.functional import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from lampy.nn.functional._conv_common import as_ints
from lampy.opkit import Variable, param
from lampy.ops import pad

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

Ints = tuple[int, ...]

# PyTorch's padding modes and the numpy.pad modes that compute them.
_PAD_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
_SPATIAL = {1: "L", 2: "H, W"}


_C = TypeVar("_C", bound="_ConvNd")


@attrs.frozen(eq=False, repr=False)
class _ConvNd(Module):
    """Shared fields and forward of the convolution modules.

    Attributes:
        weight: ``(out_channels, in_channels / groups, *kernel_size)`` for a
            convolution, ``(in_channels, out_channels / groups, *kernel_size)`` for a
            transposed one; initialised ``U(-k, k)``, ``k = 1 / sqrt(fan_in)`` with
            ``fan_in = weight.shape[1] * prod(kernel_size)`` (PyTorch's
            ``kaiming_uniform(a=sqrt(5))``).
        bias: ``(out_channels,)`` or None, ``U(-k, k)``.
    """

    weight: Variable
    bias: Variable | None
    in_channels: int
    out_channels: int
    kernel_size: Ints
    stride: Ints
    padding: Ints | str
    dilation: Ints
    groups: int
    padding_mode: str
    output_padding: Ints

    _nd: ClassVar[int] = 2
    _transposed: ClassVar[bool] = False

    @classmethod
    def _make(
        cls: type[_C],
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        output_padding: Any,
        dilation: Any,
        groups: int,
        bias: bool,
        padding_mode: str,
        dtype: Any,
        rng: np.random.Generator | None,
    ) -> _C:
        owner = f"{cls.__name__}.init"
        nd = cls._nd
        c_in = check_size(owner, "in_channels", in_channels, 1)
        c_out = check_size(owner, "out_channels", out_channels, 1)
        g = check_size(owner, "groups", groups, 1)
        if c_in % g or c_out % g:
            raise LampyValueError(
                f"{owner}: groups={g} must divide in_channels={c_in} and out_channels={c_out}."
            )
        ks = as_ints(owner, "kernel_size", kernel_size, nd, 1)
        ss = as_ints(owner, "stride", stride, nd, 1)
        ds = as_ints(owner, "dilation", dilation, nd, 1)
        ps: Ints | str
        if isinstance(padding, str):
            if cls._transposed or padding not in ("same", "valid"):
                allowed = "an int or a tuple" if cls._transposed else "'same', 'valid', an int"
                raise LampyValueError(f"{owner}: padding must be {allowed}, got {padding!r}.")
            if padding == "same" and any(s != 1 for s in ss):
                raise LampyValueError(
                    f"{owner}: padding='same' needs stride 1 (as in PyTorch), got stride "
                    f"{ss}; give the padding as numbers instead."
                )
            ps = padding
        else:
            ps = as_ints(owner, "padding", padding, nd, 0)
        ops = as_ints(owner, "output_padding", output_padding, nd, 0)
        if any(o >= max(s, d) for o, s, d in zip(ops, ss, ds, strict=True)):
            raise LampyValueError(
                f"{owner}: output_padding {ops} must be smaller than stride {ss} or "
                f"dilation {ds} in each dimension."
            )
        if padding_mode not in _PAD_MODES or (cls._transposed and padding_mode != "zeros"):
            modes = ["zeros"] if cls._transposed else list(_PAD_MODES)
            raise LampyValueError(
                f"{owner}: padding_mode must be one of {modes}, got {padding_mode!r}."
            )
        shape = (c_in, c_out // g) if cls._transposed else (c_out, c_in // g)
        r = rng_or_default(owner, rng)
        w = _init.kaiming_uniform((*shape, *ks), a=math.sqrt(5), rng=r, dtype=dtype)
        fan_in = shape[1] * math.prod(ks)
        b = param(uniform_bias(c_out, fan_in, r, dtype), copy=False) if bias else None
        return cls(param(w, copy=False), b, c_in, c_out, ks, ss, ps, ds, g, padding_mode, ops)

    def extra_repr(self) -> str:
        nd = self._nd
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * nd:
            s += f", padding={self.padding!r}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode!r}"
        return s

    def _expected(self) -> str:
        """The input shapes the layer takes, for error messages."""
        c_sp = f"{self.in_channels}, {_SPATIAL[self._nd]}"
        return f"(N, {c_sp}) or ({c_sp})"

    def _check_input(self, input: Any) -> Ints:
        """The input's shape, checked: rank, channels and (for a convolution) size."""
        nd, s = self._nd, shape_of(input)
        if len(s) not in (nd + 1, nd + 2):
            raise ShapeError(
                f"{self!r}: expected input {self._expected()}, got shape {s}: {nd + 2} or "
                f"{nd + 1} dimensions, not {len(s)}."
            )
        c = s[-nd - 1]
        if c != self.in_channels:
            raise ShapeError(
                f"{self!r}: expected input {self._expected()}, got shape {s}: the channel "
                f"count {c} differs from in_channels {self.in_channels}."
            )
        if not self._transposed:
            pads = (0,) * nd if isinstance(self.padding, str) else self.padding
            for n, k, d, p in zip(s[-nd:], self.kernel_size, self.dilation, pads, strict=True):
                if self.padding != "same" and n + 2 * p < d * (k - 1) + 1:
                    raise ShapeError(
                        f"{self!r}: the input of shape {s} is smaller than the (dilated) "
                        f"kernel {d * (k - 1) + 1} even after padding {p}; use a larger "
                        "input or more padding."
                    )
        check_dtype(self, self.weight.dtype, ("the input", input))
        return s

    def _padded(self, input: Any, s: Ints) -> tuple[Any, Any]:
        """The input padded by ``padding_mode`` (if not zeros) and the padding left for
        the convolution itself."""
        if self.padding_mode == "zeros":
            return input, self.padding
        nd = self._nd
        pairs: list[tuple[int, int]]
        if isinstance(self.padding, tuple):
            pairs = [(p, p) for p in self.padding]
        elif self.padding == "same":
            totals = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation, strict=True)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        else:
            pairs = [(0, 0)] * nd
        for n, (a, b) in zip(s[-nd:], pairs, strict=True):
            too_big = max(a, b) >= n if self.padding_mode == "reflect" else max(a, b) > n
            if too_big:
                raise ShapeError(
                    f"{self!r}: padding {(a, b)} is too large for {self.padding_mode!r} "
                    f"padding of an input of shape {s} (PyTorch's limit: below the size for "
                    "'reflect', at most the size for 'circular')."
                )
        width = [(0, 0)] * (len(s) - nd) + pairs
        return pad(input, width, _PAD_MODES[self.padding_mode]), 0


@attrs.frozen(eq=False, repr=False)
class _Conv(_ConvNd):
    def forward(self, input: Any) -> Variable:
        """The convolution of ``input`` (N, C_in, *S) or (C_in, *S) with the weight.

        Raises:
            ShapeError: for a wrong rank, channel count, or an input smaller than the
                kernel.
        """
        s = self._check_input(input)
        x, padding = self._padded(input, s)
        fn: Callable[..., Variable] = conv1d if self._nd == 1 else conv2d
        return fn(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


@attrs.frozen(eq=False, repr=False)
class _ConvTranspose(_ConvNd):
    _transposed = True

    def forward(self, input: Any, output_size: Any = None) -> Variable:
        """The transposed convolution of ``input`` (N, C_in, *S) or (C_in, *S).

        Args:
            input: The input.
            output_size: Optional target spatial size (the trailing ``nd`` entries are
                used); it picks ``output_padding`` as PyTorch does, overriding the
                module's.

        Raises:
            ShapeError: for a wrong rank or channel count, or an output_size that no
                output_padding reaches.
        """
        s = self._check_input(input)
        out_pad = self._output_padding(s, output_size)
        fn: Callable[..., Variable] = conv_transpose1d if self._nd == 1 else conv_transpose2d
        w, b = self.weight, self.bias
        return fn(input, w, b, self.stride, self.padding, out_pad, self.groups, self.dilation)

    def _output_padding(self, s: Ints, output_size: Any) -> Ints:
        if output_size is None:
            return self.output_padding
        nd = self._nd
        want = tuple(int(i) for i in output_size)
        if len(want) in (nd + 1, nd + 2):
            want = want[-nd:]
        if len(want) != nd:
            raise ShapeError(
                f"{self!r}: output_size must have {nd} (or {nd + 2}) entries, got {output_size!r}."
            )
        pads = self.padding if isinstance(self.padding, tuple) else (0,) * nd
        out = []
        for i in range(nd):
            lo = (
                (s[-nd + i] - 1) * self.stride[i]
                - 2 * pads[i]
                + self.dilation[i] * (self.kernel_size[i] - 1)
                + 1
            )
            hi = lo + self.stride[i] - 1
            if not lo <= want[i] <= hi:
                raise ShapeError(
                    f"{self!r}: output_size {tuple(output_size)} cannot be reached from an "
                    f"input of shape {s}: dimension {i} must lie in [{lo}, {hi}]."
                )
            out.append(want[i] - lo)
        return tuple(out)


@attrs.frozen(eq=False, repr=False)
class Conv1d(_Conv):
    """1-d convolution over ``(N, C_in, L)`` or ``(C_in, L)`` (``torch.nn.Conv1d``).

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     conv = nn.Conv1d.init(4, 8, 3, padding=1, rng=np.random.default_rng(0))
        ...     print(conv(np.ones((2, 4, 10), np.float32)).shape)
        (2, 8, 10)
    """

    _nd = 1

    @classmethod
    def init(
        cls,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int],
        stride: int | tuple[int] = 1,
        padding: int | tuple[int] | str = 0,
        dilation: int | tuple[int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> Conv1d:
        """A Conv1d with PyTorch's arguments and default initialisation.

        Args:
            in_channels: Channels of the input.
            out_channels: Channels of the output.
            kernel_size: Kernel length.
            stride: Step between windows.
            padding: Padding on both sides, or 'valid' (none) or 'same' (output length =
                input length; stride 1 only).
            dilation: Spacing between kernel taps.
            groups: Channel groups; must divide both channel counts.
            bias: Whether to learn a bias per output channel.
            padding_mode: 'zeros', 'reflect', 'replicate' or 'circular'.
            dtype: The parameters' dtype.
            rng: The generator drawing the initial weights (None: lampy's default generator).
        """
        return cls._make(
            in_channels, out_channels, kernel_size, stride, padding, 0, dilation, groups,
            bias, padding_mode, dtype, rng,
        )  # fmt: skip


@attrs.frozen(eq=False, repr=False)
class Conv2d(_Conv):
    """2-d convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` (``torch.nn.Conv2d``).

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     conv = nn.Conv2d.init(3, 16, 3, padding=1, rng=np.random.default_rng(0))
        ...     print(conv(np.ones((8, 3, 28, 28), np.float32)).shape)
        (8, 16, 28, 28)
    """

    _nd = 2

    @classmethod
    def init(
        cls,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] | str = 0,
        dilation: int | tuple[int, int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> Conv2d:
        """A Conv2d with PyTorch's arguments and default initialisation (as
        ``Conv1d.init``, with pairs for height and width)."""
        return cls._make(
            in_channels, out_channels, kernel_size, stride, padding, 0, dilation, groups,
            bias, padding_mode, dtype, rng,
        )  # fmt: skip


@attrs.frozen(eq=False, repr=False)
class ConvTranspose1d(_ConvTranspose):
    """1-d transposed convolution (``torch.nn.ConvTranspose1d``): the gradient of
    Conv1d with respect to its input; ``L_out = (L - 1) * stride - 2 * padding +
    dilation * (kernel_size - 1) + output_padding + 1``."""

    _nd = 1

    @classmethod
    def init(
        cls,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int],
        stride: int | tuple[int] = 1,
        padding: int | tuple[int] = 0,
        output_padding: int | tuple[int] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | tuple[int] = 1,
        padding_mode: str = "zeros",
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> ConvTranspose1d:
        """A ConvTranspose1d with PyTorch's arguments (in PyTorch's order: groups and
        bias before dilation) and default initialisation.

        Args:
            in_channels: Channels of the input.
            out_channels: Channels of the output.
            kernel_size: Kernel length.
            stride: Step of the corresponding convolution.
            padding: Zero padding of the corresponding convolution (removed from the
                output's ends).
            output_padding: Extra length added to one side of the output; smaller than
                stride or dilation.
            groups: Channel groups; must divide both channel counts.
            bias: Whether to learn a bias per output channel.
            dilation: Spacing between kernel taps.
            padding_mode: Only 'zeros', as in PyTorch.
            dtype: The parameters' dtype.
            rng: The generator drawing the initial weights (None: lampy's default generator).
        """
        return cls._make(
            in_channels, out_channels, kernel_size, stride, padding, output_padding,
            dilation, groups, bias, padding_mode, dtype, rng,
        )  # fmt: skip


@attrs.frozen(eq=False, repr=False)
class ConvTranspose2d(_ConvTranspose):
    """2-d transposed convolution (``torch.nn.ConvTranspose2d``), per dimension as
    ``ConvTranspose1d``."""

    _nd = 2

    @classmethod
    def init(
        cls,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        output_padding: int | tuple[int, int] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | tuple[int, int] = 1,
        padding_mode: str = "zeros",
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> ConvTranspose2d:
        """A ConvTranspose2d with PyTorch's arguments and default initialisation (as
        ``ConvTranspose1d.init``, with pairs)."""
        return cls._make(
            in_channels, out_channels, kernel_size, stride, padding, output_padding,
            dilation, groups, bias, padding_mode, dtype, rng,
        )  # fmt: skip
