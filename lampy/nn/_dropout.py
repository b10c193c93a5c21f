"""The Dropout module of ``lampy.nn`` (``torch.nn.Dropout``): zeroes elements with
probability ``p`` in training mode, drawing from the module's own numpy Generator, and
is the identity in evaluation mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.nn._helpers import require_rng
from lampy.nn._module import Module
from lampy.nn.functional._dropout import dropout

__all__ = ["Dropout"]


@attrs.frozen(eq=False, repr=False)
class Dropout(Module):
    """In training mode, each element is zeroed with probability ``p`` and the rest are
    scaled by ``1 / (1 - p)``; in evaluation mode the input passes through unchanged.

    The module holds the Generator it draws masks from; every training-mode call
    advances it (copies made by ``with_training`` share it). From Srivastava et
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
            rng: The generator drawing the masks; required when ``p > 0``.

        Raises:
            LampyValueError: if ``p`` is outside [0, 1] or ``rng`` is missing for ``p > 0``.
        """
        try:
            q = float(p)
        except (TypeError, ValueError):
            raise LampyTypeError(f"Dropout.init: p must be a float, got {p!r}.") from None
        if not 0.0 <= q <= 1.0:
            raise LampyValueError(f"Dropout.init: p must lie in [0, 1], got {p!r}.")
        if q > 0 or rng is not None:
            rng = require_rng("Dropout.init", rng, f"p = {q} > 0 draws random masks")
        return cls(q, rng)

    @classmethod
    def _invalid_record(cls, fields: Mapping[str, Any]) -> str | None:
        if fields["rng"] is None and fields["p"] != 0:
            p = fields["p"]
            return f"rng must be a numpy.random.Generator when p = {p} > 0 (it draws masks)"
        return None

    def forward(self, input: Any) -> Any:
        """``dropout(input, p, training, rng=rng)``: the input itself in eval mode or for
        ``p = 0``."""
        return dropout(input, self.p, self.training, rng=self.rng)
