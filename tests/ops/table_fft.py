"""Op table of ``lampy.fft``: every transform against ``numpy.fft``, with drawn
lengths (``n``/``s`` padding and cutting), axes and norms, on real inputs here (the op
table's params are real; the complex column, ``test_complex_ops.py``, draws complex
ones). The transforms are linear, so central differences are exact up to rounding.
``tests/fft/test_fft.py`` checks the rest (errors, float32, second order).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from lampy import fft
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec

NORMS = [None, "backward", "ortho", "forward"]


def one_d(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """A signal of 1 to 3 dimensions, a drawn axis, ``n`` (None or 1 to 7) and norm."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        a = d(ls.arrays(ls.shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), dtype))
        axis = d(st.integers(-a.ndim, a.ndim - 1))
        n = d(st.none() | st.integers(1, 7))
        return [a], {"n": n, "axis": axis, "norm": d(st.sampled_from(NORMS))}

    return build()


def one_d_inverse_real(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
    """As ``one_d``, with an ``n`` whenever the half spectrum has length 1 (numpy's
    default length ``2 * (m - 1)`` would be 0)."""

    @st.composite
    def build(d: st.DrawFn) -> Inputs:
        arrays, kw = d(one_d(dtype))
        if arrays[0].shape[kw["axis"]] == 1 and kw["n"] is None:
            kw["n"] = d(st.integers(1, 7))
        return arrays, kw

    return build()


def n_d(k: int | None, lengths: bool = True) -> Any:
    """A signal of 2 or 3 dimensions, ``k`` (or a drawn number of) axes in a drawn order,
    ``s`` (lengths 1 to 6, or None when ``lengths`` allows it: the inverse real
    transforms always get ``s``, since a half axis of length 1 has no default length)
    and norm."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            a = d(ls.arrays(ls.shapes(min_dims=2, max_dims=3, min_side=1, max_side=4), dtype))
            count = k if k is not None else d(st.integers(1, a.ndim))
            axes = tuple(d(st.permutations(range(a.ndim)))[:count])
            sizes = st.tuples(*[st.integers(1, 6)] * count)
            s = d(sizes) if not lengths else d(st.none() | sizes)
            return [a], {"s": s, "axes": axes, "norm": d(st.sampled_from(NORMS))}

        return build()

    return draw


def _np(name: str) -> Any:
    ref = getattr(np.fft, name)

    def call(a: np.ndarray, **kw: Any) -> np.ndarray:
        out = np.asarray(ref(a, **kw))
        if a.dtype == np.float32:  # numpy 1 computes in double; lampy keeps single
            out = out.astype(np.complex64 if out.dtype.kind == "c" else np.float32)
        return out

    return call


def _shift(name: str) -> Any:
    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            a = d(ls.arrays(ls.shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), dtype))
            axes = d(st.none() | st.integers(-a.ndim, a.ndim - 1))
            return [a], {"axes": axes}

        return build()

    return draw


OPS: list[OpSpec] = [
    *[
        OpSpec(f"fft.{name}", getattr(fft, name), _np(name), one_d, forward_rtol=1e-4)
        for name in ("fft", "ifft", "rfft")
    ],
    OpSpec("fft.irfft", fft.irfft, _np("irfft"), one_d_inverse_real, forward_rtol=1e-4),
    *[
        OpSpec(f"fft.{name}", getattr(fft, name), _np(name), n_d(k), forward_rtol=1e-4)
        for name, k in (("fft2", 2), ("ifft2", 2), ("fftn", None), ("ifftn", None))
    ],
    *[
        OpSpec(f"fft.{name}", getattr(fft, name), _np(name), n_d(k), forward_rtol=1e-4)
        for name, k in (("rfft2", 2), ("rfftn", None))
    ],
    *[
        OpSpec(f"fft.{name}", getattr(fft, name), _np(name), n_d(k, False), forward_rtol=1e-4)
        for name, k in (("irfft2", 2), ("irfftn", None))
    ],
    *[
        OpSpec(f"fft.{name}", getattr(fft, name), _np(name), _shift(name))
        for name in ("fftshift", "ifftshift")
    ],
]
