"""The Dropout module of ``lampy.nn`` (``torch.nn.Dropout``): zeroes elements with
probability ``p`` in training mode, drawing from the module's own numpy Generator if it
was given one, else from lampy's default generator at each call, and is the identity in
evaluation mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.nn._helpers import rng_or_default
from lampy.nn._module import Module
from lampy.nn.functional import dropout
from lampy.opkit import Operand

__all__ = ["Dropout"]


@attrs.frozen(eq=False, repr=False)
class Dropout(Module):
    """In training mode, each element is zeroed with probability ``p`` and the rest are
    scaled by ``1 / (1 - p)``; in evaluation mode the input passes through unchanged.

    Given a Generator (``rng=``), the module holds it and every training-mode call
    advances it (copies made by ``with_training`` share it); without one
    (``nn.Dropout(0.2)``, as in PyTorch), each call draws from lampy's default
    generator as it is then (``lampy.manual_seed``, ``lampy.random.fork_rng``). From Srivastava et
    al. (2014), "Dropout: a simple way to prevent neural networks from overfitting".

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     drop = nn.Dropout.init(0.2, rng=np.random.default_rng(0))
        ...     print(drop(np.ones(8)).value)       # about 20% zeros, the rest 1.25
        ...     with nn.eval_mode(drop):
        ...         print(drop(np.ones(8)).value)   # unchanged
        [1.25 1.25 1.25 1.25 0.   0.   1.25 1.25]
        [1. 1. 1. 1. 1. 1. 1. 1.]
    """

    p: float = 0.5
    rng: np.random.Generator | None = None
    _repr_fields = ("p",)

    @classmethod
    def init(cls, p: float = 0.5, *, rng: np.random.Generator | None = None) -> Dropout:
        """A Dropout module.

        Args:
            p: Probability of zeroing an element, in [0, 1].
            rng: The generator drawing the masks; None draws from lampy's default
                generator at each call.

        Raises:
            LampyValueError: if ``p`` is outside [0, 1].
            LampyTypeError: if ``rng`` is neither None nor a ``numpy.random.Generator``.
        """
        try:
            q = float(p)
        except (TypeError, ValueError):
            raise LampyTypeError(f"Dropout.init: p must be a float, got {p!r}.") from None
        if not 0.0 <= q <= 1.0:
            raise LampyValueError(f"Dropout.init: p must lie in [0, 1], got {p!r}.")
        if rng is not None:
            rng_or_default("Dropout.init", rng)  # the type check
        return cls(q, rng)

    @classmethod
    def _invalid_record(cls, fields: Mapping[str, Any]) -> str | None:
        p = fields["p"]
        if isinstance(p, int | float) and not 0.0 <= p <= 1.0:
            return f"p must lie in [0, 1], got {p!r}"
        return None

    def forward(self, input: Operand) -> Any:
        """``dropout(input, p, training, rng=rng)``: the input itself in eval mode or for
        ``p = 0``."""
        return dropout(input, self.p, self.training, rng=self.rng)
