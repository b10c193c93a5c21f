"""The probability losses ``binary_cross_entropy``, ``binary_cross_entropy_with_logits``
and ``kl_div``, with PyTorch's names and semantics (``torch.nn.functional``), on the
reduction helper of ``_loss_reduction``: one fused op each, with an exact
gradient that is also written with lampy ops (a vjp), so it can be differentiated again.
Weights (``weight``, ``pos_weight``) are constants.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError, shape_mismatch
from lampy.nn.functional._activations import log_sigmoid, sigmoid
from lampy.nn.functional._loss_reduction import (
    REDUCTIONS,
    check_reduction,
    pointwise_operands,
    reduced,
    times_deriv,
)
from lampy.nn.functional._shared import softplus_value
from lampy.opkit import (
    Operand,
    Variable,
    broadcast_error,
    graph_value,
    node_of,
    value_of,
    values_of,
)
from lampy.ops import exp as exp_op
from lampy.ops import log, log1p, where

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]

_BCE_EPS = float(np.float32(1e-12))  # PyTorch's EPSILON, a C float even for double inputs


def _same_shape(name: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.shape != b.shape:
        raise shape_mismatch(name, a, b, detail="The target must have the input's shape.")


def _weight_of(name: str, weight: Any, a: np.ndarray) -> np.ndarray | None:
    if weight is None:
        return None
    w = np.asarray(value_of(weight, name=name), dtype=a.dtype)
    try:
        return np.broadcast_to(w, a.shape)
    except ValueError:
        raise broadcast_error(name, a, w) from None


def binary_cross_entropy(
    input: Operand, target: Operand, weight: Operand | None = None, reduction: str = "mean"
) -> Variable:
    """Binary cross-entropy of probabilities ``input`` in [0, 1]:
    ``-weight (t log(x) + (1 - t) log(1 - x))``, each log clamped at -100 as PyTorch.

    Raises:
        LampyValueError: an element of ``input`` or of ``target`` outside [0, 1] (as
            PyTorch), or an unknown ``reduction``.

    Gradient:
        ``d input = g weight (x - t) / max(x (1 - x), 1e-12)`` (PyTorch's formula, with
        its float32 ``1e-12``), ``d target = g weight (log(1 - x) - log(x))`` with the
        logs not clamped (infinite at x = 0 or 1, as in PyTorch).
    """
    name = "binary_cross_entropy"
    check_reduction(name, reduction)
    a, b = values_of(input, target, name=name)
    a, b = np.asarray(a), np.asarray(b).astype(np.asarray(a).dtype, copy=False)
    _same_shape(name, a, b)
    if np.any((a < 0) | (a > 1)):
        raise LampyValueError(f"{name}: all elements of input should be between 0 and 1.")
    if np.any((b < 0) | (b > 1)):
        raise LampyValueError(
            f"{name}: all elements of target should be between 0 and 1 (probabilities, as "
            f"in PyTorch), got values in [{b.min()}, {b.max()}]."
        )
    w = _weight_of(name, weight, a)
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(a), -100)
        log_1mx = np.maximum(np.log1p(-a), -100)
    loss = -(b * log_x + (1 - b) * log_1mx)
    if w is not None:
        loss = loss * w

    def d_input() -> Any:
        d = (a - b) / np.maximum(a * (1 - a), a.dtype.type(_BCE_EPS))
        return d if w is None else d * w

    def d_target() -> Any:
        with np.errstate(divide="ignore"):
            d = np.log1p(-a) - np.log(a)
        return d if w is None else d * w

    n_in, n_t = node_of(input), node_of(target)
    eps = a.dtype.type(_BCE_EPS)

    def vjp_input(c: Any) -> Any:  # the clamp's choice of branch is a constant
        x, t = graph_value(n_in, a), graph_value(n_t, b)
        den = where(a * (1 - a) > eps, x * (1 - x), eps)
        d = (x - t) / den
        return (d if w is None else d * w) * c

    def vjp_target(c: Any) -> Any:
        x = graph_value(n_in, a)
        d = log1p(-x) - log(x)
        return (d if w is None else d * w) * c

    return reduced(
        name,
        loss,
        reduction,
        loss.size,
        [(input, times_deriv(d_input)), (target, times_deriv(d_target))],
        vjps=[vjp_input, vjp_target],
    )


def binary_cross_entropy_with_logits(
    input: Operand,
    target: Operand,
    weight: Operand | None = None,
    reduction: str = "mean",
    pos_weight: Any = None,
) -> Variable:
    """Binary cross-entropy of logits, computed stably:
    ``weight (pw t softplus(-x) + (1 - t) softplus(x))`` with ``pw = pos_weight``
    (broadcast along the last axis, the classes) or 1.

    Gradient:
        ``d input = g weight ((1 + (pw - 1) t) sigmoid(x) - pw t)``,
        ``d target = g weight (pw softplus(-x) - softplus(x))``.
    """
    name = "binary_cross_entropy_with_logits"
    check_reduction(name, reduction)
    a, b = values_of(input, target, name=name)
    a, b = np.asarray(a), np.asarray(b).astype(np.asarray(a).dtype, copy=False)
    _same_shape(name, a, b)
    w = _weight_of(name, weight, a)
    pw = _weight_of(name, pos_weight, a)
    sp_neg = softplus_value(-a)  # -log(sigmoid(x))
    sp_pos = sp_neg + a  # -log(1 - sigmoid(x))
    loss = (b if pw is None else pw * b) * sp_neg + (1 - b) * sp_pos
    if w is not None:
        loss = loss * w

    def d_input() -> Any:
        sig = np.exp(-sp_neg)
        d = sig - b if pw is None else (1 + (pw - 1) * b) * sig - pw * b
        return d if w is None else d * w

    def d_target() -> Any:
        d = -a if pw is None else pw * sp_neg - sp_pos
        return d if w is None else d * w

    n_in, n_t = node_of(input), node_of(target)

    def vjp_input(c: Any) -> Any:
        x, t = graph_value(n_in, a), graph_value(n_t, b)
        sig = sigmoid(x)
        d = sig - t if pw is None else (1 + (pw - 1) * t) * sig - pw * t
        return (d if w is None else d * w) * c

    def vjp_target(c: Any) -> Any:
        x = graph_value(n_in, a)
        if pw is None:
            d = -x
        else:  # softplus(-x) = -log_sigmoid(x), softplus(x) = softplus(-x) + x
            sp = -log_sigmoid(x)
            d = pw * sp - (sp + x)
        return (d if w is None else d * w) * c

    return reduced(
        name,
        loss,
        reduction,
        loss.size,
        [(input, times_deriv(d_input)), (target, times_deriv(d_target))],
        vjps=[vjp_input, vjp_target],
    )


def kl_div(
    input: Operand, target: Operand, reduction: str = "mean", log_target: bool = False
) -> Variable:
    """Kullback-Leibler divergence with log-probabilities ``input``: elementwise
    ``t (log(t) - x)`` (``0`` where ``t == 0``), or ``exp(t) (t - x)`` with
    ``log_target``. "mean" averages over all elements, "batchmean" divides the sum by
    ``input.shape[0]`` (by 1 for a 0-d input), as PyTorch.

    Gradient:
        ``d input = -g t`` (``-g exp(t)`` with ``log_target``);
        ``d target = g (log(t) + 1 - x)`` (``-inf`` at ``t = 0``; PyTorch gives nan), or
        ``g exp(t) (t - x + 1)`` with ``log_target``.
    """
    name = "kl_div"
    check_reduction(name, reduction, (*REDUCTIONS, "batchmean"))
    a, b = pointwise_operands(name, input, target, "mean")
    n_in, n_t = node_of(input), node_of(target)
    if log_target:
        et = np.exp(b)
        loss = et * (b - a)
        pairs = [
            (input, lambda c: -et * c),
            (target, times_deriv(lambda: et * (b - a + 1))),
        ]

        def vjp_target(c: Any) -> Any:
            t = graph_value(n_t, b)
            return exp_op(t) * (t - graph_value(n_in, a) + 1) * c

        vjps = [lambda c: -exp_op(graph_value(n_t, b)) * c, vjp_target]
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            log_t = np.log(b)
            loss = np.where(b == 0, 0, b * log_t) - b * a
        loss = np.asarray(loss, dtype=np.result_type(a, b))

        def d_target() -> Any:
            return log_t + 1 - a

        pairs = [(input, lambda c: -b * c), (target, times_deriv(d_target))]
        vjps = [
            lambda c: -graph_value(n_t, b) * c,
            lambda c: (log(graph_value(n_t, b)) + 1 - graph_value(n_in, a)) * c,
        ]
    if reduction == "batchmean":
        return reduced(name, loss, "mean", loss.shape[0] if loss.ndim else 1, pairs, vjps=vjps)
    return reduced(name, loss, reduction, loss.size, pairs, vjps=vjps)
