"""Checkpoints: a module's state, an optimizer's state and metadata in one safetensors file.

Layout of a lampy checkpoint (see docs/checkpoints.md):

* every entry of ``module.state_dict()`` under its own dotted name, so PyTorch's
  ``model.load_state_dict(safetensors.torch.load_file(path), strict=False)`` or any other
  safetensors reader finds the weights by the names PyTorch uses;
* every array of ``optimizer.state_dict()["state"]`` as ``__optimizer__.state.<i>.<key>``;
* in ``__metadata__`` (strings only): ``lampy.format`` (``"1"``), ``lampy.optimizer`` (a
  JSON text of the optimizer's class, param groups and non-array state) and
  ``lampy.metadata`` (a JSON text of the keyword metadata given to ``save``).
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError
from lampy.io import CheckpointError, read_safetensors, read_safetensors_metadata, write_safetensors
from lampy.nn import Module

__all__ = ["load", "load_metadata", "save"]

FORMAT = "1"
_OPT = "__optimizer__.state."


def _json_default(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(
        f"save: metadata value {v!r} of type {type(v).__name__} is not JSON-serialisable; "
        "pass numbers, strings, lists and dicts (e.g. scheduler.state_dict())."
    )


PathLike = str | os.PathLike[str]


def _path_and_module(where: str, first: Any, second: Any) -> tuple[PathLike, Module]:
    """The path and the module of a ``save``/``load`` call, in either order: lampy's
    ``(path, module)`` or PyTorch's ``(module, path)``."""
    is_path = (str, os.PathLike)
    if isinstance(first, is_path) and isinstance(second, Module):
        return first, second
    if isinstance(first, Module) and isinstance(second, is_path):
        return second, first
    raise LampyTypeError(
        f"{where} takes a path and a lampy.nn.Module, as {where}(path, model, optimizer) "
        f"(or PyTorch's order, {where}(model, path, optimizer)); got a "
        f"{type(first).__name__} and a {type(second).__name__}. Pass the module itself, "
        "not its state_dict()."
    )


def save(
    path: PathLike | Module, module: Module | PathLike, optimizer: Any = None, **metadata: Any
) -> None:
    """Save ``module`` (and ``optimizer``, and ``metadata``) to a safetensors file.

    The write is atomic: the file is written under a temporary name, flushed to disk and
    renamed over ``path``, so a crash mid-save leaves the previous checkpoint intact.
    Saving to a symbolic link replaces the file it points to (the link stays). A
    temporary file that a run killed mid-save left beside ``path`` is removed by the
    next save to ``path``.

    Args:
        path: The file to write (``.safetensors`` by convention).
        module: The module whose ``state_dict()`` is saved. PyTorch's argument order,
            ``save(module, path)``, is accepted too.
        optimizer: An optimizer whose ``state_dict()`` is saved too (its step counts,
            moments and param groups), so training can resume exactly.
        **metadata: JSON-serialisable values (epoch, scheduler state, a generator's
            ``bit_generator.state``...), returned by ``lampy.load``.

    Raises:
        LampyTypeError: if the arguments are not a path and a module, a metadata value
            is not JSON-serialisable or an array's dtype cannot be stored.
        CheckpointWriteError: (an ``OSError``) if the file cannot be written (disk full,
            file size limit...); the previous file is unchanged.
    """
    path, module = _path_and_module("save", path, module)
    tensors: dict[str, np.ndarray] = dict(module.state_dict())
    meta: dict[str, str] = {"lampy.format": FORMAT}
    if optimizer is not None:
        sd = optimizer.state_dict()
        scalars: dict[str, dict[str, Any]] = {}
        for index, state in sd["state"].items():
            for key, value in state.items():
                if isinstance(value, np.ndarray):
                    tensors[f"{_OPT}{index}.{key}"] = value
                else:
                    scalars.setdefault(str(index), {})[key] = value
        meta["lampy.optimizer"] = json.dumps(
            {
                "class": type(optimizer).__name__,
                "param_groups": sd["param_groups"],
                "state": scalars,
            },
            default=_json_default,
        )
    try:
        meta["lampy.metadata"] = json.dumps(metadata, default=_json_default)
    except TypeError as e:
        raise LampyTypeError(str(e)) from None
    write_safetensors(path, tensors, meta)


def _tuples(group: dict[str, Any]) -> dict[str, Any]:
    """JSON turned tuples (betas, etas...) into lists; turn them back, but ``params``."""
    return {k: (tuple(v) if isinstance(v, list) and k != "params" else v) for k, v in group.items()}


