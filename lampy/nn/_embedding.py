"""The Embedding module of ``lampy.nn`` (``torch.nn.Embedding``): a lookup table of
rows, initialised ``N(0, 1)`` with the padding row zeroed, or built from pretrained
vectors (frozen by default)."""

from __future__ import annotations

import operator
from typing import Any

import attrs
import numpy as np

from lampy._errors import DTypeError, LampyValueError, ShapeError
from lampy.nn import init as _init
from lampy.nn._helpers import check_size, rng_or_default
from lampy.nn._module import Module
from lampy.nn.functional import embedding
from lampy.opkit import Operand, Variable, const, param, value_of

__all__ = ["Embedding"]


def _padding_idx(owner: str, padding_idx: Any, num: int) -> int | None:
    """PyTorch's normalisation: a negative index counts from the end."""
    if padding_idx is None:
        return None
    p = operator.index(padding_idx)
    if not -num <= p < num:
        raise LampyValueError(
            f"{owner}: padding_idx {p} must lie in [-num_embeddings, num_embeddings) = "
            f"[{-num}, {num})."
        )
    return p % num


def _check_norm(owner: str, max_norm: Any, norm_type: Any) -> tuple[float | None, float]:
    if max_norm is not None and not float(max_norm) > 0:
        raise LampyValueError(f"{owner}: max_norm must be positive or None, got {max_norm!r}.")
    if not float(norm_type) > 0:
        raise LampyValueError(f"{owner}: norm_type must be positive, got {norm_type!r}.")
    return (None if max_norm is None else float(max_norm)), float(norm_type)


@attrs.frozen(eq=False, repr=False)
class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by id.

    ``forward(ids)`` maps integer ids of any shape ``(*)`` to their rows, ``(*,
    embedding_dim)``. The row ``padding_idx`` is zero at initialisation and gets no
    gradient. ``max_norm`` renormalises the looked-up rows (the output only: lampy does
    not edit the weight in place as PyTorch does; see
    ``lampy.nn.functional.embedding``).

    Attributes:
        weight: (num_embeddings, embedding_dim), initialised ``N(0, 1)``.

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     emb = nn.Embedding.init(10, 3, padding_idx=0, rng=np.random.default_rng(0))
        ...     vectors = emb(np.array([[1, 2], [0, 9]]))
        ...     print(vectors.shape, vectors.value[1, 0])  # row 0 is the padding: zeros
        (2, 2, 3) [0. 0. 0.]
    """

    weight: Variable
    padding_idx: int | None = None
    max_norm: float | None = None
    norm_type: float = 2.0
    scale_grad_by_freq: bool = False

    @property
    def num_embeddings(self) -> int:
        """Number of rows."""
        return int(self.weight.shape[0])

    @property
    def embedding_dim(self) -> int:
        """Size of each row."""
        return int(self.weight.shape[1])

    @classmethod
    def init(
        cls,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        *,
        dtype: Any = np.float32,
        rng: np.random.Generator | None = None,
    ) -> Embedding:
        """An Embedding with PyTorch's initialisation: ``N(0, 1)``, the padding row zeroed.

        Args:
            num_embeddings: Number of rows (the size of the vocabulary).
            embedding_dim: Size of each row.
            padding_idx: A row kept at zero and given no gradient (negative counts from
                the end).
            max_norm: Rows whose ``norm_type``-norm exceeds it are scaled down to it on
                lookup.
            norm_type: The ``p`` of the p-norm for ``max_norm``.
            scale_grad_by_freq: Divide each row's gradient by its id's count in the batch.
            dtype: The weight's dtype.
            rng: The generator drawing the initial rows (None: lampy's default generator).
        """
        owner = "Embedding.init"
        n = check_size(owner, "num_embeddings", num_embeddings, 0)
        d = check_size(owner, "embedding_dim", embedding_dim, 0)
        pad = _padding_idx(owner, padding_idx, n)
        mn, nt = _check_norm(owner, max_norm, norm_type)
        w = _init.normal((n, d), rng=rng_or_default(owner, rng), dtype=dtype)
        if pad is not None:
            w[pad] = 0
        return cls(param(w, copy=False), pad, mn, nt, bool(scale_grad_by_freq))

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Any,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
    ) -> Embedding:
        """An Embedding holding a copy of the 2-d array ``embeddings`` (its dtype kept).

        With ``freeze`` (the default) the weight is a const Variable: it needs no
        gradient, is not among ``parameters()``, and still appears in the state dict,
        as in PyTorch. The padding row is left as given.

        Raises:
            ShapeError: if ``embeddings`` is not 2-d.
        """
        owner = "Embedding.from_pretrained"
        w = np.asarray(value_of(embeddings, name=owner))
        if w.ndim != 2:
            raise ShapeError(
                f"{owner}: embeddings must be a 2-d array (num_embeddings, embedding_dim), "
                f"got shape {w.shape}."
            )
        if w.dtype.kind != "f":
            raise DTypeError(f"{owner}: embeddings must be floating point, got {w.dtype}.")
        pad = _padding_idx(owner, padding_idx, w.shape[0])
        mn, nt = _check_norm(owner, max_norm, norm_type)
        weight = const(w) if freeze else param(w)
        return cls(weight, pad, mn, nt, bool(scale_grad_by_freq))

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2.0:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        return s

    def forward(self, input: Operand) -> Variable:
        """The rows of ``weight`` at the ids ``input``: (*) → (*, embedding_dim).

        Raises:
            DTypeError: if the ids are not integers.
            LampyValueError: if an id lies outside [0, num_embeddings).
        """
        ids = np.asarray(value_of(input, name="Embedding.forward"))
        if ids.dtype.kind not in "iu":
            raise DTypeError(
                f"{self!r}: expected integer ids, got {ids.dtype} of shape {ids.shape}; "
                "cast them with .astype(np.int64)."
            )
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_embeddings):
            bad = ids.min() if ids.min() < 0 else ids.max()
            raise LampyValueError(
                f"{self!r}: id {int(bad)} is outside [0, {self.num_embeddings}) "
                f"(num_embeddings = {self.num_embeddings})."
            )
        return embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
        )
