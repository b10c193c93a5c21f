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

from lampy._errors import LampyTypeError
from lampy.opkit import axis_or_dim

__all__ = ["axis_or_dim", "keepdims_or_keepdim"]


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
