"""Complex values: which ops take them, and how a holomorphic op's closures are conjugated.

lampy follows PyTorch's convention for complex numbers: the gradient of a real loss
``L`` with respect to a complex ``z = x + iy`` is ``dL/dx + i dL/dy`` (twice the
conjugate Wirtinger derivative), so that ``z - lr * z.grad`` is a descent step. For an
op ``y = f(z)`` that is holomorphic (complex-differentiable), the input's share of the
output's gradient ``g`` is then ``g * conj(f'(z))``: the real rule with the derivative
conjugated, and a matmul's transposes made conjugate transposes.

So an op written for real numbers, whose closure is ``g -> g * f'(z)`` (or any linear
map of ``g`` whose coefficients are the op's saved values), gets the complex rule by
conjugation: ``conj(fn(conj(g)))``. Each op says which of three kinds it is, once, by
name (``complex_rule``); an op not declared refuses complex values needing a gradient
(a clear ``DTypeError``), so no op silently gives the real rule's answer.

- ``HOLOMORPHIC``: closures written for reals, conjugated here when the op's value is
  complex (``exp``, ``multiply``, ``matmul``, ``fft``...).
- ``LINEAR``: closures whose coefficients are real (sums, reshapes, indexing, ``add``):
  right for complex ``g`` as they are, nothing wrapped.
- ``OWN``: non-holomorphic ops whose closures are written for complex values
  (``real``, ``imag``, ``conj``, ``abs``, ``angle``, ``rfft``...).

A real input of a complex result gets the real part of its contribution
(``real_part``): in the conjugated closures here, and in the engine's buffer adoption
(``_unbroadcast``). Real-only code pays nothing: only an op whose value is complex
reaches this module (``lampy.op``'s float fast path never does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy._errors import DTypeError, LampyValueError
from lampy.autograd._edge import CONTRIBUTION, PLAIN, WITH_SAVED, Edge

HOLOMORPHIC, LINEAR, OWN = "holomorphic", "linear", "own"
KINDS = (HOLOMORPHIC, LINEAR, OWN)

_RULES: dict[str, str] = {}

_conj, _real = np.conj, np.real


def complex_rule(kind: str, *names: str) -> None:
    """Declare that the ops ``names`` (as they name themselves to ``lampy.op``) take
    complex values, and how their closures hold for them (``kind``: ``"holomorphic"``,
    ``"linear"`` or ``"own"``; see the module's docstring)."""
    if kind not in KINDS:
        raise LampyValueError(f"complex_rule: kind must be one of {KINDS}, got {kind!r}.")
    for name in names:
        _RULES[name] = kind


def complex_kind(name: str) -> str | None:
    """How op ``name`` takes complex values, or None if it does not. A name of the form
    ``family(detail)`` (``remat(block)``) takes its family's declaration."""
    kind = _RULES.get(name)
    if kind is None and "(" in name:
        kind = _RULES.get(name.partition("(")[0])
    return kind


def complex_ops() -> dict[str, str]:
    """Every op declared for complex values, with its kind (a copy)."""
    return dict(sorted(_RULES.items()))


def no_complex(name: str, dtype: Any) -> DTypeError:
    """The error of an op not declared for complex values whose value would be complex
    while an input needs a gradient."""
    return DTypeError(
        f"op '{name}' does not support complex values with gradients yet (its value would "
        f"have dtype {dtype}): its backward rule is written for real numbers and would give "
        "a wrong gradient. Split the computation into real parts (`lampy.real`, "
        "`lampy.imag`), compute this part under lampy.no_grad(), or see docs 'Complex "
        "numbers and FFT' for the ops that take complex values."
    )


def no_complex_input(name: str, dtype: Any) -> DTypeError:
    """The error of an op not declared for complex values, given a complex input that
    needs a gradient (an op whose value is real, so ``lampy.op`` cannot tell)."""
    return DTypeError(
        f"op '{name}' does not support complex inputs with gradients yet (got {dtype}): its "
        "backward rule is written for real numbers and would give a wrong gradient. Split "
        "the computation into real parts (`lampy.real`, `lampy.imag`), or compute this part "
        "under lampy.no_grad(); docs 'Complex numbers and FFT' lists the ops that take "
        "complex values."
    )


def real_part(d: Any, dtype: np.dtype[Any]) -> Any:
    """A contribution ``d`` for an input of ``dtype``: its real part when ``d`` is
    complex and the input real (the gradient of a real input of a complex result), cast
    to ``dtype``. Never numpy's ``ComplexWarning``."""
    if getattr(d, "dtype", None) is not None and d.dtype.kind == "c" and dtype.kind != "c":
        d = _real(d)
    return np.asarray(d).astype(dtype, copy=False) if np.ndim(d) else dtype.type(d)


def conjugated(name: str, params: tuple[Edge, ...]) -> tuple[Edge, ...]:
    """The params of op ``name`` whose value is complex, ready for the engine: a
    holomorphic op's edges conjugated, a linear or own op's as they are.

    Raises:
        DTypeError: if ``name`` is not declared for complex values.
    """
    kind = complex_kind(name)
    if kind is None:
        return params  # the caller raises no_complex
    if kind == OWN:
        return params
    if kind == LINEAR:  # right as they are, but for a real input's real part
        return tuple(
            _conjugated(params, i, False) if p[0].dtype.kind != "c" else p
            for i, p in enumerate(params)
        )
    return tuple(_conjugated(params, i, True) for i in range(len(params)))


def _conjugated(params: tuple[Edge, ...], i: int, conj: bool) -> Edge:
    """Edge ``i`` as the contribution ``conj(fn(conj(g)))`` (``fn(g)`` if not ``conj``),
    its real part for a real input; its vjp the same, recorded (``serve_complex_vjp``)."""
    inp, fn, kind, _, saved = params[i]
    real_input = inp.dtype.kind != "c"
    flip = _conj if conj else _same

    def back(d: Any) -> Any:
        if real_input:
            return np.array(_real(d), dtype=inp.dtype) if np.ndim(d) else inp.dtype.type(_real(d))
        return _conj(d)  # (conj is True: a linear op's complex inputs are not wrapped)

    if kind == PLAIN:

        def d_inp(g: Any) -> Any:
            out = np.zeros(inp.shape, np.result_type(inp.dtype, g.dtype))
            fn(np.asarray(flip(g)), out)
            return back(out)
    elif kind == CONTRIBUTION:

        def d_inp(g: Any) -> Any:
            return back(fn(flip(g)))
    elif kind == WITH_SAVED:

        def d_inp(g: Any) -> Any:
            return back(fn(flip(g), saved))
    else:  # pragma: no cover (lampy.op checked the edge)
        raise LampyValueError(f"an edge of kind {kind!r}")

    def vjp(g: Any, out: Any) -> Any:
        return _COMPLEX_VJP[0](out, params, i, g, real_input, conj)

    return (inp, d_inp, CONTRIBUTION, True, vjp)


def _same(g: Any) -> Any:
    return g


def _unserved(out: Any, params: Any, i: int, g: Any, real_input: bool, conj: bool) -> Any:
    raise LampyValueError("import lampy.autograd first")  # pragma: no cover


_COMPLEX_VJP: list[Callable[..., Any]] = [_unserved]


def serve_complex_vjp(fn: Callable[..., Any]) -> None:
    """Register ``fn(out, params, i, g, real_input, conj)``, the recorded form of a conjugated
    edge's contribution (``lampy.autograd._higher`` registers it: it records with
    ``lampy.op``, one floor up)."""
    _COMPLEX_VJP[0] = fn


__all__ = [
    "HOLOMORPHIC",
    "KINDS",
    "LINEAR",
    "OWN",
    "complex_kind",
    "complex_ops",
    "complex_rule",
    "conjugated",
    "no_complex",
    "no_complex_input",
    "real_part",
    "serve_complex_vjp",
]
