"""Gradient clipping in place: ``clip_grad_norm_`` and ``clip_grad_value_`` (PyTorch's).

Both act on the ``.grad`` buffers of params, skipping params whose ``.grad`` is None, and
change them in place. Call them between ``backward`` and the optimizer's ``step``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from lampy._errors import LampyError, LampyTypeError
from lampy.opkit import Variable

__all__ = ["NonFiniteNormError", "clip_grad_norm_", "clip_grad_value_"]


class NonFiniteNormError(LampyError, RuntimeError):
    """The total gradient norm is NaN or infinite and ``error_if_nonfinite`` was set.

    Attributes:
        total_norm: The norm found (``nan``, ``inf`` or ``-inf``).
    """

    def __init__(self, message: str, total_norm: float = math.nan) -> None:
        super().__init__(message)
        self.total_norm = total_norm


def _grads(parameters: Variable | Iterable[Variable], name: str) -> list[np.ndarray]:
    params = [parameters] if isinstance(parameters, Variable) else list(parameters)
    for p in params:
        if not isinstance(p, Variable):
            raise LampyTypeError(
                f"{name}: parameters must be Variables (or one Variable), got a {type(p).__name__}."
            )
    return [g for g in (p.grad for p in params) if g is not None]


def _vector_norm(x: np.ndarray, norm_type: float) -> Any:
    """``torch.linalg.vector_norm`` of a flat view. The norm of no elements is 0, except
    for ``norm_type=-inf`` (the smallest ``|x|``), where it is ``inf``, the identity of a
    minimum: an empty gradient then leaves the total to the other gradients."""
    if x.size == 0:
        return x.dtype.type(math.inf if norm_type == -math.inf else 0)
    return np.linalg.norm(x.reshape(-1), ord=norm_type)


def clip_grad_norm_(
    parameters: Variable | Iterable[Variable],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> np.ndarray:
    """Scale the gradients in place so that their total norm is at most ``max_norm``.

    The total norm is the ``norm_type`` norm of the vector of every gradient's
    ``norm_type`` norm (the norm of all gradients concatenated). Every gradient is then
    multiplied by ``min(1, max_norm / (total_norm + 1e-6))``, as in PyTorch (always,
    even when that factor is 1).

    Args:
        parameters: A param Variable or an iterable of them; those with ``.grad`` None
            are skipped.
        max_norm: The largest total norm allowed.
        norm_type: The order of the norm: a positive float, ``math.inf`` (largest
            absolute value) or ``-math.inf``.
        error_if_nonfinite: Raise if the total norm is NaN or infinite (otherwise the
            gradients are scaled by the non-finite factor, as PyTorch does).
        foreach: Accepted for PyTorch compatibility and ignored.

    Returns:
        The total norm of the gradients before clipping, a 0-d array of the gradients'
        dtype (float64 ``0.0`` when no param has a gradient).

    Raises:
        NonFiniteNormError: (a ``RuntimeError``) if ``error_if_nonfinite`` and the total
            norm is NaN or infinite; the gradients are left unchanged.
        LampyTypeError: ``parameters`` holds something other than Variables.
    """
    del foreach
    grads = _grads(parameters, "clip_grad_norm_")
    norm_type = float(norm_type)
    if not grads:
        return np.asarray(0.0)
    dtype = np.result_type(*grads)
    norms = np.array([_vector_norm(g, norm_type) for g in grads], dtype=dtype)
    total = np.asarray(_vector_norm(norms, norm_type), dtype=dtype)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise NonFiniteNormError(
            f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
            f"{float(total)}, so they cannot be clipped. To scale the gradients by the "
            "non-finite norm anyway, pass error_if_nonfinite=False.",
            float(total),
        )
    with np.errstate(all="ignore"):
        coef = np.minimum(dtype.type(max_norm) / (total + dtype.type(1e-6)), dtype.type(1.0))
        for g in grads:
            np.multiply(g, coef, out=g)
    return total


def clip_grad_value_(
    parameters: Variable | Iterable[Variable], clip_value: float, foreach: bool | None = None
) -> None:
    """Clip the gradients of ``parameters`` in place to ``[-clip_value, clip_value]``.

    Args:
        parameters: A param Variable or an iterable of them; those with ``.grad`` None
            are skipped.
        clip_value: The largest absolute value a gradient element keeps.
        foreach: Accepted for PyTorch compatibility and ignored.

    Raises:
        LampyTypeError: ``parameters`` holds something other than Variables.
    """
    del foreach
    clip_value = float(clip_value)
    for g in _grads(parameters, "clip_grad_value_"):
        np.clip(g, -clip_value, clip_value, out=g)
