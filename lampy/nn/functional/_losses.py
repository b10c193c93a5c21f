"""Loss functions with PyTorch's names and semantics (``torch.nn.functional``).

Each loss is one fused op with an exact gradient: ``mse_loss``, ``l1_loss``,
``smooth_l1_loss``, ``huber_loss``, ``cross_entropy`` and ``nll_loss`` here;
``binary_cross_entropy``, ``binary_cross_entropy_with_logits`` and ``kl_div`` in
``_bce_kl_div`` (re-exported here), on the reduction helper of ``_loss_reduction``.
Each gradient is also written with lampy ops (a vjp), so it can be differentiated again.
``reduction`` is ``"mean"``, ``"sum"`` or ``"none"``; float32 stays float32.
Weights (``weight``, ``pos_weight``) are constants: they get no gradient. A float
target that is a Variable gets its exact gradient (as in PyTorch: the pointwise losses,
``kl_div``, both binary cross-entropies and probability targets of ``cross_entropy``);
class-index targets are integers and get none.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from lampy._errors import BadIndexError, LampyTypeError, LampyValueError, shape_mismatch
from lampy.nn.functional._bce_kl_div import binary_cross_entropy as binary_cross_entropy
from lampy.nn.functional._bce_kl_div import (
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from lampy.nn.functional._bce_kl_div import kl_div as kl_div
from lampy.nn.functional._loss_reduction import (
    Deriv,
    check_reduction,
    graph_log_probs,
    pointwise_operands,
    reduced,
    times_deriv,
    zero_tangent,
)
from lampy.nn.functional._shared import compiled, kernel_input, shifted_exp, spread
from lampy.opkit import (
    Operand,
    Variable,
    node_of,
    sign_or_zero,
    value_of,
)
from lampy.ops import exp as exp_op
from lampy.ops import moveaxis
from lampy.ops import sum as sum_op

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "smooth_l1_loss",
]

# The ufunc's reduction, without the Python layer of ndarray.max.
_max_reduce = np.maximum.reduce


def _pointwise(
    name: str,
    input: Any,
    target: Any,
    reduction: str,
    loss: np.ndarray,
    d_input: Deriv,
    vjp_input: Callable[[Any], Deriv],
    diff: np.ndarray,
) -> Variable:
    """An elementwise loss of ``diff = input - target``: ``d/d target = -d/d input``.

    ``vjp_input(diff_var)`` is ``d_input`` written with lampy ops of ``diff_var``, the
    difference as a Variable of the graph (built from the saved ``diff``, affine in both
    operands: nothing more is kept)."""
    n_in, n_t = node_of(input), node_of(target)

    def dv(c: Any) -> Any:
        return vjp_input(diff + zero_tangent(n_in) - zero_tangent(n_t))(c)

    pairs = [(input, d_input), (target, lambda c: d_input(-c))]
    return reduced(name, loss, reduction, loss.size, pairs, vjps=[dv, lambda c: dv(-c)])


def mse_loss(input: Operand, target: Operand, reduction: str = "mean") -> Variable:
    """Squared error ``(input - target)**2``, reduced; input and target broadcast.

    Gradient:
        ``d input = 2 (input - target) g`` (divided by the element count for "mean"),
        ``d target = -d input``.
    """
    a, b = pointwise_operands("mse_loss", input, target, reduction)
    diff = a - b
    return _pointwise(
        "mse_loss",
        input,
        target,
        reduction,
        diff * diff,
        lambda c: diff * (2 * c),
        lambda d: lambda c: d * (2 * c),
        diff,
    )


def l1_loss(input: Operand, target: Operand, reduction: str = "mean") -> Variable:
    """Absolute error ``|input - target|``, reduced; input and target broadcast.

    Gradient:
        ``d input = sign(input - target) g`` (0 where ``input == target``, and 0 where
        the difference is nan, as PyTorch), ``d target = -d input``.
    """
    a, b = pointwise_operands("l1_loss", input, target, reduction)
    diff = a - b
    return _pointwise(
        "l1_loss",
        input,
        target,
        reduction,
        np.abs(diff),
        lambda c: sign_or_zero(diff) * c,
        lambda d: lambda c: sign_or_zero(diff) * c,  # piecewise constant
        diff,
    )


def smooth_l1_loss(
    input: Operand, target: Operand, reduction: str = "mean", beta: float = 1.0
) -> Variable:
    """Smooth L1: ``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``,
    with ``d = input - target``; ``beta = 0`` is the L1 loss, as in PyTorch.

    Gradient:
        ``d input = g * (d / beta if |d| < beta else sign(d))``, ``d target = -d input``.
    """
    if beta < 0:
        raise LampyValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}.")
    if beta == 0:
        return l1_loss(input, target, reduction)
    a, b = pointwise_operands("smooth_l1_loss", input, target, reduction)
    diff = a - b
    ad = np.abs(diff)
    small = ad < beta
    loss = np.where(small, (0.5 / beta) * diff * diff, ad - 0.5 * beta).astype(diff.dtype)

    def d_input() -> Any:
        return np.where(small, diff * (1.0 / beta), np.sign(diff)).astype(diff.dtype)

    def vjp_input(d: Any) -> Deriv:  # d / beta where |d| < beta, the constant sign elsewhere
        slope = np.where(small, 1.0 / beta, 0).astype(diff.dtype)
        return lambda c: (d * slope + np.where(small, 0, np.sign(diff)).astype(diff.dtype)) * c

    return _pointwise(
        "smooth_l1_loss", input, target, reduction, loss, times_deriv(d_input), vjp_input, diff
    )


def huber_loss(
    input: Operand, target: Operand, reduction: str = "mean", delta: float = 1.0
) -> Variable:
    """Huber loss: ``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``,
    with ``d = input - target``.

    Gradient:
        ``d input = g * (d if |d| < delta else delta sign(d))``, ``d target = -d input``.
    """
    if delta <= 0:
        raise LampyValueError(f"huber_loss: delta must be > 0, got {delta}.")
    a, b = pointwise_operands("huber_loss", input, target, reduction)
    diff = a - b
    ad = np.abs(diff)
    small = ad < delta
    loss = np.where(small, 0.5 * diff * diff, delta * (ad - 0.5 * delta)).astype(diff.dtype)

    def d_input() -> Any:
        return np.where(small, diff, delta * np.sign(diff)).astype(diff.dtype)

    def vjp_input(d: Any) -> Deriv:  # d where |d| < delta, the constant delta sign elsewhere
        outside = np.where(small, 0, delta * np.sign(diff)).astype(diff.dtype)
        return lambda c: (d * small.astype(diff.dtype) + outside) * c

    return _pointwise(
        "huber_loss", input, target, reduction, loss, times_deriv(d_input), vjp_input, diff
    )


# Each native integer dtype with the unsigned dtype of its size.
_UNSIGNED = {np.dtype(c): np.dtype(c.upper()) for c in "bhilq"} | {
    np.dtype(c): np.dtype(c) for c in "BHILQ"
}


def _in_range(t: np.ndarray, n: int) -> bool:
    """Whether every integer in the non-empty ``t`` is in ``[0, n)``: one reduction, the
    maximum of ``t`` read as unsigned integers (where negative numbers are huge)."""
    unsigned = _UNSIGNED.get(t.dtype)
    if unsigned is None:  # not native (byte-swapped)
        return bool(t.min() >= 0 and t.max() < n)
    return bool(_max_reduce(t.view(unsigned), axis=None) < n)


def _class_targets(
    name: str, a: np.ndarray, t: np.ndarray, weight: Any, ignore_index: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Check class-index targets; returns ``(x, safe_t, kept, w)``: the input with its
    class axis last, targets with ignored ones set to 0, the mask of kept targets (None
    when every target is kept) and the class weights in the input's dtype (None when
    ``weight`` is None: every class weighs 1)."""
    if a.ndim == 0:
        raise shape_mismatch(name, a, t, detail="The input needs a class dimension.")
    c_axis = 0 if a.ndim == 1 else 1
    expected = a.shape[:c_axis] + a.shape[c_axis + 1 :]
    if t.shape != expected:
        raise shape_mismatch(name, a, t, detail=f"Class-index targets must have shape {expected}.")
    if t.dtype.kind not in "iu":
        raise LampyValueError(f"{name}: class-index targets must be integers, got {t.dtype}.")
    n_classes = a.shape[c_axis]
    kept: np.ndarray | None = None
    safe_t = t
    if t.size and (not _in_range(t, n_classes) or 0 <= ignore_index < n_classes):
        # Some target may be ignored (or is out of range): mask them.
        kept = np.not_equal(t, ignore_index)
        if kept.all():
            kept = None
        else:
            safe_t = np.where(kept, t, 0)
        if not _in_range(safe_t, n_classes):
            raise BadIndexError(
                f"{name}: a target is outside [0, {n_classes}) and not ignore_index."
            )
    w = None
    if weight is not None:
        w = np.asarray(value_of(weight, name=name), dtype=a.dtype)
        if w.shape != (n_classes,):
            raise shape_mismatch(name, a, w, detail=f"weight must have shape ({n_classes},).")
    x = a if c_axis == a.ndim - 1 else np.moveaxis(a, c_axis, -1)
    return x, safe_t, kept, w


