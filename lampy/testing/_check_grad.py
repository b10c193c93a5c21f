"""Gradient checking against float64 central differences."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy.autograd import Scope, backward, gradients
from lampy.opkit import GRAD_ENABLED, Variable, const, no_grad, op, param

# Default (atol, rtol) by the dtype the analytic gradient is computed in. The numerical
# gradient is float64, so the tolerance need only cover the analytic gradient's own
# rounding: float32 carries about 7 digits, and 1e-3 relative still catches a gradient
# off by 1% (JAX's check_grads uses 2e-3 against float32 differences).
_TOLERANCES = {
    np.dtype(np.float64): (1e-6, 1e-5),
    np.dtype(np.float32): (1e-4, 1e-3),
    np.dtype(np.float16): (5e-2, 5e-2),
    np.dtype(np.complex128): (1e-6, 1e-5),
    np.dtype(np.complex64): (1e-4, 1e-3),
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

    For complex values (PyTorch's convention) the objective is the real number
    ``sum(real(conj(cotangent) * f(*arrays)))``, and a complex input's gradient is
    ``dL/dRe + i dL/dIm``: its real and imaginary parts are perturbed separately.

    Args:
        f: Takes Variables, returns a Variable.
        *arrays: Points at which to differentiate (float or complex arrays); they are
            evaluated as float64 (complex128) copies.
        eps: Step, scaled by ``max(1, |x|)`` per element.
        cotangent: Weights of the output (default ones).

    Returns:
        One float64 (complex128) array per input, of that input's shape.
    """
    points = [
        np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64, order="C")
        for a in arrays
    ]
    grads = []
    with Scope(), no_grad():

        def objective() -> float:
            out = _output(f, [param(p) for p in points], "numerical_grad").value
            w = np.ones(out.shape) if cotangent is None else cotangent
            return float(np.sum(np.real(np.conj(w) * np.asarray(out, dtype=np.complex128))))

        def derivative(flat: np.ndarray, i: int, step: complex) -> float:
            orig = flat[i]
            h = eps * max(1.0, abs(orig))
            flat[i] = orig + h * step
            up = objective()
            flat[i] = orig - h * step
            down = objective()
            flat[i] = orig
            return float((up - down) / (2 * h))

        for p in points:
            g = np.zeros(p.shape, p.dtype)
            flat, gflat = p.reshape(-1), g.reshape(-1)
            for i in range(flat.size):
                gflat[i] = derivative(flat, i, 1.0)
                if p.dtype.kind == "c":
                    gflat[i] += 1j * derivative(flat, i, 1j)
            grads.append(g)
    return grads


