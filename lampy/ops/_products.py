"""Products: matmul, dot, vdot, inner, outer, tensordot, kron, cross (numpy's semantics).

Every product here is a tensor contraction, so its gradients are contractions of ``g``
with the other operand (Giles 2008, "An extended collection of matrix derivative
results for forward and reverse mode algorithmic differentiation"). A Python number
next to a float32 array stays float32, as in lampy's elementwise ops.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError, shape_mismatch
from lampy.autograd import _ledger
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    contribution,
    graph_value,
    node_of,
    one_axis,
    op,
    param_of,
    real_result,
    reserve_output,
    sum_to,
    unbroadcast,
    values_of,
)
from lampy.ops._complex_parts import conj
from lampy.ops._join import concatenate
from lampy.ops._shape import moveaxis, reshape, swapaxes, transpose

_matmul, _add, _tensordot = np.matmul, np.add, np.tensordot


def _rows(x: np.ndarray) -> int:
    """The number of rows of ``x`` with all but its last axis folded together."""
    return math.prod(x.shape[:-1])


def _matmul_op(name: str, x1: Any, x2: Any, a: Any, b: Any, value: np.ndarray) -> Variable:
    """Record ``value = matmul(a, b)`` (also dot where it agrees with matmul)."""
    if value.dtype.kind in "cO":  # complex or object: refused if a gradient is needed
        real_result(name, value, x1, x2)
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    n1, n2 = node_of(x1), node_of(x2)
    if a_nd == 2 and b_nd == 2:  # the common case, without promotion
        return op(
            name,
            value,
            contrib_of(
                x1,
                lambda g: _matmul(g, b.T),
                vjp=lambda g, out: matmul(g, swapaxes(graph_value(n2, b), -1, -2)),
            ),
            contrib_of(
                x2,
                lambda g: _matmul(a.T, g),
                vjp=lambda g, out: matmul(swapaxes(graph_value(n1, a), -1, -2), g),
            ),
        )

    # Promote 1-d operands as numpy does, and put their axes back into g.
    a2 = a[None, :] if a_nd == 1 else a
    b2 = b[:, None] if b_nd == 1 else b
    k, m = a2.shape[-1], b2.shape[-1]

    def g2(g: np.ndarray) -> np.ndarray:
        if a_nd == 1:
            g = np.expand_dims(g, -2 if b_nd > 1 else -1)
        if b_nd == 1:
            g = np.expand_dims(g, -1)
        return g

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        gg = g2(g)
        if b2.ndim == 2:  # b has no batch: one product over a's folded batch
            d = _matmul(gg.reshape(_rows(gg), m), b2.T).reshape((*gg.shape[:-1], k))
        elif a2.ndim == 2:  # a has no batch: contract g and b over batch and last axes
            axes = [*range(gg.ndim - 2), gg.ndim - 1]
            d = _tensordot(gg, b2, axes=(axes, axes))
        else:
            d = _matmul(gg, np.swapaxes(b2, -1, -2))
        _add(out, unbroadcast(d, a2.shape).reshape(out.shape), out=out)

    def d_b(g: np.ndarray, out: np.ndarray) -> None:
        gg = g2(g)
        if b2.ndim == 2:  # b has no batch: fold a's batch into its rows
            d = _matmul(a2.reshape(_rows(a2), k).T, gg.reshape(_rows(gg), m))
        elif a2.ndim == 2:
            d = _matmul(a2.T, gg)
        else:
            d = _matmul(np.swapaxes(a2, -1, -2), gg)
        _add(out, unbroadcast(d, b2.shape).reshape(out.shape), out=out)

    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    g_shape = (*batch, a2.shape[-2], m)  # g with the promoted axes put back

    def vjp_a(g: Any, out: Any) -> Any:
        b2v = reshape(graph_value(n2, b), b2.shape)
        d = matmul(reshape(g, g_shape), swapaxes(b2v, -1, -2))
        return reshape(sum_to(d, a2.shape), np.shape(a))

    def vjp_b(g: Any, out: Any) -> Any:
        a2v = reshape(graph_value(n1, a), a2.shape)
        d = matmul(swapaxes(a2v, -1, -2), reshape(g, g_shape))
        return reshape(sum_to(d, b2.shape), np.shape(b))

    return op(name, value, param_of(x1, d_a, vjp=vjp_a), param_of(x2, d_b, vjp=vjp_b))


def _tensordot_op(
    name: str, x1: Any, x2: Any, a: Any, b: Any, value: Any, ia: list[int], ib: list[int]
) -> Variable:
    """Record ``value``, the sum over ``a``'s axes ``ia`` paired with ``b``'s axes ``ib``,
    with the free axes of ``a`` and then of ``b`` as its axes (``numpy.tensordot``)."""
    if value.dtype.kind in "cO":  # complex or object: refused if a gradient is needed
        real_result(name, value, x1, x2)
    fa = [i for i in range(np.ndim(a)) if i not in ia]
    fb = [i for i in range(np.ndim(b)) if i not in ib]
    g_a = list(range(len(fa)))  # the axes of g that come from a, then those from b
    g_b = list(range(len(fa), len(fa) + len(fb)))
    # Contracting g with b leaves a's free axes, then a's summed axes in the order in
    # which their partners appear in b; contracting a with g leaves b's summed axes in
    # the order of their partners in a, then b's free axes. Undo those orders.
    by_b = sorted(range(len(ib)), key=lambda j: ib[j])
    by_a = sorted(range(len(ia)), key=lambda j: ia[j])
    to_a = tuple(np.argsort(fa + [ia[j] for j in by_b]).tolist())
    to_b = tuple(np.argsort([ib[j] for j in by_a] + fb).tolist())

    def d_a(g: np.ndarray) -> Any:
        return _tensordot(g, b, axes=(g_b, fb)).transpose(to_a)

    def d_b(g: np.ndarray) -> Any:
        return _tensordot(a, g, axes=(fa, g_a)).transpose(to_b)

    n1, n2 = node_of(x1), node_of(x2)

    def vjp_a(g: Any, out: Any) -> Any:
        return transpose(tensordot(g, graph_value(n2, b), axes=(g_b, fb)), to_a)

    def vjp_b(g: Any, out: Any) -> Any:
        return transpose(tensordot(graph_value(n1, a), g, axes=(fa, g_a)), to_b)

    return op(name, value, contrib_of(x1, d_a, vjp=vjp_a), contrib_of(x2, d_b, vjp=vjp_b))


def _check_pairs(name: str, a: Any, b: Any, ia: list[int], ib: list[int], detail: str) -> None:
    sa, sb = np.shape(a), np.shape(b)
    if any(sa[i] != sb[j] for i, j in zip(ia, ib, strict=True)):
        raise shape_mismatch(name, np.asarray(a), np.asarray(b), detail=detail)


def _matmul_shape(sa: tuple[int, ...], sb: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of ``a @ b`` for operands of shapes ``sa`` and ``sb`` (at least 1-d), or
    None if they do not match."""
    ra = (1, *sa) if len(sa) == 1 else sa
    rb = (*sb, 1) if len(sb) == 1 else sb
    if ra[-1] != rb[-2]:
        return None
    try:
        batch = np.broadcast_shapes(ra[:-2], rb[:-2])
    except ValueError:
        return None
    tail = (() if len(sa) == 1 else (ra[-2],)) + (() if len(sb) == 1 else (rb[-1],))
    return (*batch, *tail)


