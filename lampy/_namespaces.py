"""Arrays of other array libraries: the few things the engine asks of them.

lampy's engine holds numpy arrays. The experimental ``lampy.experimental.array_api``
(issue 29) records ops whose values are arrays of another namespace of the array API
standard (``array_api_strict``, CuPy, ...). The engine meets such an array only in the
branches a numpy array never takes (its hot paths test ``type(a) is np.ndarray``
first), and there it asks this module: is this another library's array
(``is_foreign``), which namespace is it (``namespace_of``), how many bytes does it hold
(``nbytes``), what is its dtype in numpy's terms (``numpy_dtype``), and how does a
backward pass start and keep a gradient of it (``seed``, ``own_contribution``).

The engine never writes into an array of another namespace: it adds gradients with
``+`` (a new array), because the standard makes in-place updates optional (JAX has
none). So such a buffer can be kept without a copy wherever numpy's would need one.

Like ``lampy._memory``, this module knows nothing of scopes or nodes.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from lampy._errors import DTypeError, LampyTypeError, ShapeError

_NUMPY_TYPES = (np.ndarray, np.generic)


def is_foreign(a: Any) -> bool:
    """Whether ``a`` is an array of another namespace: not numpy's (an ndarray or a
    numpy scalar), and it has ``__array_namespace__`` (the standard's mark)."""
    return not isinstance(a, _NUMPY_TYPES) and hasattr(a, "__array_namespace__")


def namespace_of(a: Any) -> ModuleType:
    """The namespace of the array ``a``: ``numpy`` for an ndarray or a numpy scalar (also
    with numpy 1.x, whose arrays have no ``__array_namespace__``), else
    ``a.__array_namespace__()``."""
    if isinstance(a, _NUMPY_TYPES):
        return np
    t = type(a)
    xp = _BY_TYPE.get(t)
    if xp is None:  # asked once per array type (array_api_strict's sets its flags each time)
        xp = _BY_TYPE[t] = a.__array_namespace__()
    return xp


_BY_TYPE: dict[type, ModuleType] = {}
"""The namespace of each array type met so far."""


def namespace_name(xp: ModuleType) -> str:
    """The name a message gives namespace ``xp`` (``numpy``, ``array_api_strict``, ``cupy``)."""
    return xp.__name__


_TWINS: dict[tuple[type, Any], np.dtype[Any]] = {}
"""numpy's dtype for each dtype of another namespace met so far."""


def numpy_dtype(a: Any) -> np.dtype[Any]:
    """numpy's dtype of the same element type as the array ``a`` (its own dtype for numpy,
    CuPy and JAX, whose dtypes are numpy's): the engine keeps it in ``Node.dtype``, which
    its sizes (budgets, concurrency) and messages read."""
    dtype = a.dtype
    if isinstance(dtype, np.dtype):  # numpy's, CuPy's, JAX's
        return dtype
    key = (type(dtype), dtype)  # never compared with another library's dtype (a warning)
    twin: np.dtype[Any] | None = _TWINS.get(key)
    if twin is not None:
        return twin
    try:
        twin = np.dtype(dtype)
    except TypeError:  # the standard names dtypes: look the name up in the namespace's list
        names = namespace_of(a).__array_namespace_info__().dtypes()
        found = [name for name, d in names.items() if d == dtype]
        if not found:
            raise DTypeError(
                f"lampy cannot tell the element type of {namespace_name(namespace_of(a))}'s "
                f"dtype {dtype}: it is not among the dtypes its namespace lists."
            ) from None
        twin = np.dtype(found[0])
    _TWINS[key] = twin
    return twin


def nbytes(a: Any) -> int:
    """Bytes of the elements of an array of any namespace: ``a.nbytes`` where the library
    has it (numpy, CuPy, PyTorch, JAX; the standard does not), else its element count
    times the itemsize of its dtype."""
    n = getattr(a, "nbytes", None)
    if n is None:
        n = math.prod(a.shape) * numpy_dtype(a).itemsize
    return int(n)


def zeros_like(a: Any) -> Any:
    """Zeros of ``a``'s shape, dtype and device, in ``a``'s namespace."""
    return namespace_of(a).zeros_like(a)


def seed(value: Any, grad: Any) -> Any:
    """The first gradient of a backward pass from a root whose value ``value`` is an array
    of another namespace: ones for a one-element root without ``grad``, else a copy of
    ``grad``, which must be an array of the root's namespace, device, shape and dtype (the
    engine does not move arrays between libraries or devices)."""
    xp = namespace_of(value)
    if grad is None:
        if math.prod(value.shape) != 1:
            raise ShapeError(
                f"backward: the root has shape {value.shape}; a gradient can be seeded "
                "implicitly only for a scalar (one element). Pass `grad=` with an array "
                f"of shape {value.shape}, or reduce the root first (e.g. `.sum()`)."
            )
        return xp.ones(value.shape, dtype=value.dtype, device=value.device)
    if getattr(grad, "node", None) is not None:  # a Variable
        grad = grad.value
    if not is_foreign(grad) or namespace_of(grad) is not xp or grad.device != value.device:
        got = namespace_name(namespace_of(grad)) if hasattr(grad, "shape") else type(grad).__name__
        raise LampyTypeError(
            f"backward: the root is an array of {namespace_name(xp)} on device "
            f"{value.device}, but grad is {got}"
            + (f" on device {grad.device}" if hasattr(grad, "device") else "")
            + "; lampy does not move arrays between libraries or devices. Make grad with "
            "the root's namespace: `xp.asarray(grad, device=root.value.device)`."
        )
    if grad.dtype != value.dtype:
        raise DTypeError(
            f"backward: grad has dtype {grad.dtype} but the root has dtype {value.dtype}; "
            f"pass `xp.astype(grad, {value.dtype})`."
        )
    if grad.shape != value.shape:
        raise ShapeError(
            f"backward: grad has shape {grad.shape} but the root has shape {value.shape}; "
            "they must be equal."
        )
    return xp.asarray(grad, copy=True)


def own_contribution(d: Any, shape: tuple[int, ...], dtype: np.dtype[Any], fresh: bool) -> Any:
    """A first contribution ``d`` to an input's gradient, an array of another namespace,
    as the input's buffer for the pass: checked, and copied unless the op declared it
    ``fresh`` (the buffer may become the input's ``.grad``, which must not be an array
    another ``.grad`` or the op still holds).

    The engine adds later contributions with ``+``, which would broadcast a contribution
    of the wrong shape instead of failing: so over another namespace a closure returns
    the input's own shape and dtype (it undoes broadcasting itself).
    """
    if tuple(d.shape) != tuple(shape):
        raise ShapeError(
            f"a contribution of shape {tuple(d.shape)} for an input of shape {tuple(shape)}: "
            "over an array namespace other than numpy, a closure returns the input's own "
            "shape (sum the broadcast axes away first)."
        )
    if numpy_dtype(d) != dtype:
        raise DTypeError(
            f"a contribution of dtype {d.dtype} for an input of dtype {dtype}: over an array "
            "namespace other than numpy, a closure returns the input's own dtype."
        )
    return d if fresh else namespace_of(d).asarray(d, copy=True)


__all__ = [
    "is_foreign",
    "namespace_name",
    "namespace_of",
    "nbytes",
    "numpy_dtype",
    "own_contribution",
    "seed",
    "zeros_like",
]
