"""Gathering and scattering along an axis: numpy's ``take_along_axis`` and
``put_along_axis``, and PyTorch's ``gather``, ``scatter_add``, ``index_select`` and
``index_add`` (masking and one-hot encoding live in ``_masking``).

The PyTorch-named ops take PyTorch's arguments in PyTorch's order, spelled the lampy
way: ``gather(x, axis, indices)`` is ``torch.gather(input, dim, index)``. Two
deliberate differences from PyTorch: negative indices count from the end as in numpy
(PyTorch rejects them), and operands of different dtypes are promoted as numpy does
(PyTorch requires equal dtypes). A 0-d ``x`` acts as a 1-element vector, as in PyTorch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import BadIndexError, ShapeError
from lampy.opkit import (
    Operand,
    Variable,
    accumulate,
    contribution,
    no_complex_into_real,
    one_axis,
    op,
    param_of,
    real_result,
    single_axis,
    value_of,
)
from lampy.ops._indexing import (
    add_along,
    add_flat,
    in_bounds,
    int_indices,
    linear_index,
    scattered_along,
    scattered_flat,
    take,
)
from lampy.ops._pad import pad
from lampy.ops._shape import reshape
from lampy.ops._torch_names import axis_or_dim

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


_intp = np.intp


def _along_axis(name: str, shape: tuple[int, ...], idx: np.ndarray, axis: int | None) -> np.ndarray:
    """Flat positions of numpy's along-axis fancy index (``take_along_axis``'s rule)."""
    if axis is None:
        if idx.ndim != 1:
            raise ShapeError(f"{name}: with axis=None, indices must be 1-d, got shape {idx.shape}.")
        n = int(np.prod(shape))
        return in_bounds(name, idx, n, None, shape)
    ax = one_axis(name, axis, len(shape))
    if idx.ndim != len(shape):
        raise ShapeError(
            f"{name}: indices (shape {idx.shape}) must have as many dimensions as the array "
            f"(shape {shape}); add length-1 axes with expand_dims."
        )
    idx = in_bounds(name, idx, shape[ax], ax, shape)
    try:
        return linear_index(shape, idx, ax, shape)
    except ValueError:
        raise ShapeError(
            f"{name}: indices of shape {idx.shape} do not broadcast against an array of shape "
            f"{shape} along the axes other than {ax}."
        ) from None


def take_along_axis(
    arr: Operand, indices: ArrayLike, axis: int | None = -1, *, dim: int | None = None
) -> Variable:
    """Values of ``arr`` at ``indices`` along ``axis``, matching 1-d slices (numpy's
    ``take_along_axis``; e.g. with indices from ``argsort`` or ``argmax(keepdims=True)``).

    Args:
        arr: The source array.
        indices: Integer array with ``arr``'s number of dimensions, broadcasting against
            ``arr`` on the other axes; negatives count from the end. With ``axis=None``,
            1-d indices into the flattened ``arr``.
        axis: The axis to take along (None: the flattened array).
        dim: PyTorch's name for ``axis`` (as ``torch.take_along_dim``).

    Raises:
        ShapeError: if the dimensions do not match or do not broadcast.
        BadIndexError: if an index is out of range.

    Gradient:
        ``darr`` gets ``g`` added at the positions taken; repeats accumulate.
    """
    axis = axis_or_dim("take_along_axis", axis, dim, default=-1)
    a = value_of(arr, name="take_along_axis")
    shape = np.shape(a)
    lin = _along_axis("take_along_axis", shape, int_indices("take_along_axis", indices), axis)
    value = np.reshape(a, -1)[lin]

    def d_arr(g: np.ndarray, out: np.ndarray) -> None:
        add_flat(out, lin, g)

    dtype = np.result_type(a)
    return op(
        "take_along_axis",
        value,
        param_of(arr, d_arr, vjp=lambda g, out: scattered_flat(g, shape, dtype, lin)),
    )


def put_along_axis(arr: Operand, indices: ArrayLike, values: Operand, axis: int | None) -> Variable:
    """A copy of ``arr`` with ``values`` put at ``indices`` along ``axis`` (numpy's
    ``put_along_axis``, made functional: ``arr`` itself is not changed).

    Where indices repeat a position, the last write wins, as numpy's in-place assignment
    does in practice (here it is guaranteed). The result keeps ``arr``'s shape and dtype
    (``values`` are cast to it), also with ``axis=None``, where ``indices`` are 1-d
    positions in the flattened ``arr``.

    Args:
        arr: The array to put into.
        indices: Integer array as for ``lampy.take_along_axis``.
        values: Broadcast to the shape of the positions written.
        axis: The axis to put along (None: the flattened array).

    Raises:
        ShapeError: if shapes do not match or ``values`` does not broadcast.
        BadIndexError: if an index is out of range.

    Gradient:
        ``darr = g`` with 0 at every written position; ``dvalues``: each (broadcast)
        value gets ``g`` at the position it landed in if it was the winning (last) write
        there, else 0, summed over its broadcast axes.
    """
    a = value_of(arr, name="put_along_axis")
    v = value_of(values, name="put_along_axis")
    no_complex_into_real("put_along_axis", "values", a, v)
    shape = np.shape(a)
    idx = int_indices("put_along_axis", indices)
    lin = _along_axis("put_along_axis", shape, idx, axis)
    try:
        vb = np.broadcast_to(v, lin.shape)
    except ValueError:
        raise ShapeError(
            f"put_along_axis: values of shape {np.shape(v)} do not broadcast to the shape "
            f"{lin.shape} of the positions written."
        ) from None
    flat_lin = lin.reshape(-1)
    winner = np.full(np.size(a), -1, _intp)
    order = np.arange(flat_lin.size, dtype=_intp)
    np.maximum.at(winner, flat_lin, order)
    won = winner[flat_lin] == order
    everyone = bool(won.all())
    pos = flat_lin if everyone else flat_lin[won]
    result = np.array(a, order="C")
    result.reshape(-1)[pos] = vb.reshape(-1) if everyone else vb.reshape(-1)[won]

    def d_arr(g: np.ndarray) -> Any:
        d = g.copy()
        d.reshape(-1)[pos] = 0
        return d

    def d_values(g: np.ndarray, out: np.ndarray) -> None:
        landed = np.reshape(g, -1)[flat_lin]
        if not everyone:
            landed[~won] = 0
        accumulate(out, landed.reshape(lin.shape))

    def vjp_arr(g: Any, out: Any) -> Any:
        kept = np.ones(np.size(a), result.dtype)
        kept[pos] = 0
        return g * kept.reshape(shape)

    def vjp_values(g: Any, out: Any) -> Any:
        landed = reshape(g, -1)[flat_lin]
        return reshape(landed if everyone else landed * won, lin.shape)

    return op(
        "put_along_axis",
        result,
        param_of(arr, contribution(d_arr), vjp=vjp_arr),
        param_of(values, d_values, vjp=vjp_values),
    )


def _torch_operands(name: str, x: Any, axis: Any, indices: Any) -> tuple[Any, int, np.ndarray]:
    """``x``'s value (a 0-d one as shape ``(1,)``), the axis and the integer indices."""
    a = value_of(x, name=name)
    ax = single_axis(name, axis, np.ndim(a))
    assert ax is not None
    return (np.reshape(a, 1) if np.ndim(a) == 0 else a), ax, int_indices(name, indices)


