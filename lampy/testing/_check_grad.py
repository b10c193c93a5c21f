"""Gradient checking against float64 central differences."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.autograd._backprop import backward
from lampy.autograd._grad_mode import no_grad
from lampy.autograd._scope import Scope
from lampy.autograd._variable import Variable, param

# Default tolerances by the dtype the analytic gradient is computed in.
_TOLERANCES = {
    np.dtype(np.float64): (1e-6, 1e-5),
    np.dtype(np.float32): (2e-3, 2e-2),
    np.dtype(np.float16): (5e-2, 5e-2),
}


def _output(f: Callable[..., Any], args: list[Any], name: str) -> Variable:
    out = f(*args)
    if not isinstance(out, Variable):
        raise TypeError(f"{name}: f must return a Variable, got {type(out).__name__}")
    return out


def numerical_grad(
    f: Callable[..., Any],
    *arrays: Any,
    eps: float = 1e-6,
    cotangent: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Central-difference gradients of ``sum(f(*arrays) * cotangent)`` in float64.

    Args:
        f: Takes Variables, returns a Variable.
        *arrays: Points at which to differentiate (float arrays); they are evaluated
            as float64 copies.
        eps: Step, scaled by ``max(1, |x|)`` per element.
        cotangent: Weights of the output (default ones).

    Returns:
        One float64 array per input, of that input's shape.
    """
    points = [np.array(a, dtype=np.float64, order="C") for a in arrays]
    grads = []
    with Scope(), no_grad():

        def objective() -> float:
            out = _output(f, [param(p) for p in points], "numerical_grad").value
            w = np.ones(out.shape) if cotangent is None else cotangent
            return float(np.sum(np.asarray(out, dtype=np.float64) * w))

        for p in points:
            g = np.zeros(p.shape)
            flat, gflat = p.reshape(-1), g.reshape(-1)
            for i in range(flat.size):
                orig = flat[i]
                h = eps * max(1.0, abs(orig))
                flat[i] = orig + h
                up = objective()
                flat[i] = orig - h
                down = objective()
                flat[i] = orig
                gflat[i] = (up - down) / (2 * h)
            grads.append(g)
    return grads


def check_grad(
    f: Callable[..., Any],
    *arrays: Any,
    atol: float | None = None,
    rtol: float | None = None,
    eps: float = 1e-6,
    seed: int = 0,
) -> None:
    """Check lampy's gradients of ``f`` against float64 central differences.

    ``f`` takes one Variable per array and returns a Variable of any shape; a fixed
    random cotangent ``w`` reduces it to ``sum(f(...) * w)``, so every output element
    is checked. The analytic gradient is computed in the arrays' own dtype (float32
    stays float32, and the gradient's dtype must match), the numerical one in float64.

    Args:
        f: The function to check.
        *arrays: Inputs (float arrays or scalars), each becoming a param.
        atol: Absolute tolerance; default by dtype (1e-6 for float64, 2e-3 for float32).
        rtol: Relative tolerance; default by dtype (1e-5 for float64, 2e-2 for float32).
        eps: Finite-difference step (relative to ``max(1, |x|)``).
        seed: Seed of the random cotangent.

    Raises:
        AssertionError: naming the input, the worst index, both values and the error.
    """
    inputs = [np.asarray(a) for a in arrays]
    for i, a in enumerate(inputs):
        if a.dtype.kind != "f":
            raise TypeError(f"check_grad: input {i} has dtype {a.dtype}; pass float arrays.")
    rng = np.random.default_rng(seed)
    with Scope():
        ps = [param(a) for a in inputs]
        out = _output(f, list(ps), "check_grad")
        w = rng.uniform(0.5, 1.5, size=out.shape) * rng.choice([-1.0, 1.0], size=out.shape)
        if out.needs_grad:
            backward(out, [np.asarray(w, dtype=out.dtype)])
        analytic = [np.zeros(p.shape, p.dtype) if p.grad is None else p.grad.copy() for p in ps]
    numeric = numerical_grad(f, *inputs, eps=eps, cotangent=w)
    for i, (a, an, nu) in enumerate(zip(inputs, analytic, numeric, strict=True)):
        if an.dtype != a.dtype:
            raise AssertionError(
                f"check_grad: the gradient of input {i} has dtype {an.dtype}, but the input "
                f"has dtype {a.dtype}; gradients must keep their input's dtype."
            )
        if an.shape != a.shape:
            raise AssertionError(
                f"check_grad: the gradient of input {i} has shape {an.shape}, expected {a.shape}."
            )
        default_atol, default_rtol = _TOLERANCES.get(a.dtype, (1e-6, 1e-5))
        at = default_atol if atol is None else atol
        rt = default_rtol if rtol is None else rtol
        an64 = an.astype(np.float64)
        with np.errstate(invalid="ignore"):
            err = np.abs(an64 - nu)
            bound = at + rt * np.abs(nu)
            bad = ~(err <= bound)
        bad &= ~(np.isnan(an64) & np.isnan(nu))
        bad &= ~(np.isposinf(an64) & np.isposinf(nu))
        bad &= ~(np.isneginf(an64) & np.isneginf(nu))
        if np.any(bad):
            excess = np.where(bad, np.nan_to_num(err - bound, nan=np.inf), -np.inf)
            worst = tuple(int(k) for k in np.unravel_index(int(np.argmax(excess)), a.shape))
            raise AssertionError(
                f"check_grad: gradient of input {i} (shape {a.shape}, {a.dtype}) is wrong at "
                f"index {worst}: lampy {float(an64[worst])!r}, numerical {float(nu[worst])!r}, "
                f"abs error {float(err[worst]):.3g} > atol {at} + rtol {rt} * |numerical|; "
                f"{int(np.sum(bad))} of {a.size} elements fail."
            )