def matmul(x1: Operand, x2: Operand) -> Variable:
    """Matrix product with numpy's rules: 1-d operands are promoted to a row (left) or a
    column (right) and the added axis removed; leading axes broadcast as a batch.

    Gradient:
        ``dx1 = g @ x2^T`` and ``dx2 = x1^T @ g`` (transposing the last two axes),
        summed over broadcast batch axes.
    """
    a, b = values_of(x1, x2, name="matmul")
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        raise shape_mismatch(
            "matmul",
            np.asarray(a),
            np.asarray(b),
            detail="matmul does not take 0-d operands; use multiply (`*`) for scalars.",
        )
    if _ledger.open_budgets:  # a scope has a budget: check the output's size first
        shape = _matmul_shape(np.shape(a), np.shape(b))
        if shape is not None:  # otherwise _matmul raises the ShapeError below
            reserve_output("matmul", shape, np.result_type(a, b))
    try:
        value = _matmul(a, b)
    except ValueError:
        raise shape_mismatch(
            "matmul",
            a,
            b,
            detail="The last axis of x1 must equal the second-to-last of x2 (the only axis "
            "of a 1-d operand), and leading (batch) axes must broadcast.",
        ) from None
    return _matmul_op("matmul", x1, x2, a, b, value)


def dot(a: Operand, b: Operand) -> Variable:
    """``numpy.dot``: the product of 0-d operands is ``a * b``; otherwise the sum over
    the last axis of ``a`` and the second-to-last axis of ``b`` (its only axis if 1-d),
    with the remaining axes of ``a`` then of ``b`` as the result's axes. Unlike
    :func:`matmul`, leading axes of both operands are kept, not broadcast.

    Gradient:
        ``da = tensordot(g, b)`` over ``b``'s free axes and ``db = tensordot(a, g)``
        over ``a``'s free axes, transposed back to each operand's axis order (for
        matrices, ``da = g @ b^T``, ``db = a^T @ g``).
    """
    x, y = values_of(a, b, name="dot")
    na, nb = np.ndim(x), np.ndim(y)
    ia = [na - 1] if na and nb else []
    ib = [max(nb - 2, 0)] if na and nb else []
    _check_pairs(
        "dot",
        x,
        y,
        ia,
        ib,
        "The last axis of a must equal the second-to-last axis of b (its only axis if b is 1-d).",
    )
    value = np.dot(x, y)
    if na and nb and (na == 1 or nb <= 2):  # where dot and matmul agree
        return _matmul_op("dot", a, b, x, y, value)
    return _tensordot_op("dot", a, b, x, y, value, ia, ib)


