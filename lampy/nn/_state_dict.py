"""State dicts: the dotted names of a module's state, its arrays as read-only views, and
loading arrays back into the same memory, all checks before any write.

``Module.named_children``, ``_named_state``, ``state_dict`` and ``load_state_dict`` (in
``_module.py``) walk a module's fields; the names and the arrays are made here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy._memory import sealed_view
from lampy._narrowing import cast_checked
from lampy._tree import is_container, leaves_with_paths
from lampy.autograd import in_place
from lampy.nn._buffer import Buffer
from lampy.nn._marker import is_module
from lampy.opkit import Variable

__all__ = ["IncompatibleKeys", "load_state", "state_arrays", "state_entries"]


class IncompatibleKeys(NamedTuple):
    """What ``lampy.nn.Module.load_state_dict`` did not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


def state_entries(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    """The (dotted name, leaf) pairs below one field value, in order.

    Leaves are Variables, Buffers, numpy arrays (buffers too) and Modules; the containers
    around them are walked as ``lampy.tree`` walks them, each step of the path a part of
    the name.
    """
    if is_module(value) or isinstance(value, Variable | Buffer | np.ndarray):
        yield prefix, value
        return
    if not is_container(value):
        return
    for path, leaf in leaves_with_paths(value, is_leaf=is_module):
        if is_module(leaf) or isinstance(leaf, Variable | Buffer | np.ndarray):
            yield ".".join([prefix, *map(str, path)] if prefix else map(str, path)), leaf


def state_arrays(
    named_state: Iterable[tuple[str, Variable | Buffer | np.ndarray]],
) -> dict[str, np.ndarray]:
    """``Module.state_dict``: each entry of ``named_state`` as a read-only view, the
    first of each name."""
    out: dict[str, np.ndarray] = {}
    for name, leaf in named_state:
        if name in out:
            continue
        if isinstance(leaf, Variable):
            # a view numpy cannot make writable: a write would bypass the version
            # counter (load_state_dict and optimizers write through in_place)
            out[name] = sealed_view(leaf.value)
        elif isinstance(leaf, Buffer):
            out[name] = leaf.value  # sealed too: the buffer's own update() writes it
        else:
            view = leaf.view()
            view.setflags(write=False)
            out[name] = view
    return out


def load_state(
    name: str,
    own: Mapping[str, Variable | Buffer | np.ndarray],
    state_dict: Mapping[str, Any],
    strict: bool,
) -> IncompatibleKeys:
    """``Module.load_state_dict`` of the module ``name`` (its class name, for messages)
    whose entries are ``own``: every key, shape and cast checked, then every write."""
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    if strict and (missing or unexpected):
        raise LampyValueError(
            f"{name}.load_state_dict: the keys do not match. Missing: {missing or 'none'}; "
            f"unexpected: {unexpected or 'none'}. Check that the state dict comes from "
            "the same architecture, or pass strict=False to load the common keys."
        )
    pairs: list[tuple[np.ndarray | Buffer, np.ndarray]] = []
    params: list[Variable] = []
    for key, dest in own.items():
        if key not in state_dict:
            continue
        if isinstance(dest, Variable):
            params.append(dest)
        dst = dest.value if isinstance(dest, Variable) else dest
        src = state_dict[key]
        if isinstance(src, Variable):
            src = src.value
        src = np.asarray(src)
        if src.shape != dst.shape:
            raise ShapeError(
                f"{name}.load_state_dict: '{key}' has shape {dst.shape} in the module "
                f"but {src.shape} in the state dict; nothing was loaded. Check the "
                "module's configuration (sizes, bias, layers) against the saved one."
            )
        if not np.can_cast(src.dtype, dst.dtype, casting="same_kind"):
            raise LampyTypeError(
                f"{name}.load_state_dict: '{key}' is {src.dtype} in the state dict and "
                f"cannot be cast to the module's {dst.dtype}; nothing was loaded."
            )
        pairs.append((dst, cast_checked(f"{name}.load_state_dict", f"'{key}'", src, dst.dtype)))
    with in_place(params):  # each param's version goes up: graphs made before are stale
        for target, src in pairs:
            if isinstance(target, Buffer):
                target.load(src)
            else:
                np.copyto(target, src)
    return IncompatibleKeys(missing, unexpected)
