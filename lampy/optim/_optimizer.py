"""The ``Optimizer`` base class: param groups, per-param state, in-place steps, state dicts.

An optimizer holds lampy param Variables (leaves made by ``lampy.param``) in param
groups, each a dict of hyper-parameters (``lr``, ``weight_decay``...) that schedulers and
users may change between steps. ``lampy.optim.Optimizer.step`` walks the groups, skips params whose
``.grad`` is None, opens the read-only values with ``lampy.in_place`` and hands
each param to the subclass's ``_update``, which changes the value **in place** with numpy
ufuncs writing into preallocated buffers (``out=``): after the first step, a step
allocates no arrays. The layout of ``state_dict`` follows PyTorch's.

Memory. Every state and scratch array is allocated through ``_new_states`` and
``_scratch``, which charge it to the scope of the param it serves (checked against the
scope's budgets: past one, ``MemoryBudgetError`` before any param is written) and
record the charge in the optimizer's ``_Charges``. ``Optimizer.close`` refunds them all;
so does a ``weakref.finalize`` when the optimizer object is freed, which in CPython is
the moment its last reference goes (``del opt``, rebinding the name), unless the
optimizer is caught in a reference cycle: then at the cyclic collector's next run, or
call ``close()``. A charge whose scope has exited is not refunded again (the exit did).
"""

from __future__ import annotations

import copy
import numbers
import threading
import weakref
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

import numpy as np

from lampy._errors import LampyError, LampyTypeError, LampyValueError
from lampy.autograd import in_place, zero_grads
from lampy.autograd._ledger import Ledger, charge_state, refund_state
from lampy.opkit import Variable
from lampy.optim._loaded_state import loaded_value
from lampy.optim._real_pairs import on_real_pairs, real_layout

__all__ = ["Optimizer", "ParamsT", "required"]

ParamsT = Iterable[Variable] | Iterable[dict[str, Any]]
"""What an optimizer takes: params, or dicts of param groups with their own settings."""


class _Required:
    """Marks a hyper-parameter that every param group must give (PyTorch's ``required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _Required()


def _as_param_list(params: Any, where: str) -> list[Variable]:
    if isinstance(params, Variable):
        return [params]
    if isinstance(params, (set, frozenset)):
        raise LampyTypeError(
            f"{where}: params must be an ordered collection (a list or tuple), not a set: "
            "the order of a set changes between runs, so state would not line up with "
            "params when it is saved and loaded."
        )
    return list(params)


def _check_param(p: Any, where: str) -> None:
    if not isinstance(p, Variable):
        raise LampyTypeError(
            f"{where}: an optimizer can only optimize lampy Variables made by lampy.param, "
            f"but one of the params is a {type(p).__name__}."
        )
    if p.is_released:
        raise LampyValueError(
            f"{where}: a param was released (its Scope has exited). Make the params in a "
            "Scope that outlives the optimizer."
        )
    if not p.needs_grad or not p.is_leaf:
        kind = "a constant" if not p.needs_grad else "an op result"
        raise LampyValueError(
            f"{where}: can only optimize params (leaves made by lampy.param), got {kind} "
            f"of shape {p.shape}. Make it with `lampy.param(...)`."
        )


def is_number(v: Any) -> bool:
    """Whether ``v`` is a real number (a Python or numpy int or float, not a bool)."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def check_nonnegative(name: str, **values: float) -> None:
    """Raise ``LampyTypeError`` naming the first of ``values`` that is not a number, or
    ``LampyValueError`` naming the first that is negative (or NaN)."""
    for key, v in values.items():
        if not is_number(v):
            raise LampyTypeError(
                f"{name}: invalid {key} value {v!r} ({type(v).__name__}): it must be a number."
            )
        if not v >= 0.0:
            raise LampyValueError(f"{name}: invalid {key} value {v}: it must be >= 0.")


