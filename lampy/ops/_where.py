"""Elementwise selection: ``where(condition, x, y)`` and ``select(condlist, choicelist,
default)``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import DTypeError, LampyValueError, ShapeError, shape_mismatch
from lampy.opkit import (
    Operand,
    Variable,
    accumulate,
    op,
    param_of,
    real_result,
    value_of,
    values_of,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

from collections.abc import Sequence

_where = np.where


def where(condition: Operand, x: Operand, y: Operand) -> Variable:
    """Elementwise ``x`` where ``condition`` holds, else ``y``, with numpy broadcasting
    of all three (numpy's three-argument ``where``).

    Args:
        condition: A boolean array, array-like or Variable; other dtypes are taken by
            truth value (nonzero is True), as numpy does. It carries no gradient.
        x: The values taken where ``condition`` holds: a Variable, an array or a
            scalar. A Python number next to a float32 array stays float32.
        y: The values taken elsewhere, of the same kinds as ``x``.

    Returns:
        A Variable of the broadcast shape of the three and numpy's result dtype of ``x``
        and ``y``.

    Raises:
        ShapeError: if the three shapes do not broadcast together.

    Gradient:
        ``dx = g`` where ``condition``, else 0; ``dy = g`` where not ``condition``, else
        0 (each summed over its broadcast axes).
    """
    c = value_of(condition, name="where")
    a, b = values_of(x, y, name="where")
    try:
        value = _where(c, a, b)
    except ValueError:
        raise shape_mismatch(
            "where",
            np.asarray(c),
            np.asarray(a),
            np.asarray(b),
            detail="condition, x and y must broadcast together: numpy broadcasting needs "
            "each set of trailing dimensions to be equal or 1.",
        ) from None
    if value.dtype.kind in "cO":  # complex or object: refused if a gradient is needed
        real_result("where", value, x, y)

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, _where(np.asarray(c, dtype=bool), g, g.dtype.type(0)))

    def d_y(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, _where(np.asarray(c, dtype=bool), g.dtype.type(0), g))

    cb = np.asarray(c, dtype=bool)
    return op(
        "where",
        value,
        param_of(x, d_x, vjp=lambda g, out: where(cb, g, 0.0)),
        param_of(y, d_y, vjp=lambda g, out: where(cb, 0.0, g)),
    )


def select(
    condlist: Sequence[ArrayLike], choicelist: Sequence[Operand], default: Operand = 0
) -> Variable:
    """Elementwise, the choice of the first condition that holds, else ``default``, as
    ``numpy.select``; conditions, choices and ``default`` broadcast together.

    Args:
        condlist: A non-empty sequence of boolean arrays (constants).
        choicelist: As many choices: Variables, arrays or numbers.
        default: The value where no condition holds (a Variable, array or number).

    Raises:
        LampyValueError: if the lists are empty or of different lengths.
        DTypeError: if a condition is not boolean.
        ShapeError: if the shapes do not broadcast together.

    Gradient:
        ``dchoice_i = g`` where condition ``i`` is the first to hold, else 0;
        ``ddefault = g`` where no condition holds (each summed over its broadcast axes).
    """
    conds = [np.asarray(value_of(c, name="select")) for c in condlist]
    choices = list(choicelist)
    if len(conds) != len(choices):
        raise LampyValueError(
            f"select: condlist has {len(conds)} conditions but choicelist has "
            f"{len(choices)} choices; give one choice per condition."
        )
    if not conds:
        raise LampyValueError("select: condlist is empty; give at least one condition.")
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise DTypeError(
                f"select: condition {i} has dtype {c.dtype}, not bool; compare it first "
                "(for example `mask != 0`)."
            )
    values = [value_of(c, name="select") for c in choices]
    try:
        value = np.select(conds, values, value_of(default, name="select"))
    except ValueError:
        raise ShapeError(
            "select: the conditions, choices and default do not broadcast together (shapes "
            + ", ".join(
                str(np.shape(v)) for v in [*conds, *values, value_of(default, name="select")]
            )
            + ")."
        ) from None
    real_result("select", value, choices, default)
    shape = value.shape
    taken: list[np.ndarray] = []

    def masks() -> list[np.ndarray]:
        """Where each choice, then the default, was taken (computed once, on demand)."""
        if not taken:
            free = np.ones(shape, bool)
            for c in conds:
                taken.append(free & c)
                free = free & ~c
            taken.append(free)
        return taken

    def closure(i: int) -> Any:
        def d(g: np.ndarray, out: np.ndarray) -> None:
            accumulate(out, _where(masks()[i], g, g.dtype.type(0)))

        return d

    def vjp(i: int) -> Any:
        return lambda g, out: where(masks()[i], g, 0.0)

    return op(
        "select",
        value,
        *(param_of(x, closure(i), vjp=vjp(i)) for i, x in enumerate(choices)),
        param_of(default, closure(len(choices)), vjp=vjp(len(choices))),
    )


__all__ = ["select", "where"]
