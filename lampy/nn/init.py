"""Parameter initialisations with PyTorch's formulas (``torch.nn.init``), as pure functions.

Each returns a new numpy array of ``shape`` and ``dtype`` (float32 by default, as in
PyTorch) drawn from the ``numpy.random.Generator`` given as ``rng=`` (lampy's default
generator, ``lampy.manual_seed``, when None); wrap it with
``lampy.param`` to make a parameter. PyTorch's in-place versions, ending in an
underscore (``normal_(m.weight, 0.0, 0.02, generator=rng)``), write into a param
through ``lampy.in_place`` (its version goes up), for ``model.apply(fn)``. The
distributions and bounds equal PyTorch's; the random streams differ, since the
generators do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.autograd import in_place
from lampy.opkit import Variable
from lampy.random import resolve_rng

__all__ = [
    "constant_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
    "calculate_gain",
    "constant",
    "fan_in_and_fan_out",
    "kaiming_normal",
    "kaiming_uniform",
    "normal",
    "ones",
    "orthogonal",
    "trunc_normal",
    "uniform",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]

Shape = int | tuple[int, ...]


def _shape(shape: Shape) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def fan_in_and_fan_out(shape: Shape) -> tuple[int, int]:
    """PyTorch's fans of a weight of ``shape``: ``(shape[1] * receptive, shape[0] * receptive)``.

    The receptive field size is the product of the dimensions after the first two
    (kernel sizes of a convolution weight).

    Raises:
        LampyValueError: for fewer than 2 dimensions.
    """
    s = _shape(shape)
    if len(s) < 2:
        raise LampyValueError(
            f"fan_in_and_fan_out: a weight of shape {s} has fewer than 2 dimensions, so it "
            "has no fan in and fan out; use a 2-D or higher weight shape."
        )
    receptive = math.prod(s[2:])
    return s[1] * receptive, s[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """PyTorch's recommended gain for a nonlinearity (``torch.nn.init.calculate_gain``).

    Args:
        nonlinearity: ``'linear'``, a convolution name (``'conv1d'`` to ``'conv3d'``,
            ``'conv_transpose1d'`` to ``'conv_transpose3d'``), ``'sigmoid'`` (all gain
            1), ``'tanh'`` (5/3), ``'relu'`` (sqrt(2)), ``'leaky_relu'``
            (``sqrt(2 / (1 + param**2))``) or ``'selu'`` (3/4).
        param: The negative slope of ``'leaky_relu'`` (0.01 when None); ignored by the
            others.

    Raises:
        LampyValueError: an unknown nonlinearity, or a ``'leaky_relu'`` slope that is
            not an int or a float (a bool included), as PyTorch.
    """
    linear = (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    )
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float, np.integer, np.floating)) and not isinstance(
            param, (bool, np.bool_)
        ):
            slope = float(param)
        else:
            raise LampyValueError(
                f"calculate_gain: the negative slope of 'leaky_relu' must be an int or a "
                f"float, got {param!r} ({type(param).__name__})."
            )
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    raise LampyValueError(
        f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; use one of "
        f"{[*linear, 'sigmoid', 'tanh', 'relu', 'leaky_relu', 'selu']}."
    )


def uniform(
    shape: Shape,
    a: float = 0.0,
    b: float = 1.0,
    *,
    rng: np.random.Generator | None = None,
    dtype: Any = np.float32,
) -> np.ndarray:
    """Values drawn uniformly from ``[a, b)``."""
    return resolve_rng("nn.init.uniform", rng).uniform(a, b, _shape(shape)).astype(dtype)


def normal(
    shape: Shape,
    mean: float = 0.0,
    std: float = 1.0,
    *,
    rng: np.random.Generator | None = None,
    dtype: Any = np.float32,
) -> np.ndarray:
    """Values drawn from ``N(mean, std**2)``."""
    return resolve_rng("nn.init.normal", rng).normal(mean, std, _shape(shape)).astype(dtype)


def trunc_normal(
    shape: Shape,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    *,
    rng: np.random.Generator | None = None,
    dtype: Any = np.float32,
) -> np.ndarray:
    """``N(mean, std**2)`` truncated to ``[a, b]`` (by redrawing values outside it)."""
    rng = resolve_rng("nn.init.trunc_normal", rng)
    out = rng.normal(mean, std, _shape(shape))
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = rng.normal(mean, std, int(bad.sum()))
        bad = (out < a) | (out > b)
    return out.astype(dtype)


def constant(shape: Shape, val: float, *, dtype: Any = np.float32) -> np.ndarray:
    """An array filled with ``val``."""
    return np.full(_shape(shape), val, dtype=dtype)


def zeros(shape: Shape, *, dtype: Any = np.float32) -> np.ndarray:
    """An array of zeros."""
    return np.zeros(_shape(shape), dtype=dtype)


def ones(shape: Shape, *, dtype: Any = np.float32) -> np.ndarray:
    """An array of ones."""
    return np.ones(_shape(shape), dtype=dtype)


def xavier_uniform(
    shape: Shape,
    gain: float = 1.0,
    *,
    rng: np.random.Generator | None = None,
    dtype: Any = np.float32,
) -> np.ndarray:
    """Glorot uniform: ``U(-bound, bound)``, ``bound = gain * sqrt(6 / (fan_in + fan_out))``.

    From Glorot & Bengio (2010), "Understanding the difficulty of training deep
    feedforward neural networks".
    """
    fan_in, fan_out = fan_in_and_fan_out(shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform(shape, -bound, bound, rng=rng, dtype=dtype)


def xavier_normal(
    shape: Shape,
    gain: float = 1.0,
    *,
    rng: np.random.Generator | None = None,
    dtype: Any = np.float32,
) -> np.ndarray:
    """Glorot normal: ``N(0, std**2)``, ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = fan_in_and_fan_out(shape)
    return normal(shape, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), rng=rng, dtype=dtype)


