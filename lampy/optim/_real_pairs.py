"""Complex params: their updates run on real views, as PyTorch's ``view_as_real``.

An optimizer's elementwise rules (Adam's squared gradients, RMSprop's roots, Lion's
signs) hold for real numbers; a complex param is updated on its real and imaginary
parts as a real array with a last axis of 2, and so are its gradient and state. The
state keeps the param's complex dtype and shape (``state_dict`` saves it so); only the
views passed to ``_update`` are real.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.autograd import Variable


def real_layout(p: Variable) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The shape and dtype ``_update`` sees for ``p``: a complex param's real view (a last
    axis of 2, its real dtype), else the param's own."""
    if p.dtype.kind == "c":
        return (*p.shape, 2), np.finfo(p.dtype).dtype
    return p.shape, p.dtype


def real_pairs(a: np.ndarray) -> np.ndarray:
    """A complex array's view as real pairs (numpy's layout of complex numbers)."""
    view: np.ndarray = a[..., None].view(np.finfo(a.dtype).dtype)
    return view


def on_real_pairs(
    update: Callable[[dict[str, Any], Variable, np.ndarray, Any], None],
    states: dict[Variable, dict[str, Any]],
    group: dict[str, Any],
    p: Variable,
    value: np.ndarray,
    grad: Any,
) -> None:
    """``update(group, p, value, grad)`` (an optimizer's ``_update``) for a complex ``p``
    on real views of its value, gradient and state arrays (``states[p]``): the complex
    arrays are restored afterwards (their memory holds the update), and a state array
    the update made on the real view becomes a complex view of the same memory."""
    state = states.get(p)
    kept = {} if state is None else dict(state)
    if state is not None:
        for k, v in kept.items():
            if type(v) is np.ndarray and v.dtype.kind == "c":
                state[k] = real_pairs(v)
    try:
        update(group, p, real_pairs(value), real_pairs(np.asarray(grad)))
    finally:
        state = states.get(p)
        if state is not None:
            paired = (*p.shape, 2)
            for k, v in state.items():
                old = kept.get(k)
                if type(old) is np.ndarray and old.dtype.kind == "c":
                    state[k] = old
                elif type(v) is np.ndarray and v.shape == paired and v.dtype.kind == "f":
                    state[k] = v.view(p.dtype)[..., 0]


__all__ = ["on_real_pairs", "real_layout", "real_pairs"]