def _target_weights(
    w: np.ndarray | None, safe_t: np.ndarray, kept: np.ndarray | None, dtype: Any
) -> np.ndarray | None:
    """``weight[t]`` per target, 0 for ignored ones, in ``dtype``; None when there are no
    class weights and no ignored target (every target weighs 1)."""
    if w is None and kept is None:
        return None
    wt = np.ones(safe_t.shape, dtype) if w is None else w[safe_t]
    if kept is not None:
        wt = np.where(kept, wt, 0)
    return wt.astype(dtype, copy=False)


@functools.lru_cache(maxsize=16)
def _rows(n: int) -> np.ndarray:
    """``arange(n)``, read-only, made once per ``n`` (the row index of a batch)."""
    rows = np.arange(n)
    rows.setflags(write=False)
    return rows


@functools.lru_cache(maxsize=16)
def _row_starts(n: int, c: int) -> np.ndarray:
    """``arange(n) * c``, read-only, made once: where each row of a C-order (n, c) array
    starts in its flat memory."""
    starts = np.arange(n) * c
    starts.setflags(write=False)
    return starts


def _flat_targets(p: np.ndarray, safe_t: np.ndarray) -> np.ndarray | None:
    """For an (N, C) ``p`` (classes on the last axis) and targets in ``[0, C)``: the
    targets' indices ``row * C + t`` in a C-order array of ``p``'s shape read flat (one
    index array: indexing with it is two to three times cheaper than with the pair
    ``(rows, t)``); None for other shapes."""
    if p.ndim != 2:
        return None
    flat = _row_starts(*p.shape) + safe_t
    return flat if flat.dtype.kind == "i" else None  # uint64 targets: the pair instead


