"""Normalisation ops of ``lampy.nn.functional`` with PyTorch's names, arguments and
semantics: ``layer_norm``, ``group_norm``, ``rms_norm`` and ``normalize``, the helpers
they share with ``batch_norm`` (in ``_batch_norm.py``), and the p-norm helpers that
``normalize`` shares with the distance losses (in ``_p_norms.py``, with ``normalize``,
re-exported here).

Each op is fused: one forward pass in numpy and closures computing the closed-form
gradient (for a standardisation ``xhat = (x - mean) * rstd`` over ``n`` values,
``dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))``). ``layer_norm`` runs
its float32 and float64 rows through compiled kernels instead when Numba is installed
(the ``lampy[fast]`` extra, ``_numba_kernels``), with the numpy code as the fallback.
Statistics are taken in the input's dtype: float32 stays float32; integer inputs are
computed in float64. Weights and biases are cast to the input's dtype for the forward
pass and get their gradient in their own dtype.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional._p_norms import normalize as normalize
from lampy.nn.functional._shared import (
    SharedInBackward,
    compiled,
    dot_along,
    float_value,
    frozen,
    kernel_input,
    spread,
)
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    graph_value,
    needs_grad,
    node_of,
    op,
    value_of,
)
from lampy.ops import mean as mean_op
from lampy.ops import reshape
from lampy.ops import sum as sum_op

__all__ = ["group_norm", "layer_norm", "normalize", "rms_norm"]


def _affine(name: str, what: str, w: Any, shape: tuple[int, ...], a: np.ndarray) -> Any:
    """``weight`` or ``bias`` as an array of ``shape`` in ``a``'s dtype, or None."""
    if w is None:
        return None
    v = np.asarray(value_of(w, name=name))
    if v.shape != shape:
        raise ShapeError(
            f"{name}: {what} has shape {v.shape} but the input of shape {a.shape} needs "
            f"{what} of shape {shape}; pass a {what} of that shape (or None)."
        )
    return v.astype(a.dtype, copy=False)


def _as_dtype_of(x: Any, d: np.ndarray) -> np.ndarray:
    """The gradient ``d`` in the dtype of the input ``x`` (a Variable)."""
    return d.astype(x.dtype, copy=False) if type(x) is Variable else d


def _col_sums(g2: np.ndarray) -> Any:
    """Column sums of a 2-d array, by matrix-vector product (faster than ``sum(0)``)."""
    return np.ones(g2.shape[0], g2.dtype) @ g2 if g2.shape[0] else np.zeros(g2.shape[1], g2.dtype)


