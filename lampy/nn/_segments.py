"""``remat_sequential``: a stack of modules rematerialised in segments (Chen et al. 2016)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.autograd import remat
from lampy.opkit import const

__all__ = ["remat_sequential"]


def _segment(layers: Sequence[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    def run_segment(x: Any) -> Any:
        for layer in layers:
            x = layer(x)
        return x

    return run_segment


def remat_sequential(
    modules: Sequence[Callable[[Any], Any]], x: Any, segments: int | None = None
) -> Any:
    """Apply ``modules`` one after the other to ``x``, keeping only segment boundaries.

    The modules are split into ``segments`` consecutive groups of (nearly) equal length.
    Each group runs under `lampy.remat`: only its input and output stay in memory, and
    backward runs it again, one group at a time, releasing its values before the next.
    With ``n`` modules and ``k = sqrt(n)`` segments the activations held are about
    ``2 sqrt(n)`` layers' instead of ``n`` (Chen, Xu, Zhang and Guestrin 2016, "Training
    deep nets with sublinear memory cost"), for one more forward pass in backward.

    Unlike ``torch.utils.checkpoint.checkpoint_sequential``, the last group is
    rematerialised too: PyTorch frees a plain group's saved values during backward,
    while a lampy graph keeps its values until its scope exits (it can be
    backpropagated again), so a plain last group would stay in memory through the
    whole backward. Recomputing it costs one group's forward run.

    The params' gradients reach ``.grad`` one at a time with ``backward(atomic=False)``
    or ``lampy.backward_iter``; the default atomic pass keeps all of them to its end.
    A numpy ``x`` is read in place by each run of the first group (no copy is kept):
    do not change it before backward.

    Args:
        modules: The modules (any callables taking and returning one Variable), e.g. a
            `lampy.nn.Sequential` or its ``layers``.
        x: The input.
        segments: How many segments; ``ceil(sqrt(len(modules)))`` by default. 1 runs
            the whole stack without remat.

    Returns:
        The output of the last module.

    Raises:
        LampyValueError: if ``segments`` is below 1 or ``modules`` is empty.
        LampyTypeError: if a module is not callable, or ``segments`` is not an int.

    Examples:
        >>> import numpy as np, lampy
        >>> from lampy import nn
        >>> rng = np.random.default_rng(0)
        >>> with lampy.Scope():
        ...     layers = []
        ...     for _ in range(4):
        ...         layers += [nn.Linear.init(8, 8, rng=rng), nn.ReLU.init()]
        ...     y = nn.remat_sequential(layers, np.ones((2, 8), np.float32), segments=2)
        ...     print(y.shape)
        (2, 8)
    """
    mods = list(modules)
    if not mods:
        raise LampyValueError("remat_sequential: modules is empty; give at least one module.")
    for i, m in enumerate(mods):
        if not callable(m):
            raise LampyTypeError(
                f"remat_sequential: module {i} is not callable ({type(m).__name__})."
            )
    n = len(mods)
    k = math.ceil(math.sqrt(n)) if segments is None else segments
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise LampyTypeError(
            f"remat_sequential: segments must be an int of at least 1 (or None), got "
            f"{type(segments).__name__} {segments!r}."
        )
    k = int(k)
    if k < 1:
        raise LampyValueError(
            f"remat_sequential: segments must be an int of at least 1, got {segments!r}."
        )
    k = min(k, n)
    if k > 1 and type(x) is np.ndarray:
        # Read by every run of the first segment without a copy (a numpy input is
        # otherwise copied by the first op in each run, as a saved input).
        x = const(x, copy=False)
    bounds = [round(i * n / k) for i in range(k + 1)]
    for i in range(k):
        group = mods[bounds[i] : bounds[i + 1]]
        x = remat(_segment(group))(x) if k > 1 else _segment(group)(x)
    return x
