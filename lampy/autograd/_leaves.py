"""Leaves: the Variables that no op made, ``param`` (needs a gradient) and ``const``
(does not), and ``zero_grads``, which resets many params' gradients at once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from lampy._errors import DTypeError, no_scope, not_float
from lampy._namespaces import zeros_like
from lampy.autograd import _ledger
from lampy.autograd._scope import closed_scope, current_or_none
from lampy.autograd._variable import Variable, _leaf_in

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


def _leaf(what: str, x: Any, dtype: Any, needs_grad: bool, copy: bool = True) -> Variable:
    scope = current_or_none()
    if scope is None:
        raise no_scope(f"lampy.{what}()")
    if not scope.is_open:
        raise closed_scope(scope, f"lampy.{what}()")
    if type(x) is Variable:
        x = x.value
    try:
        arr = np.array(x, dtype=dtype, copy=True) if copy else np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise DTypeError(
            f"lampy.{what}: cannot make an array of {type(x).__name__} "
            f"(dtype={dtype}): {e}. Pass a numpy array, a nested list of numbers or a scalar."
        ) from e
    if arr.dtype == object:
        raise DTypeError(
            f"lampy.{what}: the input became an object array; pass numbers, not "
            "Variables or mixed objects (use lampy.stack to combine Variables)."
        )
    if arr.dtype.kind not in "biufc":
        raise DTypeError(
            f"lampy.{what}: dtype {arr.dtype} is not numeric; a Variable holds booleans, "
            "integers or floating-point numbers. Convert the data first."
        )
    if needs_grad and arr.dtype.kind not in "fc":
        raise not_float(f"lampy.{what}", arr.dtype)
    return _leaf_in(scope, what, arr, needs_grad, not copy)


def param(
    x: ArrayLike | Variable, dtype: DTypeLike | None = None, *, copy: bool = True
) -> Variable:
    """A leaf Variable that needs a gradient, owned by the current scope.

    Args:
        x: An array, array-like or Python scalar; it is copied, so later changes to
            ``x`` do not reach the graph. float32 stays float32; Python floats and lists
            of them give float64.
        dtype: A floating dtype to cast to.
        copy: With ``copy=False`` an ndarray of the right dtype is used without a copy
            (through a read-only view), saving the copy's time and memory. You then
            promise not to change ``x`` while the Variable lives: a change would reach
            the value, and the gradients computed from it. Optimizers write a param's
            new values into ``x`` (``lampy.in_place``); an ``x`` that is read-only is
            never written: an in-place write then raises a clear error.

    Raises:
        DTypeError: (a ``TypeError``) if the dtype is not floating (integers and bools
            carry no gradient).
        NoScopeError: if no scope is active.
    """
    return _leaf("param", x, dtype, True, copy)


def const(
    x: ArrayLike | Variable, dtype: DTypeLike | None = None, *, copy: bool = True
) -> Variable:
    """A leaf Variable that needs no gradient, owned by the current scope.

    Args:
        x: An array, array-like or Python scalar, of any dtype; it is copied.
        dtype: A dtype to cast to.
        copy: ``copy=False`` uses an ndarray of the right dtype without a copy (see
            ``lampy.param``): you promise not to change it while the Variable lives.

    Raises:
        NoScopeError: if no scope is active.
    """
    return _leaf("const", x, dtype, False, copy)


def zero_grads(variables: Iterable[Variable], set_to_none: bool = True) -> None:
    """``v.zero_grad(set_to_none)`` for each of ``variables`` (a model's or an
    optimizer's ``zero_grad``), with one memory-accounting update per scope instead of
    one per Variable. Nothing is reset if one of them was released.

    Raises:
        ReleasedError: if a Variable's scope has exited.
    """
    nodes = [v.node for v in variables]
    for node in nodes:
        if node.scope is None:
            raise node.released_error(".zero_grad()")
    if set_to_none:
        _ledger.drop_grads(nodes)
        return
    for node in nodes:
        g = node.grad
        if type(g) is np.ndarray:
            g.fill(0)
        elif g is not None:  # another namespace's array: replaced, never written into
            node.adopt_grad(zeros_like(g))


__all__ = ["const", "param", "zero_grads"]
