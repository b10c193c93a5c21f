"""``batch_norm`` of ``lampy.nn.functional``, as ``torch.nn.functional.batch_norm``:
batch statistics with in-place updates of the running ones while training (including
the cumulative average of ``momentum=None``), running statistics in evaluation mode.

One fused op with the closed-form gradient; float32 stays float32 (see
``_normalization.py`` for the shared helpers and conventions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional._normalization import (
    _affine,
    _as_dtype_of,
    _channels,
    recorded_standardize,
    recorded_standardize_backward,
)
from lampy.nn.functional._shared import float_value, frozen
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    graph_value,
    needs_grad,
    node_of,
    op,
    recomputing,
    value_of,
)
from lampy.ops import reshape
from lampy.ops import sum as sum_op

__all__ = ["batch_norm"]


def _running(name: str, what: str, r: Any, c: int, training: bool) -> Any:
    """A running statistic: None, or an array of shape (C,) (writable when training)."""
    if r is None:
        return None
    if training and (type(r) is not np.ndarray or not r.flags.writeable):
        raise LampyTypeError(
            f"{name}: {what} must be a writable numpy array when training (it is updated "
            f"in place), got {type(r).__name__}; pass the module's buffer array, not a "
            "Variable or a read-only array."
        )
    v = r if type(r) is np.ndarray else np.asarray(value_of(r, name=name))
    if v.shape != (c,):
        raise ShapeError(
            f"{name}: {what} has shape {v.shape} but the input has C={c} channels; pass "
            f"a {what} of shape ({c},)."
        )
    return v


def _counter(name: str, t: Any) -> np.ndarray:
    if type(t) is not np.ndarray or t.shape != () or t.dtype.kind not in "iu":
        raise LampyTypeError(
            f"{name}: num_batches_tracked must be a 0-d integer numpy array (it is "
            f"incremented in place), got {t!r}; use numpy.zeros((), numpy.int64)."
        )
    if not t.flags.writeable:
        raise LampyTypeError(f"{name}: num_batches_tracked must be writable.")
    return t


def batch_norm(
    input: Operand,
    running_mean: Any,
    running_var: Any,
    weight: Operand | None = None,
    bias: Operand | None = None,
    training: bool = False,
    momentum: float | None = 0.1,
    eps: float = 1e-05,
    *,
    num_batches_tracked: np.ndarray | None = None,
) -> Variable:
    """Batch normalisation over an input of shape ``(N, C, *)``, per channel, as
    ``torch.nn.functional.batch_norm``.

    In training mode the input is standardised with the batch's mean and biased
    variance over N and the spatial dimensions, and the running statistics, when given,
    are updated in place: ``running = (1 - momentum) * running + momentum * stat``, with
    the unbiased variance for ``running_var``. ``momentum=None`` takes the cumulative
    average (factor ``1 / num_batches_tracked``), as ``torch.nn.BatchNorm*d`` does; it
    needs ``num_batches_tracked``, which is incremented in place whenever the running
    statistics are updated. The update happens once the result is recorded, so a call
    that raises (no ``lampy.Scope`` open, ...) leaves them unchanged. In evaluation mode
    the running statistics are used and the op is affine in the input.

    Args:
        input: Array of shape ``(N, C)`` or ``(N, C, *)``.
        running_mean: Writable numpy array of shape ``(C,)``, or None (training only).
        running_var: Writable numpy array of shape ``(C,)``, or None (training only).
        weight: Optional per-channel scale of shape ``(C,)``.
        bias: Optional per-channel shift of shape ``(C,)``.
        training: Use batch statistics (and update the running ones).
        momentum: Factor of the running-statistics update; None for a cumulative average.
        eps: Added to the variance.
        num_batches_tracked: Keyword-only writable 0-d integer numpy array counting the
            updates (needed with ``momentum=None``).

    Gradient:
        Training: with ``xhat`` the normalised input, ``rstd = 1/sqrt(var + eps)`` and
        ``n`` values per channel, ``dxhat = g * weight``,
        ``dx = rstd / n * (n dxhat - sum(dxhat) - xhat * sum(dxhat * xhat))``.
        Evaluation: ``dx = g * weight / sqrt(running_var + eps)``. Both:
        ``dweight = sum(g * xhat)``, ``dbias = sum(g)`` over N and space. Running
        statistics get no gradient.
    """
    name = "batch_norm"
    a = np.asarray(float_value(input, name, reserve=False))
    n, c, s = _channels(name, a)
    w = _affine(name, "weight", weight, (c,), a)
    b = _affine(name, "bias", bias, (c,), a)
    rm = _running(name, "running_mean", running_mean, c, training)
    rv = _running(name, "running_var", running_var, c, training)
    count = n * s
    nbt = None if num_batches_tracked is None else _counter(name, num_batches_tracked)
    if (rm is None) != (rv is None):
        raise LampyValueError(f"{name}: give both running_mean and running_var, or neither.")
    if not training and rm is None:
        raise LampyValueError(
            f"{name}: running_mean and running_var must be given in evaluation mode "
            "(training=False); pass them, or use training=True for batch statistics."
        )
    if training and not eps > 0:
        raise LampyValueError(
            f"{name}: eps must be positive when training, got {eps}: a channel with no "
            "variance would divide by zero."
        )
    if training and count == 1:
        raise LampyValueError(
            f"{name}: expected more than 1 value per channel when training, got input of "
            f"shape {a.shape}; use a batch of at least 2 values per channel, or "
            "training=False."
        )
    if training and rm is not None and momentum is None and nbt is None:
        raise LampyValueError(
            f"{name}: momentum=None (cumulative average) needs num_batches_tracked; pass "
            "num_batches_tracked=numpy.zeros((), numpy.int64), or a float momentum."
        )
    x3 = a.reshape(n, c, s)
    if training:
        return _batch_norm_train(x3, a.shape, input, weight, bias, w, b, eps, rm, rv, momentum, nbt)
    return _batch_norm_eval(x3, a.shape, input, weight, bias, w, b, eps, rm, rv)


def _batch_norm_train(
    x3: np.ndarray,
    shape: tuple[int, ...],
    input: Any,
    weight: Any,
    bias: Any,
    w: Any,
    b: Any,
    eps: float,
    rm: Any,
    rv: Any,
    momentum: float | None,
    nbt: np.ndarray | None,
) -> Variable:
    n, c, s = x3.shape
    count = n * s
    if count == 0:  # PyTorch returns an empty result and leaves the statistics alone
        value, xhat, rstd = x3.copy(), x3, np.zeros(c, x3.dtype)
    else:
        mean = x3.sum(axis=(0, 2)) / count
        xhat = x3 - mean[:, None]
        var = np.einsum("ncs,ncs->c", xhat, xhat) / count
        rstd = 1.0 / np.sqrt(var + eps)
        xhat *= rstd[:, None]
        value = xhat if w is None else xhat * w[:, None]
        if b is not None:
            value = value + b[:, None] if value is xhat else np.add(value, b[:, None], out=value)

    def sums(g3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return g3.sum(axis=(0, 2)), np.einsum("ncs,ncs->c", g3, xhat)

    def d_input(g: np.ndarray) -> Any:
        g3 = g.reshape(n, c, s)
        sg, sgx = sums(g3)
        scale = rstd if w is None else rstd * w
        dx = xhat * (sgx / count)[:, None]
        dx += (sg / count)[:, None]
        np.subtract(g3, dx, out=dx)
        dx *= scale[:, None]
        return dx.reshape(shape)

    def d_weight(g: np.ndarray) -> Any:
        return _as_dtype_of(weight, np.einsum("ncs,ncs->c", g.reshape(n, c, s), xhat))

    def d_bias(g: np.ndarray) -> Any:
        return _as_dtype_of(bias, g.reshape(n, c, s).sum(axis=(0, 2)))

    # The vjps standardise again with lampy ops; the input's graph enters through
    # xhat / rstd, the saved input centred per channel (batch_norm does not see the shift).
    n_in, n_w = node_of(input), node_of(weight)

    def standardized(g: Any) -> tuple[Any, Any]:
        xc = (xhat / rstd[:, None]).reshape(shape)
        x3v = reshape(graph_value(n_in, xc), (n, c, s))
        return recorded_standardize(x3v, (0, 2), eps)[0:2]

    def vjp_input(g: Any, out: Any) -> Any:
        xh, r = standardized(g)
        g3 = reshape(g, (n, c, s))
        dxhat = g3 if w is None else g3 * reshape(graph_value(n_w, w), (c, 1))
        return reshape(recorded_standardize_backward(dxhat, xh, r, (0, 2)), shape)

    def vjp_weight(g: Any, out: Any) -> Any:
        return sum_op(reshape(g, (n, c, s)) * standardized(g)[0], axis=(0, 2))

    out = op(
        "batch_norm",
        frozen(value, shape),
        contrib_of(input, d_input, vjp=vjp_input) if count else _zeros_of(input),
        contrib_of(weight, d_weight, vjp=vjp_weight if count else _no_vjp),
        contrib_of(bias, d_bias, vjp=_bias_vjp(n, c, s)),
    )
    # the running statistics change only once the result is recorded: a call
    # that fails (no Scope open, ...) leaves the module state alone; remat's
    # recomputation in backward repeats a call that already updated them
    if count and rm is not None and not recomputing():
        if nbt is not None:
            nbt += 1
        f = 1.0 / int(nbt) if momentum is None and nbt is not None else float(momentum or 0)
        unbiased = var * (count / (count - 1))
        rm *= 1 - f
        rm += (f * mean).astype(rm.dtype, copy=False)
        rv *= 1 - f
        rv += (f * unbiased).astype(rv.dtype, copy=False)
    return out


def _zeros_of(x: Any) -> Any:
    """A param giving ``x`` a zero gradient (an empty batch), or None."""
    if not needs_grad(x):
        return None
    return contrib_of(x, lambda g: np.zeros(x.shape, x.dtype), vjp=_no_vjp)


def _no_vjp(g: Any, out: Any) -> None:
    """The vjp of a zero contribution (an empty batch): None, zero."""
    return None


def _bias_vjp(n: int, c: int, s: int) -> Any:
    """The vjp of the bias's ``dbias = sum(g)`` over N and space."""
    return lambda g, out: sum_op(reshape(g, (n, c, s)), axis=(0, 2))