def _kaiming_std(shape: Shape, a: float, mode: str, nonlinearity: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise LampyValueError(f"kaiming init: mode must be 'fan_in' or 'fan_out', got {mode!r}.")
    fan_in, fan_out = fan_in_and_fan_out(shape)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        return 0.0
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform(
    shape: Shape,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    *,
    rng: np.random.Generator | None = None,
    dtype: Any = np.float32,
) -> np.ndarray:
    """He uniform: ``U(-bound, bound)``, ``bound = gain * sqrt(3 / fan)``.

    PyTorch's ``Linear`` and ``Conv`` weights use ``a=sqrt(5)``, which gives
    ``bound = 1 / sqrt(fan_in)``. From He et al. (2015), "Delving deep into rectifiers".
    """
    bound = math.sqrt(3.0) * _kaiming_std(shape, a, mode, nonlinearity)
    return uniform(shape, -bound, bound, rng=rng, dtype=dtype)


def kaiming_normal(
    shape: Shape,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    *,
    rng: np.random.Generator | None = None,
    dtype: Any = np.float32,
) -> np.ndarray:
    """He normal: ``N(0, std**2)``, ``std = gain / sqrt(fan)``."""
    return normal(shape, 0.0, _kaiming_std(shape, a, mode, nonlinearity), rng=rng, dtype=dtype)


def orthogonal(
    shape: Shape,
    gain: float = 1.0,
    *,
    rng: np.random.Generator | None = None,
    dtype: Any = np.float32,
) -> np.ndarray:
    """A (semi-)orthogonal matrix, flattened over the trailing dimensions, times ``gain``.

    From Saxe et al. (2013); computed as PyTorch does, by a QR decomposition of a normal
    matrix with the signs of R's diagonal folded into Q.
    """
    s = _shape(shape)
    if len(s) < 2:
        raise LampyValueError(f"orthogonal: needs at least 2 dimensions, got shape {s}.")
    rows, cols = s[0], math.prod(s[1:])
    flat = resolve_rng("nn.init.orthogonal", rng).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return (gain * q).reshape(s).astype(dtype)


# ----------------------------------------------------------------- in place, as PyTorch
# PyTorch's in-place initialisers, for ``model.apply(fn)`` written as PyTorch's: they
# write into a param's memory through ``lampy.in_place`` (so its version goes up and a
# graph built before is stale) and return it. The random ones take PyTorch's
# ``generator=`` (or ``rng=``): a ``numpy.random.Generator``, or None for lampy's default
# generator, as PyTorch's draw from its global one.
Target = Variable | np.ndarray


def _fill(name: str, tensor: Target, make: Callable[[tuple[int, ...], Any], np.ndarray]) -> Target:
    """Write ``make(shape, dtype)`` into ``tensor`` (a param or a writable array)."""
    if isinstance(tensor, Variable):
        value = make(tuple(tensor.shape), tensor.dtype)
        with in_place([tensor]) as (dest,):
            np.copyto(dest, value, casting="same_kind")
        return tensor
    if isinstance(tensor, np.ndarray):
        np.copyto(tensor, make(tensor.shape, tensor.dtype), casting="same_kind")
        return tensor
    raise LampyTypeError(
        f"nn.init.{name}: expected a param (lampy.Variable, e.g. m.weight) or a numpy "
        f"array, got {type(tensor).__name__}."
    )


def _generator(name: str, generator: Any, rng: Any) -> np.random.Generator:
    return resolve_rng(f"nn.init.{name}", generator if generator is not None else rng)


def uniform_(
    tensor: Target, a: float = 0.0, b: float = 1.0, generator: Any = None, *, rng: Any = None
) -> Target:
    """Fill ``tensor`` in place from ``U(a, b)``, as ``torch.nn.init.uniform_``."""
    g = _generator("uniform_", generator, rng)
    return _fill("uniform_", tensor, lambda s, d: uniform(s, a, b, rng=g, dtype=d))


def normal_(
    tensor: Target, mean: float = 0.0, std: float = 1.0, generator: Any = None, *, rng: Any = None
) -> Target:
    """Fill ``tensor`` in place from ``N(mean, std**2)``, as ``torch.nn.init.normal_``.

    Examples:
        >>> import lampy
        >>> with lampy.Scope():
        ...     w = lampy.param(np.zeros((2, 3), np.float32))
        ...     _ = normal_(w, 0.0, 0.02, generator=np.random.default_rng(0))
        ...     print(w.version, bool(abs(w.value).max() < 0.1))
        1 True
    """
    g = _generator("normal_", generator, rng)
    return _fill("normal_", tensor, lambda s, d: normal(s, mean, std, rng=g, dtype=d))


def trunc_normal_(
    tensor: Target,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
    *,
    rng: Any = None,
) -> Target:
    """Fill ``tensor`` in place from a truncated normal, as ``torch.nn.init.trunc_normal_``."""
    g = _generator("trunc_normal_", generator, rng)
    return _fill(
        "trunc_normal_", tensor, lambda s, d: trunc_normal(s, mean, std, a, b, rng=g, dtype=d)
    )


def constant_(tensor: Target, val: float) -> Target:
    """Fill ``tensor`` in place with ``val``, as ``torch.nn.init.constant_``."""
    return _fill("constant_", tensor, lambda s, d: constant(s, val, dtype=d))


def zeros_(tensor: Target) -> Target:
    """Fill ``tensor`` in place with zeros, as ``torch.nn.init.zeros_``."""
    return _fill("zeros_", tensor, lambda s, d: zeros(s, dtype=d))


def ones_(tensor: Target) -> Target:
    """Fill ``tensor`` in place with ones, as ``torch.nn.init.ones_``."""
    return _fill("ones_", tensor, lambda s, d: ones(s, dtype=d))


def xavier_uniform_(
    tensor: Target, gain: float = 1.0, generator: Any = None, *, rng: Any = None
) -> Target:
    """Fill ``tensor`` in place as ``torch.nn.init.xavier_uniform_``."""
    g = _generator("xavier_uniform_", generator, rng)
    return _fill("xavier_uniform_", tensor, lambda s, d: xavier_uniform(s, gain, rng=g, dtype=d))


def xavier_normal_(
    tensor: Target, gain: float = 1.0, generator: Any = None, *, rng: Any = None
) -> Target:
    """Fill ``tensor`` in place as ``torch.nn.init.xavier_normal_``."""
    g = _generator("xavier_normal_", generator, rng)
    return _fill("xavier_normal_", tensor, lambda s, d: xavier_normal(s, gain, rng=g, dtype=d))


def kaiming_uniform_(
    tensor: Target,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
    *,
    rng: Any = None,
) -> Target:
    """Fill ``tensor`` in place as ``torch.nn.init.kaiming_uniform_``."""
    g = _generator("kaiming_uniform_", generator, rng)
    return _fill(
        "kaiming_uniform_",
        tensor,
        lambda s, d: kaiming_uniform(s, a, mode, nonlinearity, rng=g, dtype=d),
    )


def kaiming_normal_(
    tensor: Target,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
    *,
    rng: Any = None,
) -> Target:
    """Fill ``tensor`` in place as ``torch.nn.init.kaiming_normal_``."""
    g = _generator("kaiming_normal_", generator, rng)
    return _fill(
        "kaiming_normal_",
        tensor,
        lambda s, d: kaiming_normal(s, a, mode, nonlinearity, rng=g, dtype=d),
    )


def orthogonal_(
    tensor: Target, gain: float = 1.0, generator: Any = None, *, rng: Any = None
) -> Target:
    """Fill ``tensor`` in place as ``torch.nn.init.orthogonal_``."""
    g = _generator("orthogonal_", generator, rng)
    return _fill("orthogonal_", tensor, lambda s, d: orthogonal(s, gain, rng=g, dtype=d))
