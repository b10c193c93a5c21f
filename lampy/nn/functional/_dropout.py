"""Dropout of ``lampy.nn.functional``: ``dropout``, ``dropout1d``, ``dropout2d``,
``dropout3d`` and ``alpha_dropout``, with PyTorch's names, arguments and defaults.

Every function takes a ``numpy.random.Generator`` through the keyword ``rng``; without
one, masks are drawn from lampy's default generator (``lampy.manual_seed``), as
PyTorch's are from its global one. The same seed gives the same mask, and inside
``lampy.remat`` the recomputation draws the same masks again (``replayable``). Each
call is one op that keeps its scaled mask for the backward pass. float32 stays float32
(the uniform draws are float32 too).

``inplace=True`` is accepted for compatibility and has no effect: lampy's values are
immutable, so the result is always a new Variable and the input is left unchanged. Code
that uses the returned value (``x = F.dropout(x, inplace=True)``, as
``torch.nn.Dropout(inplace=True)`` does) behaves as in PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.autograd import _ledger
from lampy.nn.functional._shared import float_value, rng_or_default
from lampy.opkit import Operand, Variable, contrib_of, op, replayable, value_of

__all__ = ["alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d"]

_SELU_ALPHA_PRIME = 1.7580993408473766  # -selu's negative saturation, scale * alpha


def _check_p(name: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise LampyValueError(f"{name}: dropout probability has to be between 0 and 1, got {p}.")


def _float_or_trivial(
    name: str, input: Any, p: float, training: bool
) -> tuple[np.ndarray, Variable | None]:
    """Shared by the dropouts: check ``p``, and return the input's float value with the
    result when nothing is drawn (None otherwise). Not training, ``p = 0`` or an empty
    input: ``input`` itself when it is a Variable, else a Variable holding the value;
    ``p = 1``: zeros with a zero gradient."""
    _check_p(name, p)
    a = np.asarray(float_value(input, name, reserve=False))
    if not training or p == 0 or a.size == 0:
        return a, input if type(input) is Variable else op(name, a)
    if p == 1:
        zero = contrib_of(input, lambda g: np.zeros_like(g), vjp=lambda g, out: None)
        return a, op(name, np.zeros_like(a), zero)
    return a, None


def _keep(rng: np.random.Generator, shape: tuple[int, ...], p: float, dtype: Any) -> np.ndarray:
    """A boolean mask that is True with probability ``1 - p``, drawn from ``rng``."""
    draw_dtype = np.float32 if dtype == np.float32 else np.float64
    rng = replayable(rng)  # the same draws again when lampy.remat recomputes
    keep: np.ndarray = rng.random(shape, dtype=draw_dtype) < draw_dtype(1.0 - p)
    return keep


def _masked(
    name: str, input: Any, p: float, training: bool, rng: Any, mask_shape: Any = None
) -> Variable:
    """Shared by the dropouts: keep each element (or each channel, when ``mask_shape``
    gives a smaller broadcastable shape) with probability ``1 - p`` and scale by
    ``1 / (1 - p)``."""
    a, trivial = _float_or_trivial(name, input, p, training)
    if trivial is not None:
        return trivial
    if _ledger.open_budgets:  # the output has the input's shape: checked first
        _ledger.reserve(name, a.shape, a.dtype)
    keep = _keep(
        rng_or_default(name, rng), a.shape if mask_shape is None else mask_shape, p, a.dtype
    )
    mask = np.multiply(keep, a.dtype.type(1.0 / (1.0 - p)), dtype=a.dtype)  # 0 or 1/(1-p)
    value = a * mask
    return op(name, value, contrib_of(input, lambda g: g * mask, vjp=lambda g, out: g * mask))


def dropout(
    input: Operand,
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    *,
    rng: np.random.Generator | None = None,
) -> Variable:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    When not training, for ``p = 0`` and for an empty input, the input is returned
    itself (a non-Variable input is wrapped in a Variable that needs no gradient).
    ``p = 1`` gives zeros (and a zero gradient) without drawing. Elements are kept where
    a uniform draw in [0, 1) is below ``1 - p``.

    Args:
        input: The input.
        p: The probability of zeroing an element, in [0, 1].
        training: Apply dropout (True) or return the input (False).
        inplace: Accepted for PyTorch compatibility; no effect (see the module notes).
        rng: The generator drawing the mask (when ``training`` and ``0 < p < 1``);
            lampy's default generator (``lampy.manual_seed``) when None.

    Raises:
        LampyValueError: if ``p`` is outside [0, 1].
        LampyTypeError: if ``rng`` is neither None nor a ``numpy.random.Generator``.

    Gradient:
        ``dx = g * mask / (1 - p)`` with the forward pass's mask (0 for ``p = 1``).

    Examples:
        >>> import numpy as np, lampy
        >>> from lampy.nn.functional import dropout
        >>> with lampy.Scope():
        ...     y = dropout(np.ones(6), 0.5, rng=np.random.default_rng(0))
        ...     print(sorted(set(y.value.tolist())))
        [0.0, 2.0]
    """
    return _masked("dropout", input, p, training, rng)