def check_betas(name: str, betas: Any) -> None:
    """Raise ``LampyValueError`` unless ``betas`` is a pair with each value in ``[0, 1)``
    (``LampyTypeError`` if a value is not a number)."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise LampyValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}.")
    for i, b in enumerate(betas):
        if not is_number(b):
            raise LampyTypeError(
                f"{name}: invalid beta parameter at index {i}: {b!r}; it must be a number in "
                "[0, 1)."
            )
        if not 0.0 <= b < 1.0:
            raise LampyValueError(
                f"{name}: invalid beta parameter at index {i}: {b}; it must be in [0, 1)."
            )


def _same_kind(current: Any, loaded: Any) -> bool:
    """Whether a loaded hyper-parameter has the kind of the current one: a bool for a
    bool, a number for a number, a string for a string, a sequence of as many values of
    the same kinds for a sequence. Values of other kinds (None, objects) take anything."""
    if isinstance(current, (bool, np.bool_)):
        return isinstance(loaded, (bool, np.bool_))
    if is_number(current):
        return is_number(loaded)
    if isinstance(current, str):
        return isinstance(loaded, str)
    if isinstance(current, (tuple, list)):
        return (
            isinstance(loaded, (tuple, list))
            and len(loaded) == len(current)
            and all(_same_kind(c, v) for c, v in zip(current, loaded, strict=True))
        )
    return True


class _Charges:
    """The bytes an optimizer charged to scopes' ledgers, one entry per array it holds
    (state or scratch), so that each can be refunded once: when the array is replaced
    (``load_state_dict``) or when the optimizer closes or is freed (``refund_all``)."""

    __slots__ = ("_by_array", "_lock")

    def __init__(self) -> None:
        self._by_array: dict[int, tuple[weakref.ref[np.ndarray], Ledger, int]] = {}
        self._lock = threading.Lock()

    def add(self, a: np.ndarray, ledger: Ledger | None) -> None:
        if ledger is not None:
            with self._lock:
                self._by_array[id(a)] = (weakref.ref(a), ledger, a.nbytes)

    def refund(self, a: np.ndarray) -> None:
        with self._lock:
            entry = self._by_array.get(id(a))
            if entry is None or entry[0]() is not a:
                return
            del self._by_array[id(a)]
        refund_state(entry[1], entry[2])

    def refund_all(self) -> None:
        with self._lock:
            entries = list(self._by_array.values())
            self._by_array.clear()
        for _, ledger, n in entries:
            refund_state(ledger, n)

    @property
    def nbytes(self) -> int:
        """The bytes charged and not yet refunded."""
        return sum(n for _, _, n in self._by_array.values())


class Optimizer:
    """Base class of optimizers: param groups, per-param state and in-place updates.

    Subclasses set their defaults, validate hyper-parameters in ``_check_group`` and
    implement ``_prepare(group, p)``, which allocates what a step of ``p`` needs (state
    with ``self._new_states(p, k)``, temporaries with ``self._scratch(p, n)``), and
    ``_update(group, p, value, grad)``, which changes ``value`` (the writable value of
    param ``p``) in place from ``grad``, keeping its state in ``self.state[p]``.

    State and scratch arrays are charged to the params' scopes (``Scope.memory``, and
    their budgets) while the optimizer holds them. ``close()`` (or a ``with`` block)
    refunds them; an optimizer that is simply dropped is refunded when CPython frees it,
    at once unless it is part of a reference cycle.

    Args:
        params: An iterable of params (Variables made by ``lampy.param``), or of dicts
            defining param groups: each has a ``"params"`` entry and may override any
            default hyper-parameter.
        defaults: The default hyper-parameters of every group.

    Attributes:
        defaults: The default hyper-parameters.
        param_groups: List of dicts, one per group: ``"params"`` (a list of Variables)
            and the hyper-parameters, which may be changed between steps (schedulers set
            ``"lr"``).
        state: Per-param state, a dict keyed by the param Variable (by identity).

    Raises:
        LampyTypeError: ``params`` is a single Variable or a set, or holds something
            other than Variables.
        LampyValueError: no params, a param is given twice, a Variable is not a param
            (a constant or an op result), or a hyper-parameter is invalid.
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        name = type(self).__name__
        if isinstance(params, Variable):
            raise LampyTypeError(
                f"{name}: params should be an iterable of Variables or dicts, but got a "
                "single Variable. Pass a list: `[w]`."
            )
        self.defaults: dict[str, Any] = dict(defaults)
        self.state: dict[Variable, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        self._scratch_arrays: dict[tuple[tuple[int, ...], np.dtype[Any]], list[np.ndarray]] = {}
        self._charges = _Charges()
        self._closed = False
        # Refunds when the optimizer is freed; close() runs it early (once, either way).
        self._refund = weakref.finalize(self, self._charges.refund_all)
        given: list[Any] = _as_param_list(params, name)
        if not given:
            raise LampyValueError(f"{name}: got an empty parameter list.")
        groups = given if isinstance(given[0], dict) else [{"params": given}]
        for g in groups:
            self.add_param_group(g)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a param group (a dict with ``"params"`` and optional hyper-parameters).

        Missing hyper-parameters take the optimizer's defaults. Useful to train layers
        that were frozen at first. Nothing is added if the group is invalid.

        Raises:
            LampyTypeError: ``param_group`` is not a dict or holds non-Variables.
            LampyValueError: a param is not a param, appears twice, or is already in
                another group; a required hyper-parameter is missing or one is invalid.
        """
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise LampyTypeError(
                f"{name}: a param group must be a dict, got {type(param_group).__name__}."
            )
        if "params" not in param_group:
            raise LampyValueError(f"{name}: a param group needs a 'params' entry.")
        group = dict(param_group)
        params = _as_param_list(group["params"], name)
        for p in params:
            _check_param(p, name)
        for key, default in self.defaults.items():
            if default is required and key not in group:
                raise LampyValueError(
                    f"{name}: the param group does not give a value of the required "
                    f"hyper-parameter {key!r}."
                )
            group.setdefault(key, default)
        if len({id(p) for p in params}) != len(params):
            raise LampyValueError(
                f"{name}: a param group holds the same param more than once; list each param once."
            )
        taken = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in taken for p in params):
            raise LampyValueError(
                f"{name}: some params appear in more than one param group; each param must "
                "belong to exactly one group."
            )
        self._check_group(group)
        group["params"] = params
        self.param_groups.append(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Validate a group's hyper-parameters (subclasses raise ``LampyValueError``)."""

    # ------------------------------------------------------------------- steps
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradient of every param, as PyTorch's ``zero_grad``.

        Args:
            set_to_none: With True (the default, as in PyTorch 2), each ``.grad`` becomes
                None: the next backward pass takes its gradient as the new buffer, with
                no zero-filled buffer to add into, and `step` skips params whose grad is
                None. With False, the buffers are kept and filled with zeros (a param
                with a zero gradient is still stepped: weight decay and momentum act).
        """
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every param that has a gradient, in place, and return the closure's loss.

        Args:
            closure: Optional function that recomputes the loss (and its gradients) and
                returns it; it is called first, and its result returned.

        Returns:
            The closure's result, or None.
        """
        if self._closed:
            raise LampyError(
                f"{type(self).__name__}.step: the optimizer was closed (its state was freed "
                "and refunded); make a new optimizer to go on training."
            )
        loss = None
        if closure is not None:
            loss = closure()
        work = [
            (group, p) for group in self.param_groups for p in group["params"] if p.grad is not None
        ]
        if not work:
            return loss
        # Everything a step needs is allocated (and charged) before any param is written:
        # a MemoryBudgetError leaves every param as it was.
        for group, p in work:
            self._prepare(group, p)
        # Every group's params are opened before any is written: a param that cannot be
        # written (read-only memory) fails the step before anything changed. numpy's
        # warnings are off: like PyTorch, a NaN or inf simply propagates.
        with in_place([p for _, p in work]) as values, np.errstate(all="ignore"):
            for (group, p), value in zip(work, values, strict=True):
                if value.dtype.kind == "c":
                    on_real_pairs(self._update, self.state, group, p, value, p.grad)
                else:
                    self._update(group, p, value, p.grad)
        return loss

    def _prepare(self, group: dict[str, Any], p: Variable) -> None:
        """Allocate the state and scratch arrays a step of ``p`` needs (called for every
        param of a step before any is written)."""

    def _update(self, group: dict[str, Any], p: Variable, value: np.ndarray, grad: Any) -> None:
        raise NotImplementedError

    def _new_states(self, p: Variable, k: int, fill: float = 0.0) -> list[np.ndarray]:
        """``k`` state arrays of ``p``'s shape and dtype filled with ``fill``, charged to
        ``p``'s scope; all or none (past a budget, the ones charged are refunded)."""
        made: list[np.ndarray] = []
        try:
            for _ in range(k):
                a = np.full(p.shape, fill, p.dtype) if fill else np.zeros(p.shape, p.dtype)
                self._charge(p, a, "state")
                made.append(a)
        except BaseException:
            for a in made:
                self._charges.refund(a)
            raise
        return made

    def _charge(self, p: Variable, a: np.ndarray, kind: str) -> None:
        ledger = charge_state(p.node, a, f"{type(self).__name__} {kind} of {p.node.name}")
        self._charges.add(a, ledger)

    def _scratch(self, p: Variable, n: int) -> list[np.ndarray]:
        """``n`` scratch arrays of ``p``'s shape and dtype, shared by same-shaped params.

        Allocated on first use (charged to ``p``'s scope) and reused by every later step:
        their contents are garbage on entry and must not be kept between calls.
        """
        key = real_layout(p)  # a complex param's updates run on real views
        arrays = self._scratch_arrays.get(key)
        if arrays is None:
            arrays = self._scratch_arrays[key] = []
        while len(arrays) < n:
            a = np.empty(*key)
            self._charge(p, a, "scratch")
            arrays.append(a)
        return arrays

    # ------------------------------------------------------------------ memory
    @property
    def nbytes(self) -> int:
        """Bytes of state and scratch this optimizer holds and has charged to scopes."""
        return self._charges.nbytes

    def close(self) -> None:
        """Free the optimizer's state and scratch arrays and refund them to their scopes.

        After it, ``step`` raises. Calling it again does nothing. Without it, the refund
        happens when the optimizer object is freed (see the class docstring).
        """
        self._closed = True
        self.state = {}
        self._scratch_arrays = {}
        self._refund()

    def __copy__(self) -> Optimizer:
        """A shallow copy (the same params, groups and state arrays) with its own memory
        record: what it allocates or loads is its own to charge and refund, and it never
        refunds the original's arrays (``lampy.load`` dry-runs ``load_state_dict`` on
        one)."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._scratch_arrays = {}
        new._charges = _Charges()
        new._refund = weakref.finalize(new, new._charges.refund_all)
        return new

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @staticmethod
    def _direction(
        grad: np.ndarray,
        value: np.ndarray,
        weight_decay: float,
        maximize: bool,
        out: np.ndarray,
    ) -> np.ndarray:
        """The gradient, negated if ``maximize``, plus ``weight_decay * value`` (L2 decay).

        Returns ``grad`` itself when there is nothing to change, else ``out``.
        """
        if weight_decay != 0:
            np.multiply(value, weight_decay, out=out)
            (np.subtract if maximize else np.add)(out, grad, out=out)
            return out
        if maximize:
            np.negative(grad, out=out)
            return out
        return grad

    @staticmethod
    def _lerp(a: np.ndarray, b: np.ndarray, weight: float, tmp: np.ndarray) -> None:
        """``a += weight * (b - a)`` in place, in the two forms PyTorch's ``lerp_`` uses."""
        np.subtract(b, a, out=tmp)
        if weight < 0.5:
            np.multiply(tmp, weight, out=tmp)
            np.add(a, tmp, out=a)
        else:
            np.multiply(tmp, 1 - weight, out=tmp)
            np.subtract(b, tmp, out=a)

    # ------------------------------------------------------------- state dicts
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state as a dict, in PyTorch's layout, as a snapshot.

        ``{"state": {index: {name: array or number}}, "param_groups": [{..., "params":
        [indices]}]}``: params are numbered in the order of the groups. Arrays are
        copies, so later steps do not change a dict already taken.
        """
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: copy.copy(v) for k, v in g.items() if k != "params"}
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {
            index[id(p)]: {
                k: v.copy() if isinstance(v, np.ndarray) else copy.copy(v) for k, v in s.items()
            }
            for p, s in self.state.items()
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state from ``lampy.optim.Optimizer.state_dict``, in place.

        Saved params are matched to this optimizer's params by position (group by
        group). Arrays are copied and cast to each param's dtype. Hyper-parameters of
        each group are taken from the dict (those it lacks keep their current values)
        and validated as by the constructor. Nothing changes if the dict does not fit.

        Raises:
            LampyValueError: the dict lacks ``"state"``/``"param_groups"``, has another
                number of groups or of params in a group, a group without ``"params"``,
                an invalid hyper-parameter, or refers to unknown params.
            ShapeError: a state array's shape differs from its param's.
        """
        name = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= state_dict.keys():
            raise LampyValueError(
                f"{name}: expected a dict with 'state' and 'param_groups' entries, as made by "
                "Optimizer.state_dict()."
            )
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise LampyValueError(
                f"{name}: the loaded state dict has {len(saved_groups)} param groups but "
                f"this optimizer has {len(self.param_groups)}."
            )
        id_map: dict[Any, Variable] = {}
        new_groups = []
        for i, (g, saved) in enumerate(zip(self.param_groups, saved_groups, strict=True)):
            if not isinstance(saved, dict) or "params" not in saved:
                raise LampyValueError(
                    f"{name}: param group {i} of the loaded state dict has no 'params' entry; "
                    "load a dict made by Optimizer.state_dict()."
                )
            new = {k: v for k, v in g.items() if k != "params"}
            for k, v in saved.items():
                if k == "params":
                    continue
                if k in new and not _same_kind(new[k], v):
                    raise LampyTypeError(
                        f"{name}: hyper-parameter {k!r} of param group {i} is {v!r} "
                        f"({type(v).__name__}), but this optimizer's is {new[k]!r}; load a "
                        "dict made by Optimizer.state_dict()."
                    )
                new[k] = copy.copy(v)
            self._check_group(new)
            new["params"] = g["params"]
            new_groups.append(new)
            if len(saved["params"]) != len(g["params"]):
                raise LampyValueError(
                    f"{name}: param group {i} of the loaded state dict has "
                    f"{len(saved['params'])} params but this optimizer's has "
                    f"{len(g['params'])}."
                )
            id_map.update(zip(saved["params"], g["params"], strict=True))
        new_state: dict[Variable, dict[str, Any]] = {}
        for key, entry in state_dict["state"].items():
            if key not in id_map:
                raise LampyValueError(
                    f"{name}: the state refers to param {key!r}, which no loaded param group lists."
                )
            p = id_map[key]
            new_state[p] = {k: loaded_value(name, key, k, v, p) for k, v in entry.items()}
        self._charge_loaded(new_state)
        for entry in self.state.values():
            for v in entry.values():
                if isinstance(v, np.ndarray):
                    self._charges.refund(v)
        self.state = new_state
        self.param_groups = new_groups

    def _charge_loaded(self, state: dict[Variable, dict[str, Any]]) -> None:
        """Charge the arrays of a loaded state, all or none."""
        charged: list[np.ndarray] = []
        try:
            for p, entry in state.items():
                for v in entry.values():
                    if isinstance(v, np.ndarray):
                        self._charge(p, v, "state")
                        charged.append(v)
        except BaseException:
            for a in charged:
                self._charges.refund(a)
            raise

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params")
        lines.append(")")
        return "\n".join(lines)
