"""Inverses and linear systems: inv, pinv, solve, lstsq, matrix_power, multi_dot."""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from lampy._errors import ShapeError
from lampy.linalg._common import graph_mH, matrix_value, mH, mT, sym
from lampy.opkit import (
    OWN,
    Lazy,
    Operand,
    SharedInBackward,
    Variable,
    complex_rule,
    contrib_of,
    graph_value,
    lifted,
    needs_grad,
    node_of,
    op,
    param_of,
    real_result,
    unbroadcast,
    value_of,
)
from lampy.ops import matmul, matrix_transpose, reshape

_add, _subtract, _matmul = np.add, np.subtract, np.matmul
_NOVALUE: Any = getattr(np, "_NoValue", object())


def inv(a: Operand) -> Variable:
    """Inverse of a square matrix, batched over leading axes (``numpy.linalg.inv``).

    Raises ``numpy.linalg.LinAlgError`` for a singular matrix, as numpy does.

    Gradient:
        ``da = -X^T g X^T`` with ``X = inv(a)`` (Giles 2008, Extended collection of
        matrix derivative results).
    """
    arr = matrix_value("inv", a, square=True, complex_ok=True)
    x = np.linalg.inv(arr)

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        xt = mT(x)
        _subtract(out, xt @ g @ xt, out=out)

    def vjp(g: Any, out: Any) -> Any:
        xt = matrix_transpose(lifted(out, x))
        return -matmul(matmul(xt, g), xt)

    return op("inv", x, param_of(a, d_a, vjp=vjp))


def _pinv_backward(a: np.ndarray, p: np.ndarray, gp: np.ndarray, col: bool, row: bool) -> Any:
    """Gradient of ``p = pinv(a)`` for a locally constant rank (Golub & Pereyra 1973):
    ``-P^H gP P^H + (I - A P) gP^H P P^H + P^H P gP^H (I - P A)``; the second term
    vanishes for full row rank (``row``), the third for full column rank (``col``)."""
    pt, gpt = mH(p), mH(gp)
    ga = -(pt @ gp @ pt)
    if not row:
        u = gpt @ (p @ pt)
        ga += u - a @ (p @ u)
    if not col:
        v = pt @ (p @ gpt)
        ga += v - v @ (p @ a)
    return ga


def _pinv_backward_graph(a: Any, p: Any, gp: Any, col: bool, row: bool) -> Any:
    """:func:`_pinv_backward` with lampy ops, for vjps (``a``, ``p``, ``gp`` Variables of
    the graph or constants)."""
    pt, gpt = graph_mH(p), graph_mH(gp)
    ga = -matmul(matmul(pt, gp), pt)
    if not row:
        u = matmul(gpt, matmul(p, pt))
        ga = ga + u - matmul(a, matmul(p, u))
    if not col:
        v = matmul(pt, matmul(p, gpt))
        ga = ga + v - matmul(v, matmul(p, a))
    return ga


