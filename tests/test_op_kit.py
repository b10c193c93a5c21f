"""Packages meet through public names: no module imports another package's ``_`` modules
or ``_`` names, except through the op authors' kit (``lampy.opkit``).

A package is a directory under ``lampy/`` (``lampy/nn`` and ``lampy/nn/functional`` are
two). Every import in ``lampy/`` counts, those inside functions and ``if TYPE_CHECKING:``
blocks included. The modules at the top of ``lampy/`` (``_errors``, ``_memory``,
``_dtypes``...) are the foundation every package stands on, so importing them is not
crossing; their ``_`` names are private all the same.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import lampy
import lampy.opkit as kit

ROOT = Path(__file__).resolve().parent.parent
LAMPY = ROOT / "lampy"
KIT = "lampy/opkit"

# The imports that still cross, as (importing file, imported module, name or None); each
# with its reason. Keep it short: a new entry needs a reason as good as these.
ALLOWED = {
    # ``open_budgets`` is an int the ledger rebinds, read inline on the ops' hot path
    # (``if _ledger.open_budgets: ...``), so that an op pays one attribute load when no
    # scope has a budget; a re-export would copy the int. ``opkit.reserve_output`` is the
    # public form.
    *{
        (f"lampy/{f}.py", "lampy.autograd", "_ledger")
        for f in (
            "ops/_indexing",
            "ops/_join",
            "ops/_products",
            "ops/_reductions",
            "nn/functional/_activations",
            "nn/functional/_dropout",
            "nn/functional/_linear",
            "nn/functional/_shared",
        )
    },
    # Optimizer state is charged to its scope's memory ledger; the ledger's API belongs to
    # the memory issue, which owns the engine core.
    *{
        ("lampy/optim/_optimizer.py", "lampy.autograd._ledger", n)
        for n in ("Ledger", "charge_state", "refund_state")
    },
    # Anomaly detection walks the graph's edges, whose layout stays inside the engine.
    ("lampy/train/_anomaly.py", "lampy.autograd._edge", "NODE"),
    # ``fit(..., distributed=True)`` hands over to lampy.distributed's internal driver,
    # imported on first use (the package is optional at run time).
    ("lampy/train/_fit.py", "lampy.distributed._training", "DistributedFit"),
    ("lampy/train/_loop.py", "lampy.distributed._training", "DistributedFit"),
    # nn's modules check their size arguments with the functional ops' own checkers, so a
    # module and its op refuse the same values with the same message.
    ("lampy/nn/_conv.py", "lampy.nn.functional._conv_common", "as_ints"),
    ("lampy/nn/_pooling.py", "lampy.nn.functional._pool", "int_tuple"),
    # The fused recurrent kernels behind nn.RNN, nn.LSTM and nn.GRU (and their cells):
    # not functional API (PyTorch has none), so not exported by lampy.nn.functional.
    *{
        (f"lampy/nn/{f}.py", "lampy.nn.functional._recurrent", f"{cell}_sequence")
        for f in ("_recurrent", "_rnn_cells")
        for cell in ("rnn", "lstm", "gru")
    },
}


def _package(path: Path) -> str:
    return path.parent.relative_to(ROOT).as_posix()


def _is_package(dotted: str) -> bool:
    return (ROOT / Path(*dotted.split("."))).is_dir()


def _is_module(dotted: str) -> bool:
    path = ROOT / Path(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _owner(dotted: str) -> str:
    """The package (a directory, as ``lampy/nn``) that holds module ``dotted``."""
    parts = dotted.split(".")
    while not _is_package(".".join(parts)):
        parts.pop()
    return "/".join(parts)


def crossing_imports() -> list[tuple[str, int, str, str | None]]:
    """Every import in ``lampy/`` of another package's ``_`` module or ``_`` name, as
    (file, line, module, name): ``name`` is None for ``import lampy.x._y``."""
    found = []
    for path in sorted(LAMPY.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        here = _package(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = here.split("/")[: len(here.split("/")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                pairs = [(base, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                pairs = [(a.name, None) for a in node.names]
            else:
                continue
            for module, name in pairs:
                if not module.startswith("lampy"):
                    continue
                full = f"{module}.{name}" if name else module
                is_module = name is not None and _is_module(full)
                target = full if is_module else module  # ``from lampy import _memory``
                owner = _owner(target)
                if owner == here:
                    continue  # within one package, ``_`` imports are allowed
                private_module = any(
                    p.startswith("_") for p in target.split(".")[len(owner.split("/")) :]
                )
                private_name = not is_module and name is not None and name.startswith("_")
                if (private_module and owner != "lampy") or private_name:
                    found.append((rel, node.lineno, module, name))
    return found


def test_packages_import_each_other_only_through_public_names_and_the_kit() -> None:
    """No import crosses into another package's ``_`` modules or names, except the kit's
    own and the few listed in ``ALLOWED`` (each with its reason)."""
    crossing = [
        (f, line, m, n)
        for f, line, m, n in crossing_imports()
        if not f.startswith(KIT) and (f, m, n) not in ALLOWED
    ]
    assert crossing == [], "\n".join(
        f"{f}:{line}: from {m} import {n}" for f, line, m, n in crossing
    )


def test_every_allowed_crossing_is_still_there() -> None:
    """``ALLOWED`` lists only imports that exist (an entry no longer needed is removed)."""
    present = {(f, m, n) for f, _, m, n in crossing_imports()}
    assert ALLOWED - present == set()


def test_the_kit_re_exports_the_same_objects() -> None:
    """The kit adds no wrapper: its names are the very functions and types lampy uses."""
    assert kit.op is lampy.op
    assert kit.Variable is lampy.Variable
    assert kit.unbroadcast is lampy.unbroadcast
    assert kit.contribution is lampy.contribution
    assert sorted(kit.__all__) == sorted(set(kit.__all__))
    for name in kit.__all__:
        assert getattr(kit, name) is not None, name
        assert name in kit.__doc__, f"lampy.opkit's docstring does not describe {name}"


@pytest.mark.parametrize(
    ("axis", "ndim", "expected"),
    [(None, 3, (0, 1, 2)), (-1, 3, (2,)), ((2, 0), 3, (0, 2)), ([1], 2, (1,)), (0, 0, ())],
)
def test_normalize_axis_gives_sorted_non_negative_axes(axis, ndim, expected) -> None:
    """``normalize_axis`` takes None, an int or a sequence of ints, negatives allowed."""
    if ndim == 0:
        with pytest.raises(lampy.ShapeError):
            kit.normalize_axis("sum", axis, ndim)
        return
    assert kit.normalize_axis("sum", axis, ndim) == expected


@pytest.mark.parametrize("axis", [1.0, "0", True, (0, 0.5), np.array([0, 1])])
def test_normalize_axis_refuses_what_is_not_an_axis_with_a_lampy_error(axis) -> None:
    """A float, a string, a bool or an array is an ``AxisError``-like ``LampyTypeError``
    naming the op, never a bare ``TypeError``."""
    with pytest.raises(lampy.LampyTypeError, match=r"^norm: axis"):
        kit.normalize_axis("norm", axis, 2)


def test_normalize_axis_refuses_out_of_bounds_and_repeated_axes() -> None:
    """Out of bounds and repeated axes are ``ShapeError``s naming the op."""
    with pytest.raises(lampy.ShapeError, match=r"^sum: axis 2 is out of bounds"):
        kit.normalize_axis("sum", 2, 2)
    with pytest.raises(lampy.ShapeError, match="repeats an axis"):
        kit.normalize_axis("sum", (0, -2), 2)


def test_linalg_norm_refuses_a_float_axis_with_a_lampy_error() -> None:
    """``lampy.linalg.norm``'s axis check is the kit's (it raised a bare TypeError)."""
    with lampy.Scope(), pytest.raises(lampy.LampyTypeError, match=r"^norm: axis"):
        lampy.linalg.norm(lampy.const(np.ones((2, 2))), axis=1.5)
