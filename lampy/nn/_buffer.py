"""``Buffer``: a module's state that changes, such as BatchNorm's running statistics.

A module record is immutable, and its parameters change only through ``in_place``
(optimizers, ``load_state_dict``). A buffer is the other kind of changing state: an
array that the module's own forward pass updates (no gradient, no version). ``Buffer``
says so in the record's type, and owns its array: everyone else reads it through
read-only views (``value``, ``state_dict``, ``named_buffers``), and it is written
only through ``update`` (the module's forward pass, in training mode) and ``load``
(``load_state_dict``). Outside those two the array itself is read-only, so a view
kept from an earlier ``update`` cannot write it either.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from lampy._errors import LampyTypeError, ShapeError
from lampy._memory import sealed_view
from lampy.opkit import Variable

__all__ = ["Buffer", "as_buffer"]


class Buffer:
    """An array of module state that the module itself updates (``torch``'s buffers).

    BatchNorm's ``running_mean``, ``running_var`` and ``num_batches_tracked`` are
    buffers. A module and its ``with_training`` and ``copy.copy`` copies share one
    ``Buffer`` object, so an update through one is seen by all; ``copy.deepcopy`` and
    pickles make a new one. ``state_dict`` lists a buffer under its field's name
    (``running_mean``), as PyTorch does.

    Reading: ``buffer.value`` is a read-only view of the current values, and a buffer
    converts to an array (``numpy.asarray(buffer)``), an ``int`` or a ``float`` (for
    one value) and prints as its array does. Writing: ``update()`` (a ``with`` block,
    for the module's forward pass) and ``load(values)`` (for ``load_state_dict``).

    Examples:
        >>> b = lampy.nn.Buffer(np.zeros(3, np.float32))
        >>> with b.update() as a:
        ...     a += 1.0
        >>> print(b, b.value.flags.writeable)
        [1. 1. 1.] False
    """

    __slots__ = ("__weakref__", "_array", "_open")

    def __init__(self, values: ArrayLike, dtype: DTypeLike | None = None) -> None:
        """A buffer holding a copy of ``values`` (in ``dtype`` if given).

        Raises:
            LampyTypeError: if ``values`` is a Variable (a parameter, not a buffer).
        """
        if isinstance(values, Variable):
            raise LampyTypeError(
                "Buffer: got a Variable; a buffer holds plain values that the module "
                "updates. Pass its values (variable.value), or keep it as a parameter."
            )
        array = np.array(values, dtype=dtype, copy=True, order="C")
        array.flags.writeable = False
        self._array = array
        self._open = 0  # update() blocks open on this buffer

    @property
    def value(self) -> np.ndarray:
        """The current values: a read-only view that follows every update."""
        return sealed_view(self._array)

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return self._array.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The array's dtype."""
        return self._array.dtype

    @property
    def ndim(self) -> int:
        """The array's number of dimensions."""
        return self._array.ndim

    @property
    def size(self) -> int:
        """The array's number of values."""
        return self._array.size

    @contextmanager
    def update(self) -> Iterator[np.ndarray]:
        """Write the values in place inside a ``with`` block: the block receives the
        array itself, writable until the block ends (BatchNorm's forward pass passes it
        to ``lampy.nn.functional.batch_norm``, which updates it).

        Examples:
            >>> count = lampy.nn.Buffer(np.zeros((), np.int64))
            >>> with count.update() as c:
            ...     c += 1
            >>> int(count)
            1
        """
        self._open += 1
        self._array.flags.writeable = True
        try:
            yield self._array
        finally:
            self._open -= 1
            if not self._open:
                self._array.flags.writeable = False

    def load(self, values: ArrayLike) -> None:
        """Copy ``values`` into the buffer (cast to its dtype), as ``load_state_dict``
        does.

        Raises:
            ShapeError: if ``values`` does not have the buffer's shape.
            LampyTypeError: if ``values`` cannot be cast to the buffer's dtype.
        """
        src = np.asarray(values)
        if src.shape != self.shape:
            raise ShapeError(
                f"Buffer.load: the values have shape {src.shape}, the buffer {self.shape}; "
                "a buffer keeps its shape."
            )
        if not np.can_cast(src.dtype, self.dtype, casting="same_kind"):
            raise LampyTypeError(
                f"Buffer.load: {src.dtype} values cannot be cast to the buffer's {self.dtype}."
            )
        with self.update() as a:
            np.copyto(a, src, casting="same_kind")

    def copy(self) -> Buffer:
        """A new buffer with a copy of the values (``copy.deepcopy`` of a module)."""
        return Buffer(self._array)

    def __deepcopy__(self, memo: dict[int, Any]) -> Buffer:
        return self.copy()

    def __copy__(self) -> Buffer:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        return (Buffer, (np.array(self._array),))

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        if copy or (dtype is not None and np.dtype(dtype) != self.dtype):
            return np.array(self._array, dtype=dtype)
        return self.value

    def __int__(self) -> int:
        return int(self._array)

    def __float__(self) -> float:
        return float(self._array)

    def __repr__(self) -> str:
        return f"Buffer({self._array!r})"

    def __str__(self) -> str:
        return str(self._array)


def as_buffer(values: Buffer | ArrayLike | None) -> Buffer | None:
    """A record field's converter: a Buffer as it is, None as None, an array (a module
    pickled before buffers were ``Buffer`` objects, a record built from arrays) copied
    into a new Buffer."""
    if values is None or isinstance(values, Buffer):
        return values
    return Buffer(values)