def pinv(
    a: Operand, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NOVALUE
) -> Variable:
    """Moore-Penrose pseudo-inverse through the SVD, batched (``numpy.linalg.pinv``).

    Singular values at most ``rcond`` (or ``rtol``) times the largest are treated as
    zero, with numpy's defaults: ``rcond=1e-15``, or ``max(M, N) * eps`` if
    ``rtol=None`` is passed.

    Gradient:
        For a rank that does not change near ``a`` (Golub & Pereyra 1973, The
        differentiation of pseudo-inverses and nonlinear least squares problems):
        ``da = -P^H g P^H + (I - A P) g^H P P^H + P^H P g^H (I - P A)``, ``P = pinv(a)``
        (``^H`` the conjugate transpose, ``^T`` for a real ``a``). The last two terms
        vanish for full column / row rank. With ``hermitian=True`` only the lower
        triangle is read and the gradient is symmetrised (its Hermitian part), as for
        :func:`eigh`.
    """
    arr = matrix_value("pinv", a, complex_ok=True)
    if rcond is None:
        if rtol is _NOVALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(arr.shape[-2:]) * np.finfo(arr.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NOVALUE:
        raise ValueError("pinv: `rtol` and `rcond` can't be both set.")
    rcond = np.asarray(rcond)
    m, n = arr.shape[-2:]
    if arr.size == 0:
        empty = np.empty((*arr.shape[:-2], n, m), arr.dtype)
        return op("pinv", empty, param_of(a, _zero_gradient, vjp=_no_vjp))
    # numpy's own computation (the SVD of conj(a)), kept so that the rank is known to the
    # gradient
    conj_a = arr.conj() if arr.dtype.kind == "c" else arr
    u, s, vt = np.linalg.svd(conj_a, full_matrices=False, hermitian=hermitian)
    cutoff = rcond[..., None] * np.amax(s, axis=-1, keepdims=True)
    large = s > cutoff
    s = np.divide(1, s, where=large, out=s)
    s[~large] = 0
    p = _matmul(mT(vt), np.multiply(s[..., None], mT(u)))
    full = bool(np.all(large))

    def d_a(g: np.ndarray) -> Any:
        ga = _pinv_backward(arr, p, g, col=full and m >= n, row=full and m <= n)
        return sym(ga) if hermitian else ga

    n_a = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        av = graph_value(n_a, arr)
        ga = _pinv_backward_graph(av, lifted(out, p), g, col=full and m >= n, row=full and m <= n)
        return (ga + graph_mH(ga)) * 0.5 if hermitian else ga

    return op("pinv", p, contrib_of(a, d_a, fresh=False, vjp=vjp))


def _zero_gradient(g: np.ndarray, out: np.ndarray) -> None:
    """The closure of a result that does not depend on its input's values."""


def _no_vjp(g: Any, out: Any) -> None:
    """The vjp of a result that does not depend on its input's values (None: zero)."""


def solve(a: Operand, b: Operand) -> Variable:
    """Solve ``a @ x = b`` for ``x``, batched (``numpy.linalg.solve``, numpy 2 rules).

    ``b`` is one vector when ``b.ndim == 1`` (shape ``(M,)``, the solution has
    shape ``(..., M)``); otherwise it is a stack of matrices ``(..., M, K)`` whose batch
    axes broadcast with ``a``'s.

    Gradient:
        ``db = solve(a^T, g)``, ``da = -db x^T`` (each summed over broadcast batch axes).
    """
    arr = matrix_value("solve", a, square=True, complex_ok=True)
    rhs = np.asarray(value_of(b, name="solve"))
    m = arr.shape[-1]
    vector = rhs.ndim == 1
    if vector and rhs.shape[0] != m:
        raise ShapeError(
            f"solve: a has shape {arr.shape}, so the vector b must have length {m}, got "
            f"shape {rhs.shape}."
        )
    if not vector:
        if rhs.ndim < 2 or rhs.shape[-2] != m:
            raise ShapeError(
                f"solve: shapes {arr.shape} and {rhs.shape} do not fit together: b must be "
                f"a vector of shape ({m},) or a stack of matrices of shape (..., {m}, K). "
                f"(numpy 2 treats b as a vector only when b.ndim == 1; for a stack of "
                f"vectors pass b[..., None] and take x[..., 0].)"
            )
        try:
            np.broadcast_shapes(arr.shape[:-2], rhs.shape[:-2])
        except ValueError:
            raise ShapeError(
                f"solve: the batch axes of a {arr.shape[:-2]} and of b {rhs.shape[:-2]} do "
                "not broadcast together."
            ) from None
    x = np.linalg.solve(arr, rhs)
    real_result("solve", x, a, b)
    a_shape, b_shape = arr.shape, rhs.shape

    def solve_t(g: np.ndarray) -> np.ndarray:
        if vector:
            return np.linalg.solve(mT(arr), g[..., None])[..., 0]
        return np.linalg.solve(mT(arr), g)

    shared = SharedInBackward(solve_t, needs_grad(a) + needs_grad(b))

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        gb = shared(g)
        ga = gb[..., :, None] * x[..., None, :] if vector else gb @ mT(x)
        _subtract(out, unbroadcast(ga, a_shape), out=out)

    def d_b(g: np.ndarray) -> Any:
        return unbroadcast(shared(g), b_shape)

    n_a = node_of(a)

    def vjp_b(g: Any) -> Any:  # solve(a^T, g), recorded (the engine sums broadcast axes)
        at = matrix_transpose(graph_value(n_a, arr))
        if vector:
            return reshape(solve(at, reshape(g, (*np.shape(g), 1))), np.shape(g))
        return solve(at, g)

    def vjp_a(g: Any, out: Any) -> Any:
        gb, xv = vjp_b(g), lifted(out, x)
        if vector:
            m = np.shape(x)[-1]
            return -(reshape(gb, (*np.shape(x), 1)) * reshape(xv, (*np.shape(x)[:-1], 1, m)))
        return -matmul(gb, matrix_transpose(xv))

    return op(
        "solve",
        x,
        param_of(a, d_a, vjp=vjp_a),
        contrib_of(b, d_b, fresh=False, vjp=lambda g, out: vjp_b(g)),
    )


def lstsq(
    a: Operand, b: Operand, rcond: Any = None
) -> tuple[Variable, np.ndarray, Any, np.ndarray]:
    """Least-squares solution of ``a @ x = b`` (``numpy.linalg.lstsq``; 2-d ``a`` only).

    Returns ``(x, residuals, rank, s)`` as numpy does: ``x`` is a Variable; the squared
    residuals, the rank of ``a`` and its singular values are constant numpy values.

    Gradient:
        ``x = P b`` with ``P = pinv(a)`` cut at ``rcond``: ``db = P^H g`` and ``da`` the
        pseudo-inverse gradient (Golub & Pereyra 1973) contracted with ``g b^H``:
        ``-P^H g x^H + r g^H P P^H + P^H x (g^H - g^H P A)``, ``r = b - a x`` (``^H``
        the conjugate transpose, ``^T`` for real values). Valid where the rank does not
        change. For full column rank it is ``da = r y^H - a y x^H``, ``db = a y`` with
        ``y = (a^H a)^{-1} g``, computed through ``R`` of ``a = QR``
        (``y = R^{-1} R^{-H} g``) rather than ``pinv(a)``.
    """
    arr = np.asarray(value_of(a, name="lstsq"))
    rhs = np.asarray(value_of(b, name="lstsq"))
    if arr.ndim != 2 or rhs.ndim not in (1, 2) or rhs.shape[0] != arr.shape[0]:
        raise ShapeError(
            f"lstsq: a must be a matrix (M, N) and b of shape (M,) or (M, K) with the same "
            f"M, got shapes {arr.shape} and {rhs.shape}. numpy.linalg.lstsq is not batched."
        )
    x, residuals, rank, s = np.linalg.lstsq(arr, rhs, rcond=rcond)
    real_result("lstsq", x, a, b)
    m, n = arr.shape
    cut = np.finfo(np.float64).eps * max(m, n) if rcond is None else rcond
    vector = rhs.ndim == 1
    b2 = rhs[:, None] if vector else rhs
    x2 = x[:, None] if vector else x

    def as_matrix(g: np.ndarray) -> np.ndarray:
        return g[:, None] if vector else g

    def as_b(gb: np.ndarray) -> np.ndarray:
        return gb[:, 0] if vector else gb

    users = needs_grad(a) + needs_grad(b)
    if rank == n > 0:  # full column rank: y = (a^T a)^{-1} g through a = QR, stably
        r_factor = Lazy(lambda: np.linalg.qr(arr, mode="r"))

        def normal_solve(g: np.ndarray) -> np.ndarray:
            r = r_factor()
            return np.linalg.solve(r, np.linalg.solve(mH(r), as_matrix(g)))

        y_of = SharedInBackward(normal_solve, users)

        def d_a(g: np.ndarray) -> Any:
            y = y_of(g)
            return (b2 - arr @ x2) @ mH(y) - (arr @ y) @ mH(x2)

        def d_b(g: np.ndarray) -> Any:
            return as_b(arr @ y_of(g))

    else:
        pinv_of_a = Lazy(lambda: np.linalg.pinv(arr, rcond=cut))

        def d_a(g: np.ndarray) -> Any:
            p, g2 = pinv_of_a(), as_matrix(g)
            pt, gt = mH(p), mH(g2)
            ga = (b2 - arr @ x2) @ ((gt @ p) @ pt) - (pt @ g2) @ mH(x2)
            ga += (pt @ x2) @ (gt - (gt @ p) @ arr)
            return ga

        def d_b(g: np.ndarray) -> Any:
            return as_b(mH(pinv_of_a()) @ as_matrix(g))

    n_a, n_b = node_of(a), node_of(b)

    def graph_parts(g: Any, out: Any) -> tuple[Any, Any, Any]:
        """``a``, ``g`` and ``x`` as matrices, with lampy ops."""
        g2 = reshape(g, (n, 1)) if vector else g
        x2v = lifted(out, x)
        return graph_value(n_a, arr), g2, reshape(x2v, (n, 1)) if vector else x2v

    def residual(av: Any, x2v: Any) -> Any:
        bv = graph_value(n_b, rhs)
        bv = reshape(bv, (m, 1)) if vector else bv
        return bv - matmul(av, x2v)

    def as_b_graph(gb: Any) -> Any:
        return reshape(gb, (m,)) if vector else gb

    if rank == n > 0:  # y = (a^T a)^{-1} g, through the normal equations

        def vjp_a(g: Any, out: Any) -> Any:
            av, g2, x2v = graph_parts(g, out)
            y = solve(matmul(graph_mH(av), av), g2)
            return matmul(residual(av, x2v), graph_mH(y)) - matmul(matmul(av, y), graph_mH(x2v))

        def vjp_b(g: Any, out: Any) -> Any:
            av, g2, _ = graph_parts(g, out)
            return as_b_graph(matmul(av, solve(matmul(graph_mH(av), av), g2)))

    else:

        def vjp_a(g: Any, out: Any) -> Any:
            av, g2, x2v = graph_parts(g, out)
            p = pinv(av, rcond=cut)
            pt, gt = graph_mH(p), graph_mH(g2)
            gtp = matmul(gt, p)
            ga = matmul(residual(av, x2v), matmul(gtp, pt)) - matmul(matmul(pt, g2), graph_mH(x2v))
            return ga + matmul(matmul(pt, x2v), gt - matmul(gtp, av))

        def vjp_b(g: Any, out: Any) -> Any:
            _, g2, _ = graph_parts(g, out)
            return as_b_graph(matmul(graph_mH(pinv(graph_value(n_a, arr), rcond=cut)), g2))

    xv = op(
        "lstsq",
        x,
        contrib_of(a, d_a, fresh=False, vjp=vjp_a),
        contrib_of(b, d_b, fresh=False, vjp=vjp_b),
    )
    return xv, residuals, rank, s


def matrix_power(a: Operand, n: int) -> Variable:
    """``a`` raised to the integer power ``n``, batched (``numpy.linalg.matrix_power``).

    ``n = 0`` gives identities (with a zero gradient); a negative ``n`` inverts ``a``
    first. Computed by repeated squaring, with numpy's order of products.

    Gradient:
        Reverse mode through the products: each ``C = A B`` passes ``g B^T`` to ``A``
        and ``A^T g`` to ``B``; for negative ``n`` the result then goes through
        :func:`inv`'s rule. Costs O(log |n|) matrix products.
    """
    arr = matrix_value("matrix_power", a, square=True, complex_ok=True)
    try:
        k = operator.index(n)
    except TypeError as e:
        raise TypeError(f"matrix_power: the exponent must be an integer, got {n!r}") from e
    if k == 0:
        value = np.empty_like(arr)
        value[...] = np.eye(arr.shape[-2], dtype=arr.dtype)
        return op("matrix_power", value, param_of(a, _zero_gradient, vjp=_no_vjp))
    base = np.linalg.inv(arr) if k < 0 else arr
    k = abs(k)
    # The products, as (left, right) indices into `vals`; vals[0] is the base.
    vals: list[np.ndarray] = [base]
    steps: list[tuple[int, int]] = []

    def mul(i: int, j: int) -> int:
        vals.append(_matmul(vals[i], vals[j]))
        steps.append((i, j))
        return len(vals) - 1

    if k == 1:
        result = 0
    elif k == 2:
        result = mul(0, 0)
    elif k == 3:
        result = mul(mul(0, 0), 0)
    else:
        z = res = -1
        while k > 0:
            z = 0 if z < 0 else mul(z, z)
            k, bit = divmod(k, 2)
            if bit:
                res = z if res < 0 else mul(res, z)
        result = res
    value = vals[result].copy() if result == 0 else vals[result]
    negative = operator.index(n) < 0

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        grads: list[Any] = [None] * len(vals)
        grads[result] = g
        for node in range(len(vals) - 1, 0, -1):
            gn = grads[node]
            if gn is None:
                continue
            i, j = steps[node - 1]
            left, right = gn @ mT(vals[j]), mT(vals[i]) @ gn
            grads[i] = left if grads[i] is None else grads[i] + left
            grads[j] = right if grads[j] is None else grads[j] + right
        gbase = grads[0]
        if negative:
            bt = mT(base)
            _subtract(out, bt @ gbase @ bt, out=out)
        else:
            _add(out, gbase, out=out)

    n_a = node_of(a)

    def vjp(g: Any, out: Any) -> Any:  # d_a with lampy ops, the products recomputed
        av = graph_value(n_a, arr)
        vv = [inv(av) if negative else av]
        for i, j in steps:
            vv.append(matmul(vv[i], vv[j]))
        grads: list[Any] = [None] * len(vv)
        grads[result] = g
        for node in range(len(vv) - 1, 0, -1):
            gn = grads[node]
            if gn is None:
                continue
            i, j = steps[node - 1]
            left = matmul(gn, matrix_transpose(vv[j]))
            right = matmul(matrix_transpose(vv[i]), gn)
            grads[i] = left if grads[i] is None else grads[i] + left
            grads[j] = right if grads[j] is None else grads[j] + right
        if negative:
            bt = matrix_transpose(vv[0])
            return -matmul(matmul(bt, grads[0]), bt)
        return grads[0]

    return op("matrix_power", value, param_of(a, d_a, vjp=vjp))


def _chain_order(dims: list[int]) -> np.ndarray:
    """numpy's optimal parenthesisation of a matrix chain (Cormen et al., 15.2)."""
    n = len(dims) - 1
    cost = np.zeros((n, n))
    split = np.empty((n, n), dtype=np.intp)
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i, j] = np.inf
            for k in range(i, j):
                q = cost[i, k] + cost[k + 1, j] + dims[i] * dims[k + 1] * dims[j + 1]
                if q < cost[i, j]:
                    cost[i, j] = q
                    split[i, j] = k
    return split


