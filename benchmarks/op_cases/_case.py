"""What one per-op benchmark case is. Each family lists its cases in ``<family>.py``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Case:
    """One op measured forward + backward on large inputs (10^5 elements or more).

    Attributes:
        name: Row label, e.g. ``"sin"`` or ``"einsum ij,jk->ik"``.
        family: The op family (``"elementwise"``, ``"reduction"``, ``"matmul"``,
            ``"einsum"``, ``"indexing"``, ``"linalg"``, ``"shape"``).
        make_inputs: ``make_inputs(rng)`` returns the float64 input arrays.
        lampy_fn: Takes one Variable per input, returns a Variable.
        numpy_fwd_bwd: ``numpy_fwd_bwd(inputs, g)`` computes the forward value in plain
            numpy and then the hand-written gradient of every input given the
            cotangent ``g`` (same shape as the output); returns the gradients. This is
            the baseline lampy must stay within 2x of.
        torch_fn: Same computation on torch tensors (None if not comparable).
        mygrad_fn: Same computation on mygrad tensors (None if not comparable).
    """

    name: str
    family: str
    make_inputs: Callable[[np.random.Generator], list[np.ndarray]]
    lampy_fn: Callable[..., Any]
    numpy_fwd_bwd: Callable[[list[np.ndarray], np.ndarray], list[np.ndarray]]
    torch_fn: Callable[..., Any] | None = None
    mygrad_fn: Callable[..., Any] | None = None