def load(
    path: PathLike | Module,
    module: Module | PathLike,
    optimizer: Any = None,
    *,
    strict: bool = True,
) -> dict[str, Any]:
    """Load a checkpoint written by ``lampy.save`` into ``module`` (and ``optimizer``).

    ``load(module, path)`` is accepted too, as ``save`` accepts PyTorch's order. Any
    safetensors file of weights under the module's names loads too (one saved by
    ``safetensors.torch.save_file(torch_model.state_dict(), path)``, say).

    Weights are copied into the module's existing parameter buffers in place (see
    ``lampy.nn.Module.load_state_dict``); names, shapes and dtypes
    are all checked first, so a checkpoint that does not fit changes nothing. Nothing is
    unpickled: the file holds JSON and raw numbers only.

    Args:
        path: The checkpoint file.
        module: The module to load the weights into.
        optimizer: An optimizer to load the saved optimizer state into.
        strict: Whether the checkpoint's weights must be exactly the module's entries,
            as in PyTorch's ``load_state_dict(strict=...)``. With ``strict=False``,
            entries the file lacks keep their values and weights the module lacks are
            ignored (``module.load_state_dict(read_safetensors(path)[0], strict=False)``
            lists both); shapes and dtypes are checked all the same.

    Returns:
        The metadata given to ``save`` as keywords.

    Raises:
        CheckpointError: if the file is malformed, lacks optimizer state that was asked
            for, or was saved from another kind of optimizer.
        LampyValueError, ShapeError, LampyTypeError: from the module's or the optimizer's
            ``load_state_dict`` when names, shapes or dtypes do not fit.
    """
    path, module = _path_and_module("load", path, module)
    if not isinstance(strict, bool):
        raise LampyTypeError(f"load: strict must be True or False, got {strict!r}.")
    tensors, meta = read_safetensors(path)
    user = _user_metadata("load", path, meta)  # parsed before anything is changed
    model_sd = {k: v for k, v in tensors.items() if not k.startswith(_OPT)}
    opt_sd = None if optimizer is None else _optimizer_state(path, tensors, meta, optimizer)
    # Check both before changing either: the module's load validates everything before it
    # writes, so only the optimizer needs a dry run first.
    if opt_sd is not None:
        _dry_run_optimizer(optimizer, opt_sd)
    module.load_state_dict(model_sd, strict=strict)
    if opt_sd is not None:
        optimizer.load_state_dict(opt_sd)
    return user


def load_metadata(path: PathLike) -> dict[str, Any]:
    """The keyword metadata that ``lampy.save`` wrote into a checkpoint, without loading
    its weights: read the model's arguments first, build the model, then ``lampy.load``.

    Only the file's header is read. A safetensors file written by another program has
    no lampy metadata: the result is ``{}``.

    Args:
        path: The checkpoint file.

    Returns:
        The metadata given to ``save`` as keywords (JSON values: dicts, lists, numbers,
        strings).

    Raises:
        CheckpointError: if the file is not a safetensors file or its lampy metadata is
            malformed.

    Examples:
        >>> import os, tempfile, numpy as np, lampy
        >>> from lampy import nn
        >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
        >>> with lampy.Scope():
        ...     model = nn.Linear.init(3, 2, rng=np.random.default_rng(0))
        ...     lampy.save(path, model, model_args={"in": 3, "out": 2})
        >>> lampy.load_metadata(path)
        {'model_args': {'in': 3, 'out': 2}}
    """
    return _user_metadata("load_metadata", path, read_safetensors_metadata(path))


def _user_metadata(where: str, path: Any, meta: dict[str, str]) -> dict[str, Any]:
    try:
        user = json.loads(meta.get("lampy.metadata", "{}"))
        if not isinstance(user, dict):
            raise TypeError("not a JSON object")
    except (json.JSONDecodeError, TypeError, ValueError) as e:
        raise CheckpointError(f"{where}: '{path}' has malformed lampy.metadata ({e}).") from None
    return user


def _optimizer_state(
    path: Any, tensors: dict[str, np.ndarray], meta: dict[str, str], optimizer: Any
) -> dict[str, Any]:
    """The optimizer's state dict rebuilt from a checkpoint's tensors and metadata."""
    raw = meta.get("lampy.optimizer")
    if raw is None:
        raise CheckpointError(
            f"load: '{path}' holds no optimizer state (it was saved without an "
            "optimizer); call load(path, module) and start the optimizer afresh."
        )
    try:
        info = json.loads(raw)
        saved_class, groups, scalars = info["class"], info["param_groups"], info["state"]
        state: dict[int, dict[str, Any]] = {int(i): dict(v) for i, v in scalars.items()}
        for key, value in tensors.items():
            if key.startswith(_OPT):
                index, name = key[len(_OPT) :].split(".", 1)
                state.setdefault(int(index), {})[name] = value
        param_groups = [_tuples(g) for g in groups]
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise CheckpointError(
            f"load: '{path}' has malformed optimizer state ({type(e).__name__}: {e})."
        ) from None
    if saved_class != type(optimizer).__name__:
        raise CheckpointError(
            f"load: '{path}' holds the state of a {saved_class} optimizer, not of a "
            f"{type(optimizer).__name__}; load it into the same kind of optimizer."
        )
    return {"state": state, "param_groups": param_groups}


def _dry_run_optimizer(optimizer: Any, sd: dict[str, Any]) -> None:
    """Raise what ``optimizer.load_state_dict(sd)`` would raise, changing nothing."""
    import copy

    probe = copy.copy(optimizer)
    probe.state = dict(optimizer.state)
    probe.param_groups = [dict(g) for g in optimizer.param_groups]
    probe.load_state_dict(sd)