def vdot(a: Operand, b: Operand) -> Variable:
    """``numpy.vdot``: the dot product of ``a`` and ``b`` flattened (they must have the
    same number of elements), ``sum(conj(a) * b)``; a 0-d result.

    Gradient:
        ``da = conj(g) * b`` and ``db = g * a``, each reshaped to the other's shape
        (``conj`` does nothing to real values; PyTorch's rule for ``torch.vdot``).
    """
    x, y = values_of(a, b, name="vdot")
    if np.size(x) != np.size(y):
        raise shape_mismatch(
            "vdot",
            np.asarray(x),
            np.asarray(y),
            detail="vdot flattens both operands, so they must have the same number of elements.",
        )
    value = np.vdot(x, y)
    real_result("vdot", value, a, b)
    sa, sb = np.shape(x), np.shape(y)
    na, nb = node_of(a), node_of(b)
    return op(
        "vdot",
        value,
        contrib_of(
            a,
            lambda g: np.conj(g) * np.reshape(y, sa),
            vjp=lambda g, out: conj(g) * reshape(graph_value(nb, y), sa),
        ),
        contrib_of(
            b,
            lambda g: g * np.reshape(x, sb),
            vjp=lambda g, out: g * reshape(graph_value(na, x), sb),
        ),
    )


def inner(a: Operand, b: Operand) -> Variable:
    """``numpy.inner``: the sum over the last axes of ``a`` and ``b`` (``a * b`` if either
    is 0-d); the result has the other axes of ``a`` then of ``b``.

    Gradient:
        ``da = tensordot(g, b)`` and ``db = tensordot(g, a)`` over the other operand's
        leading axes.
    """
    x, y = values_of(a, b, name="inner")
    na, nb = np.ndim(x), np.ndim(y)
    ia = [na - 1] if na and nb else []
    ib = [nb - 1] if na and nb else []
    _check_pairs("inner", x, y, ia, ib, "The last axes of a and b must have the same length.")
    return _tensordot_op("inner", a, b, x, y, np.inner(x, y), ia, ib)


def outer(a: Operand, b: Operand) -> Variable:
    """``numpy.outer``: ``out[i, j] = a.ravel()[i] * b.ravel()[j]``, a 2-d result.

    Gradient:
        ``da = (g @ b.ravel()).reshape(a.shape)``, ``db = (a.ravel() @ g).reshape(b.shape)``.
    """
    x, y = values_of(a, b, name="outer")
    value = np.outer(x, y)
    real_result("outer", value, a, b)
    xf, yf = np.ravel(x), np.ravel(y)
    sa, sb = np.shape(x), np.shape(y)
    na, nb = node_of(a), node_of(b)
    return op(
        "outer",
        value,
        contrib_of(
            a,
            lambda g: _matmul(g, yf).reshape(sa),
            vjp=lambda g, out: reshape(matmul(g, reshape(graph_value(nb, y), -1)), sa),
        ),
        contrib_of(
            b,
            lambda g: _matmul(xf, g).reshape(sb),
            vjp=lambda g, out: reshape(matmul(reshape(graph_value(na, x), -1), g), sb),
        ),
    )


