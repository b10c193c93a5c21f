"""Starting every rank from the same weights: broadcasts of a module's and an optimizer's state.

Both check first, with one tiny all-reduce, that every rank holds the same structure (names,
shapes, dtypes), and raise the same clear error on every rank when one differs. They load
what they receive through the public ``load_state_dict`` of the module or optimizer, which
validates everything before it writes.
"""

from __future__ import annotations

import pickle

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.distributed._world import DistributedError, World, world
from lampy.nn import Module
from lampy.optim import Optimizer

__all__ = [
    "broadcast_module_state",
    "broadcast_optimizer_state",
    "broadcast_parameters",
    "check_same_structure",
]


def _check_root(w: World, root: int, what: str) -> None:
    if isinstance(root, bool) or not isinstance(root, int | np.integer) or not 0 <= root < w.size:
        raise LampyValueError(
            f"{what}: root must be a rank between 0 and {w.size - 1}, got {root!r}."
        )


def _structure(entries: dict[str, np.ndarray]) -> list[str]:
    return [f"{name}: {a.dtype}{list(a.shape)}" for name, a in entries.items()]


_SAME = {
    "model": "the same layers, sizes and dtypes",
    "optimizer": "the same class over the same parameters",
}


def check_same_structure(w: World, lines: list[str], what: str, kind: str) -> None:
    """Raise the same ``DistributedError`` on every rank unless all ranks gave ``lines``.

    The message shows, for each rank that differs from rank 0, the first line where it
    does.
    """
    texts = w.disagreement("\n".join(lines), what)
    if texts is None:
        return
    reference = texts[0].split("\n")
    problems = []
    for r, text in enumerate(texts[1:], start=1):
        other = text.split("\n")
        if other == reference:
            continue
        for i in range(max(len(reference), len(other))):
            mine = other[i] if i < len(other) else "(nothing)"
            theirs = reference[i] if i < len(reference) else "(nothing)"
            if mine != theirs:
                problems.append(f"rank {r} has {mine!r} where rank 0 has {theirs!r}")
                break
    raise DistributedError(
        f"{what}: the ranks hold different {kind}s ({'; '.join(problems)}). Every rank "
        f"must build the same {kind} ({_SAME[kind]}), from the same code and configuration."
    )


def broadcast_parameters(model: Module, root: int = 0) -> None:
    """Copy rank ``root``'s parameters and buffers into ``model`` on every other rank.

    Call it after building the model on every rank (and after loading a checkpoint, if
    only some ranks loaded one), so that all ranks start from the same weights.
    ``lampy.distributed.DataParallel`` calls it when it is made. Every entry
    of ``model.state_dict()`` is sent: trainable and frozen parameters and buffers
    (batch-norm running statistics). Values are written in place, so every copy of the
    module (``model.train()``, ``model.eval()``) and the optimizer see them.

    Args:
        model: The module, built the same way on every rank.
        root: The rank whose weights everyone takes.

    Raises:
        NotInitializedError: before ``lampy.distributed.init``.
        DistributedError: on every rank, when the ranks' models differ in entry names,
            shapes or dtypes; it names the first difference.
        LampyTypeError: ``model`` is not a ``lampy.nn.Module``.
    """
    broadcast_module_state(model, root, "lampy.distributed.broadcast_parameters")


def broadcast_module_state(model: Module, root: int, what: str) -> None:
    """``lampy.distributed.broadcast_parameters``, with errors naming
    ``what``."""
    w = world(what)
    if not isinstance(model, Module):
        raise LampyTypeError(
            f"{what}: model must be a lampy.nn.Module, got {type(model).__name__}."
        )
    _check_root(w, root, what)
    state = model.state_dict()
    check_same_structure(w, _structure(state), what, "model")
    if w.size == 1:
        return
    if w.rank == root:
        buffers = [np.ascontiguousarray(a).copy() for a in state.values()]
    else:
        buffers = [np.empty(a.shape, a.dtype) for a in state.values()]
    w.broadcast_arrays(buffers, root, what)
    error = None
    if w.rank != root:
        try:
            model.load_state_dict(dict(zip(state, buffers, strict=True)))
        except Exception as e:  # reported to every rank by agree()
            error = e
    w.agree(error, what)


def broadcast_optimizer_state(optimizer: Optimizer, root: int = 0) -> None:
    """Copy rank ``root``'s optimizer state (step counts, moments, hyper-parameters) into
    ``optimizer`` on every other rank.

    Use it when resuming, if only rank ``root`` loaded the checkpoint, so that every rank
    steps identically afterwards. The optimizer must be the same kind over the same
    parameters on every rank.

    Args:
        optimizer: A ``lampy.optim.Optimizer`` built the same way on every rank.
        root: The rank whose state everyone takes.

    Raises:
        NotInitializedError: before ``lampy.distributed.init``.
        DistributedError: on every rank, when the ranks' optimizers differ in class,
            number of params or their shapes and dtypes, or when loading failed on a
            rank.
    """
    what = "lampy.distributed.broadcast_optimizer_state"
    w = world(what)
    _check_root(w, root, what)
    lines = [type(optimizer).__name__]
    for i, group in enumerate(optimizer.param_groups):
        lines += [
            f"group {i} param {j}: {p.dtype}{list(p.shape)}" for j, p in enumerate(group["params"])
        ]
    check_same_structure(w, lines, what, "optimizer")
    if w.size == 1:
        return
    # The state dict travels as a pickle of everything but its arrays, which are sent as
    # raw buffers; pickle is safe here, between the processes of one job.
    arrays: list[np.ndarray] = []
    skeleton = b""
    if w.rank == root:
        sd = optimizer.state_dict()
        for entry in sd["state"].values():
            for key, value in entry.items():
                if isinstance(value, np.ndarray):
                    arrays.append(np.ascontiguousarray(value))
                    entry[key] = _ArraySpec(value.shape, value.dtype.str)
        skeleton = pickle.dumps(sd)
    sd = pickle.loads(w.broadcast_bytes(skeleton, root, what))
    specs = [
        (entry, key)
        for entry in sd["state"].values()
        for key, value in entry.items()
        if isinstance(value, _ArraySpec)
    ]
    if w.rank != root:
        arrays = [np.empty(entry[key].shape, np.dtype(entry[key].dtype)) for entry, key in specs]
    w.broadcast_arrays(arrays, root, what)
    error = None
    if w.rank != root:
        for (entry, key), a in zip(specs, arrays, strict=True):
            entry[key] = a
        try:
            optimizer.load_state_dict(sd)
        except Exception as e:  # reported to every rank by agree()
            error = e
    w.agree(error, what)


class _ArraySpec:
    """Stands for an array in a pickled state dict: its shape and dtype."""

    def __init__(self, shape: tuple[int, ...], dtype: str) -> None:
        self.shape = shape
        self.dtype = dtype
