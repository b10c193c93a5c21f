"""PyTorch's keyword names, accepted beside numpy's where both mean the same thing.

``dim=`` stands for ``axis=`` and ``keepdim=`` for ``keepdims=`` in the ops whose PyTorch
namesake computes the same result: ``sum``, ``mean``, ``prod``, ``amax``, ``amin``,
``argmax``, ``argmin``, ``logsumexp``, ``cumsum``, ``cumprod``, ``concatenate`` (and its
alias ``cat``), ``stack``, ``squeeze``, ``expand_dims`` (and its alias ``unsqueeze``),
``argsort``, ``topk`` and ``take_along_axis``. numpy's names stay first and positional.

Where PyTorch's function of the same name computes something else, lampy takes numpy's
keywords only, so that PyTorch's spelling fails at once instead of returning another
thing: ``torch.max(x, dim)``, ``torch.min`` and ``torch.sort`` return values *and*
indices (here: ``amax``/``argmax``, ``sort``/``argsort``, or ``topk``), and
``torch.var``/``torch.std`` divide by ``n - 1`` by default (here ``ddof=0``, as numpy).
"""

from __future__ import annotations

from typing import Any

from lampy._errors import LampyTypeError

__all__ = ["axis_or_dim", "keepdims_or_keepdim"]


def axis_or_dim(name: str, axis: Any, dim: Any, default: Any = None) -> Any:
    """The axis given as numpy's ``axis`` or PyTorch's ``dim`` (not both).

    Args:
        name: The op, for the error message.
        axis: The ``axis`` argument.
        dim: The ``dim`` argument (None when not given).
        default: ``axis``'s default: an ``axis`` equal to it counts as not given.

    Raises:
        LampyTypeError: if both are given.
    """
    if dim is None:
        return axis
    if axis is not default and axis != default:
        raise LampyTypeError(
            f"{name}: pass axis (numpy's name) or dim (PyTorch's), not both; got "
            f"axis={axis!r} and dim={dim!r}."
        )
    return dim


def keepdims_or_keepdim(name: str, keepdims: bool, keepdim: bool | None) -> bool:
    """``keepdims`` given as numpy's ``keepdims`` or PyTorch's ``keepdim``.

    Raises:
        LampyTypeError: if both are given and differ.
    """
    if keepdim is None:
        return keepdims
    if keepdims and not keepdim:
        raise LampyTypeError(
            f"{name}: pass keepdims (numpy's name) or keepdim (PyTorch's), not both; got "
            f"keepdims={keepdims!r} and keepdim={keepdim!r}."
        )
    return bool(keepdim)