def _at_targets(p: np.ndarray, safe_t: np.ndarray, flat: np.ndarray | None = None) -> np.ndarray:
    """``p[..., t]`` for each target (classes on the last axis): a new array of
    ``safe_t``'s shape. ``flat`` is ``_flat_targets(p, safe_t)``, if known."""
    if flat is not None and p.flags.c_contiguous:
        at_flat: np.ndarray = p.reshape(-1)[flat]
        return at_flat
    if p.ndim == 2:  # (N, C): one fancy index, cheaper than take_along_axis
        picked: np.ndarray = p[_rows(p.shape[0]), safe_t]
        return picked
    return np.take_along_axis(p, safe_t[..., None], -1)[..., 0]


def _subtract_at_targets(
    d: np.ndarray, safe_t: np.ndarray, v: Any, flat: np.ndarray | None = None
) -> None:
    """``d[..., t] -= v`` in place for each target, ``v`` a scalar or of ``safe_t``'s
    shape (each target is one distinct element of ``d``). ``flat`` is
    ``_flat_targets(d, safe_t)``, if known."""
    if flat is not None and d.flags.c_contiguous:
        d.reshape(-1)[flat] -= v  # a view of d's memory: written in place
        return
    if d.ndim == 2:
        d[_rows(d.shape[0]), safe_t] -= v
        return
    idx = safe_t[..., None]
    hot = np.take_along_axis(d, idx, -1) - np.asarray(v)[..., None]
    np.put_along_axis(d, idx, hot, -1)


