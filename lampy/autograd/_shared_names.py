"""``ElementCount``, what ``Variable.size`` returns; and ``axis_or_dim`` for
``lampy.opkit``. The rest of how a method name numpy and PyTorch share is read lives in
``lampy/_shared_names.py``, under the methods installed by ``lampy._methods``."""

from __future__ import annotations

from typing import Any

from lampy._shared_names import axis_index, axis_or_dim


class ElementCount(int):
    """``Variable.size``: the element count (numpy's ``size``, an int) that can also be
    called as PyTorch's ``size()`` (the shape) or ``size(dim)`` (one axis' length)."""

    _shape: tuple[int, ...]

    def __new__(cls, count: int, shape: tuple[int, ...]) -> ElementCount:
        new = int.__new__(cls, count)
        new._shape = shape
        return new

    def __call__(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._shape
        return self._shape[axis_index("size", "dim", dim, self._shape)] if self._shape else 1

    def __repr__(self) -> str:
        return int.__repr__(self)

    def __reduce__(self) -> Any:
        return (int, (int(self),))


__all__ = ["ElementCount", "axis_or_dim"]
