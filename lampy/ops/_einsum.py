"""Einstein summation: ``einsum`` with every subscript form numpy accepts.

Subscripts are first normalised to an explicit form with one letter per axis: the axes
an ellipsis covers get unused letters (aligned to the right, as numpy broadcasts them),
an implicit output becomes numpy's (the ellipsis axes, then the letters that appear
once, in ASCII order), and every letter gets its size (lengths 1 broadcast, as in
numpy). The gradient of an operand is then one more einsum, of ``g`` with the other
operands, onto the operand's distinct letters; a letter repeated within the operand
(a diagonal, as in ``'ii->i'``) is written through a strided view of the gradient
buffer onto that diagonal.
"""

from __future__ import annotations

import functools
import math
import string
from typing import Any, NamedTuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lampy._errors import LampyValueError, ShapeError
from lampy.opkit import (
    Variable,
    contribution,
    graph_value,
    node_of,
    op,
    param_of,
    real_result,
    value_of,
)
from lampy.ops._shape import broadcast_to, expand_dims

_add, _einsum = np.add, np.einsum

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # numpy's label order

OPTIMIZE_MIN_WORK = 1 << 15
"""Contractions of several operands whose loop over all letters would take at least this
many steps go through numpy's contraction-order optimiser (``optimize=True``, which
uses BLAS); below it the optimiser's fixed cost (about 10 µs) outweighs its gain."""


class _Spec(NamedTuple):
    """Explicit subscripts: one label string per operand, the output's, label sizes."""

    inputs: list[str]
    output: str
    sizes: dict[str, int]


def _subscript_error(subscripts: str, why: str) -> LampyValueError:
    return LampyValueError(f"einsum: subscripts {subscripts!r}: {why}")


def _split_term(subscripts: str, term: str, where: str) -> tuple[str, str | None]:
    """A term's letters before an ellipsis and after it (None if it has no ellipsis)."""
    head, dots, tail = term.partition("...")
    if "..." in tail:
        raise _subscript_error(subscripts, f"{where} has more than one ellipsis '...'.")
    for part in (head, tail):
        for c in part:
            if c == ".":
                raise _subscript_error(
                    subscripts, f"{where} has a '.' that is not part of an ellipsis '...'."
                )
            if c not in _LETTERS:
                raise _subscript_error(
                    subscripts, f"{where} has {c!r}; labels are the letters a-z and A-Z."
                )
    return (head + tail, None) if not dots else (head, tail)


def _parse(subscripts: str, shapes: list[tuple[int, ...]]) -> _Spec:
    """Normalise numpy einsum subscripts for operands of ``shapes`` (see the module doc)."""
    text = subscripts.replace(" ", "")
    lhs, arrow, out = text.partition("->")
    if "-" in lhs + out or ">" in lhs + out:
        raise _subscript_error(subscripts, "'-' and '>' may only appear together, once, as '->'.")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise _subscript_error(
            subscripts,
            f"it has {len(terms)} operand terms but {len(shapes)} operands were given; "
            "give one comma-separated term per operand.",
        )
    parts = [_split_term(subscripts, t, f"operand {k}") for k, t in enumerate(terms)]
    n_ell = []
    for k, ((head, tail), shape) in enumerate(zip(parts, shapes, strict=True)):
        named = len(head) + len(tail or "")
        if len(shape) < named or (tail is None and len(shape) != named):
            raise ShapeError(
                f"einsum: subscripts {subscripts!r}: operand {k} has shape {shape} "
                f"({len(shape)} axes) but its term {terms[k]!r} names {named} axes"
                + ("" if tail is None else " plus an ellipsis")
                + "; give one letter per axis (an ellipsis '...' stands for the rest)."
            )
        n_ell.append(len(shape) - named)
    width = max([n for n, (_, tail) in zip(n_ell, parts, strict=True) if tail is not None] or [0])
    free = [c for c in _LETTERS if c not in text]
    if width > len(free):
        raise _subscript_error(
            subscripts,
            f"the ellipsis covers {width} axes but only {len(free)} letters are unused; "
            "lampy's einsum needs one unused letter per ellipsis axis.",
        )
    ell = "".join(free[:width])
    inputs = [
        head if tail is None else head + ell[width - n :] + tail
        for (head, tail), n in zip(parts, n_ell, strict=True)
    ]
    if arrow:
        out_head, out_tail = _split_term(subscripts, out, "the output")
        if out_tail is None and width:
            raise ShapeError(
                f"einsum: subscripts {subscripts!r}: the operands' ellipsis covers {width} "
                "axes, so the output needs an ellipsis '...' to place them."
            )
        output = out_head if out_tail is None else out_head + ell + out_tail
        used = set("".join(inputs))
        for c in output:
            if c not in used:
                raise _subscript_error(subscripts, f"output label {c!r} is in no operand.")
        if len(set(output)) != len(output):
            raise _subscript_error(subscripts, "the output repeats a label.")
    else:
        letters = "".join(t for t, _ in parts) + "".join(t or "" for _, t in parts)
        output = ell + "".join(c for c in _LETTERS if letters.count(c) == 1)
    sizes: dict[str, int] = {}
    for k, (labels, shape) in enumerate(zip(inputs, shapes, strict=True)):
        own: dict[str, int] = {}
        for c, n in zip(labels, shape, strict=True):
            if own.setdefault(c, n) != n:
                raise ShapeError(
                    f"einsum: subscripts {subscripts!r}: operand {k} (shape {shape}) repeats "
                    f"label {c!r} on axes of lengths {own[c]} and {n}; a repeated label takes "
                    "a diagonal, so its axes must have equal lengths."
                )
            m = sizes.setdefault(c, n)
            if m != n and 1 not in (m, n):
                raise ShapeError(
                    f"einsum: subscripts {subscripts!r}: label {c!r} has length {m} in one "
                    f"operand and {n} in operand {k} (shapes {shapes}); lengths must be "
                    "equal or 1 (which broadcasts)."
                )
            if m == 1:
                sizes[c] = n
    return _Spec(inputs, output, sizes)


