"""Functions of ``scipy.linalg`` (the ``lampy[scipy]`` extra): solve_triangular, sqrtm,
solve_sylvester. scipy computes the values one matrix at a time (its batching came only in
1.16; lampy supports scipy 1.10 on), batch axes broadcast here; the gradients are closed
forms that call the same scipy functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy._scipy import scipy_module
from lampy.linalg._common import matrix_value, mT
from lampy.opkit import (
    Operand,
    SharedInBackward,
    Variable,
    contrib_of,
    graph_value,
    lifted,
    needs_grad,
    node_of,
    op,
    real_result,
    unbroadcast,
    value_of,
)
from lampy.ops import matmul, matrix_transpose, reshape

_TRANS = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}  # real matrices: "C" is "T"


def _scipy(name: str) -> ModuleType:
    return scipy_module("scipy.linalg", f"lampy.linalg.{name}")


def _shape_error(name: str, err: ValueError, *arrays: np.ndarray) -> ShapeError:
    shapes = ", ".join(str(a.shape) for a in arrays)
    return ShapeError(f"lampy.linalg.{name}: shapes {shapes} do not fit together: {err}")


def _each_matrix(
    fn: Callable[..., Any],
    arrays: Sequence[np.ndarray],
    cores: Sequence[int],
    out_core: tuple[int, ...],
) -> np.ndarray:
    """``fn`` applied to one problem at a time: ``arrays[i]``'s last ``cores[i]`` axes are
    its core (a matrix, a vector), the axes before them are batch axes that broadcast
    together. ``out_core`` is a result's core shape, used only when the batch is empty.

    Raises:
        ValueError: if the batch axes do not broadcast (numpy's error).
    """
    batch = np.broadcast_shapes(
        *(a.shape[: a.ndim - c] for a, c in zip(arrays, cores, strict=True))
    )
    if not batch:
        return np.asarray(fn(*arrays))
    full = [
        np.broadcast_to(a, batch + a.shape[a.ndim - c :])
        for a, c in zip(arrays, cores, strict=True)
    ]
    out: np.ndarray | None = None
    for idx in np.ndindex(batch):
        r = np.asarray(fn(*(f[idx] for f in full)))
        if out is None:
            out = np.empty(batch + r.shape, r.dtype)
        out[idx] = r
    if out is None:  # an empty batch
        out = np.empty(batch + out_core, np.result_type(*arrays))
    return out


def solve_triangular(
    a: Operand,
    b: Operand,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Variable:
    """Solve ``op(a) @ x = b`` for a triangular ``a`` (``scipy.linalg.solve_triangular``),
    reading only the triangle ``lower`` selects (and not the diagonal with
    ``unit_diagonal``); ``op(a)`` is ``a`` for ``trans`` 0 / ``"N"``, ``a^T`` for 1 /
    ``"T"`` / ``"C"``. ``b`` is a vector when 1-d, else a stack ``(..., M, K)`` whose
    batch axes broadcast with ``a``'s. ``overwrite_b`` is accepted and ignored (lampy
    never writes into an operand).

    Raises:
        ShapeError: if the shapes do not fit.
        LampyValueError: for an unknown ``trans``.
        numpy.linalg.LinAlgError: for a singular ``a`` (scipy's error).

    Gradient:
        With ``y = solve_triangular(a, g, trans=1 - trans)`` (``op(a)^T y = g``):
        ``db = y``; ``da = -y x^T`` (``-x y^T`` for ``trans=1``), kept on the triangle
        that was read: the entries the value does not depend on get 0.
    """
    if trans not in _TRANS:
        raise LampyValueError(
            f"lampy.linalg.solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}."
        )
    t = _TRANS[trans]
    arr = matrix_value("solve_triangular", a, square=True)
    rhs = np.asarray(value_of(b, name="solve_triangular"))
    sl = _scipy("solve_triangular")

    def solve(m: np.ndarray, r: np.ndarray, tt: int) -> np.ndarray:
        def one(mi: np.ndarray, ri: np.ndarray) -> Any:
            return sl.solve_triangular(
                mi,
                ri,
                trans=tt,
                lower=lower,
                unit_diagonal=unit_diagonal,
                check_finite=check_finite,
            )

        return _each_matrix(one, (m, r), (2, min(r.ndim, 2)), r.shape[-2:])

    try:
        x = solve(arr, rhs, t)
    except ValueError as err:
        if rhs.ndim == 0 or "shape" in str(err):
            raise _shape_error("solve_triangular", err, arr, rhs) from None
        raise
    real_result("solve_triangular", x, a, b)
    vector, m = rhs.ndim == 1, arr.shape[-1]
    offset = (1 if unit_diagonal else 0) * (-1 if lower else 1)
    read = (
        np.tril(np.ones((m, m), bool), offset) if lower else np.triu(np.ones((m, m), bool), offset)
    )

    def solve_t(g: Any) -> Any:  # op(a)^T y = g; a vector g of a batch is one column each
        return solve(arr, g[..., None], 1 - t)[..., 0] if vector else solve(arr, g, 1 - t)

    shared = SharedInBackward(solve_t, needs_grad(a) + needs_grad(b))

    def d_a(g: Any) -> Any:
        y = shared(g)
        yx = y[..., :, None] * x[..., None, :] if vector else y @ mT(x)
        return unbroadcast(np.where(read, -(mT(yx) if t else yx), 0.0), arr.shape)

    def d_b(g: Any) -> Any:
        return unbroadcast(shared(g), rhs.shape)

    n_a = node_of(a)
    options = {"lower": lower, "unit_diagonal": unit_diagonal, "check_finite": check_finite}

    def vjp_b(g: Any, out: Any) -> Any:  # solve_t with lampy ops
        av = graph_value(n_a, arr)
        if vector:
            col = reshape(g, (*np.shape(g), 1))
            return reshape(solve_triangular(av, col, trans=1 - t, **options), np.shape(g))
        return solve_triangular(av, g, trans=1 - t, **options)

    def vjp_a(g: Any, out: Any) -> Any:
        y, xv = vjp_b(g, out), lifted(out, x)
        if vector:
            shape = np.shape(x)
            yx = reshape(y, (*shape, 1)) * reshape(xv, (*shape[:-1], 1, shape[-1]))
        else:
            yx = matmul(y, matrix_transpose(xv))
        return -(matrix_transpose(yx) if t else yx) * read

    return op(
        "solve_triangular",
        x,
        contrib_of(a, d_a, vjp=vjp_a),
        contrib_of(b, d_b, fresh=False, vjp=vjp_b),
    )


def sqrtm(a: Operand) -> Variable:
    """Principal square root ``X`` of a square matrix, ``X @ X = a``
    (``scipy.linalg.sqrtm``), batched over leading axes; float32 stays float32.

    Raises:
        DTypeError: if the root is complex (a negative real eigenvalue) while ``a``
            needs a gradient: lampy's gradients are real.

    Gradient:
        ``da = L`` solving the Sylvester equation ``X^T L + L X^T = g``
        (``scipy.linalg.solve_sylvester``), from ``dX X + X dX = da``.
    """
    arr = matrix_value("sqrtm", a, square=True, complex_ok=True)
    sl = _scipy("sqrtm")
    x = _each_matrix(sl.sqrtm, (arr,), (2,), arr.shape[-2:])
    real_result("sqrtm", x, a)

    def d_a(g: Any) -> Any:
        xt = mT(x)
        lg = _each_matrix(sl.solve_sylvester, (xt, xt, g), (2, 2, 2), g.shape[-2:])
        return lg.astype(x.dtype, copy=False)

    def vjp(g: Any, out: Any) -> Any:
        xt = matrix_transpose(lifted(out, x))
        return solve_sylvester(xt, xt, g)

    return op("sqrtm", x, contrib_of(a, d_a, vjp=vjp))


def solve_sylvester(a: Operand, b: Operand, q: Operand) -> Variable:
    """Solve the Sylvester equation ``a @ x + x @ b = q`` (``scipy.linalg.solve_sylvester``),
    ``a`` of shape ``(..., M, M)``, ``b`` ``(..., N, N)``, ``q`` ``(..., M, N)``, batch axes
    broadcast.

    Raises:
        ShapeError: if the shapes do not fit.

    Gradient:
        With ``L`` solving ``a^T L + L b^T = g``: ``dq = L``, ``da = -L x^T``,
        ``db = -x^T L`` (each summed over broadcast batch axes).
    """
    av = matrix_value("solve_sylvester", a, square=True, complex_ok=True)
    bv = matrix_value("solve_sylvester", b, square=True, complex_ok=True)
    qv = matrix_value("solve_sylvester", q, complex_ok=True)
    if qv.shape[-2:] != (av.shape[-1], bv.shape[-1]):
        raise ShapeError(
            f"lampy.linalg.solve_sylvester: q of shape {qv.shape} must be (..., "
            f"{av.shape[-1]}, {bv.shape[-1]}) for a of shape {av.shape} and b of shape "
            f"{bv.shape}."
        )
    sl = _scipy("solve_sylvester")

    def solve(m: np.ndarray, n: np.ndarray, r: np.ndarray) -> np.ndarray:
        # one dtype: scipy's solve_sylvester is wrong for a real `a` with a complex `b`
        dt = np.result_type(m, n, r)
        m, n, r = (np.asarray(v, dtype=dt) for v in (m, n, r))
        return _each_matrix(sl.solve_sylvester, (m, n, r), (2, 2, 2), r.shape[-2:])

    try:
        x = solve(av, bv, qv)
    except ValueError as err:
        raise _shape_error("solve_sylvester", err, av, bv, qv) from None
    real_result("solve_sylvester", x, a, b, q)
    users = needs_grad(a) + needs_grad(b) + needs_grad(q)
    shared = SharedInBackward(lambda g: solve(mT(av), mT(bv), g), users)
    n_a, n_b = node_of(a), node_of(b)

    def vjp_q(g: Any, out: Any) -> Any:  # L, with lampy ops
        at, bt = matrix_transpose(graph_value(n_a, av)), matrix_transpose(graph_value(n_b, bv))
        return solve_sylvester(at, bt, g)

    def vjp_a(g: Any, out: Any) -> Any:
        return -matmul(vjp_q(g, out), matrix_transpose(lifted(out, x)))

    def vjp_b(g: Any, out: Any) -> Any:
        return -matmul(matrix_transpose(lifted(out, x)), vjp_q(g, out))

    return op(
        "solve_sylvester",
        x,
        contrib_of(a, lambda g: unbroadcast(-(shared(g) @ mT(x)), av.shape), vjp=vjp_a),
        contrib_of(b, lambda g: unbroadcast(-(mT(x) @ shared(g)), bv.shape), vjp=vjp_b),
        contrib_of(q, lambda g: unbroadcast(shared(g), qv.shape), fresh=False, vjp=vjp_q),
    )


__all__ = ["solve_sylvester", "solve_triangular", "sqrtm"]