def multi_dot(arrays: Any) -> Variable:
    """Product of a chain of matrices in the cheapest order (``numpy.linalg.multi_dot``).

    The first array may be 1-d (a row vector) and the last 1-d (a column vector); the
    others must be 2-d. Built from :func:`lampy.matmul` in numpy's order, so the
    gradient is matmul's.

    Gradient:
        Through the recorded matmuls: each ``C = A B`` passes ``g B^T`` and ``A^T g``.
    """
    items = list(arrays)
    if len(items) < 2:
        raise ValueError("multi_dot: expecting at least two arrays.")
    ndims = [np.ndim(value_of(v, name="multi_dot")) for v in items]
    first, last = ndims[0], ndims[-1]
    if first not in (1, 2) or last not in (1, 2) or any(d != 2 for d in ndims[1:-1]):
        raise ShapeError(
            f"multi_dot: the arrays must be 2-d (the first and the last may be 1-d), got "
            f"{ndims} dimensions."
        )
    if first == 1:
        items[0] = reshape(items[0], (1, -1))
    if last == 1:
        items[-1] = reshape(items[-1], (-1, 1))
    shapes = [np.shape(value_of(v, name="multi_dot")) for v in items]
    for s1, s2 in itertools.pairwise(shapes):
        if s1[1] != s2[0]:
            raise ShapeError(
                f"multi_dot: shapes {[tuple(s) for s in shapes]} do not chain: each "
                "matrix's number of columns must equal the next one's number of rows."
            )
    if len(items) == 2:
        result = matmul(items[0], items[1])
    elif len(items) == 3:
        (a0, a1b0), (b1c0, c1) = shapes[0], shapes[2]
        if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0):
            result = matmul(matmul(items[0], items[1]), items[2])
        else:
            result = matmul(items[0], matmul(items[1], items[2]))
    else:
        split = _chain_order([s[0] for s in shapes] + [shapes[-1][1]])

        def chain(i: int, j: int) -> Any:
            if i == j:
                return items[i]
            return matmul(chain(i, split[i, j]), chain(split[i, j] + 1, j))

        result = chain(0, len(items) - 1)
    if first == 1 and last == 1:
        return reshape(result, ())
    if first == 1 or last == 1:
        return reshape(result, (-1,))
    return result


# Complex matrices: pinv's and lstsq's closures are written with conjugate transposes.
complex_rule(OWN, "pinv", "lstsq")

__all__ = ["inv", "lstsq", "matrix_power", "multi_dot", "pinv", "solve"]
