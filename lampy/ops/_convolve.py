"""One-dimensional discrete convolution and cross-correlation: ``convolve``,
``correlate``, as numpy's.

Both are bilinear, so each operand's gradient is the adjoint map applied to ``g``: with
``g`` placed back into the positions of the ``"full"`` result it came from (zeros
elsewhere), ``da = correlate(g_full, v, "valid")`` and ``dv = correlate(g_full, a,
"valid")`` for the convolution, and the same with ``v`` reversed for the correlation.
numpy's ``"same"`` and ``"valid"`` results are windows of the ``"full"`` one, placed as
numpy places them: ``convolve`` is commutative and centres its ``"same"`` window on the
shorter operand; ``correlate(a, v)`` is not, and when ``v`` is the longer operand numpy
computes ``correlate(v, a)`` reversed, which moves its ``"same"`` window (the windows
below reproduce numpy's, which the op table checks for every pair of lengths drawn).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.opkit import (
    OWN,
    Operand,
    Variable,
    complex_rule,
    contrib_of,
    graph_value,
    node_of,
    op,
    real_result,
    value_of,
)
from lampy.ops._complex_parts import conj
from lampy.ops._pad import pad
from lampy.ops._shape import reshape

_MODES = {"valid": "valid", "same": "same", "full": "full", 0: "valid", 1: "same", 2: "full"}


def _mode(name: str, mode: Any) -> str:
    """numpy's modes (``'valid'``, ``'same'``, ``'full'``, or 0, 1, 2) as their names."""
    if isinstance(mode, bool) or not isinstance(mode, (str, int)) or mode not in _MODES:
        raise LampyValueError(
            f"{name}: mode={mode!r} is not one of numpy's modes 'full', 'same', 'valid'."
        )
    return _MODES[mode]