def _interleaved(args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """``einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])`` in string form."""

    def term(sub: Any) -> str:
        labels = []
        for s in sub:
            if s is Ellipsis:
                labels.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= s < len(_LETTERS):
                labels.append(_LETTERS[s])
            else:
                raise LampyValueError(
                    f"einsum: a sublist holds {s!r}; sublists take ints 0 to 51 and Ellipsis."
                )
        return "".join(labels)

    operands = list(args[0::2][: len(args) // 2])
    terms = [term(s) for s in args[1::2]]
    subscripts = ",".join(terms[: len(operands)])
    if len(args) % 2:
        subscripts += "->" + term(args[-1])
    return subscripts, operands


def _diagonal_view(out: np.ndarray, labels: str, distinct: str) -> np.ndarray:
    """A writeable view of ``out`` (axes ``labels``) with one axis per ``distinct`` label,
    stepping along all the axes that share it (``np.einsum('ii->i', out)`` as a view)."""
    if distinct == labels:
        return out
    strides = [sum(s for c, s in zip(labels, out.strides, strict=True) if c == d) for d in distinct]
    shape = [out.shape[labels.index(d)] for d in distinct]
    return as_strided(out, shape, strides, writeable=True)


class _Step(NamedTuple):
    """How the gradient of one operand is computed (see :func:`einsum`)."""

    labels: str  # the operand's letters, one per axis
    distinct: str  # those letters without repeats, in order
    others: tuple[int, ...]  # the other operands, contracted with g
    formula: str  # einsum of g and the others onto the distinct letters they know
    target: tuple[int, ...]  # the length of each distinct letter's axis in the operand
    missing: tuple[int, ...]  # positions of the letters no other term has
    summed: tuple[int, ...]  # positions of the operand's length-1 axes that broadcast


class _Plan(NamedTuple):
    work: int  # steps of a plain loop over all letters
    may_optimize: bool  # several operands, none broadcasting a length-1 axis
    steps: tuple[_Step, ...]


@functools.lru_cache(maxsize=1024)
def _plan(subscripts: str, shapes: tuple[tuple[int, ...], ...]) -> _Plan:
    """Parse and plan an einsum once per subscripts and shapes (training loops repeat them)."""
    spec = _parse(subscripts, list(shapes))
    sizes = spec.sizes
    broadcasts = any(
        n != sizes[c]
        for labels, s in zip(spec.inputs, shapes, strict=True)
        for c, n in zip(labels, s, strict=True)
    )
    # numpy's optimiser may hand axes of length 1 that broadcast to tensordot, which
    # does not broadcast: those (rare) cases keep the plain loop.
    may_optimize = len(shapes) > 1 and not broadcasts
    steps = []
    for k, labels in enumerate(spec.inputs):
        distinct = "".join(dict.fromkeys(labels))
        others = tuple(j for j in range(len(shapes)) if j != k)
        known = set(spec.output).union(*(spec.inputs[j] for j in others))
        present = "".join(c for c in distinct if c in known)
        terms = ",".join([spec.output] + [spec.inputs[j] for j in others])
        target = tuple(shapes[k][labels.index(c)] for c in distinct)
        missing = tuple(i for i, c in enumerate(distinct) if c not in known)
        summed = tuple(
            i for i, c in enumerate(distinct) if c in known and target[i] == 1 != sizes[c]
        )
        steps.append(
            _Step(labels, distinct, others, f"{terms}->{present}", target, missing, summed)
        )
    return _Plan(math.prod(sizes.values()), may_optimize, tuple(steps))


def einsum(subscripts: Any, *operands: Any) -> Variable:
    """``numpy.einsum``: sums of products of the operands' elements named by subscripts.

    Takes everything numpy takes: implicit (``'ij,jk'``) and explicit (``'ij,jk->ik'``)
    output, an ellipsis (``'...ij,...jk->...ik'``) with broadcasting, labels repeated
    within an operand (``'ii->'`` a trace, ``'ii->i'`` a diagonal), labels summed away,
    length-1 axes that broadcast against other operands, one or many operands, and the
    interleaved form ``einsum(op0, [0, 1], op1, [1, 2], [0, 2])``. Large contractions of
    several operands go through numpy's ``optimize=True`` path (BLAS).

    Args:
        subscripts: The subscripts string, or the first operand of the interleaved form.
        *operands: The operands (Variables, arrays or numbers).

    Gradient:
        ``d operand_k = einsum(g, other operands -> letters of operand_k)``, with
        letters only in operand_k broadcast, axes of length 1 (broadcast in the forward)
        summed, and a repeated letter written onto the operand's diagonal (zero
        elsewhere).
    """
    if not isinstance(subscripts, str):
        subscripts, args = _interleaved((subscripts, *operands))
    else:
        args = list(operands)
    values = [value_of(x, name="einsum") for x in args]
    plan = _plan(subscripts, tuple(np.shape(v) for v in values))
    optimize = plan.may_optimize and plan.work >= OPTIMIZE_MIN_WORK
    value = _einsum(subscripts, *values, optimize=optimize)
    if value.dtype.kind in "cO":  # complex or object: refused if a gradient is needed
        real_result("einsum", value, args)

    nodes = [node_of(x) for x in args]

    def vjp(k: int) -> Any:
        step = plan.steps[k]

        def rule(g: Any, out: Any) -> Any:
            others = [graph_value(nodes[j], values[j]) for j in step.others]
            grad = einsum(step.formula, g, *others)
            if step.missing:
                grad = expand_dims(grad, step.missing)
            if step.summed:
                grad = grad.sum(axis=step.summed, keepdims=True)
            if grad.shape != step.target:  # letters only this operand has, or that the
                grad = broadcast_to(grad, step.target)  # others have with length 1
            if step.distinct == step.labels:
                return grad
            return _onto_diagonal(grad, step.labels, step.distinct, plan.steps)

        return rule

    def closure(k: int) -> Any:
        step = plan.steps[k]
        others = [values[j] for j in step.others]

        def gradient(g: np.ndarray) -> Any:
            grad = _einsum(step.formula, g, *others, optimize=optimize)
            if step.missing:  # letters only this operand has: the gradient is constant there
                grad = np.expand_dims(grad, step.missing)
            if step.summed:  # axes of length 1 that broadcast in the forward
                grad = grad.sum(axis=step.summed, keepdims=True)
            if step.missing:
                grad = np.broadcast_to(grad, step.target)
            return grad

        if step.distinct == step.labels:  # no repeated letter: the gradient is the buffer
            return contribution(gradient, fresh=False)

        def d(g: np.ndarray, out: np.ndarray) -> None:  # written onto out's diagonal
            view = _diagonal_view(out, step.labels, step.distinct)
            grad = gradient(g)
            _add(view, grad, out=view)

        return d

    return op("einsum", value, *(param_of(x, closure(k), vjp=vjp(k)) for k, x in enumerate(args)))


def _onto_diagonal(grad: Any, labels: str, distinct: str, steps: tuple[_Step, ...]) -> Any:
    """``grad`` (axes ``distinct``) written onto the diagonal of an operand with axes
    ``labels`` (a letter repeated), zero elsewhere, with lampy ops: an einsum of ``grad``
    with identity matrices, which tie each repeat of a letter (renamed to an unused
    letter) to its first axis."""
    used = set("".join(s.labels + s.formula for s in steps))
    free = iter(c for c in _LETTERS if c not in used)
    out_labels, eyes, terms = [], [], []
    seen: set[str] = set()
    sizes = dict(zip(distinct, grad.shape, strict=True))
    for c in labels:
        if c in seen:
            r = next(free, None)
            if r is None:
                raise LampyValueError(
                    f"einsum: no unused letter is left to write the gradient of an operand "
                    f"with subscripts {labels!r} onto its diagonal differentiably."
                )
            out_labels.append(r)
            eyes.append(np.eye(sizes[c], dtype=grad.dtype))
            terms.append(c + r)
        else:
            seen.add(c)
            out_labels.append(c)
    return einsum(",".join([distinct, *terms]) + "->" + "".join(out_labels), grad, *eyes)


__all__ = ["einsum"]