def _same_ndim(
    name: str, shape: tuple[int, ...], idx: np.ndarray, ax: int, src: Any = None
) -> None:
    """PyTorch's rule for gather/scatter_add: ``index`` has ``x``'s number of dimensions,
    is no larger than ``x`` on the other axes and no larger than ``src`` on any."""
    ishape = idx.shape
    ok = len(ishape) == len(shape) and all(
        m <= n for d, (m, n) in enumerate(zip(ishape, shape, strict=True)) if d != ax
    )
    if src is not None:
        ok = (
            ok
            and np.ndim(src) == len(ishape)
            and all(m <= n for m, n in zip(ishape, np.shape(src), strict=True))
        )
    if not ok:
        extra = f" and no larger than src {np.shape(src)} on every axis" if src is not None else ""
        raise ShapeError(
            f"{name}: index of shape {ishape} must have the {len(shape)} dimensions of x "
            f"(shape {shape}), be no larger than x on every axis but {ax}{extra}."
        )


def gather(x: Operand, axis: int, indices: ArrayLike) -> Variable:
    """``out[i][j][k] = x[indices[i][j][k]][j][k]`` for ``axis=0`` (and likewise for other
    axes): PyTorch's ``torch.gather(input, dim, index)``.

    Unlike ``lampy.take_along_axis``, ``indices`` does not broadcast: it
    has ``x``'s number of dimensions and may be smaller than ``x`` on the other axes.
    The result has the shape of ``indices``.

    Raises:
        ShapeError: if ``indices`` has another number of dimensions or is larger than
            ``x`` on an axis other than ``axis``.
        BadIndexError: if an index is out of range.

    Gradient:
        ``dx`` gets ``g`` scattered back (``scatter_add``); repeats accumulate.
    """
    a, ax, idx = _torch_operands("gather", x, axis, indices)
    shape = a.shape
    out_shape = idx.shape
    if np.ndim(value_of(x, name="gather")) == 0 and idx.ndim == 0:
        idx = idx.reshape(1)
    _same_ndim("gather", shape, idx, ax)
    idx = in_bounds("gather", idx, shape[ax], ax, shape)
    lin = linear_index(shape, idx, ax, idx.shape)
    value = np.reshape(a, -1)[lin]

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        add_flat(out, lin, np.reshape(g, lin.shape))

    x_shape, dtype = np.shape(value_of(x, name="gather")), np.result_type(a)

    def vjp(g: Any, out: Any) -> Any:
        return reshape(scattered_flat(reshape(g, lin.shape), shape, dtype, lin), x_shape)

    if value.shape != out_shape:  # a 0-d x with a 0-d index
        value = value.reshape(out_shape)
    return op("gather", value, param_of(x, d_x, vjp=vjp))