def _window(name: str, n: int, m: int, mode: str) -> tuple[int, int]:
    """Where numpy's result for operands of lengths ``n`` and ``m`` starts in the full
    result, and its length."""
    if mode == "full":
        return 0, n + m - 1
    longer, shorter = max(n, m), min(n, m)
    if name == "correlate" and n < m:  # numpy: correlate(v, a) reversed
        return (n // 2, m) if mode == "same" else (n - 1, m - n + 1)
    if mode == "same":
        return shorter - 1 - shorter // 2, longer
    return shorter - 1, longer - shorter + 1


def _operand(name: str, which: str, x: Any, allow_0d: bool) -> Any:
    if np.ndim(x) > 1 or (np.ndim(x) == 0 and not allow_0d):
        raise ShapeError(
            f"{name}: {which} must be 1-d, got shape {np.shape(x)}"
            + ("" if allow_0d else " (numpy's correlate takes no 0-d operands)")
            + "; for batched or n-d signals use lampy.nn.functional.conv1d."
        )
    if np.size(x) == 0:
        raise ShapeError(f"{name}: {which} is empty; numpy needs non-empty operands.")
    return np.reshape(x, -1)


def _linear_1d(name: str, a: Any, v: Any, mode: Any) -> Variable:
    m_name = _mode(name, mode)
    av, vv = value_of(a, name=name), value_of(v, name=name)
    x = _operand(name, "a", av, allow_0d=name == "convolve")
    w = _operand(name, "v", vv, allow_0d=name == "convolve")
    value = (np.convolve if name == "convolve" else np.correlate)(av, vv, mode)
    real_result(name, value, a, v)
    n, m = x.shape[0], w.shape[0]
    start, length = _window(name, n, m, m_name)
    kernel = w if name == "correlate" else w[::-1]  # value = full_correlate(x, kernel)

    def g_full(g: Any) -> Any:
        full = np.zeros(n + m - 1, np.result_type(g))
        full[start : start + length] = g
        return full

    # numpy's correlate conjugates its second operand: so the convolution's closures are
    # right for complex values as they are, the correlation's conjugate v (holomorphic in
    # a with the coefficients conj(v)) and their result for v (antiholomorphic in v).
    def d_a(g: Any) -> Any:
        k = kernel[::-1].conj() if name == "correlate" else kernel[::-1]
        return np.correlate(g_full(g), k, "valid").reshape(np.shape(av))

    def d_v(g: Any) -> Any:
        d = np.correlate(g_full(g), x, "valid")
        return (d if name == "convolve" else d[::-1].conj()).reshape(np.shape(vv))

    node_a, node_v = node_of(a), node_of(v)

    def padded(g: Any) -> Any:  # g_full with lampy ops
        return pad(g, ((start, n + m - 1 - start - length),))

    def vjp_a(g: Any, out: Any) -> Any:
        wv = reshape(graph_value(node_v, vv), (m,))
        k = wv if name == "convolve" else conj(wv[::-1])
        return reshape(_linear_1d("correlate", padded(g), k, "valid"), np.shape(av))

    def vjp_v(g: Any, out: Any) -> Any:
        xv = reshape(graph_value(node_a, av), (n,))
        d = _linear_1d("correlate", padded(g), xv, "valid")
        return reshape(d if name == "convolve" else conj(d[::-1]), np.shape(vv))

    return op(name, value, contrib_of(a, d_a, vjp=vjp_a), contrib_of(v, d_v, vjp=vjp_v))


def convolve(a: Operand, v: Operand, mode: str | int = "full") -> Variable:
    """The discrete linear convolution of two 1-d sequences, as ``numpy.convolve``:
    ``(a * v)[k] = sum_i a[i] * v[k - i]``.

    Args:
        a: The first sequence (1-d; a number counts as length 1, as numpy).
        v: The second sequence (1-d or a number).
        mode: ``'full'`` (length ``N + M - 1``, the default), ``'same'`` (length
            ``max(N, M)``, centred as numpy) or ``'valid'`` (length
            ``max(N, M) - min(N, M) + 1``, where the sequences overlap completely);
            numpy's 2, 1, 0 for these are accepted too.

    Raises:
        ShapeError: an operand with more than one dimension, or empty.
        LampyValueError: an unknown ``mode``.

    Gradient:
        With ``g_full`` the gradient placed into the ``'full'`` result's positions
        (zeros elsewhere): ``da = correlate(g_full, v, 'valid')``,
        ``dv = correlate(g_full, a, 'valid')`` (numpy's correlate, which conjugates
        its second operand: right for complex values too).
    """
    return _linear_1d("convolve", a, v, mode)


def correlate(a: Operand, v: Operand, mode: str | int = "valid") -> Variable:
    """The cross-correlation of two 1-d sequences, as ``numpy.correlate``:
    ``c[k] = sum_n a[n + k] * v[n]``, ``k`` running over the positions ``mode`` keeps.

    Not commutative: ``correlate(v, a)`` is ``correlate(a, v)`` reversed (conjugated,
    for complex values: numpy conjugates ``v``).

    Args:
        a: The first sequence (1-d).
        v: The second sequence (1-d).
        mode: ``'valid'`` (the default), ``'same'`` or ``'full'``, as
            :func:`convolve`; when ``v`` is longer than ``a`` the windows are numpy's
            (those of ``correlate(v, a)``, reversed).

    Raises:
        ShapeError: an operand that is not 1-d (numpy refuses 0-d ones too), or empty.
        LampyValueError: an unknown ``mode``.

    Gradient:
        With ``g_full`` the gradient placed into the ``'full'`` result's positions:
        ``da = convolve(g_full, v, 'valid')``, ``dv = conj(correlate(g_full, a,
        'valid'))`` reversed (``conj`` for complex values, PyTorch's convention).
    """
    return _linear_1d("correlate", a, v, mode)


# Closures written for complex values (numpy's correlate conjugates its second operand).
complex_rule(OWN, "convolve", "correlate")

__all__ = ["convolve", "correlate"]
