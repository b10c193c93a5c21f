"""Making arrays from values: linspace, full and arange with numpy's names and
signatures, and PyTorch's ``tensor`` and ``from_numpy``.

linspace and full are differentiable in the values they are made from (``start`` and ``stop``, the
fill value), which may be Variables; the shape arguments are plain integers.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError, drops_gradient
from lampy.opkit import (
    GRAD_ENABLED,
    Operand,
    Variable,
    const,
    contrib_of,
    needs_grad,
    op,
    param,
    real_result,
    value_of,
)
from lampy.ops._shape import moveaxis

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


_matmul = np.matmul


def _check_dtype(name: str, dtype: Any, *operands: Any) -> None:
    """Refuse a non-float ``dtype=`` for a result that needs a gradient."""
    if dtype is None or np.dtype(dtype).kind == "f" or not GRAD_ENABLED.get():
        return
    if any(needs_grad(x) for x in operands):
        raise drops_gradient(name, np.dtype(dtype))


def linspace(
    start: Operand,
    stop: Operand,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: DTypeLike | None = None,
    axis: int = 0,
) -> Any:
    """``num`` evenly spaced samples from ``start`` to ``stop``, as ``numpy.linspace``.

    ``start`` and ``stop`` may be arrays (or Variables) that broadcast together: the
    samples then run along a new axis at position ``axis`` of the result.

    Args:
        start: The first sample.
        stop: The last sample (with ``endpoint``), else the end of the interval.
        num: The number of samples, ``>= 0``.
        endpoint: Whether ``stop`` is the last sample.
        retstep: Also return the spacing between samples.
        dtype: The result's dtype (numpy's default: float).
        axis: Where the samples' axis goes in the result (when ``start``/``stop`` are
            arrays).

    Returns:
        The samples, or ``(samples, step)`` with ``retstep``; ``step`` is a Variable too
        (nan, and constant, when ``num == 1`` and ``endpoint``, as in numpy).

    Raises:
        LampyValueError: if ``num`` is negative.
        ShapeError: if ``start`` and ``stop`` do not broadcast, or ``axis`` is out of range.
        DTypeError: if ``dtype`` is not a float dtype while ``start`` or ``stop`` needs a
            gradient (the result would be a constant).

    Gradient:
        With ``t_i = i / div`` (``div = num - 1`` with ``endpoint``, else ``num``; ``t = 0``
        when ``div == 0``): ``dstart = sum_i g_i (1 - t_i)``, ``dstop = sum_i g_i t_i``
        along the samples' axis (summed over broadcast axes). For the step
        ``(stop - start) / div``: ``dstart = -g / div``, ``dstop = g / div``.
    """
    s, e = value_of(start, name="linspace"), value_of(stop, name="linspace")
    n = operator.index(num)
    if n < 0:
        raise LampyValueError(f"linspace: num must be >= 0, got {num}.")
    _check_dtype("linspace", dtype, start, stop)
    try:
        shape = np.broadcast_shapes(np.shape(s), np.shape(e))
    except ValueError:
        raise ShapeError(
            f"linspace: start of shape {np.shape(s)} and stop of shape {np.shape(e)} do not "
            "broadcast together."
        ) from None
    nd = len(shape) + 1
    if not -nd <= operator.index(axis) < nd:
        raise ShapeError(
            f"linspace: axis {axis} is out of bounds for a result of {nd} dimensions (start "
            f"and stop broadcast to {shape})."
        )
    ax = operator.index(axis) % nd
    value, step = np.linspace(s, e, n, endpoint, retstep=True, dtype=dtype, axis=ax)
    real_result("linspace", value, start, stop)
    div = n - 1 if endpoint else n

    def weights(g: np.ndarray) -> np.ndarray:
        t = np.arange(n, dtype=g.dtype)
        return t / div if div > 0 else np.zeros_like(t)

    def d_start(g: np.ndarray) -> Any:
        return _matmul(np.moveaxis(g, ax, -1), 1 - weights(g))

    def d_stop(g: np.ndarray) -> Any:
        return _matmul(np.moveaxis(g, ax, -1), weights(g))

    w = np.arange(n) / div if div > 0 else np.zeros(n)  # constants, for the vjps

    def vjp_start(g: Any, out: Any) -> Any:
        return (moveaxis(g, ax, -1) * (1 - w)).sum(axis=-1)

    def vjp_stop(g: Any, out: Any) -> Any:
        return (moveaxis(g, ax, -1) * w).sum(axis=-1)

    samples = op(
        "linspace",
        value,
        contrib_of(start, d_start, vjp=vjp_start),
        contrib_of(stop, d_stop, vjp=vjp_stop),
    )
    if not retstep:
        return samples
    step_value = np.asarray(step)
    if div <= 0:  # numpy's step is nan: a constant
        return samples, op("linspace", step_value)
    return samples, op(
        "linspace",
        step_value,
        contrib_of(start, lambda g: g / -div, vjp=lambda g, out: g / -div),
        contrib_of(stop, lambda g: g / div, vjp=lambda g, out: g / div),
    )


def full(
    shape: int | Sequence[int],
    fill_value: Operand,
    dtype: DTypeLike | None = None,
    order: str = "C",
) -> Variable:
    """An array of ``shape`` filled with ``fill_value``, as ``numpy.full``.

    Args:
        shape: An int or a tuple of ints.
        fill_value: A number, or an array (or Variable) broadcastable to ``shape``.
        dtype: The result's dtype (None: ``fill_value``'s).
        order: ``'C'`` or ``'F'`` memory layout.

    Raises:
        ShapeError: if ``fill_value`` does not broadcast to ``shape``.
        DTypeError: if ``dtype`` is not a float dtype while ``fill_value`` needs a
            gradient.

    Gradient:
        ``dfill_value = g`` summed over the axes broadcasting added or stretched (all of
        them for a scalar fill value).
    """
    v = value_of(fill_value, name="full")
    _check_dtype("full", dtype, fill_value)
    try:
        value = np.full(shape, v, dtype=dtype, order=order)  # type: ignore[call-overload]
    except ValueError as e:
        raise ShapeError(
            f"full: fill_value of shape {np.shape(v)} does not broadcast to shape {shape}: {e}"
        ) from None
    real_result("full", value, fill_value)
    return op("full", value, contrib_of(fill_value, lambda g: g, fresh=False, vjp=lambda g, out: g))


def arange(
    start: float,
    stop: float | None = None,
    step: float = 1,
    *,
    dtype: DTypeLike | None = None,
    device: Any = None,
) -> Variable:
    """Evenly spaced values in ``[start, stop)``, as ``numpy.arange`` and
    ``torch.arange``: a constant Variable (no gradient), so that PyTorch's
    ``torch.arange(t).unsqueeze(0)`` ports as ``lampy.arange(t).unsqueeze(0)``.

    Args:
        start: The first value (the end, with ``stop`` None: ``arange(5)``).
        stop: The end (excluded).
        step: The spacing.
        dtype: The result's dtype (None: numpy's, int64 for ints as PyTorch's long).
        device: PyTorch's argument, accepted for ``"cpu"`` only.

    Raises:
        LampyValueError: for a device other than the CPU, or a step of 0.
    """
    _cpu("arange", device)
    if step == 0:
        raise LampyValueError("arange: step must not be 0.")
    if stop is None:
        start, stop = 0, start
    value = np.arange(
        value_of(start, name="arange"),
        value_of(stop, name="arange"),
        value_of(step, name="arange"),
        dtype=dtype,
    )
    return op("arange", value)


def _cpu(name: str, device: Any) -> None:
    if device is not None and str(device).split(":")[0] != "cpu":
        raise LampyValueError(
            f"{name}: lampy runs on numpy, on the CPU; there is no device {device!r}."
        )


def tensor(
    data: Operand, dtype: DTypeLike | None = None, device: Any = None, requires_grad: bool = False
) -> Variable:
    """A new leaf Variable holding a copy of ``data``, as ``torch.tensor``: a constant,
    or with ``requires_grad=True`` a param (``lampy.param``), in the current scope.

    Args:
        data: An array, array-like or scalar (a Variable's value is copied).
        dtype: The dtype to cast to (None: numpy's, as ``numpy.asarray`` reads it).
        device: PyTorch's argument, accepted for ``"cpu"`` only.
        requires_grad: Whether the result needs a gradient (a floating dtype then).

    Raises:
        LampyValueError: for a device other than the CPU.
        NoScopeError: if no scope is active.

    Examples:
        >>> import lampy
        >>> with lampy.Scope():
        ...     t = lampy.tensor([[1, 2], [3, 4]], dtype=lampy.long)
        ...     print(t.size(), t.dtype, t.requires_grad)
        (2, 2) int64 False
    """
    _cpu("tensor", device)
    return param(data, dtype) if requires_grad else const(data, dtype)


def from_numpy(ndarray: np.ndarray) -> Variable:
    """A constant Variable holding ``ndarray``, as ``torch.from_numpy``. PyTorch's
    shares the array's memory, and so does this one (read-only, without a copy): do not
    change the array while the Variable lives.

    Raises:
        LampyTypeError: if ``ndarray`` is not a numpy array.
        NoScopeError: if no scope is active.
    """
    if not isinstance(ndarray, np.ndarray):
        raise LampyTypeError(
            f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}; "
            "lampy.tensor(data) copies any array-like."
        )
    return const(ndarray, copy=False)


__all__ = ["arange", "from_numpy", "full", "linspace", "tensor"]
