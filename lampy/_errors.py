"""Exceptions raised by lampy and the builders of their messages.

Every error says what happened, why, and how to fix it, naming the op and the
shapes or dtypes involved. Shape errors are also ``ValueError`` and dtype errors
also ``TypeError``, so code written against numpy's exceptions keeps working.
"""

from __future__ import annotations

from typing import Any

from attrs.exceptions import FrozenInstanceError


class LampyError(Exception):
    """Base class of every error lampy raises on purpose."""


class NoScopeError(LampyError, RuntimeError):
    """A Variable was created while no ``lampy.Scope`` was active."""


class ReleasedError(LampyError, RuntimeError):
    """A Variable was used after the Scope that owned it exited."""


class StaleGraphError(LampyError, RuntimeError):
    """A param was changed in place after an op read it, before backprop through that op."""


class SpentGraphError(LampyError, RuntimeError):
    """Backprop reached an op whose closures an earlier pass already ran and freed (a
    pass without ``retain=True``)."""


class ScopeWarning(UserWarning):
    """A scope is used in a way that makes its memory grow without bound (a training
    loop without a scope per step)."""


def spent_graph(name: str, shape: tuple[int, ...], dtype: object) -> SpentGraphError:
    """The error for backprop through op ``name`` after a pass freed its closures."""
    return SpentGraphError(
        f"backward: op '{name}' (shape {shape}, dtype {dtype}) was already backpropagated "
        "through by an earlier pass, which freed its saved values as it went (as PyTorch "
        "does without retain_graph). Pass `retain=True` to the first backward to "
        "backpropagate through the same graph again, or recompute the forward pass. No "
        "gradient was changed."
    )


class NoSecondOrderError(LampyError, NotImplementedError):
    """An op on the path of a differentiable backward pass (``create_graph=True``, a
    nested ``lampy.grad``, ``lampy.hessian``...) has no differentiable backward rule."""


class BackwardError(LampyError, RuntimeError):
    """A backward closure raised during backprop; the original exception is its cause."""


class LampyValueError(LampyError, ValueError):
    """An argument has the right type but a value lampy cannot take."""


class LampyTypeError(LampyError, TypeError):
    """An argument has a type lampy cannot take."""


class AmbiguousMethodError(LampyTypeError):
    """A method call that numpy and PyTorch read differently (``x.transpose(0, 1)`` on a
    2-d Variable, ``x.std(1)``, ``x.max(1)``...); the message shows both spellings."""


class ShapeError(LampyValueError):
    """Shapes of an op's inputs do not fit together."""


class BadIndexError(LampyError, IndexError):
    """An index does not fit the indexed Variable (out of range, wrong kind or dtype).

    An ``IndexError``, as in numpy, so iteration protocols that stop on it keep working.
    """


class DTypeError(LampyTypeError):
    """An input has a dtype the op cannot take (for example an integer param)."""


class ImmutableModuleError(LampyError, FrozenInstanceError):
    """A module was to be changed in place: an attribute assigned, or PyTorch's
    ``model.eval()``/``model.train()`` called as a statement.

    Modules are immutable records; the message shows the lampy way. An ``attrs``
    ``FrozenInstanceError`` (so an ``AttributeError``), which code catching attrs' error
    keeps catching.
    """

    def __init__(self, message: str) -> None:
        # attrs' own __init__ takes no message (it sets a fixed one): skip it.
        AttributeError.__init__(self, message)
        self.msg = message


class MissingExtraError(LampyError, ImportError):
    """An optional capability needs a package that is not installed; the message names the
    ``pip install "lampy[extra]"`` line that brings it."""


def describe(value: Any) -> str:
    """Short description of an operand for messages: ``float32[3, 4]`` or ``float``."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{dtype}{list(shape)}"
    return type(value).__name__


NO_SCOPE = (
    "{what}: no lampy.Scope is active. Every Variable belongs to a scope that releases "
    "it deterministically; create Variables inside one:\n\n"
    "    with lampy.Scope():\n"
    "        x = lampy.param(...)\n"
)


def no_scope(what: str) -> NoScopeError:
    return NoScopeError(NO_SCOPE.format(what=what))


def released(description: str, use: str) -> ReleasedError:
    return ReleasedError(
        f"{use} of a released Variable (made by {description}): the Scope that owned it "
        "has exited and its memory was returned. To use a Variable after its scope ends, "
        "move it out before the `with` block closes: `v = scope.keep(v)`, or copy the "
        "data out with `v.value.copy()`. (Released earlier than expected? A generator that "
        "yields inside its own `with lampy.Scope()` makes the caller's new Variables its "
        "own and releases them on the next `next()`: open the scope around the loop "
        "instead.)"
    )


def shape_mismatch(op: str, *operands: Any, detail: str = "") -> ShapeError:
    shapes = " and ".join(str(tuple(getattr(o, "shape", ()))) for o in operands)
    extra = f" {detail}" if detail else ""
    return ShapeError(f"{op}: shapes {shapes} do not fit together.{extra}")


def missing_extra(what: str, extra: str, missing: str) -> MissingExtraError:
    """The error for ``what`` needing the ``lampy[extra]`` extra, whose ``missing``
    package could not be imported."""
    return MissingExtraError(
        f"{what} needs the optional package {missing}, which is not installed. Install "
        f'lampy\'s {extra!r} extra: pip install "lampy[{extra}]"'
    )


def not_float(op: str, dtype: Any, what: str = "a param") -> DTypeError:
    return DTypeError(
        f"{op}: {what} must have a floating (or complex) dtype to carry a gradient, got {dtype}. "
        "Cast it first (for example `lampy.param(x, dtype=numpy.float32)`), or use "
        "`lampy.const(x)` if no gradient is needed."
    )


class MemoryBudgetError(LampyError, MemoryError):
    """An allocation would take a scope past its memory budget (``Scope(budget=...)``).

    Raised before the array is allocated where the op knows its output size in advance,
    else right after (the new array is dropped). The scope is left intact.
    """


def not_real(op: str, dtype: Any, operands: str = "") -> DTypeError:
    """The error of an op whose result would be complex (by its ``dtype=`` argument) or
    object while a gradient is needed: the gradient would be lost."""
    dt = str(dtype)
    source = f" (from {operands})" if operands else ""
    if dt == "object":
        why = (
            "an object array (Python Fractions, Decimals or mixed objects) cannot carry a "
            "gradient. Convert the constant to floats first, e.g. `numpy.asarray(c, dtype=float)`."
        )
    else:
        why = (
            "this op does not make a complex result from a real input that needs a gradient. "
            "Cast the input first (`x.astype(numpy.complex128)`, whose gradient is the real "
            "part), or keep the computation real: take `c.real` / `c.imag` of a constant and "
            "combine real results."
        )
    return DTypeError(
        f"{op}: the result would have dtype {dt}{source} while an input needs a gradient; {why}"
    )


def drops_gradient(op: str, dtype: Any) -> DTypeError:
    """The error of a ``dtype=`` argument that would turn a result needing a gradient into a
    non-float (so constant) one."""
    dt = str(dtype)
    if dt.startswith("complex") or dt == "object":
        return not_real(op, dtype, "the dtype= argument")
    return DTypeError(
        f"{op}: dtype={dt} would make the result a constant, silently dropping the gradient of "
        "an input that needs one. Pass a floating dtype (or None); if you mean a constant, "
        "use the input's `.value`, or cast the result with `lampy.astype`."
    )
