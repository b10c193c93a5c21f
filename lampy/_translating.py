"""The methods of ``lampy.Variable`` that translate their arguments before calling an op:
numpy's and PyTorch's readings of a shared name (``transpose``, ``var``, ``std``,
``max``, ``min``, ``repeat``), shapes given as separate ints or a tuple (``reshape``,
``view``, ``expand``, ``permute``), PyTorch's ``flatten``, ``t``, ``chunk``, ``split``, ``mm``,
``bmm``, ``argsort(descending=...)`` and ``to``.

They are entries of ``lampy._methods.METHODS``, installed on ``Variable`` by
``lampy/__init__.py``; how a shared name is read is in ``lampy/_shared_names.py``, and
their signatures for type checkers in ``lampy.autograd._operators.VariableMethods``.
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy import ops
from lampy._errors import AmbiguousMethodError, LampyTypeError, LampyValueError, ShapeError
from lampy._shared_names import (
    MinMax,
    ambiguous,
    axis_index,
    axis_or_dim,
    dtype_name,
    is_dtype_like,
    is_dtype_name,
    is_int,
    read_extreme,
    read_moments,
    read_repeat,
    shape_arg,
    shape_ints,
)

if TYPE_CHECKING:
    # Type checkers read the methods below as Variable's own (``self`` is a Variable, and
    # each is checked against its declaration in ``VariableMethods``).
    from lampy.autograd import Variable
    from lampy.autograd import Variable as _MethodsOf
else:
    _MethodsOf = object


class Translating(_MethodsOf):
    """Not a class to use: the namespace of these methods, which ``lampy._methods``
    installs on ``lampy.Variable``."""

    def reshape(self, *shape: Any, order: str = "C") -> Variable:
        """Same as ``lampy.reshape``; accepts ``v.reshape(2, 3)`` and ``v.reshape((2, 3))``.

        Raises:
            LampyTypeError: if the shape is not ints.
        """
        return ops.reshape(self, shape_ints("reshape", shape, self.shape), order=order)

    def transpose(self, *axes: Any, dim0: int | None = None, dim1: int | None = None) -> Variable:
        """numpy's ``transpose`` (a permutation, or reversed axes), or PyTorch's swap of
        two axes where numpy's reading cannot apply.

        ``x.transpose()``, ``x.transpose((1, 0, 2))`` and ``x.transpose(1, 0, 2)`` are
        numpy's. Two axes on a Variable that is not 2-d, or ``dim0=``/``dim1=``, are
        PyTorch's swap (``lampy.swapaxes``); on a 2-d Variable, ``(1, 0)`` means the same
        in both. ``x.transpose(0, 1)`` or ``(-2, -1)`` on a 2-d Variable is numpy's
        identity but PyTorch's swap, so it raises, showing both spellings.

        Raises:
            AmbiguousMethodError: for two axes that numpy and PyTorch read differently.
        """
        if dim0 is not None or dim1 is not None:
            if axes or dim0 is None or dim1 is None:
                raise LampyTypeError(
                    f"transpose: PyTorch's form takes two axes, dim0 and dim1; got {axes!r}, "
                    f"dim0={dim0!r}, dim1={dim1!r}."
                )
            return ops.swapaxes(self, dim0, dim1)
        if len(axes) == 2 and all(is_int(a) for a in axes):
            a, b = (operator.index(d) for d in axes)
            if self.ndim != 2 or a % 2 == b % 2:  # numpy would raise: PyTorch's swap
                return ops.swapaxes(self, a, b)
            if (a % 2, b % 2) == (0, 1) and min(a, b) >= -2 and max(a, b) < 2:
                raise AmbiguousMethodError(
                    ambiguous(
                        f"transpose({a}, {b})",
                        self.shape,
                        "numpy reads the axes as a permutation, which leaves a 2-d Variable "
                        "as it is; PyTorch swaps the two axes",
                        numpy="x (nothing to do), or x.transpose((0, 1))",
                        torch=f"x.swapaxes({a}, {b}), x.mT or x.T",
                    )
                )
        perm: Any = axes
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            perm = axes[0]
        return ops.transpose(self, perm or None)

    def var(self, *args: Any, **kwargs: Any) -> Variable:
        """The variance: numpy's ``var`` with ``ddof=``, PyTorch's with ``correction=``
        or ``unbiased=``, and ``dim=``/``keepdim=`` PyTorch's.

        numpy divides by ``n`` by default and PyTorch by ``n - 1``, and PyTorch takes
        numpy's ``axis=`` too, so ``x.var()``, ``x.var(1)`` and ``x.var(axis=1)`` would
        mean different numbers to the two; they raise, showing both spellings. Say the
        divisor (``ddof=0``, ``correction=1``, ``unbiased=True``) or use ``dim=``.

        Raises:
            AmbiguousMethodError: when neither the divisor nor PyTorch's ``dim=`` is given.
        """
        axis, dtype, ddof, keepdims = read_moments("var", self.shape, args, kwargs)
        # ddof may be a float (correction=0.5), which numpy takes
        return ops.var(self, axis, dtype, ddof=ddof, keepdims=keepdims)

    def std(self, *args: Any, **kwargs: Any) -> Variable:
        """The standard deviation: numpy's ``std`` with ``ddof=``, PyTorch's with
        ``correction=`` or ``unbiased=``, and ``dim=``/``keepdim=`` PyTorch's.

        As ``lampy.Variable.var``: a call that does not say the divisor, in either
        library's words, raises showing both spellings.

        Raises:
            AmbiguousMethodError: when neither the divisor nor PyTorch's ``dim=`` is given.
        """
        axis, dtype, ddof, keepdims = read_moments("std", self.shape, args, kwargs)
        # ddof may be a float (correction=0.5), which numpy takes
        return ops.std(self, axis, dtype, ddof=ddof, keepdims=keepdims)

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """numpy's ``max`` over everything or with numpy-only arguments, PyTorch's
        ``max(dim=...)`` (values and indices) and ``max(other)`` (elementwise).

        ``x.max()`` is the same in both libraries. With ``dim=`` (or ``keepdim=``, or a
        bool ``keepdim`` after the axis) it returns PyTorch's ``(values, indices)``, a
        ``MinMax`` pair whose values are differentiable (the gradient goes to the
        index, as PyTorch); with ``initial=``, ``where=`` or ``keepdims=`` numpy's
        ``amax``; given a Variable or array, ``lampy.maximum``. An axis alone
        (``x.max(1)``, ``x.max(axis=1)``) is an array for numpy and values and indices
        for PyTorch: it raises, showing ``x.amax(axis=1)`` and ``x.max(dim=1)``.

        Raises:
            AmbiguousMethodError: for an axis without a sign of either library.
        """
        return _extreme("max", self, args, kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """numpy's ``min`` over everything or with numpy-only arguments, PyTorch's
        ``min(dim=...)`` (values and indices) and ``min(other)`` (elementwise).

        ``x.min()`` is the same in both libraries. With ``dim=`` (or ``keepdim=``, or a
        bool ``keepdim`` after the axis) it returns PyTorch's ``(values, indices)``, a
        ``MinMax`` pair whose values are differentiable (the gradient goes to the
        index, as PyTorch); with ``initial=``, ``where=`` or ``keepdims=`` numpy's
        ``amin``; given a Variable or array, ``lampy.minimum``. An axis alone
        (``x.min(1)``, ``x.min(axis=1)``) is an array for numpy and values and indices
        for PyTorch: it raises, showing ``x.amin(axis=1)`` and ``x.min(dim=1)``.

        Raises:
            AmbiguousMethodError: for an axis without a sign of either library.
        """
        return _extreme("min", self, args, kwargs)

    def argsort(
        self,
        axis: int | None = -1,
        kind: Any = None,
        *,
        stable: Any = None,
        dim: int | None = None,
        descending: bool = False,
    ) -> Any:
        """Same as ``lampy.argsort``: integer indices as a numpy array, not a Variable.

        PyTorch's ``dim=``, ``descending=`` and ``x.argsort(dim, descending)`` (a bool
        second argument) are accepted; descending order keeps equal elements in order
        when ``stable=True``, as PyTorch.
        """
        if isinstance(kind, bool):  # PyTorch's argsort(dim, descending)
            kind, descending = None, kind
        if not descending:
            return ops.argsort(self, axis, kind, stable=stable, dim=dim)
        axis = axis_or_dim("argsort", axis, dim, default=-1)
        x = np.asarray(self.value)
        if axis is None:
            x, axis = x.reshape(-1), 0
        # Sorting the negated order keeps ties first-to-last, as PyTorch's stable sort.
        n = x.shape[axis] if x.ndim else 1
        rev = np.flip(x, axis) if x.ndim else x
        idx = np.argsort(rev, axis=axis, kind=kind, stable=True if stable else stable)
        idx = np.flip(idx, axis) if x.ndim else idx
        return (n - 1 - idx) if x.ndim else idx

    def flatten(self, start_dim: int | str = 0, end_dim: int = -1, *, order: str = "C") -> Variable:
        """Axes ``start_dim..end_dim`` merged into one, by ``lampy.reshape`` (PyTorch's).

        ``x.flatten()`` is numpy's (same as ``lampy.ravel``), and a string first argument
        is numpy's ``order``: ``x.flatten("F")``.

        Raises:
            ShapeError: if a dim is out of range or ``start_dim`` comes after ``end_dim``.
        """
        if isinstance(start_dim, str):
            order, start_dim = start_dim, 0
        s = self.shape
        start = axis_index("flatten", "start_dim", start_dim, s)
        end = axis_index("flatten", "end_dim", end_dim, s)
        if start > end:
            raise ShapeError(
                f"flatten: start_dim ({start_dim}) comes after end_dim ({end_dim}) for a "
                f"Variable of shape {s}."
            )
        if start == 0 and end >= len(s) - 1:
            return ops.ravel(self, order)
        return ops.reshape(self, (*s[:start], math.prod(s[start : end + 1]), *s[end + 1 :]), order)

    def repeat(self, *args: Any, **kwargs: Any) -> Variable:
        """numpy's ``repeat`` (each element ``repeats`` times along ``axis``), or PyTorch's
        ``repeat`` (the whole Variable tiled, ``lampy.tile``) where numpy's cannot apply.

        ``x.repeat(2, axis=1)`` is numpy's, ``x.repeat(2, 1, 1)`` (three sizes) PyTorch's.
        Where both readings apply and give different results (``x.repeat(2, 1)`` on a
        2-d Variable, ``x.repeat(2)`` on a 1-d one), it raises showing both spellings.

        Raises:
            AmbiguousMethodError: where numpy's and PyTorch's readings differ.
        """
        return _repeat(self, args, kwargs)

    def permute(self, *dims: Any) -> Variable:
        """Same as ``lampy.permute_dims``; accepts ``x.permute(1, 0)`` and a tuple."""
        return ops.permute_dims(self, shape_arg(dims))

    def view(self, *shape: Any) -> Variable:
        """Same as ``lampy.reshape`` (values are immutable, so a view and a copy are alike).

        ``x.view(np.float32)`` (numpy's and PyTorch's reinterpretation of the bytes as
        another dtype) has no gradient, and raises.

        Raises:
            LampyTypeError: for a dtype, or a shape that is not ints.
        """
        if len(shape) == 1 and is_dtype_like(shape[0]):
            raise LampyTypeError(
                f"view({dtype_name(shape[0])}): reinterpreting the bytes of a Variable of shape "
                f"{self.shape} and dtype {self.value.dtype} as another dtype has no "
                "gradient. For a cast, use x.astype(dtype); for the raw bits, "
                "x.value.view(dtype) (a numpy array). x.view(*shape) is PyTorch's reshape."
            )
        return ops.reshape(self, shape_ints("view", shape, self.shape))

    def expand(self, *sizes: Any) -> Variable:
        """Same as ``lampy.broadcast_to``, where a size of ``-1`` keeps this axis' size.

        Raises:
            ShapeError: if ``-1`` stands for a new leading axis.
        """
        new = tuple(operator.index(n) for n in shape_arg(sizes))
        lead = len(new) - self.ndim
        if any(n == -1 for n in new[: max(lead, 0)]):
            raise ShapeError(
                f"expand: -1 keeps an existing axis' size, it cannot stand for the new "
                f"leading axes; got sizes {new} for a Variable of shape {self.shape}."
            )
        if lead >= 0:
            new = tuple(self.shape[i - lead] if n == -1 else n for i, n in enumerate(new))
        return ops.broadcast_to(self, new)

    def t(self) -> Variable:
        """Same as ``lampy.matrix_transpose`` for 2-d; 0-d and 1-d are returned as they are.

        Raises:
            ShapeError: for more than 2 dimensions (use ``mT`` or ``permute``).
        """
        if self.ndim > 2:
            raise ShapeError(
                f"t: transposes up to 2 dimensions, got shape {self.shape}; use x.mT to "
                "swap the last two axes, or x.permute(...)."
            )
        return ops.matrix_transpose(self) if self.ndim == 2 else ops.reshape(self, self.shape)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Variable, ...]:
        """Same as ``lampy.split`` into pieces of ``ceil(n / chunks)`` (PyTorch's sizes:
        the last may be smaller, and there may be fewer than ``chunks``).

        Raises:
            LampyValueError: if ``chunks`` is less than 1.
        """
        chunks = operator.index(chunks)
        if chunks < 1:
            raise LampyValueError(f"chunk: chunks must be at least 1, got {chunks}.")
        n = self.shape[axis_index("chunk", "dim", dim, self.shape)]
        step = max(-(-n // chunks), 1)
        return tuple(ops.split(self, list(range(step, n, step)), axis=dim))

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Variable, ...]:
        """PyTorch's ``split``: pieces of ``split_size`` along ``dim`` (the last may be
        smaller), or of the sizes in a list. (numpy arrays have no ``split`` method;
        ``lampy.split(x, n)`` is numpy's function, ``n`` equal sections.)

        Raises:
            LampyValueError: if a size is negative, or the sizes do not add up to the axis.
        """
        ax = axis_index("split", "dim", dim, self.shape)
        n = self.shape[ax] if self.ndim else 1
        if is_int(split_size_or_sections):
            step = operator.index(split_size_or_sections)
            if step < 1 and not (step == 0 and n == 0):
                raise LampyValueError(
                    f"split: split_size must be at least 1, got {step} (PyTorch's split "
                    "takes the size of each piece; x.chunk(k) gives k pieces)."
                )
            cuts = list(range(step, n, step)) if step else []
        else:
            sizes = [operator.index(k) for k in split_size_or_sections]
            if any(k < 0 for k in sizes) or sum(sizes) != n:
                raise LampyValueError(
                    f"split: the sizes {sizes} must be >= 0 and add up to {n}, the length of "
                    f"dim {dim} of a Variable of shape {self.shape}."
                )
            cuts = list(itertools.accumulate(sizes))[:-1]
        return tuple(ops.split(self, cuts, axis=ax))

    def mm(self, other: Any) -> Variable:
        """Same as ``lampy.matmul`` for two matrices (2-d operands, as PyTorch's ``mm``).

        Raises:
            ShapeError: if an operand is not 2-d.
        """
        _check_ndim("mm", 2, self, other)
        return ops.matmul(self, other)

    def bmm(self, other: Any) -> Variable:
        """Same as ``lampy.matmul`` for two batches of matrices (3-d, as PyTorch's ``bmm``).

        Raises:
            ShapeError: if an operand is not 3-d.
        """
        _check_ndim("bmm", 3, self, other)
        return ops.matmul(self, other)

    def to(self, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False) -> Variable:
        """Same as ``lampy.astype``: ``x.to(np.float32)``, ``x.to(other)`` (its dtype);
        ``x.to("cpu")`` is ``x``.

        Raises:
            LampyValueError: for a device other than the CPU (lampy runs on numpy).
        """
        for a in args:
            if isinstance(a, str) and not is_dtype_name(a):
                device = a
            elif hasattr(a, "dtype") and not isinstance(a, np.dtype | type):
                dtype = a.dtype
            else:
                dtype = a
        if device is not None and str(device).split(":")[0] != "cpu":
            raise LampyValueError(
                f"to: lampy runs on numpy, on the CPU; there is no device {device!r}. "
                "Drop the .to(device) call (x.to('cpu') and x.cpu() return x)."
            )
        if dtype is None:
            return ops.copy(self) if copy else self
        return ops.astype(self, dtype, copy=copy)


def _check_ndim(name: str, ndim: int, *operands: Any) -> None:
    shapes = [np.shape(x) for x in operands]
    if any(len(s) != ndim for s in shapes):
        raise ShapeError(
            f"{name}: takes {ndim}-d operands, got shapes {shapes}; use x.matmul(other) "
            "(x @ other) to broadcast."
        )


def _extreme(name: str, x: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``x.max(...)``/``x.min(...)`` computed as ``read_extreme`` reads the call."""
    form, a, b = read_extreme(name, x.shape, args, kwargs)
    if form == "elementwise":
        return (ops.maximum if name == "max" else ops.minimum)(x, a)
    if form == "numpy":
        return (ops.amax if name == "max" else ops.amin)(x, a, **b)
    arg = ops.argmax if name == "max" else ops.argmin
    idx = np.asarray(arg(x, a, keepdims=True)).astype(np.int64)
    values = ops.take_along_axis(x, idx, a)  # the gradient goes to the index, as PyTorch
    if not b:
        idx = np.squeeze(idx, a)
        values = ops.squeeze(values, a)
    return MinMax(values, idx)


def _repeat(x: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Variable:
    """``x.repeat(...)`` computed as ``read_repeat`` reads the call."""
    form, a, b = read_repeat(x.shape, args, kwargs)
    return ops.repeat(x, a, b) if form == "numpy" else ops.tile(x, a)


__all__ = ["Translating"]