def _standardize_rows(x2: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """``(xhat, rstd)`` of the rows of the 2-d ``x2``: biased variance, ``rstd`` (m,)."""
    m, d = x2.shape
    inv_d = 1.0 / d if d else math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = x2 @ np.ones(d, x2.dtype) if m else np.zeros(0, x2.dtype)
        mu *= inv_d
        xhat = x2 - mu[:, None]
        var = dot_along(xhat, xhat, 1)[:, 0]
        var *= inv_d
        var += eps
        rstd = np.sqrt(var, out=var)
        np.reciprocal(rstd, out=rstd)
        xhat *= rstd[:, None]
    return xhat, rstd


def _center_rows(x2: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """``(xc, rstd)`` of the rows of the 2-d ``x2``: the rows minus their means (a new
    array) and ``1 / sqrt(biased variance + eps)``, of shape (m,)."""
    m, d = x2.shape
    inv_d = 1.0 / d if d else math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = x2 @ np.ones(d, x2.dtype) if m else np.zeros(0, x2.dtype)
        mu *= inv_d
        xc = spread(np.subtract, x2, mu[:, None])
        var = dot_along(xc, xc, 1)[:, 0]
        var *= inv_d
        var += eps
        rstd = np.sqrt(var, out=var)
        np.reciprocal(rstd, out=rstd)
    return xc, rstd


def _rows_backward(dxhat: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, fresh: bool) -> Any:
    """``dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))`` row by row, for
    2-d arrays; ``dxhat`` is overwritten when ``fresh`` (it is then a temporary)."""
    m, d = xhat.shape
    inv_d = 1.0 / d if d else 0.0
    mean_g = dxhat @ np.ones(d, dxhat.dtype) if m else np.zeros(0, dxhat.dtype)
    mean_gx = dot_along(dxhat, xhat, 1)[:, 0]
    mean_g *= inv_d
    mean_gx *= inv_d
    # dx = rstd * (dxhat - mean_g) - xhat * (rstd * mean_gx): four passes, one new array
    # (none when dxhat is a temporary).
    mean_gx *= rstd
    dx = np.subtract(dxhat, mean_g[:, None], out=dxhat if fresh else None)
    dx *= rstd[:, None]
    corr = np.multiply(xhat, mean_gx[:, None])
    dx -= corr
    return dx


def recorded_standardize(x: Any, axes: Any, eps: float) -> tuple[Any, Any]:
    """``(xhat, rstd)`` of ``x`` standardised over ``axes`` (biased variance), written
    with lampy ops (``x`` a Variable of the graph or a constant), for the vjps."""
    xc = x - mean_op(x, axis=axes, keepdims=True)
    rstd = (mean_op(xc * xc, axis=axes, keepdims=True) + eps) ** -0.5
    return xc * rstd, rstd


def recorded_standardize_backward(dxhat: Any, xhat: Any, rstd: Any, axes: Any) -> Any:
    """``rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))`` over ``axes`` with
    lampy ops: the derivative of ``recorded_standardize``, recorded."""
    mean_g = mean_op(dxhat, axis=axes, keepdims=True)
    mean_gx = mean_op(dxhat * xhat, axis=axes, keepdims=True)
    return rstd * (dxhat - mean_g - xhat * mean_gx)


def _trailing(name: str, normalized_shape: Any, a: np.ndarray) -> tuple[int, ...]:
    """``normalized_shape`` (an int or a sequence of ints) checked against ``a``'s shape."""
    if isinstance(normalized_shape, (int, np.integer)):
        shape: tuple[int, ...] = (int(normalized_shape),)
    else:
        try:
            if isinstance(normalized_shape, (str, bytes)):
                raise TypeError
            shape = tuple(int(s) for s in normalized_shape)
        except (TypeError, ValueError):
            raise LampyTypeError(
                f"{name}: normalized_shape must be an int or a sequence of ints, "
                f"got {normalized_shape!r}."
            ) from None
    k = len(shape)
    if k == 0 or k > a.ndim or a.shape[a.ndim - k :] != shape:
        options = " or ".join(str(a.shape[i:]) for i in range(max(a.ndim - 3, 0), a.ndim))
        raise ShapeError(
            f"{name}: normalized_shape {shape} must equal the trailing dimensions of the "
            f"input, whose shape is {a.shape}; pass its last dimensions, e.g. "
            f"{options or '(a non-empty shape)'}."
        )
    return shape


def _outer(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``u[:, None] * v`` for vectors of one dtype, as a new array: a matrix product of
    rank two (``u`` and ``v`` padded with zeros), which BLAS writes out about twice as
    fast as numpy's broadcasting multiply (``numpy.outer``; a rank-one matmul does not
    reach BLAS). Each element is the one rounded product ``u_i v_j``."""
    uu = np.zeros((u.shape[0], 2), u.dtype)
    uu[:, 0] = u
    vv = np.zeros((2, v.shape[0]), v.dtype)
    vv[0] = v
    out: np.ndarray = uu @ vv
    return out


@functools.lru_cache(maxsize=64)
def _identities(n: int, dtype: np.dtype[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Read-only vectors of ``n`` ones and of ``n`` negative zeros in ``dtype`` (made
    once), the kernels' weight and bias when there is none: ``v * 1 + -0.0`` is ``v``
    exactly, -0.0 included (``+0.0`` would turn ``-0.0`` into ``+0.0``)."""
    ones, zeros = np.ones(n, dtype), np.full(n, -0.0, dtype)
    ones.setflags(write=False)
    zeros.setflags(write=False)
    return ones, zeros


def _layer_norm_rows(
    x2: np.ndarray, w1: np.ndarray | None, b1: np.ndarray | None, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, xc, rstd)``: layer normalisation of the rows of the 2-d ``x2`` (m, d), with
    ``xc = x2 - mean`` (rows minus their means), ``rstd = 1 / sqrt(biased variance +
    eps)`` of shape (m,) and ``y = xc * rstd * w1 + b1`` (``w1``, ``b1``: vectors of
    length d, or None), all new arrays in ``x2``'s dtype; ``xc`` and ``rstd`` are
    read-only. One compiled pass over the rows when Numba is installed, else numpy."""
    m, d = x2.shape
    kernels = compiled(x2)
    if kernels is not None:
        t = x2.dtype.type
        y, xc, rstd = np.empty((m, d), x2.dtype), np.empty((m, d), x2.dtype), np.empty(m, x2.dtype)
        ones, zeros = _identities(d, x2.dtype)
        kernels.layer_norm_rows(
            kernel_input(x2),
            ones if w1 is None else kernel_input(w1),
            zeros if b1 is None else kernel_input(b1),
            t(eps),
            t(1.0 / d),
            y,
            xc,
            rstd,
        )
    else:
        # rstd x weight is one outer product written by BLAS; other per-row or
        # per-feature vectors meet whole arrays in place or through spread (numpy's
        # broadcasting loop is slowest when it allocates its result).
        xc, rstd = _center_rows(x2, eps)
        if w1 is None:
            y = spread(np.multiply, xc, rstd[:, None])
        else:
            y = _outer(rstd, w1)
            np.multiply(y, xc, out=y)
        if b1 is not None:
            np.add(y, b1, out=y)
    xc.setflags(write=False)
    rstd.setflags(write=False)
    return y, xc, rstd


def _layer_norm_rows_backward(
    g2: np.ndarray,
    xc: np.ndarray,
    rstd: np.ndarray,
    w1: np.ndarray | None,
    want_dx: bool,
    want_dw: bool,
    want_db: bool,
) -> tuple[Any, Any, Any]:
    """``(dx, dw, db)``, the gradients of ``_layer_norm_rows`` for the output gradient
    ``g2`` (m, d), each a new array, or None where not wanted: with means over a row,

    ``dx = rstd w g - xc (rstd**3 mean(g w xc)) - rstd mean(g w)``, every factor but
    ``g`` and ``xc`` a per-row or per-feature vector; ``dw = sum(g xc rstd)`` and
    ``db = sum(g)`` over the rows. One compiled pass when Numba is installed, else
    numpy (``g * xc`` shared by ``dx`` and ``dw``)."""
    m, d = xc.shape
    dx: Any = None
    dw: Any
    db: Any
    kernels = compiled(xc)
    if kernels is not None:
        dt = xc.dtype
        dx = np.empty((m, d) if want_dx else (0, 0), dt)
        n = d if want_dw or want_db else 0
        dw, db = np.zeros(n, dt), np.zeros(n, dt)
        kernels.layer_norm_rows_backward(
            kernel_input(g2),
            kernel_input(xc),
            kernel_input(rstd),
            _identities(d, dt)[0] if w1 is None else kernel_input(w1),
            dt.type(1.0 / d),
            dx,
            dw,
            db,
            want_dx,
            want_dw or want_db,
            max(math.isqrt(m), 1),
        )
        return dx if want_dx else None, dw if want_dw else None, db if want_db else None
    gx = np.multiply(g2, xc) if want_dx or want_dw else g2
    if want_dx:
        inv_d = 1.0 / d if d else math.nan
        if w1 is None:
            ones = np.ones(d, g2.dtype)
            mean_g, mean_gx = g2 @ ones, gx @ ones
            dx = spread(np.multiply, g2, rstd[:, None])
        else:
            mean_g, mean_gx = g2 @ w1, gx @ w1
            dx = _outer(rstd, w1)
            np.multiply(dx, g2, out=dx)
        mean_g *= rstd * inv_d
        mean_gx *= rstd * rstd * rstd * inv_d
        dx -= spread(np.multiply, xc, mean_gx[:, None])
        dx -= mean_g[:, None]
    dw = rstd @ gx if want_dw else None
    db = _col_sums(g2) if want_db else None
    return dx, dw, db


def layer_norm(
    input: Operand,
    normalized_shape: Any,
    weight: Operand | None = None,
    bias: Operand | None = None,
    eps: float = 1e-05,
) -> Variable:
    """Layer normalisation over the trailing ``normalized_shape`` dimensions, as
    ``torch.nn.functional.layer_norm``: ``(x - mean) / sqrt(var + eps) * weight + bias``
    with the biased variance of each slice. ``normalized_shape`` may also be an int.

    float32 and float64 inputs run through compiled kernels when Numba is installed (the
    ``lampy[fast]`` extra: one pass over the rows forward and one backward, compiled on
    the first call and cached on disk), other dtypes and installs without Numba through
    numpy; both compute in the input's dtype.

    Args:
        input: Array of shape ``(*, *normalized_shape)``.
        normalized_shape: The trailing dimensions to normalise over.
        weight: Optional elementwise scale of shape ``normalized_shape``.
        bias: Optional elementwise shift of shape ``normalized_shape``.
        eps: Added to the variance.

    Gradient:
        With ``xhat`` the normalised input, ``rstd = 1/sqrt(var + eps)``,
        ``dxhat = g * weight`` and means over the normalised slice:
        ``dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))``;
        ``dweight = sum(g * xhat)`` and ``dbias = sum(g)`` over the leading dimensions.
    """
    name = "layer_norm"
    a = np.asarray(float_value(input, name, reserve=False))
    shape = _trailing(name, normalized_shape, a)
    w = _affine(name, "weight", weight, shape, a)
    b = _affine(name, "bias", bias, shape, a)
    d = math.prod(shape)
    m = math.prod(a.shape[: a.ndim - len(shape)])
    w1 = None if w is None else w.reshape(d)
    b1 = None if b is None else b.reshape(d)
    # Kept for backward: the centred rows xc = x - mean and rstd, in the input's dtype.
    value, xc, rstd = _layer_norm_rows(a.reshape(m, d), w1, b1, eps)
    want = (needs_grad(input), needs_grad(weight), needs_grad(bias))

    def grads(g: np.ndarray) -> tuple[Any, Any, Any]:
        return _layer_norm_rows_backward(g.reshape(m, d), xc, rstd, w1, *want)

    shared = SharedInBackward(grads, sum(want)) if sum(want) > 1 else grads

    in_shape = a.shape  # the closures keep xc and rstd, not the input

    def d_input(g: np.ndarray) -> Any:
        return shared(g)[0].reshape(in_shape)

    def d_weight(g: np.ndarray) -> Any:
        return _as_dtype_of(weight, shared(g)[1].reshape(shape))

    def d_bias(g: np.ndarray) -> Any:
        return _as_dtype_of(bias, shared(g)[2].reshape(shape))

    # The vjps standardise again with lampy ops: the input's graph enters through the
    # saved xc, which differs from it by a per-row constant (layer_norm does not see it).
    n_in, n_w = node_of(input), node_of(weight)

    def standardized(g: Any) -> tuple[Any, Any, Any]:
        x2 = reshape(graph_value(n_in, xc.reshape(in_shape)), (m, d))
        return (*recorded_standardize(x2, 1, eps), reshape(g, (m, d)))

    def vjp_input(g: Any, out: Any) -> Any:
        xhat, r, g2 = standardized(g)
        dxhat = g2 if w is None else g2 * reshape(graph_value(n_w, w), (d,))
        return reshape(recorded_standardize_backward(dxhat, xhat, r, 1), in_shape)

    def vjp_weight(g: Any, out: Any) -> Any:
        xhat, _, g2 = standardized(g)
        return reshape(sum_op(g2 * xhat, axis=0), shape)

    return op(
        name,
        frozen(value, in_shape),
        contrib_of(input, d_input, vjp=vjp_input),
        contrib_of(weight, d_weight, vjp=vjp_weight),
        contrib_of(
            bias, d_bias, vjp=lambda g, out: reshape(sum_op(reshape(g, (m, d)), axis=0), shape)
        ),
        keeps=(xc, rstd, w1),  # what every closure keeps, through grads
    )


def _channels(name: str, a: np.ndarray) -> tuple[int, int, int]:
    """``(N, C, S)`` of an input of shape ``(N, C, *)``, S the product of the rest."""
    if a.ndim < 2:
        raise ShapeError(
            f"{name}: the input must have shape (N, C, *) with at least 2 dimensions, got "
            f"shape {a.shape}; add a batch dimension (e.g. input[None]) first."
        )
    return a.shape[0], a.shape[1], math.prod(a.shape[2:])


def group_norm(
    input: Operand,
    num_groups: int,
    weight: Operand | None = None,
    bias: Operand | None = None,
    eps: float = 1e-05,
) -> Variable:
    """Group normalisation, as ``torch.nn.functional.group_norm``: the C channels of an
    input of shape ``(N, C, *)`` are split into ``num_groups`` groups of consecutive
    channels; each group of each sample is standardised over its channels and spatial
    positions (biased variance), then scaled and shifted per channel.

    Args:
        input: Array of shape ``(N, C, *)``; ``num_groups`` must divide C.
        num_groups: Number of groups.
        weight: Optional per-channel scale of shape ``(C,)``.
        bias: Optional per-channel shift of shape ``(C,)``.
        eps: Added to the variance.

    Gradient:
        As ``layer_norm`` over each (sample, group) slice, with ``dxhat = g * weight[c]``;
        ``dweight[c] = sum(g * xhat)`` and ``dbias[c] = sum(g)`` over N and space.
    """
    name = "group_norm"
    a = np.asarray(float_value(input, name, reserve=False))
    n, c, s = _channels(name, a)
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)):
        raise LampyTypeError(f"{name}: num_groups must be an int, got {num_groups!r}.")
    if num_groups <= 0 or c % num_groups:
        raise ShapeError(
            f"{name}: num_groups={num_groups} must be positive and divide the number of "
            f"channels C={c} of the input of shape {a.shape}; choose a divisor of {c}."
        )
    if (n * c // num_groups) * s == 1:  # PyTorch's own check (its _verify_batch_size)
        raise LampyValueError(
            f"{name}: expected more than 1 value per channel, got input of shape {a.shape} "
            f"with num_groups={num_groups}; PyTorch refuses it too."
        )
    w = _affine(name, "weight", weight, (c,), a)
    b = _affine(name, "bias", bias, (c,), a)
    rows, d = n * num_groups, (c // num_groups) * s
    xhat2, rstd = _standardize_rows(a.reshape(rows, d), eps)
    xhat = xhat2.reshape(n, c, s)
    value = xhat if w is None else xhat * w[:, None]
    if b is not None:
        value = value + b[:, None] if value is xhat else np.add(value, b[:, None], out=value)

    def d_input(g: np.ndarray) -> Any:
        g3 = g.reshape(n, c, s)
        dxhat = g3 if w is None else g3 * w[:, None]
        dx = _rows_backward(dxhat.reshape(rows, d), xhat2, rstd, w is not None)
        return dx.reshape(a.shape)

    def d_weight(g: np.ndarray) -> Any:
        return _as_dtype_of(weight, np.einsum("ncs,ncs->c", g.reshape(n, c, s), xhat))

    def d_bias(g: np.ndarray) -> Any:
        return _as_dtype_of(bias, g.reshape(n, c, s).sum(axis=(0, 2)))

    # The vjps standardise again with lampy ops; the input's graph enters through
    # xhat / rstd, the saved rows centred (group_norm does not see the shift).
    n_in, n_w, in_shape = node_of(input), node_of(weight), a.shape

    def standardized(g: Any) -> tuple[Any, Any, Any]:
        xc = (xhat2 / rstd[:, None]).reshape(in_shape)
        x2 = reshape(graph_value(n_in, xc), (rows, d))
        xh, r = recorded_standardize(x2, 1, eps)
        return xh, r, reshape(g, (n, c, s))

    def vjp_input(g: Any, out: Any) -> Any:
        xh, r, g3 = standardized(g)
        dxhat = g3 if w is None else g3 * reshape(graph_value(n_w, w), (c, 1))
        dx = recorded_standardize_backward(reshape(dxhat, (rows, d)), xh, r, 1)
        return reshape(dx, in_shape)

    def vjp_weight(g: Any, out: Any) -> Any:
        xh, _, g3 = standardized(g)
        return sum_op(g3 * reshape(xh, (n, c, s)), axis=(0, 2))

    return op(
        name,
        frozen(value, a.shape),
        contrib_of(input, d_input, vjp=vjp_input),
        contrib_of(weight, d_weight, vjp=vjp_weight),
        contrib_of(bias, d_bias, vjp=lambda g, out: sum_op(reshape(g, (n, c, s)), axis=(0, 2))),
    )


def rms_norm(
    input: Operand,
    normalized_shape: Any,
    weight: Operand | None = None,
    eps: float | None = None,
) -> Variable:
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dimensions,
    as ``torch.nn.functional.rms_norm``: ``x / sqrt(mean(x**2) + eps) * weight``.

    Args:
        input: Array of shape ``(*, *normalized_shape)``.
        normalized_shape: The trailing dimensions (an int or a sequence of ints).
        weight: Optional elementwise scale of shape ``normalized_shape``.
        eps: Added to the mean square; None means ``numpy.finfo(dtype).eps`` of the
            input's dtype, as PyTorch's ``torch.finfo(dtype).eps``.

    Gradient:
        With ``r = 1/sqrt(mean(x**2) + eps)``, ``y0 = x r`` and ``dy0 = g * weight``:
        ``dx = r * (dy0 - y0 * mean(dy0 * y0))``; ``dweight = sum(g * y0)`` over the
        leading dimensions.
    """
    name = "rms_norm"
    a = np.asarray(float_value(input, name, reserve=False))
    shape = _trailing(name, normalized_shape, a)
    w = _affine(name, "weight", weight, shape, a)
    eps_ = float(np.finfo(a.dtype).eps) if eps is None else eps
    d = math.prod(shape)
    m = math.prod(a.shape[: a.ndim - len(shape)])
    x2 = a.reshape(m, d)
    inv_d = 1.0 / d if d else math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.einsum("ij,ij->i", x2, x2)
        r *= inv_d
        r += eps_
        np.sqrt(r, out=r)
        np.reciprocal(r, out=r)
    y0 = x2 * r[:, None]
    value = y0 if w is None else y0 * w.reshape(d)

    def d_input(g: np.ndarray) -> Any:
        g2 = g.reshape(m, d)
        dy0 = g2 if w is None else g2 * w.reshape(d)
        c = np.einsum("ij,ij->i", dy0, y0)
        c *= inv_d
        dx = y0 * c[:, None]
        np.subtract(dy0, dx, out=dx)
        dx *= r[:, None]
        return dx.reshape(a.shape)

    def d_weight(g: np.ndarray) -> Any:
        gy = np.einsum("ij,ij->j", g.reshape(m, d), y0)
        return _as_dtype_of(weight, gy.reshape(shape))

    return op(
        name, frozen(value, a.shape), contrib_of(input, d_input), contrib_of(weight, d_weight)
    )