def scatter_add(x: Operand, axis: int, indices: ArrayLike, src: Operand) -> Variable:
    """A copy of ``x`` with ``src`` added at ``indices`` along ``axis``:
    ``out[indices[i][j]][j] += src[i][j]`` for ``axis=0`` (PyTorch's
    ``torch.scatter_add(input, dim, index, src)``, out of place). Repeats accumulate.

    ``indices`` has ``x``'s number of dimensions; it may be smaller than ``x`` on the
    other axes and smaller than ``src`` on every axis (only ``src[:m0, :m1, ...]`` is
    used, ``m`` being ``indices``' shape).

    Raises:
        ShapeError: if the shapes break those rules.
        BadIndexError: if an index is out of range.

    Gradient:
        ``dx = g``; ``dsrc[i][j] = g[indices[i][j]][j]`` (a ``gather``) on the used part
        of ``src``, 0 on the rest.
    """
    a, ax, idx = _torch_operands("scatter_add", x, axis, indices)
    s = value_of(src, name="scatter_add")
    scalar = np.ndim(value_of(x, name="scatter_add")) == 0
    shape = a.shape
    s1 = np.reshape(s, 1) if scalar and np.ndim(s) == 0 else s
    idx = idx.reshape(1) if scalar and idx.ndim == 0 else idx
    _same_ndim("scatter_add", shape, idx, ax, s1)
    idx = in_bounds("scatter_add", idx, shape[ax], ax, shape)
    lin = linear_index(shape, idx, ax, idx.shape)
    used = tuple(slice(0, m) for m in idx.shape)
    whole = idx.shape == np.shape(s1)
    value = np.array(a, dtype=np.result_type(a, s), order="C")
    add_flat(value, lin, s1 if whole else s1[used])

    def d_src(g: np.ndarray) -> Any:
        part = np.reshape(g, -1)[lin]
        if whole:
            return part.reshape(np.shape(s))
        d = np.zeros(np.shape(s1), g.dtype)
        d[used] = part
        return d.reshape(np.shape(s))

    def vjp_src(g: Any, out: Any) -> Any:
        part = reshape(g, -1)[lin]
        if not whole:
            part = _scattered_part(part, np.shape(s1), used)
        return reshape(part, np.shape(s))

    real_result("scatter_add", value, x, src)
    return op(
        "scatter_add",
        value.reshape(()) if scalar else value,
        param_of(x, contribution(lambda g: g, fresh=False), vjp=lambda g, out: g),
        param_of(src, contribution(d_src), vjp=vjp_src),
    )


def _scattered_part(part: Any, shape: tuple[int, ...], used: tuple[slice, ...]) -> Any:
    """``part`` (a Variable or an array) placed at ``used`` in zeros of ``shape``."""
    pads = [(0, n - s.stop) for s, n in zip(used, shape, strict=True)]
    return pad(part, pads)


def _vector_index(name: str, idx: np.ndarray, n: int, ax: int, shape: Any) -> np.ndarray:
    if idx.ndim > 1:
        raise BadIndexError(
            f"{name}: indices must be a vector (0-d or 1-d), got shape {idx.shape}; "
            "flatten them, or use take() for n-d indices."
        )
    return in_bounds(name, idx.reshape(-1), n, ax, shape)


