"""Neural-network ops over any array namespace, named as ``lampy.nn.functional``'s:
linear, relu, cross_entropy."""

from __future__ import annotations

from typing import Any

from lampy._errors import DTypeError, LampyValueError, ShapeError
from lampy._namespaces import namespace_of
from lampy.experimental.array_api._operands import device_of, operands, shape_of
from lampy.opkit import Variable, contrib_of, contrib_with, namespace_op

Operand = Any


def linear(input: Operand, weight: Operand, bias: Operand | None = None) -> Variable:
    """Affine map ``y = x @ W.T + b`` over the last axis of ``x``, as
    ``lampy.nn.functional.linear``: ``input`` (*, in_features), ``weight``
    (out_features, in_features), ``bias`` (out_features,) or None.

    Gradient:
        With ``G`` the output gradient and ``X`` the input as (N, ·) matrices (leading
        axes folded into rows): ``d input = G @ W``, ``d weight = G.T @ X``,
        ``d bias = sum of G over the rows``.

    Raises:
        ShapeError: the weight is not 2-d, or does not fit the input's last axis, or the
            bias is not (out_features,).
    """
    name = "linear"
    xp, values = operands(name, input, weight, *(() if bias is None else (bias,)))
    a, w = values[0], values[1]
    sa, sw = shape_of(a), shape_of(w)
    if len(sw) != 2 or not sa or sa[-1] != sw[1]:
        raise ShapeError(
            f"{name}: input of shape {sa} and weight of shape {sw} do not fit: the weight is "
            "(out_features, in_features) and the input's last axis is in_features."
        )
    out_features, in_features = sw
    value = xp.matmul(a, xp.matrix_transpose(w))
    if bias is not None:
        if shape_of(values[2]) != (out_features,):
            raise ShapeError(
                f"{name}: bias of shape {shape_of(values[2])} for {out_features} outputs; "
                f"it must be ({out_features},)."
            )
        value = value + values[2]
    rows = (-1, out_features)
    return namespace_op(
        name,
        value,
        contrib_of(input, lambda g: xp.matmul(g, w)),
        contrib_of(
            weight,
            lambda g: xp.matmul(
                xp.matrix_transpose(xp.reshape(g, rows)), xp.reshape(a, (-1, in_features))
            ),
        ),
        None if bias is None else contrib_of(bias, lambda g: xp.sum(xp.reshape(g, rows), axis=0)),
    )


def relu(input: Operand) -> Variable:
    """Elementwise ``max(x, 0)``, as ``lampy.nn.functional.relu``.

    Gradient:
        ``dx = g`` where ``x > 0`` (and where it is nan), 0 elsewhere (0 at ``x = 0``,
        PyTorch's convention).
    """
    xp, (a,) = operands("relu", input, keep=False)
    value = xp.maximum(a, 0.0)
    return namespace_op("relu", value, contrib_with(input, _d_relu, value))


def _d_relu(g: Any, y: Any) -> Any:
    """relu's contribution given its value ``y`` (``y <= 0`` exactly where ``x <= 0``)."""
    return namespace_of(y).where(y <= 0, 0.0, g)


def cross_entropy(input: Operand, target: Operand, reduction: str = "mean") -> Variable:
    """Cross-entropy of logits ``input`` (N, C) against class indices ``target`` (N,),
    fused with the log-softmax, as ``lampy.nn.functional.cross_entropy`` for class
    indices (no weights, no ignored index, no label smoothing). ``target`` is an integer
    array of ``input``'s namespace and device.

    Per sample the loss is ``logsumexp(input[i]) - input[i, target[i]]``; ``reduction``
    is ``"mean"``, ``"sum"`` or ``"none"``.

    Gradient:
        ``d input = g (softmax(input) - onehot(target))`` per row (divided by N for the
        mean).

    Raises:
        ShapeError: ``input`` is not 2-d or ``target`` not (N,).
        DTypeError: ``target`` is not integer.
        LampyValueError: an unknown ``reduction``.
    """
    name = "cross_entropy"
    if reduction not in ("mean", "sum", "none"):
        raise LampyValueError(
            f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}."
        )
    xp, (z, t) = operands(name, input, target)
    if len(shape_of(z)) != 2 or shape_of(t) != shape_of(z)[:1]:
        raise ShapeError(
            f"{name}: input of shape {shape_of(z)} and target of shape {shape_of(t)}: "
            "lampy.experimental.array_api takes logits (N, C) and class indices (N,)."
        )
    if not xp.isdtype(t.dtype, "integral"):
        raise DTypeError(f"{name}: target holds class indices, an integer dtype; got {t.dtype}.")
    n, c = shape_of(z)
    shifted = z - xp.max(z, axis=1, keepdims=True)
    e = xp.exp(shifted)
    s = xp.sum(e, axis=1, keepdims=True)
    column = xp.reshape(t, (n, 1))
    losses = xp.reshape(xp.log(s) - xp.take_along_axis(shifted, column, axis=1), (n,))
    if reduction == "none":
        value = losses
    else:
        value = xp.sum(losses) if reduction == "sum" else xp.mean(losses)

    def d_input(g: Any) -> Any:
        hot = xp.astype(column == xp.reshape(xp.arange(c, device=device_of(z)), (1, c)), z.dtype)
        if reduction == "none":
            g = xp.reshape(g, (n, 1))
        elif reduction == "mean":
            g = g / n
        return (e / s - hot) * g

    return namespace_op(name, value, contrib_of(input, d_input))


__all__ = ["cross_entropy", "linear", "relu"]