def _prefill(shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """A known, exactly representable gradient (0.25, 0.5, 0.75 or 1 per element)."""
    return (0.25 * (1 + np.arange(int(np.prod(shape))) % 4)).astype(dtype).reshape(shape)


def _probe(p: Variable) -> Variable:
    """A scalar op of ``p`` whose closure adds ``_prefill`` into ``p``'s buffer."""
    r = _prefill(p.shape, p.dtype)

    def d_p(g: np.ndarray, out: np.ndarray) -> None:
        np.add(out, r, out=out)

    real = np.finfo(p.dtype).dtype  # a real root (float64 for complex128)
    return op("check_grad_probe", np.zeros((), real), p.zip_backward(d_p))


def _analytic(
    f: Callable[..., Any], inputs: list[np.ndarray], w: np.ndarray, probes: str | None
) -> list[np.ndarray]:
    """lampy's gradients of ``sum(f(...) * w)``, in the inputs' dtypes.

    With ``probes`` each input also feeds a probe op contributing ``_prefill`` to its
    gradient, backpropagated before (``"first"``) or after (``"last"``) ``f``'s
    closures; that known contribution is subtracted again. A closure that assigns into
    ``out`` instead of adding is right alone but wrong next to the probe.
    """
    with Scope():
        ps = [param(a) for a in inputs]
        out = _output(f, list(ps), "check_grad")
        if out.needs_grad:
            seed = np.asarray(w, dtype=out.dtype)
            if probes is None:
                backward(out, [seed])
            else:
                extra = [_probe(p) for p in ps]
                # The engine serves the roots' own ops last root first.
                if probes == "first":
                    backward([out, *extra], [seed, *[None] * len(extra)])
                else:
                    backward([*extra, out], [*[None] * len(extra), seed])
        grads = [np.zeros(p.shape, p.dtype) if p.grad is None else p.grad.copy() for p in ps]
        probed = probes is not None and out.needs_grad
    if probed:
        for g in grads:
            np.subtract(g, _prefill(g.shape, g.dtype), out=g, casting="unsafe")
    return grads


def check_grad(
    f: Callable[..., Any],
    *arrays: Any,
    atol: float | None = None,
    rtol: float | None = None,
    eps: float = 1e-6,
    seed: int = 0,
    order: int = 1,
) -> None:
    """Check lampy's gradients of ``f`` against float64 central differences.

    ``f`` takes one Variable per array and returns a Variable of any shape; a fixed
    random cotangent ``w`` reduces it to ``sum(f(...) * w)``, so every output element
    is checked. The analytic gradient is computed in the arrays' own dtype (float32
    stays float32, and the gradient's dtype must match), the numerical one in float64.

    The analytic gradient is computed three times: alone, and with each input also
    receiving a known contribution from another op before, then after, ``f``'s own
    closures. So a closure that assigns into ``out`` instead of adding into it (right
    when its input has no other consumer, wrong otherwise) fails too.

    Tolerances are absolute plus relative to the numerical gradient: for a function
    whose gradients are far below 1 in size, pass an ``atol`` on their scale (with the
    default ``atol`` a gradient of size 1e-7 is not checked in float64).

    Args:
        f: The function to check. It is called several times and must be deterministic.
        *arrays: Inputs (float arrays or scalars), each becoming a param.
        atol: Absolute tolerance; default by dtype (1e-6 for float64, 1e-4 for float32).
        rtol: Relative tolerance; default by dtype (1e-5 for float64, 1e-3 for float32).
        eps: Finite-difference step (relative to ``max(1, |x|)``).
        seed: Seed of the random cotangent.
        order: 2 checks second derivatives as PyTorch's ``gradgradcheck`` does: the
            gradient of ``sum_i <grad_i f, v_i>`` (``v_i`` random, the gradients recorded
            with ``create_graph=True``) against central differences of the first-order
            gradients, whose own correctness ``order=1`` checks (complex inputs too).
            Every op ``f`` uses needs a differentiable backward rule
            (``NoSecondOrderError`` otherwise).

    Raises:
        AssertionError: naming the input, the worst index, both values and the error.
    """
    if order == 2:
        check_grad(
            _gradient_dot(f, arrays, seed), *arrays, atol=atol, rtol=rtol, eps=eps, seed=seed
        )
        return
    if order != 1:
        raise ValueError(f"check_grad: order must be 1 or 2, got {order!r}.")
    inputs = [np.asarray(a) for a in arrays]
    for i, a in enumerate(inputs):
        if a.dtype.kind not in "fc":
            raise TypeError(
                f"check_grad: input {i} has dtype {a.dtype}; pass float (or complex) arrays."
            )
    rng = np.random.default_rng(seed)
    with Scope():
        out = _output(f, [param(a) for a in inputs], "check_grad")
        shape, is_complex = out.shape, out.dtype.kind == "c"
    w = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if is_complex:  # a complex cotangent: both parts of the output are checked
        w = w + 1j * rng.uniform(-1.5, 1.5, size=shape)
    numeric = numerical_grad(f, *inputs, eps=eps, cotangent=w)
    for probes in (None, "first", "last"):
        analytic = _analytic(f, inputs, w, probes)
        _compare(inputs, analytic, numeric, atol, rtol, probes)


def _gradient_dot(f: Callable[..., Any], arrays: tuple[Any, ...], seed: int) -> Callable[..., Any]:
    """``h(*xs) = sum_i <grad_i sum(f(*xs) * w), v_i>`` with fixed random ``w`` and ``v_i``:
    its gradient holds every second derivative of ``f`` along ``w`` and the ``v_i``. Its
    value is computed by lampy's first-order gradients (also under no_grad, where the
    finite differences evaluate it), its gradient through the recorded ones."""
    rng = np.random.default_rng(seed + 1)
    with Scope():
        shape = _output(f, [param(np.asarray(a)) for a in arrays], "check_grad").shape
    w = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    vs = [rng.uniform(-1.0, 1.0, size=np.shape(a)) for a in arrays]

    def h(*xs: Variable) -> Variable:
        recorded = GRAD_ENABLED.get()
        token = GRAD_ENABLED.set(True)
        try:
            inputs = list(xs) if recorded else [param(x.value) for x in xs]
            out = f(*inputs)
            total_out = (out * w.astype(out.dtype)).sum()
            seed = np.ones((), out.dtype)  # of a complex output: its real part's gradient
            gs = gradients(total_out, inputs, [seed], create_graph=recorded, allow_unused=True)
        finally:
            GRAD_ENABLED.reset(token)
        total: Any = const(np.zeros((), np.result_type(*(np.asarray(a).dtype for a in arrays))))
        for g, v in zip(gs, vs, strict=True):
            if g is not None:
                total = total + (g * v.astype(g.dtype)).sum()
        result: Variable = total
        return result

    return h


def _compare(
    inputs: list[np.ndarray],
    analytic: list[np.ndarray],
    numeric: list[np.ndarray],
    atol: float | None,
    rtol: float | None,
    probes: str | None,
) -> None:
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
        an64 = an.astype(np.complex128 if an.dtype.kind == "c" else np.float64)
        with np.errstate(invalid="ignore"):
            err = np.abs(an64 - nu)
            bound = at + rt * np.abs(nu)
            bad = ~(err <= bound)
        bad &= ~(np.isnan(an64) & np.isnan(nu))
        if an64.dtype.kind != "c":  # matching infinities (complex ones have no sign)
            bad &= ~(np.isposinf(an64) & np.isposinf(nu))
            bad &= ~(np.isneginf(an64) & np.isneginf(nu))
        if np.any(bad):
            excess = np.where(bad, np.nan_to_num(err - bound, nan=np.inf), -np.inf)
            worst = tuple(int(k) for k in np.unravel_index(int(np.argmax(excess)), a.shape))
            context = (
                ""
                if probes is None
                else (
                    " only when another op also contributes to the input's gradient "
                    f"(backpropagated {'before' if probes == 'first' else 'after'} f's "
                    "closures); right alone: a closure assigns into `out` (or uses what "
                    "it holds) instead of adding into it"
                )
            )
            raise AssertionError(
                f"check_grad: gradient of input {i} (shape {a.shape}, {a.dtype}) is wrong at "
                f"index {worst}{context}: lampy {an64[worst].item()!r}, numerical "
                f"{nu[worst].item()!r}, abs error {float(err[worst]):.3g} > atol {at} + "
                f"rtol {rt} * |numerical|; {int(np.sum(bad))} of {a.size} elements fail."
            )