def index_select(x: Operand, axis: int, indices: ArrayLike) -> Variable:
    """The slices of ``x`` at ``indices`` along ``axis``: PyTorch's
    ``torch.index_select(input, dim, index)``. The result keeps ``x``'s number of
    dimensions, with ``len(indices)`` along ``axis`` (a 0-d ``x`` with one index gives
    a 0-d result).

    Raises:
        BadIndexError: if ``indices`` is not 0-d or 1-d, or an index is out of range.
        ShapeError: if ``x`` is 0-d and more than one index is given.

    Gradient:
        ``dx`` gets ``g`` added at the selected slices; repeated indices accumulate.
    """
    a, ax, idx = _torch_operands("index_select", x, axis, indices)
    idx = _vector_index(
        "index_select", idx, a.shape[ax], ax, np.shape(value_of(x, name="index_select"))
    )
    scalar = np.ndim(value_of(x, name="index_select")) == 0
    if scalar and idx.size != 1:
        raise ShapeError(f"index_select: a 0-d x takes exactly one index, got {idx.size}.")
    value = np.take(a, idx, axis=ax)
    shape = a.shape

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        add_along(out, idx, g, ax, shape=shape)

    dtype, v_shape, x_shape = (
        np.result_type(a),
        value.shape,
        np.shape(value_of(x, name="index_select")),
    )

    def vjp(g: Any, out: Any) -> Any:
        return reshape(scattered_along(reshape(g, v_shape), shape, dtype, idx, ax), x_shape)

    return op("index_select", value.reshape(()) if scalar else value, param_of(x, d_x, vjp=vjp))


def index_add(
    x: Operand, axis: int, indices: ArrayLike, source: Operand, *, alpha: float = 1
) -> Variable:
    """A copy of ``x`` with ``alpha * source`` added at ``indices`` along ``axis``:
    ``out[..., indices[i], ...] += alpha * source[..., i, ...]`` (PyTorch's
    ``torch.index_add(input, dim, index, source, alpha=1)``, out of place). Repeated
    indices accumulate.

    Args:
        x: The array added to.
        axis: The axis ``indices`` run along.
        indices: 0-d or 1-d integers.
        source: Shape of ``x`` except ``len(indices)`` along ``axis`` (0-d for a 0-d x).
        alpha: A constant factor (not differentiated), keyword-only as in PyTorch.

    Raises:
        ShapeError: if ``source`` has the wrong shape.
        BadIndexError: if ``indices`` is not a vector or an index is out of range.

    Gradient:
        ``dx = g``; ``dsource = alpha * index_select(g, axis, indices)``.
    """
    a, ax, idx = _torch_operands("index_add", x, axis, indices)
    scalar = np.ndim(value_of(x, name="index_add")) == 0
    idx = _vector_index("index_add", idx, a.shape[ax], ax, np.shape(value_of(x, name="index_add")))
    s = value_of(source, name="index_add")
    want = a.shape[:ax] + idx.shape + a.shape[ax + 1 :]
    s_shape = np.shape(s)
    if s_shape != want and not (scalar and s_shape == () and idx.size == 1):
        raise ShapeError(
            f"index_add: source has shape {s_shape}, expected {want}: x's shape {a.shape} "
            f"with the {idx.size} indices along axis {ax}."
        )
    alpha = alpha.item() if isinstance(alpha, np.generic) else alpha
    value = np.array(a, dtype=np.result_type(a, s), order="C")
    add = np.reshape(s, want)
    add_along(value, idx, add if alpha == 1 else add * alpha, ax)

    def d_source(g: np.ndarray) -> Any:
        d = np.take(np.reshape(g, a.shape), idx, axis=ax)
        return (d if alpha == 1 else d * alpha).reshape(s_shape)

    def vjp_source(g: Any, out: Any) -> Any:
        d = take(reshape(g, a.shape), idx, axis=ax)
        return reshape(d if alpha == 1 else d * alpha, s_shape)

    real_result("index_add", value, x, source)
    return op(
        "index_add",
        value.reshape(()) if scalar else value,
        param_of(x, contribution(lambda g: g, fresh=False), vjp=lambda g, out: g),
        param_of(source, contribution(d_source), vjp=vjp_source),
    )


__all__ = [
    "take_along_axis",
    "put_along_axis",
    "gather",
    "scatter_add",
    "index_select",
    "index_add",
]
