"""Linear layers of ``lampy.nn.functional``: ``linear`` and ``bilinear``, with PyTorch's
names, arguments and shapes (``torch.nn.functional.linear`` / ``bilinear``).

Each is one fused op. Leading (batch) dimensions are folded into one row axis, so the
products are single matrix products (a reshape, not a copy, when the input is
contiguous), and the weight's gradient is one matrix product over all rows. float32
stays float32; an integer or bool input (a constant) takes the weight's dtype.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lampy._errors import shape_mismatch
from lampy.autograd import _ledger
from lampy.nn.functional._shared import frozen
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    graph_value,
    needs_grad,
    node_of,
    op,
    unbroadcast,
    value_of,
)
from lampy.ops import matmul, reshape, swapaxes
from lampy.ops import sum as sum_op

__all__ = ["bilinear", "linear"]

_matmul = np.matmul
_add_reduce = np.add.reduce  # ndarray.sum without its Python layer


def _as_array(x: Any, saved: bool, name: str) -> np.ndarray:
    """``x``'s value as an array, for op ``name``; ``saved=False`` when no closure keeps it
    (no copy of a writable caller's array, see ``value_of``)."""
    return np.asarray(value_of(x, saved, name))


def _float_like(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``a`` itself when floating, else ``a`` cast to the weight's dtype."""
    if a.dtype.kind == "f":
        return a
    return a.astype(w.dtype if w.dtype.kind == "f" else np.float64)


def _check_bias(name: str, b: np.ndarray, n_out: int, w: np.ndarray) -> None:
    if b.ndim > 1 or (b.ndim == 1 and b.shape[0] not in (1, n_out)):
        raise shape_mismatch(
            name, w, b, detail=f"bias must have shape ({n_out},) (out_features), got {b.shape}."
        )


def linear(input: Operand, weight: Operand, bias: Operand | None = None) -> Variable:
    """Affine map ``y = x @ W.T + b`` over the last axis of ``x``.

    Shapes: ``input`` (*, in_features) with any number of leading dimensions (none
    too), ``weight`` (out_features, in_features) or (in_features,), ``bias``
    (out_features,) or None; the result is (*, out_features) (just (*) for a 1-d
    weight). The leading dimensions are folded into one axis of ``N`` rows, so the
    forward pass is one matrix product plus the bias.

    The weight's gradient reads the input in the backward pass, so a writable numpy
    input is copied when the weight needs a gradient (a later write into your array
    must not reach the gradient); a read-only array
    (``x.setflags(write=False)``, a read-only memory map) or a Variable is read without
    a copy.

    Args:
        input: The input, a Variable or array.
        weight: The weight matrix.
        bias: An optional bias, added to every row.

    Returns:
        The output Variable.

    Raises:
        ShapeError: if the last axis of ``input`` is not ``in_features``, the weight is
            not 1-d or 2-d, or the bias does not have shape (out_features,).

    Gradient:
        With ``G`` the output gradient and ``X`` the input, both as (N, ·) matrices:
        ``d input = G @ W``, ``d weight = G.T @ X`` (one product over all rows),
        ``d bias = sum of G over the rows``.

    Examples:
        >>> import numpy as np, lampy
        >>> from lampy.nn.functional import linear
        >>> with lampy.Scope():
        ...     w = lampy.param(np.ones((2, 3)))
        ...     y = linear(np.arange(3.0), w, np.array([0.0, 1.0]))
        ...     print(y.value)
        [3. 4.]
    """
    # Only d_weight keeps the input and only d_input keeps the weight: a numpy batch
    # passed to a layer whose weight needs no gradient is read without a copy.
    w = weight.value if type(weight) is Variable else _as_array(weight, needs_grad(input), "linear")
    a = input.value if type(input) is Variable else _as_array(input, needs_grad(weight), "linear")
    if a.dtype.kind != "f":
        a = _float_like(a, w)
    name = "linear"
    if w.ndim not in (1, 2):
        raise shape_mismatch(
            name, a, w, detail="weight must be (out_features, in_features) or (in_features,)."
        )
    n_in = w.shape[-1]
    if a.ndim == 0 or a.shape[-1] != n_in:
        raise shape_mismatch(
            name,
            a,
            w,
            detail=f"input must have shape (*, in_features) with in_features = {n_in} "
            "(the weight's last axis); weight is (out_features, in_features).",
        )
    w2 = w if w.ndim == 2 else w.reshape(1, n_in)
    n_out = w2.shape[0]
    lead = a.shape[:-1]
    x2 = a if a.ndim == 2 else a.reshape(math.prod(lead), n_in)
    n_rows = x2.shape[0]
    out_shape = (*lead, n_out) if w.ndim == 2 else lead
    if _ledger.open_budgets:  # a scope has a budget: check the output's size first
        _ledger.reserve(name, out_shape, np.result_type(a.dtype, w.dtype))
    y2 = _matmul(x2, w2.T)  # a new (n_rows, n_out) array
    b = None
    if bias is not None:
        b = bias.value if type(bias) is Variable else _as_array(bias, False, "linear")
        if b.shape != (n_out,):  # the closures keep only its shape
            _check_bias(name, b, n_out, w)
        y2 += b
    value = y2 if y2.shape == out_shape else frozen(y2, out_shape)

    in_shape, w_shape = a.shape, w.shape  # the closures keep the input only as x2

    # Each gradient is one matrix product (one reduction for the bias) into a new
    # array, which the engine takes as the gradient buffer (fresh=True): no
    # zero-filled buffer, no copy, no transpose copied.
    g_shape = (n_rows, n_out)  # g as a matrix: g itself for a 2-d input and weight

    def d_input(g: np.ndarray) -> Any:
        d = _matmul(g if g.shape == g_shape else g.reshape(g_shape), w2)
        return d if d.shape == in_shape else d.reshape(in_shape)

    def d_weight(g: np.ndarray) -> Any:
        d = _matmul((g if g.shape == g_shape else g.reshape(g_shape)).T, x2)
        return d if d.shape == w_shape else d.reshape(w_shape)

    def d_bias(g: np.ndarray) -> Any:
        assert b is not None
        d = _add_reduce(g if g.shape == g_shape else g.reshape(g_shape), axis=0)
        return d if d.shape == b.shape else unbroadcast(d, b.shape)

    n_a, n_w = node_of(input), node_of(weight)

    def vjp_input(g: Any, out: Any) -> Any:
        w2v = reshape(graph_value(n_w, w), w2.shape)
        return reshape(matmul(reshape(g, g_shape), w2v), in_shape)

    def vjp_weight(g: Any, out: Any) -> Any:
        x2v = reshape(graph_value(n_a, a), x2.shape)
        return reshape(matmul(swapaxes(reshape(g, g_shape), 0, 1), x2v), w_shape)

    def vjp_bias(g: Any, out: Any) -> Any:
        return sum_op(reshape(g, g_shape), axis=0)

    p_input = contrib_of(input, d_input, True, vjp_input)
    p_weight = contrib_of(weight, d_weight, True, vjp_weight)
    p_bias = contrib_of(bias, d_bias, True, vjp_bias)
    # What the closures of the params given keep (d_bias keeps b for its shape): declared,
    # so the memory count needs no scan of the closures. The value of an input that has
    # a param here is counted with its node, so it is left out when a closure keeps it
    # itself (a 2-d input or weight, a bias): the count then has nothing to look at.
    keeps = (
        w2 if p_input and not (p_weight and weight.node.value is w2) else None,  # type: ignore[union-attr]
        x2 if p_weight and not (p_input and input.node.value is x2) else None,  # type: ignore[union-attr]
        b if p_bias and b is not bias.node.value else None,  # type: ignore[union-attr]
    )
    return op(name, value, p_input, p_weight, p_bias, keeps=keeps)


def bilinear(
    input1: Operand, input2: Operand, weight: Operand, bias: Operand | None = None
) -> Variable:
    """Bilinear map ``y_k = x1^T W_k x2 + b_k`` over the last axes of ``x1`` and ``x2``.

    Shapes: ``input1`` (*, in1_features) and ``input2`` (*, in2_features) with the same
    leading dimensions, ``weight`` (out_features, in1_features, in2_features), ``bias``
    (out_features,) or None; the result is (*, out_features).

    The forward pass computes ``T = x1 @ W`` as one matrix product, ``T[n, k, j] =
    sum_i x1[n, i] W[k, i, j]``, and then ``y[n, k] = sum_j T[n, k, j] x2[n, j]``.

    Raises:
        ShapeError: if the leading dimensions differ, a feature size does not match the
            weight, or the bias does not have shape (out_features,).

    Gradient:
        ``d x1[n, i] = sum_kj g[n, k] W[k, i, j] x2[n, j]``,
        ``d x2[n, j] = sum_k g[n, k] T[n, k, j]``,
        ``d W[k, i, j] = sum_n x1[n, i] g[n, k] x2[n, j]``, ``d b_k = sum_n g[n, k]``.
    """
    name = "bilinear"
    w = _as_array(weight, True, "bilinear")
    a1 = _float_like(_as_array(input1, True, "bilinear"), w)
    a2 = _float_like(_as_array(input2, True, "bilinear"), w)
    if w.ndim != 3:
        raise shape_mismatch(
            name, a1, a2, w, detail="weight must be (out_features, in1_features, in2_features)."
        )
    n_out, n1, n2 = w.shape
    if a1.ndim == 0 or a2.ndim == 0 or a1.shape[:-1] != a2.shape[:-1]:
        raise shape_mismatch(
            name,
            a1,
            a2,
            detail="input1 (*, in1_features) and input2 (*, in2_features) must have the "
            "same leading dimensions.",
        )
    if a1.shape[-1] != n1 or a2.shape[-1] != n2:
        raise shape_mismatch(
            name,
            a1,
            a2,
            w,
            detail=f"the weight {w.shape} is (out_features, in1_features, in2_features): "
            f"input1's last axis must be {n1} and input2's {n2}.",
        )
    lead = a1.shape[:-1]
    n = math.prod(lead)
    x1 = a1.reshape(n, n1)
    x2 = a2.reshape(n, n2)
    # W as an (in1, out * in2) matrix: T = x1 @ w_r gives T[n, k * in2 + j].
    w_r = w.transpose(1, 0, 2).reshape(n1, n_out * n2)
    t = _matmul(x1, w_r).reshape(n, n_out, n2)
    value = np.empty((*lead, n_out), dtype=np.result_type(t.dtype, x2.dtype))
    y2 = value.reshape(n, n_out)
    _matmul(t, x2[:, :, None], out=y2[:, :, None])
    b = None
    if bias is not None:
        b = _as_array(bias, True, "bilinear")
        _check_bias(name, b, n_out, w)
        np.add(y2, b, out=y2)

    def outer(g: np.ndarray) -> np.ndarray:
        """``U[n, k * in2 + j] = g[n, k] x2[n, j]``."""
        g2 = g.reshape(n, n_out)
        u: np.ndarray = g2[:, :, None] * x2[:, None, :]
        return u.reshape(n, n_out * n2)

    def d_input1(g: np.ndarray) -> Any:
        return _matmul(outer(g), w_r.T).reshape(a1.shape)

    def d_input2(g: np.ndarray) -> Any:
        return _matmul(g.reshape(n, 1, n_out), t).reshape(a2.shape)

    def d_weight(g: np.ndarray) -> Any:
        d = _matmul(x1.T, outer(g)).reshape(n1, n_out, n2)
        return np.ascontiguousarray(d.transpose(1, 0, 2))

    def d_bias(g: np.ndarray) -> Any:
        assert b is not None
        return unbroadcast(g.reshape(n, n_out).sum(axis=0), b.shape)

    return op(
        name,
        value,
        contrib_of(input1, d_input1),
        contrib_of(input2, d_input2),
        contrib_of(weight, d_weight),
        contrib_of(bias, d_bias),
    )
