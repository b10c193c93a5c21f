"""Function transforms over numpy arrays, with JAX's and ``torch.func``'s names:
jacobian (jacrev), hessian, hvp, vjp, jvp.

Each runs ``f`` on params in a child scope (grad mode on, also under ``no_grad``), like
``lampy.grad``, and returns numpy arrays. When the result depends on a Variable made
outside the call that needs a gradient (an argument that is such a Variable, or one
``f`` closes over) and grad mode is on, the results are Variables instead, recorded in
the caller's scope, so that they can be differentiated again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.autograd._edge import CONTRIBUTION
from lampy.autograd._functional import _argnums, _depends_outside, _input, grad
from lampy.autograd._grad_mode import GRAD_ENABLED
from lampy.autograd._higher import gradients
from lampy.autograd._leaves import const, param
from lampy.autograd._scope import Scope
from lampy.autograd._variable import Variable, op


def _output(name: str, out: Any, real: bool = True) -> Variable:
    """``f``'s result, a Variable (real unless the transform takes a complex one: a
    complex Jacobian would need both parts of each row, which these transforms do not
    compute)."""
    if not isinstance(out, Variable):
        raise LampyTypeError(f"{name}: f must return a Variable, got {type(out).__name__}.")
    if real and out.dtype.kind == "c":
        raise DTypeError(
            f"{name}: f returns a complex Variable ({out.dtype}); the function transforms "
            "take real outputs. Return the real and imaginary parts (`lampy.real`, "
            "`lampy.imag`) as separate outputs, or use lampy.vjp, which takes a complex "
            "cotangent."
        )
    return out


def _arrays(name: str, what: str, xs: Any) -> tuple[Any, ...]:
    """``primals`` or ``tangents`` as a tuple (a single array or Variable is one item)."""
    if isinstance(xs, (tuple, list)):
        return tuple(xs)
    return (xs,)


class _Call:
    """``f`` called on inputs made from ``args`` (``argnums``' as the differentiated
    inputs) in a child scope; ``finish`` returns results as numpy arrays, or as Variables
    handed to the caller's scope when they are differentiated further."""

    def __init__(self, name: str, args: tuple[Any, ...], nums: tuple[int, ...]) -> None:
        self.name, self.args, self.nums = name, args, nums
        self.differentiable = GRAD_ENABLED.get()

    def __enter__(self) -> _Call:
        self._token = GRAD_ENABLED.set(True)
        self.scope = Scope()
        self.scope.__enter__()
        try:
            call = list(self.args)
            self.inputs: list[Variable] = []
            for n in self.nums:
                v = _input(self.args[n], n, self.name, self.differentiable)
                if v.dtype.kind == "c":
                    raise DTypeError(
                        f"{self.name}: argument {n} is complex ({v.dtype}); the function "
                        "transforms take real inputs (a complex Jacobian or Hessian has no "
                        "one layout yet). Split the argument into real and imaginary parts "
                        "(`f(re, im)` building `re + 1j * im`), or use lampy.gradients."
                    )
                call[n] = v
                self.inputs.append(v)
            self.call_args = call
        except BaseException as e:
            self.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.scope.__exit__(*exc)
        finally:
            GRAD_ENABLED.reset(self._token)

    def nested(self, *roots: Variable) -> bool:
        """Whether the results must stay Variables (and so be recorded)."""
        return self.differentiable and _depends_outside([r.node for r in roots], self.scope)

    def finish(self, nested: bool, *results: Any) -> Any:
        if nested:
            self.scope.hand_over()
            return results
        return tuple(_numpy(r) for r in results)


def _pick(i: int) -> Callable[[Any], Any]:
    return lambda g: g[i]


def _pick_vjp(i: int) -> Callable[[Any, Any], Any]:
    return lambda g, out: g[i]  # Variable.__getitem__: recorded


def _stacked(rows: list[Any]) -> Any:
    """The rows (Variables or constants of one shape) stacked along a new first axis, as
    an op whose gradient is recorded (jacobian's rows of a nested call)."""
    value = np.stack([np.asarray(r.value if isinstance(r, Variable) else r) for r in rows])
    edges = [
        (r.node, _pick(i), CONTRIBUTION, False, _pick_vjp(i))
        for i, r in enumerate(rows)
        if isinstance(r, Variable) and r.node.needs_grad
    ]
    return op("stack", value, *edges)


def _numpy(x: Any) -> Any:
    if isinstance(x, tuple):
        return tuple(_numpy(v) for v in x)
    if isinstance(x, Variable):
        return np.array(x.value)
    return x