def nll_loss(
    input: Operand,
    target: Operand,
    weight: Operand | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Variable:
    """Negative log-likelihood of log-probabilities ``input`` of shape (C,), (N, C) or
    (N, C, d1, ...) at class indices ``target`` of shape (), (N,) or (N, d1, ...).

    Elementwise ``-weight[t] * input[t]`` (0 where ``t == ignore_index``); "mean" divides
    the sum by the sum of ``weight[t]`` over the kept targets, as PyTorch.

    Gradient:
        ``d input[t] = -weight[t] g`` at each kept target, 0 elsewhere.
    """
    check_reduction("nll_loss", reduction)
    a = np.asarray(value_of(input, name="nll_loss"))
    t = np.asarray(value_of(target, name="nll_loss"))  # the closure keeps the targets
    x, safe_t, kept, w = _class_targets("nll_loss", a, t, weight, ignore_index)
    wt = _target_weights(w, safe_t, kept, a.dtype)
    if wt is None:
        wt = np.ones(safe_t.shape, a.dtype)
    flat = _flat_targets(x, safe_t)
    picked = _at_targets(x, safe_t, flat)
    loss = -(wt * picked)

    def d_input() -> Any:
        assert wt is not None
        d = np.zeros(x.shape, a.dtype)
        _subtract_at_targets(d, safe_t, wt, flat)
        return d

    # The derivative is built in (..., C) layout; the cotangent is broadcast over C. It
    # does not depend on the input: the recorded rule is the constant times the cotangent.
    return reduced(
        "nll_loss",
        loss,
        reduction,
        wt.sum(),
        [(input, times_deriv(d_input))],
        a,
        vjps=[lambda c: c * d_input()],
    )


def _classes_last(v: Any, c_axis: int) -> Any:
    """``v`` (a Variable or 0) with its class axis ``c_axis`` moved last."""
    return v if type(v) is not Variable else moveaxis(v, c_axis, -1)


def _probs(node: Any, e: np.ndarray, sums: np.ndarray, c_axis: int) -> Any:
    """``softmax(x)`` (classes last) as a Variable of ``x``'s graph, from cross_entropy's
    saved unnormalised exps ``e`` and their sums: through ``graph_log_probs``."""
    with np.errstate(divide="ignore"):  # an exp that underflowed: log p = -inf, p = 0
        logp = np.log(e) - np.log(sums)
    return exp_op(graph_log_probs(node, logp, c_axis))


def _log_softmax_last(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    shifted = x - x.max(axis=-1, keepdims=True) if x.size else x
    e = np.exp(shifted)
    s = e.sum(axis=-1, keepdims=True)
    return shifted - np.log(s), e / s


def cross_entropy(
    input: Operand,
    target: Operand,
    weight: Operand | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Variable:
    """Cross-entropy of logits ``input`` (classes on axis 1, or axis 0 for a 1-d input),
    fused with the log-softmax, as ``torch.nn.functional.cross_entropy``.

    ``target`` holds class indices (integer, the input's shape without the class axis)
    or class probabilities (float, the input's shape). Per sample the loss is
    ``-sum_c q_c log_softmax(input)_c`` with, for indices,
    ``q_c = (1 - ls) weight[t] [c == t] + ls / C * weight[c]`` (0 for ignored targets;
    "mean" divides by the sum of ``weight[t]`` over kept targets), and for probabilities
    ``q_c = weight[c] ((1 - ls) target_c + ls / C)`` ("mean" divides by the sample count).

    (N, C) float32 or float64 logits with class-index targets and no label smoothing
    run through compiled row kernels with Numba (the ``fast`` extra:
    ``_numba_kernels.cross_entropy_rows``, each row shifted by its own max, one pass
    forward and one backward); other inputs, and installs without Numba, through numpy.

    Gradient:
        ``d input = g (softmax(input) sum_c q_c - q)``; for probability targets also
        ``d target_c = -g (1 - ls) weight[c] log_softmax(input)_c``.
    """
    name = "cross_entropy"
    check_reduction(name, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise LampyValueError(f"{name}: label_smoothing must be in [0, 1], got {label_smoothing}.")
    # The closures keep arrays computed from the input (a caller's writable array is
    # read without a copy), and class-index targets themselves: those are copied from a
    # caller's writable array (probability targets are converted, a new array).
    a = np.asarray(value_of(input, False, name))
    target = _foreign_array(name, target)
    t_dtype = getattr(target, "dtype", None)
    probabilities = t_dtype is not None and t_dtype.kind == "f"
    t = np.asarray(value_of(target, not probabilities, name))
    ls = label_smoothing
    if t.dtype.kind == "f":
        if t.shape != a.shape or a.ndim == 0:
            raise shape_mismatch(name, a, t, detail="Probability targets need the input's shape.")
        if ignore_index != -100:
            raise LampyValueError(
                f"{name}: ignore_index={ignore_index} applies to class-index targets only, "
                f"and the target here holds probabilities (dtype {t.dtype}, shape {t.shape}); "
                "as in PyTorch it is not supported. Leave those samples out of the batch, "
                "or give class-index targets."
            )
        c_axis = 0 if a.ndim == 1 else 1
        n_classes = a.shape[c_axis]
        w = (
            np.ones(n_classes, a.dtype)
            if weight is None
            else np.asarray(value_of(weight, name=name), a.dtype)
        )
        if w.shape != (n_classes,):
            raise shape_mismatch(name, a, w, detail=f"weight must have shape ({n_classes},).")
        x = np.moveaxis(a, c_axis, -1)
        tt = np.moveaxis(t, c_axis, -1).astype(a.dtype)
        logp, p = _log_softmax_last(x)
        q = w * (tt * (1 - ls) + ls / n_classes) if ls else w * tt
        loss = -(q * logp).sum(axis=-1)
        n = loss.size

        def d_target() -> Any:
            return -(1 - ls) * w * logp

        pairs = [
            (input, times_deriv(lambda: p * q.sum(axis=-1, keepdims=True) - q)),
            (target, times_deriv(d_target)),
        ]
        n_in, n_t = node_of(input), node_of(target)

        def vjp_input(c: Any) -> Any:  # q is affine in the target (slope (1 - ls) w)
            p_var = exp_op(graph_log_probs(n_in, logp, c_axis))
            q_var = q + (1 - ls) * w * _classes_last(zero_tangent(n_t), c_axis)
            return (p_var * sum_op(q_var, axis=-1, keepdims=True) - q_var) * c

        def vjp_target(c: Any) -> Any:
            return (-(1 - ls) * w) * graph_log_probs(n_in, logp, c_axis) * c

        return reduced(name, loss, reduction, n, pairs, a, vjps=[vjp_input, vjp_target])
    x, safe_t, kept, w_class = _class_targets(name, a, t, weight, ignore_index)
    n_classes = x.shape[-1]
    c_axis, n_in = (0 if a.ndim == 1 else 1), node_of(input)
    # log p = z - log(sum(exp(z))) with z = x - shift; only its values at the targets
    # (and, with label smoothing, its weighted sum over classes) enter the loss. The
    # exps e are kept unnormalised: backward scales them by its per-sample factor
    # divided by the sums, one pass where normalising here would take another.
    # (N, C) logits without label smoothing take the compiled row kernels (Numba, the
    # fast extra): each row shifted by its own max, one pass forward and one backward.
    kernels = compiled(x) if x.ndim == 2 and not ls else None
    flat = t_k = None
    if kernels is not None:
        t_k = kernel_input(safe_t.astype(np.intp, copy=False))
        e, picked = np.empty(x.shape, a.dtype), np.empty(x.shape[0], a.dtype)
        sums = np.empty((x.shape[0], 1), a.dtype)
        kernels.cross_entropy_rows(kernel_input(x), t_k, e, sums.reshape(-1), picked)
    else:
        if x.size:
            e, sums, shift = shifted_exp(x, x.ndim - 1)
        else:
            e, sums, shift = x.copy(), np.zeros((*x.shape[:-1], 1), a.dtype), a.dtype.type(0)
        log_s = np.log(sums[..., 0])
        shift_n = shift[..., 0] if type(shift) is np.ndarray and shift.ndim else shift
        flat = _flat_targets(x, safe_t)
        picked = _at_targets(x, safe_t, flat) - shift_n
        picked -= log_s  # log p at the targets
    wt = _target_weights(w_class, safe_t, kept, a.dtype)  # None: every target weighs 1

    if ls:
        w_s = w_class if w_class is not None else np.ones(n_classes, a.dtype)
        wt_s = np.ones(safe_t.shape, a.dtype) if wt is None else wt
        kept_s = np.ones(safe_t.shape, bool) if kept is None else kept
        w_sum_z = np.subtract(x, shift) @ w_s  # sum_c w_c z_c
        smooth = -(w_sum_z - log_s * w_s.sum()) * kept_s  # -sum_c w_c log p_c
        loss = (-(1 - ls) * wt_s * picked + (ls / n_classes) * smooth).astype(a.dtype)

        def smoothed_q() -> Any:
            q = (ls / n_classes) * w_s * kept_s[..., None]
            _subtract_at_targets(q, safe_t, -(1 - ls) * wt_s, flat)  # + (1 - ls) weight[t]
            return q

        def d_smoothed(c: Any) -> Any:
            q = smoothed_q()
            d = spread(np.multiply, e, (q.sum(axis=-1, keepdims=True) / sums).astype(a.dtype))
            d -= q
            return np.multiply(d, c, out=d)

        def vjp_smoothed(c: Any) -> Any:
            q = smoothed_q()
            return (_probs(n_in, e, sums, c_axis) * q.sum(axis=-1, keepdims=True) - q) * c

        return reduced(
            name, loss, reduction, wt_s.sum(), [(input, d_smoothed)], a, vjps=[vjp_smoothed]
        )

    loss = -picked if wt is None else -(wt * picked)

    def d_hard(c: Any) -> Any:
        # q is weight[t] one-hot: d = c weight[t] (p - onehot(t)), p = e / sums, in one
        # pass over e.
        cw = c if wt is None else wt[..., None] * c
        if kernels is not None:
            d = np.empty(e.shape, e.dtype)
            cw = kernel_input(np.asarray(cw, e.dtype).reshape(-1))
            kernels.cross_entropy_rows_backward(e, sums.reshape(-1), t_k, cw, d)
            return d
        d = spread(np.multiply, e, cw / sums)
        _subtract_at_targets(d, safe_t, cw if cw.ndim == 0 else cw[..., 0], flat)
        return d

    def vjp_hard(c: Any) -> Any:  # (p - onehot(t)) weight[t] c
        hot = np.zeros(e.shape, a.dtype)
        _subtract_at_targets(hot, safe_t, -1, flat)
        cw = c if wt is None else wt[..., None] * c
        return (_probs(n_in, e, sums, c_axis) - hot) * cw

    n = safe_t.size if wt is None else wt.sum()
    keeps = (e, sums, wt, safe_t, flat, t_k)  # what d_hard keeps
    return reduced(name, loss, reduction, n, [(input, d_hard)], a, vjps=[vjp_hard], keeps=keeps)


def _foreign_array(name: str, x: Any) -> Any:
    """``x`` as a numpy array if it is another library's array (a CPU PyTorch tensor, a
    JAX array: anything with ``__array__`` or ``__dlpack__``), else ``x`` itself."""
    if isinstance(x, Variable | np.ndarray | np.generic | int | float | list | tuple):
        return x
    try:
        if hasattr(x, "__array__"):
            return np.asarray(x)
        if hasattr(x, "__dlpack__"):
            return np.from_dlpack(x)
    except (TypeError, RuntimeError, ValueError, BufferError) as e:
        raise LampyTypeError(
            f"{name}: could not read the {type(x).__name__} as a numpy array ({e}); pass "
            "a numpy array (for a PyTorch tensor: t.detach().cpu().numpy())."
        ) from None
    return x