def _tensordot_axes(axes: Any, na: int, nb: int) -> tuple[list[int], list[int]]:
    """``axes`` as in ``numpy.tensordot``: N (a's last N with b's first N) or two lists."""
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        ia, ib = list(range(-n, 0)), list(range(n))
    else:
        try:
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise LampyValueError(
                f"tensordot: axes must be an int or a pair of axis sequences, got {axes!r}."
            ) from None
        ia = [operator.index(i) for i in axes_a] if np.ndim(axes_a) else [operator.index(axes_a)]
        ib = [operator.index(i) for i in axes_b] if np.ndim(axes_b) else [operator.index(axes_b)]
    if len(ia) != len(ib):
        raise ShapeError(
            f"tensordot: axes {axes!r} pair {len(ia)} axes of a with {len(ib)} axes of b; "
            "give the same number of axes for each."
        )
    for which, ax, nd in (("a", ia, na), ("b", ib, nb)):
        for i in ax:
            if not -nd <= i < nd:
                raise ShapeError(
                    f"tensordot: axis {i} is out of bounds for operand {which} with {nd} "
                    f"dimensions (axes={axes!r})."
                )
        ax[:] = [i % nd for i in ax]
        if len(set(ax)) != len(ax):
            raise ShapeError(f"tensordot: axes {axes!r} repeat an axis of operand {which}.")
    return ia, ib


def tensordot(a: Operand, b: Operand, axes: Any = 2) -> Variable:
    """``numpy.tensordot``: the sum of products over the axes ``axes`` pairs up.

    Args:
        a: The first operand.
        b: The second operand.
        axes: An int N (the last N axes of ``a`` with the first N of ``b``) or a pair of
            sequences (or ints) of axes of ``a`` and of ``b``, of equal lengths.

    Gradient:
        ``da = tensordot(g, b)`` over ``b``'s free axes, ``db = tensordot(a, g)`` over
        ``a``'s free axes, each transposed back to the operand's axis order.
    """
    x, y = values_of(a, b, name="tensordot")
    ia, ib = _tensordot_axes(axes, np.ndim(x), np.ndim(y))
    _check_pairs(
        "tensordot", x, y, ia, ib, f"The summed axes {ia} of a and {ib} of b must match in length."
    )
    value = _tensordot(x, y, axes=(ia, ib))
    return _tensordot_op("tensordot", a, b, x, y, value, ia, ib)


def kron(a: Operand, b: Operand) -> Variable:
    """``numpy.kron``: the Kronecker product, blocks ``a[i, j] * b`` (the operand with
    fewer axes gets leading length-1 axes).

    Gradient:
        With ``g`` viewed as ``(a0, b0, a1, b1, ...)``, ``da`` contracts it with ``b``
        over the ``b`` axes and ``db`` contracts it with ``a`` over the ``a`` axes.
    """
    x, y = values_of(a, b, name="kron")
    value = np.kron(x, y)
    real_result("kron", value, a, b)
    nd = max(np.ndim(x), np.ndim(y))
    sa = (1,) * (nd - np.ndim(x)) + np.shape(x)
    sb = (1,) * (nd - np.ndim(y)) + np.shape(y)
    paired = tuple(n for pair in zip(sa, sb, strict=True) for n in pair)
    x_nd, y_nd = np.reshape(x, sa), np.reshape(y, sb)
    even, odd, every = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2)), list(range(nd))

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        d = _tensordot(g.reshape(paired), y_nd, axes=(odd, every))
        _add(out, d.reshape(out.shape), out=out)

    def d_b(g: np.ndarray, out: np.ndarray) -> None:
        d = _tensordot(g.reshape(paired), x_nd, axes=(even, every))
        _add(out, d.reshape(out.shape), out=out)

    n1, n2, shape_a, shape_b = node_of(a), node_of(b), np.shape(x), np.shape(y)

    def vjp_a(g: Any, out: Any) -> Any:
        yv = reshape(graph_value(n2, y), sb)
        return reshape(tensordot(reshape(g, paired), yv, axes=(odd, every)), shape_a)

    def vjp_b(g: Any, out: Any) -> Any:
        xv = reshape(graph_value(n1, x), sa)
        return reshape(tensordot(reshape(g, paired), xv, axes=(even, every)), shape_b)

    return op("kron", value, param_of(a, d_a, vjp=vjp_a), param_of(b, d_b, vjp=vjp_b))


def _vectors(name: str, x: np.ndarray, axis: int, which: str) -> np.ndarray:
    """``x`` with its vectors (2 or 3 components along ``axis``) on the last axis."""
    if x.ndim == 0:
        raise ShapeError(f"{name}: {which} must hold vectors, got a 0-d array.")
    ax = one_axis(name, axis, x.ndim, f"axis{which}")
    if x.shape[ax] not in (2, 3):
        raise ShapeError(
            f"{name}: the vectors of {which} (axis {axis} of shape {x.shape}) have "
            f"{x.shape[ax]} components; cross products take vectors of 2 or 3."
        )
    return np.moveaxis(x, ax, -1)