def _batch_norm_eval(
    x3: np.ndarray,
    shape: tuple[int, ...],
    input: Any,
    weight: Any,
    bias: Any,
    w: Any,
    b: Any,
    eps: float,
    rm: np.ndarray,
    rv: np.ndarray,
) -> Variable:
    n, c, s = x3.shape
    dt = x3.dtype
    mean = rm.astype(dt)  # copies: the caller may change its arrays later
    rstd = (1.0 / np.sqrt(rv.astype(dt) + eps)).astype(dt, copy=False)
    scale = rstd if w is None else rstd * w
    shift = -mean * scale if b is None else b - mean * scale
    value = x3 * scale[:, None]
    value += shift[:, None]

    def d_input(g: np.ndarray) -> Any:
        return (g.reshape(n, c, s) * scale[:, None]).reshape(shape)

    def d_weight(g: np.ndarray) -> Any:
        g3 = g.reshape(n, c, s)
        d = np.einsum("ncs,ncs->c", g3, x3) - g3.sum(axis=(0, 2)) * mean
        return _as_dtype_of(weight, d * rstd)

    def d_bias(g: np.ndarray) -> Any:
        return _as_dtype_of(bias, g.reshape(n, c, s).sum(axis=(0, 2)))

    # affine in the input: the vjps are the closures written with lampy ops
    n_in, n_w = node_of(input), node_of(weight)

    def vjp_input(g: Any, out: Any) -> Any:
        sc = rstd if w is None else rstd * graph_value(n_w, w)
        return reshape(reshape(g, (n, c, s)) * reshape(sc, (c, 1)), shape)

    def vjp_weight(g: Any, out: Any) -> Any:
        x3v = reshape(graph_value(n_in, x3.reshape(shape)), (n, c, s))
        return sum_op(reshape(g, (n, c, s)) * (x3v - mean[:, None]), axis=(0, 2)) * rstd

    return op(
        "batch_norm",
        frozen(value, shape),
        contrib_of(input, d_input, vjp=vjp_input),
        contrib_of(weight, d_weight, vjp=vjp_weight),
        contrib_of(bias, d_bias, vjp=_bias_vjp(n, c, s)),
    )
