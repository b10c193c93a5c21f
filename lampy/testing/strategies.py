"""Hypothesis strategies for testing ops: arrays, broadcastable shapes, axes, indices.

Requires hypothesis (``pip install hypothesis``).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = [
    "arrays",
    "axes",
    "basic_indices",
    "broadcastable_shapes",
    "complexified",
    "float_dtypes",
    "index_expressions",
    "integer_array_indices",
    "shapes",
]


def float_dtypes() -> st.SearchStrategy[np.dtype[Any]]:
    """float64 or float32."""
    return st.sampled_from([np.dtype(np.float64), np.dtype(np.float32)])


def shapes(
    min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5
) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes, 0-d and empty ones included by default."""
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def arrays(
    shape: tuple[int, ...] | st.SearchStrategy[tuple[int, ...]] | None = None,
    dtype: Any = np.float64,
    *,
    min_value: float = -10.0,
    max_value: float = 10.0,
    exclude_min: bool = False,
    exclude_max: bool = False,
    avoid: tuple[float, ...] = (),
    margin: float = 1e-3,
) -> st.SearchStrategy[np.ndarray]:
    """Finite float arrays with values in ``[min_value, max_value]``.

    Args:
        shape: A shape or a strategy of shapes (default: ``lampy.testing.strategies.shapes``).
        dtype: A float dtype or a strategy of dtypes.
        min_value: Lower bound of the values.
        max_value: Upper bound of the values.
        exclude_min: Exclude ``min_value`` itself.
        exclude_max: Exclude ``max_value`` itself.
        avoid: Points (kinks, poles) the values keep at least ``margin`` away from, so
            finite differences do not straddle them.
        margin: Distance kept from the points in ``avoid``.
    """
    shape_st = shapes() if shape is None else shape
    dtype_st = dtype if isinstance(dtype, st.SearchStrategy) else st.just(np.dtype(dtype))

    @st.composite
    def build(draw: st.DrawFn) -> np.ndarray:
        dt = draw(dtype_st)
        shp = draw(shape_st) if isinstance(shape_st, st.SearchStrategy) else shape_st
        lo, hi = min_value, max_value
        if dt == np.float32:  # bounds rounded inwards to float32
            lo = _inward(lo, np.float32(np.inf))
            hi = _inward(hi, np.float32(-np.inf))
        elements = st.floats(
            min_value=lo,
            max_value=hi,
            allow_nan=False,
            allow_infinity=False,
            exclude_min=exclude_min,
            exclude_max=exclude_max,
            width=32 if dt == np.float32 else 64,
        )
        if avoid:
            elements = elements.filter(lambda v: all(abs(v - p) >= margin for p in avoid))
        return draw(hnp.arrays(dt, shp, elements=elements))

    return build()


def complexified(
    a: np.ndarray, *, min_magnitude: float = 0.2, max_magnitude: float = 0.8
) -> st.SearchStrategy[np.ndarray]:
    """``a`` (a float array) with imaginary parts added: complex128 (complex64 for a
    float32 ``a``), each imaginary part of magnitude in ``[min_magnitude,
    max_magnitude]`` with either sign, so values keep off the real axis, where
    ``log``, ``sqrt``, ``arcsin``... have their branch cuts (and finite differences in
    the imaginary part would straddle them).
    """
    dt = np.dtype(np.complex64 if a.dtype == np.float32 else np.complex128)
    lo, hi = min_magnitude, max_magnitude
    width: Literal[32, 64] = 64
    if a.dtype == np.float32:  # bounds rounded inwards to float32
        lo, hi, width = _inward(lo, np.float32(np.inf)), _inward(hi, np.float32(-np.inf)), 32
    parts = st.floats(lo, hi, width=width)
    signs = st.sampled_from([-1.0, 1.0])
    return st.tuples(
        hnp.arrays(a.dtype, a.shape, elements=parts), hnp.arrays(a.dtype, a.shape, elements=signs)
    ).map(lambda t: np.asarray(a + 1j * t[0] * t[1]).astype(dt))


def _inward(bound: float, direction: np.float32) -> float:
    b32 = np.float32(bound)
    if (direction > 0 and b32 < bound) or (direction < 0 and b32 > bound):
        b32 = np.nextafter(b32, direction)
    return float(b32)


def broadcastable_shapes(
    num_shapes: int = 2, min_dims: int = 0, max_dims: int = 4, max_side: int = 4
) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
    """Tuples of ``num_shapes`` shapes that broadcast together (in every direction)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims, max_side=max_side
    ).map(lambda b: b.input_shapes)


def axes(ndim: int, *, allow_none: bool = True, allow_tuple: bool = True) -> st.SearchStrategy[Any]:
    """A valid ``axis`` argument for an array of ``ndim`` dimensions: None, an int
    (possibly negative) or a tuple of distinct ints."""
    options: list[st.SearchStrategy[Any]] = []
    if allow_none:
        options.append(st.none())
    if ndim > 0:
        options.append(st.integers(-ndim, ndim - 1))
        if allow_tuple:
            options.append(
                st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).flatmap(
                    lambda axs: st.tuples(*[st.sampled_from([a, a - ndim]) for a in axs])
                )
            )
    if not options:
        options.append(st.just(()))
    return st.one_of(*options)


def basic_indices(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    """Basic indices (ints, slices with steps, ``...``, ``None``) valid for ``shape``."""
    return hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True)


def integer_array_indices(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    """Tuples of integer arrays (repeats included) indexing ``shape``; needs every side > 0."""
    return hnp.integer_array_indices(
        shape, result_shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)
    )


def index_expressions(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    """Index expressions valid for ``shape``: basic indices, integer arrays with repeats,
    boolean masks, and combinations of a slice or int with an integer array."""

    options: list[st.SearchStrategy[Any]] = [basic_indices(shape)]
    if shape:
        options.append(hnp.arrays(np.bool_, shape))
        options.append(hnp.arrays(np.bool_, shape[:1]).map(lambda m: (m, Ellipsis)))
        if all(n > 0 for n in shape):
            options.append(integer_array_indices(shape))
            options.append(
                hnp.arrays(
                    np.intp, st.integers(0, 5), elements=st.integers(-shape[0], shape[0] - 1)
                )
            )
            if len(shape) >= 2:
                options.append(
                    st.tuples(
                        st.sampled_from([slice(None), slice(None, None, -1), 0]),
                        hnp.arrays(
                            np.intp,
                            st.integers(0, 4),
                            elements=st.integers(-shape[1], shape[1] - 1),
                        ),
                    )
                )
    return st.one_of(*options)