def _as_3d(v: np.ndarray) -> np.ndarray:
    """Vectors of 2 components as 3-vectors with a zero third component."""
    if v.shape[-1] == 3:
        return v
    return np.concatenate([v, np.zeros((*v.shape[:-1], 1), v.dtype)], axis=-1)


def cross(
    a: Operand,
    b: Operand,
    axisa: int = -1,
    axisb: int = -1,
    axisc: int = -1,
    axis: int | None = None,
) -> Variable:
    """The cross product of (arrays of) vectors of 3 (or, deprecated by numpy 2, 2)
    components, as ``numpy.cross``; the vectors' batch axes broadcast.

    Args:
        a: The first vectors, along ``axisa``.
        b: The second vectors, along ``axisb``.
        axisa: The axis of ``a`` holding the components.
        axisb: The axis of ``b`` holding the components.
        axisc: The axis of the result holding the components (ignored when both inputs
            are 2-vectors: the result is then the scalar z-component).
        axis: If given, used for ``axisa``, ``axisb`` and ``axisc`` alike.

    Raises:
        ShapeError: if the vectors do not have 2 or 3 components, an axis is out of
            range, or the batch axes do not broadcast.

    Gradient:
        ``da = b x g`` and ``db = g x a`` (from ``g . (a x b) = a . (b x g) = b . (g x
        a)``), 2-vectors taken with a zero third component and only their two
        components' gradients kept; summed over broadcast axes.
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = values_of(a, b, name="cross")
    am = _vectors("cross", np.asarray(x), axisa, "a")
    bm = _vectors("cross", np.asarray(y), axisb, "b")
    try:
        batch = np.broadcast_shapes(am.shape[:-1], bm.shape[:-1])
    except ValueError:
        raise ShapeError(
            f"cross: the vectors' other axes {am.shape[:-1]} (a) and {bm.shape[:-1]} (b) do "
            "not broadcast together."
        ) from None
    scalar = am.shape[-1] == bm.shape[-1] == 2
    if not scalar:
        one_axis("cross", axisc, len(batch) + 1, "axisc")
    try:
        value = np.cross(x, y, axisa, axisb, axisc)  # numpy's value (and its warnings)
    except ValueError as e:  # numpy >= 2.5 refuses the 2-vectors numpy 2.0 deprecated
        raise ShapeError(f"cross: {e} Pad 2-vectors with a zero third component.") from None
    real_result("cross", value, a, b)
    na, nb = am.shape[-1], bm.shape[-1]

    def g3(g: np.ndarray) -> np.ndarray:
        """``g`` as 3-vectors on the last axis."""
        if scalar:
            z = np.zeros((*g.shape, 3), g.dtype)
            z[..., 2] = g
            return z
        return np.moveaxis(g, axisc, -1)

    def d_a(g: np.ndarray) -> Any:
        d = np.cross(_as_3d(bm).astype(g.dtype, copy=False), g3(g))[..., :na]
        return np.moveaxis(unbroadcast(d, am.shape), -1, axisa)

    def d_b(g: np.ndarray) -> Any:
        d = np.cross(g3(g), _as_3d(am).astype(g.dtype, copy=False))[..., :nb]
        return np.moveaxis(unbroadcast(d, bm.shape), -1, axisb)

    n1, n2 = node_of(a), node_of(b)

    def vectors(node: Any, v: Any, ax: int) -> Any:
        """An operand's vectors in the graph, on the last axis, as 3-vectors."""
        m = moveaxis(graph_value(node, v), ax, -1)
        if m.shape[-1] == 3:
            return m
        return concatenate([m, np.zeros((*m.shape[:-1], 1), m.dtype)], axis=-1)

    def g3_vjp(g: Any) -> Any:
        """``g3`` with lampy ops."""
        if not scalar:
            return moveaxis(g, axisc, -1)
        z = reshape(g, (*np.shape(g), 1))
        return concatenate([np.zeros((*np.shape(g), 2), z.dtype), z], axis=-1)

    def vjp_a(g: Any, out: Any) -> Any:
        d = cross(vectors(n2, y, axisb), g3_vjp(g))[..., :na]
        return moveaxis(sum_to(d, am.shape), -1, axisa)

    def vjp_b(g: Any, out: Any) -> Any:
        d = cross(g3_vjp(g), vectors(n1, x, axisa))[..., :nb]
        return moveaxis(sum_to(d, bm.shape), -1, axisb)

    return op(
        "cross",
        value,
        param_of(a, contribution(d_a, fresh=False), vjp=vjp_a),
        param_of(b, contribution(d_b, fresh=False), vjp=vjp_b),
    )


__all__ = ["cross", "dot", "inner", "kron", "matmul", "outer", "tensordot", "vdot"]
