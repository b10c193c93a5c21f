"""Op table.

Products and matrix structure: dot, vdot, inner, outer, tensordot, einsum, trace, diagonal,
diag, tril, triu, kron.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from hypothesis import strategies as st

from lampy.ops._diagonal import diag, diagonal, trace, tril, triu
from lampy.ops._einsum import einsum
from lampy.ops._products import cross, dot, inner, kron, outer, tensordot, vdot
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec

Shape = tuple[int, ...]


def _arrays(d: st.DrawFn, dtype: np.dtype[Any], *shapes: Shape) -> list[np.ndarray]:
    return [d(ls.arrays(s, dtype, min_value=-2, max_value=2)) for s in shapes]


def _side() -> st.SearchStrategy[int]:
    return st.integers(0, 3)


def _batch(max_dims: int = 2) -> st.SearchStrategy[Shape]:
    return ls.shapes(max_dims=max_dims, max_side=3)


def cross_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """3-vectors along drawn axes of ``a`` and ``b`` (whose other axes broadcast), the
    result's vectors along a drawn ``axisc``, or one ``axis`` for all three. (2-vectors,
    deprecated by numpy 2, are tested in test_products.py.)"""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        sa, sb = d(ls.broadcastable_shapes(2, max_dims=2, max_side=3))
        if d(st.booleans()):
            ax = d(st.integers(-(len(sa) + 1), len(sa)))
            shape = np.broadcast_shapes(sa, sb)
            sa = sb = shape
            ax_a = ax % (len(shape) + 1)
            a_shape = (*shape[:ax_a], 3, *shape[ax_a:])
            a = d(ls.arrays(a_shape, dtype, min_value=-3, max_value=3))
            b = d(ls.arrays(a_shape, dtype, min_value=-3, max_value=3))
            return [a, b], {"axis": ax}
        ia = d(st.integers(0, len(sa)))
        ib = d(st.integers(0, len(sb)))
        a = d(ls.arrays((*sa[:ia], 3, *sa[ia:]), dtype, min_value=-3, max_value=3))
        b = d(ls.arrays((*sb[:ib], 3, *sb[ib:]), dtype, min_value=-3, max_value=3))
        nc = len(np.broadcast_shapes(sa, sb)) + 1
        kwargs = {
            "axisa": ia - (len(sa) + 1) * d(st.integers(0, 1)),
            "axisb": ib - (len(sb) + 1) * d(st.integers(0, 1)),
            "axisc": d(st.integers(-nc, nc - 1)),
        }
        return [a, b], kwargs

    return build()


def _pair_inputs(
    shapes: st.SearchStrategy[tuple[Shape, Shape]],
) -> Any:
    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            s1, s2 = d(shapes)
            return _arrays(d, dtype, s1, s2), {}

        return build()

    return draw


@st.composite
def dot_shapes(d: st.DrawFn) -> tuple[Shape, Shape]:
    """Operand shapes for numpy.dot: 0-d with anything, vectors, matrices, N-d with M-d."""
    k = d(_side())
    kind = d(st.sampled_from(["scalar_left", "scalar_right", "vv", "mv", "vm", "nd"]))
    if kind == "scalar_left":
        return (), d(_batch(3))
    if kind == "scalar_right":
        return d(_batch(3)), ()
    if kind == "vv":
        return (k,), (k,)
    if kind == "mv":
        return (*d(_batch()), k), (k,)
    if kind == "vm":
        return (k,), (*d(_batch()), k, d(_side()))
    return (*d(_batch()), k), (*d(_batch(1)), k, d(_side()))


@st.composite
def vdot_shapes(d: st.DrawFn) -> tuple[Shape, Shape]:
    """Two shapes with the same number of elements."""
    s = d(_batch(3))
    size = int(np.prod(s))
    return s, d(st.sampled_from([s, s[::-1], (size,), (1, size)]))


@st.composite
def inner_shapes(d: st.DrawFn) -> tuple[Shape, Shape]:
    """Shapes whose last axes agree, or a 0-d operand on either side."""
    kind = d(st.sampled_from(["scalar_left", "scalar_right", "last"]))
    if kind == "scalar_left":
        return (), d(_batch())
    if kind == "scalar_right":
        return d(_batch()), ()
    k = d(st.integers(1, 3))
    return (*d(_batch()), k), (*d(_batch()), k)


def tensordot_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Operands with a random set of paired axes, given as an int or as axis lists."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        summed = d(st.lists(st.integers(1, 3), max_size=2))
        free_a, free_b = d(_batch()), d(_batch())
        if d(st.booleans()):  # axes=N: a's last N axes with b's first N
            return _arrays(d, dtype, (*free_a, *summed), (*summed, *free_b)), {"axes": len(summed)}
        sa = list(free_a) + summed
        sb = summed + list(free_b)
        perm_a = d(st.permutations(range(len(sa))))
        perm_b = d(st.permutations(range(len(sb))))
        shape_a = tuple(sa[i] for i in perm_a)
        shape_b = tuple(sb[i] for i in perm_b)
        # where each summed axis went after the permutations (negative spellings too)
        ia = [perm_a.index(len(free_a) + j) for j in range(len(summed))]
        ib = [perm_b.index(j) for j in range(len(summed))]
        if d(st.booleans()):
            ia = [i - len(sa) for i in ia]
        axes: Any = (ia, ib)
        if len(summed) == 1 and d(st.booleans()):
            axes = (ia[0], ib[0])
        return _arrays(d, dtype, shape_a, shape_b), {"axes": axes}

    return build()


@st.composite
def einsum_problems(
    d: st.DrawFn, max_operands: int = 3, max_labels: int = 4
) -> tuple[str, list[Shape]]:
    """Einsum subscripts numpy accepts, with operand shapes that fit them.

    One to ``max_operands`` operands; labels drawn from a few random letters (upper and
    lower case), repeated within an operand (diagonals) or not; a label's axis sometimes
    of length 1 to broadcast; an optional ellipsis with broadcastable batch shapes; an
    implicit output, or an explicit one with a subset of the labels in any order.
    """
    n = d(st.integers(1, max_operands))
    pool = d(st.lists(st.sampled_from(string.ascii_letters), min_size=1, max_size=4, unique=True))
    size = {
        c: d(st.integers(0, 3) if d(st.integers(0, 9)) == 0 else st.integers(1, 3)) for c in pool
    }
    ellipsis = d(st.booleans())
    batch: list[Shape] = [()] * n
    if ellipsis:
        batch = list(d(ls.broadcastable_shapes(n, max_dims=2, max_side=3)))
    terms, shapes = [], []
    for k in range(n):
        labels = d(st.lists(st.sampled_from(pool), max_size=max_labels))
        ones = {c for c in labels if d(st.integers(0, 4)) == 0}  # broadcast along c
        shape = [1 if c in ones else size[c] for c in labels]
        term = "".join(labels)
        if ellipsis and (batch[k] or d(st.booleans())):
            at = d(st.integers(0, len(labels)))
            term = term[:at] + "..." + term[at:]
            shape[at:at] = batch[k]
        terms.append(term)
        shapes.append(tuple(shape))
    subscripts = ",".join(terms)
    if d(st.booleans()):  # explicit output
        used = sorted(set("".join(terms)) - {"."})
        chosen = d(st.lists(st.sampled_from(used), unique=True)) if used else []
        out = "".join(d(st.permutations(chosen)))
        if "..." in subscripts or d(st.integers(0, 4)) == 0:
            at = d(st.integers(0, len(out)))
            out = out[:at] + "..." + out[at:]
        subscripts += "->" + out
    return subscripts, shapes


def einsum_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        subscripts, shapes = d(einsum_problems())
        return _arrays(d, dtype, *shapes), {"subscripts": subscripts}

    return build()


def _einsum(*operands: Any, subscripts: str) -> Any:
    return einsum(subscripts, *operands)


def _ref_einsum(*arrays: np.ndarray, subscripts: str) -> Any:
    return np.einsum(subscripts, *arrays)


def diagonal_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """Arrays of 2 or more axes, two distinct axes (maybe negative) and an offset."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=2, max_dims=4, max_side=4))
        nd = len(shape)
        ax1, ax2 = d(st.permutations(range(nd)))[:2]
        ax1 -= nd * d(st.booleans())
        offset = d(st.integers(-4, 4))
        return _arrays(d, dtype, shape), {"offset": offset, "axis1": ax1, "axis2": ax2}

    return build()