def _channel_dropout(
    name: str, input: Any, p: float, training: bool, rng: Any, layouts: dict[int, str]
) -> Variable:
    """Dropout of whole channels; ``layouts`` maps each accepted rank to its layout
    ("N, C, L", "C, H, W"...): the mask covers the axes up to and including C."""
    shape = np.shape(value_of(input, name=name))
    layout = layouts.get(len(shape))
    if layout is None:
        accepted = " or ".join(f"{n}-d ({lay})" for n, lay in layouts.items())
        raise ShapeError(
            f"{name}: expected a {accepted} input, got a {len(shape)}-d input of shape {shape}."
        )
    channels = 1 if layout.startswith("C") else 2
    mask_shape = shape[:channels] + (1,) * (len(shape) - channels)
    return _masked(name, input, p, training, rng, mask_shape)


def dropout1d(
    input: Operand,
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    *,
    rng: np.random.Generator | None = None,
) -> Variable:
    """Zero whole channels of a (N, C, L) or (C, L) input with probability ``p``, scaling
    the kept ones by ``1 / (1 - p)`` (one draw per channel and sample).

    Args, returns and errors as :func:`dropout`; also a ``ShapeError`` for other ranks.

    Gradient:
        ``dx = g * mask / (1 - p)``, the channel mask broadcast over L.
    """
    return _channel_dropout("dropout1d", input, p, training, rng, {2: "C, L", 3: "N, C, L"})


def dropout2d(
    input: Operand,
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    *,
    rng: np.random.Generator | None = None,
) -> Variable:
    """Zero whole channels of a (N, C, H, W) input with probability ``p``, scaling the
    kept ones by ``1 / (1 - p)``.

    A 3-d input is taken as (N, C, L), as PyTorch 2 does (it warns that it will read it
    as an unbatched (C, H, W) later): use :func:`dropout1d` for that meaning, or add a
    batch axis for an unbatched image.

    Gradient:
        ``dx = g * mask / (1 - p)``, the channel mask broadcast over H and W.
    """
    layouts = {3: "N, C, L", 4: "N, C, H, W"}  # 3-d: (N, C, L), as PyTorch 2
    return _channel_dropout("dropout2d", input, p, training, rng, layouts)


def dropout3d(
    input: Operand,
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    *,
    rng: np.random.Generator | None = None,
) -> Variable:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability
    ``p``, scaling the kept ones by ``1 / (1 - p)``.

    Gradient:
        ``dx = g * mask / (1 - p)``, the channel mask broadcast over D, H and W.
    """
    layouts = {4: "C, D, H, W", 5: "N, C, D, H, W"}
    return _channel_dropout("dropout3d", input, p, training, rng, layouts)


def alpha_dropout(
    input: Operand,
    p: float = 0.5,
    training: bool = False,
    inplace: bool = False,
    *,
    rng: np.random.Generator | None = None,
) -> Variable:
    """Dropout for SELU networks (Klambauer et al. 2017), keeping zero mean and unit
    variance: dropped elements are set to ``-alpha'`` (``alpha' = 1.7580993408473766``,
    SELU's negative saturation) and an affine map ``a x + b`` restores the moments, with
    ``a = ((1 - p) (1 + p alpha'^2))^(-1/2)`` and ``b = a alpha' p`` where kept,
    ``b = a alpha' (p - 1)`` where dropped. Note PyTorch's default ``training=False``.

    Identity when not training, for ``p = 0`` or an empty input; ``p = 1`` gives zeros.

    Gradient:
        ``dx = g * a * mask``.
    """
    name = "alpha_dropout"
    a_in, trivial = _float_or_trivial(name, input, p, training)
    if trivial is not None:
        return trivial
    keep = _keep(rng_or_default(name, rng), a_in.shape, p, a_in.dtype)
    al = _SELU_ALPHA_PRIME
    a = 1.0 / np.sqrt((al * al * p + 1) * (1 - p))
    t = a_in.dtype.type
    mask = np.multiply(keep, t(a), dtype=a_in.dtype)
    shift = np.where(keep, t(a * al * p), t(a * al * (p - 1)))
    value = a_in * mask + shift
    return op(name, value, contrib_of(input, lambda g: g * mask, vjp=lambda g, out: g * mask))