def _zeros_if_none(gs: Sequence[Variable | None], like: Sequence[Variable]) -> list[Any]:
    return [
        const(np.zeros(v.shape, v.dtype)) if g is None else g for g, v in zip(gs, like, strict=True)
    ]


def jacobian(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian of ``f`` by reverse mode (JAX's ``jacrev``, ``torch.func.jacrev``):
    one backward pass per output element, through one recorded forward pass.

    Args:
        f: Takes Variables, returns a Variable of any shape.
        argnums: The argument (an int) or arguments (a tuple) to differentiate.

    Returns:
        A function of ``f``'s arguments returning, for each differentiated argument, an
        array of shape ``out.shape + arg.shape`` (a tuple of them for a tuple
        ``argnums``).

    Examples:
        >>> import numpy as np, lampy
        >>> lampy.jacobian(lambda x: x * x)(np.array([1.0, 2.0]))
        array([[2., 0.],
               [0., 4.]])
    """

    def jac_f(*args: Any) -> Any:
        nums = _argnums("jacobian", argnums, len(args))
        with _Call("jacobian", args, nums) as c:
            out = _output("jacobian", f(*c.call_args))
            nested = c.nested(out)
            rows: list[list[Any]] = [[] for _ in c.inputs]
            for i in range(out.size):
                seed = np.zeros(out.size, out.dtype)
                seed[i] = 1
                gs = gradients(
                    out,
                    c.inputs,
                    seed.reshape(out.shape),
                    create_graph=nested,
                    allow_unused=True,
                )
                for k, g in enumerate(_zeros_if_none(gs, c.inputs)):
                    rows[k].append(g)
            jacs: list[Any] = []
            for k, v in enumerate(c.inputs):
                shape = (*out.shape, *v.shape)
                if not rows[k]:  # an empty output
                    jacs.append(const(np.zeros(shape, v.dtype)))
                elif nested:
                    jacs.append(_stacked(rows[k]).reshape(shape))
                else:
                    jacs.append(np.stack([np.asarray(g.value) for g in rows[k]]).reshape(shape))
            result = c.finish(nested, *jacs)
        return result[0] if isinstance(argnums, int) else tuple(result)

    return jac_f


jacrev = jacobian


def hessian(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Hessian of a scalar ``f``: ``jacobian(grad(f))``, the gradient recorded once
    and differentiated by one backward pass per element of the argument.

    Returns:
        A function returning an array of shape ``arg.shape + arg.shape`` (for a tuple
        ``argnums``, a tuple of rows of blocks, as ``jax.hessian``).

    Examples:
        >>> import numpy as np, lampy
        >>> lampy.hessian(lambda x: (x**3).sum())(np.array([1.0, 2.0]))
        array([[ 6.,  0.],
               [ 0., 12.]])
    """
    return jacobian(grad(f, argnums), argnums)


def hvp(f: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """The Hessian-vector product of a scalar ``f`` at ``primals`` with ``tangents``
    (``torch.autograd.functional.hvp``): the gradient is recorded
    (``create_graph``), dotted with ``tangents`` and differentiated once more, without
    forming the Hessian. Costs one forward and two backward passes (the second through
    the recorded first one).

    Args:
        f: Takes one Variable per primal, returns a scalar Variable.
        primals: An array or a tuple of arrays.
        tangents: Arrays of the primals' shapes.

    Returns:
        ``(value, hvp)``: ``f``'s value, and the product as one array per primal (a tuple
        when ``primals`` is a tuple).

    Examples:
        >>> import numpy as np, lampy
        >>> value, hv = lampy.hvp(lambda x: (x**3).sum(), np.array([1.0, 2.0]), np.ones(2))
        >>> hv
        array([ 6., 12.])
    """
    ps, ts = _arrays("hvp", "primals", primals), _arrays("hvp", "tangents", tangents)
    _check_tangents("hvp", ps, ts)
    with _Call("hvp", ps, tuple(range(len(ps)))) as c:
        out = _output("hvp", f(*c.call_args))
        if out.size != 1:
            raise LampyValueError(f"hvp: f must return one element, got shape {out.shape}.")
        nested = c.nested(out)
        gs = _zeros_if_none(
            gradients(out, c.inputs, create_graph=True, allow_unused=True), c.inputs
        )
        total: Any = None
        for g, t in zip(gs, ts, strict=True):
            term = (g * t).sum()
            total = term if total is None else total + term
        if isinstance(total, Variable) and total.needs_grad:
            hs = gradients(total, c.inputs, create_graph=nested, allow_unused=True)
        else:
            hs = (None,) * len(c.inputs)
        value, *hv = c.finish(nested, out, *_zeros_if_none(hs, c.inputs))
    return value, (tuple(hv) if isinstance(primals, (tuple, list)) else hv[0])


def vjp(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``f``'s value at ``primals`` and its vector-Jacobian product function (JAX's
    ``jax.vjp``, ``torch.func.vjp``).

    lampy releases a graph with its scope, so ``vjp_fn`` runs ``f`` again on each call
    (one forward and one backward pass); for several cotangents at once use
    ``jacobian``.

    Returns:
        ``(out, vjp_fn)``: ``out`` a numpy array; ``vjp_fn(cotangent)`` returns a tuple
        with one array per primal, ``cotangent``'s pullback ``J^T c``.

    Examples:
        >>> import numpy as np, lampy
        >>> out, vjp_fn = lampy.vjp(lambda x: x * x, np.array([1.0, 2.0]))
        >>> vjp_fn(np.ones(2))
        (array([2., 4.]),)
    """
    nums = tuple(range(len(primals)))
    with _Call("vjp", primals, nums) as c:
        out = _output("vjp", f(*c.call_args), real=False)
        value = np.array(out.value)

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        ct = np.asarray(cotangent.value if isinstance(cotangent, Variable) else cotangent)
        if ct.shape != value.shape:
            raise ShapeError(
                f"vjp: the cotangent has shape {ct.shape}, f's output has shape {value.shape}."
            )
        with _Call("vjp", primals, nums) as c:
            o = _output("vjp", f(*c.call_args), real=False)
            nested = c.nested(o)
            gs = gradients(o, c.inputs, ct.astype(o.dtype), create_graph=nested, allow_unused=True)
            return tuple(c.finish(nested, *_zeros_if_none(gs, c.inputs)))

    return value, vjp_fn


def jvp(f: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """``f``'s value and its Jacobian-vector product ``J t`` (forward mode, JAX's
    ``jax.jvp``, ``torch.func.jvp``), by the double-vjp trick: the pullback ``u -> J^T u``
    is recorded for a placeholder ``u`` (it is linear in ``u``), and its gradient with
    respect to ``u`` along ``t`` is ``J t``. Costs one forward and two backward passes,
    whatever the number of outputs.

    Args:
        f: Takes one Variable per primal, returns a Variable.
        primals: An array or a tuple of arrays.
        tangents: Arrays of the primals' shapes.

    Returns:
        ``(out, tangent_out)``: ``f``'s value and ``J t``, of the output's shape.

    Examples:
        >>> import numpy as np, lampy
        >>> lampy.jvp(lambda x: x * x, np.array([1.0, 2.0]), np.array([1.0, 0.0]))
        (array([1., 4.]), array([2., 0.]))
    """
    ps, ts = _arrays("jvp", "primals", primals), _arrays("jvp", "tangents", tangents)
    _check_tangents("jvp", ps, ts)
    with _Call("jvp", ps, tuple(range(len(ps)))) as c:
        out = _output("jvp", f(*c.call_args))
        nested = c.nested(out)
        u = param(np.zeros(out.shape, out.dtype))  # the placeholder cotangent
        gs = gradients(out, c.inputs, u, create_graph=True, allow_unused=True)
        total: Any = None
        for g, t in zip(gs, ts, strict=True):
            if g is not None:
                term = (g * t).sum()
                total = term if total is None else total + term
        if isinstance(total, Variable) and total.needs_grad:
            (jt,) = gradients(total, u, create_graph=nested, allow_unused=True)
        else:
            jt = None
        if jt is None:
            jt = const(np.zeros(out.shape, out.dtype))
        value, tangent_out = c.finish(nested, out, jt)
    return value, tangent_out


def _check_tangents(name: str, ps: tuple[Any, ...], ts: tuple[Any, ...]) -> None:
    if len(ps) != len(ts):
        raise LampyValueError(f"{name}: {len(ps)} primals but {len(ts)} tangents.")
    for k, (p, t) in enumerate(zip(ps, ts, strict=True)):
        if np.shape(_value(p)) != np.shape(_value(t)):
            raise ShapeError(
                f"{name}: tangent {k} has shape {np.shape(_value(t))}, primal {k} has shape "
                f"{np.shape(_value(p))}; they must match."
            )


def _value(x: Any) -> Any:
    return x.value if isinstance(x, Variable) else x


__all__ = ["hessian", "hvp", "jacobian", "jacrev", "jvp", "vjp"]