def diag_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=2, max_side=4))
        return _arrays(d, dtype, shape), {"k": d(st.integers(-4, 4))}

    return build()


def triangle_inputs(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """1-d (taken as the rows of a square) to 4-d arrays and a diagonal offset."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        shape = d(ls.shapes(min_dims=1, max_dims=4, max_side=4))
        return _arrays(d, dtype, shape), {"k": d(st.integers(-4, 4))}

    return build()


@st.composite
def kron_shapes(d: st.DrawFn) -> tuple[Shape, Shape]:
    return d(ls.shapes(max_dims=3, max_side=3)), d(ls.shapes(max_dims=3, max_side=3))


@st.composite
def outer_shapes(d: st.DrawFn) -> tuple[Shape, Shape]:
    return d(ls.shapes(max_dims=2, max_side=4)), d(ls.shapes(max_dims=2, max_side=4))


OPS: list[OpSpec] = [
    OpSpec("dot", dot, np.dot, _pair_inputs(dot_shapes())),
    OpSpec("vdot", vdot, np.vdot, _pair_inputs(vdot_shapes())),
    OpSpec("inner", inner, np.inner, _pair_inputs(inner_shapes())),
    OpSpec("outer", outer, np.outer, _pair_inputs(outer_shapes())),
    OpSpec("tensordot", tensordot, np.tensordot, tensordot_inputs),
    OpSpec("einsum", _einsum, _ref_einsum, einsum_inputs),
    OpSpec("trace", trace, np.trace, diagonal_inputs),
    OpSpec("diagonal", diagonal, np.diagonal, diagonal_inputs),
    OpSpec("diag", diag, np.diag, diag_inputs),
    OpSpec("tril", tril, np.tril, triangle_inputs),
    OpSpec("triu", triu, np.triu, triangle_inputs),
    OpSpec("kron", kron, np.kron, _pair_inputs(kron_shapes())),
    OpSpec("cross", cross, np.cross, cross_inputs),
]
