"""Recomputation (activation checkpointing): ``lampy.remat(fn)``.

``remat(fn)(*args)`` runs ``fn`` in an inner scope and keeps only what backward needs
to run it again: the arguments' values and the outputs. Everything ``fn`` made inside
is released when it returns. The result is one op, ``remat(<fn name>)``, whose params
are the Variables the computation depends on: the params ``fn`` uses without receiving
them (a module's weights), then the arguments that need a gradient.

Backward. The first closure of the op that the pass calls (an argument's, whose
gradient comes last) runs ``fn`` again in a fresh scope on the saved values (params
as they are, op results as new leaves) and backpropagates the op's output gradient
through that graph, in an inner pass that hands each leaf's gradient on as soon as it
is final (``_propagate(..., sink=...)``). A param's gradient goes straight to the
enclosing pass (``Pass.hand_over``): when this op's edge is the param's last one, it
is added into its ``.grad`` at once (``atomic=False``, ``backward_iter``) or kept for
the end of an atomic pass, and the enclosing loop skips the edge. So a segment's param
gradients are never all held at once: one at a time, as in a plain pass. The other
gradients (an argument's, a param used elsewhere too) wait, as new arrays the enclosing
pass takes as they are, for their closures. When the inner pass ends, its scope exits:
the recomputed graph is released before the enclosing pass goes on, so at most one
segment's values are recomputed at a time. Memory at the peak of a
``remat_sequential`` step: the segment boundaries, one recomputed segment, and one
layer's backward (its output's and input's gradients and its weight's gradient).

Random draws replay: ops that draw (dropout) take their generator through
``lampy.autograd.replayable``, which records the generator's state before each draw
during the first run and, during the recomputation, hands them a copy restored to that
state. The draws are the same and the caller's generator is not advanced a second time.
A draw straight from a generator (``rng.normal(...)`` in ``fn``) cannot be replayed:
lampy does not see it. The recomputation compares its output with a sample of the first
run's (``_Fingerprint``) before backpropagating, and refuses a different output with a
``LampyError`` instead of computing the gradient of another function.

Side effects: the recomputation is not a new forward step. ``recomputing()`` is True
while it runs (and while a remat nested in it runs), and ops that update module buffers
(``batch_norm``'s running statistics and ``num_batches_tracked``) skip the update then,
so the buffers change once per forward call, as without remat.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy as np

from lampy._errors import LampyError, LampyTypeError, ReleasedError, no_scope
from lampy._tree import Structure, flatten, leaves, leaves_with_paths, map_leaves
from lampy.autograd._backprop import _propagate
from lampy.autograd._complex import OWN, complex_rule
from lampy.autograd._edge import NODE, contribution_edge
from lampy.autograd._grad_mode import GRAD_ENABLED
from lampy.autograd._leaves import const, param
from lampy.autograd._node import Node, Param
from lampy.autograd._pass import RUNNING, Pass
from lampy.autograd._scope import Scope, current_or_none
from lampy.autograd._shared import ref_of
from lampy.autograd._unbroadcast import Grad
from lampy.autograd._variable import Variable, op

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["recomputing", "remat", "replayable"]


class _Draws:
    """The generator states of one remat call's draws: recorded, then replayed in order."""

    __slots__ = ("parent", "pos", "replaying", "states")

    def __init__(self, parent: _Draws | None, states: list[dict[str, Any]] | None = None) -> None:
        self.parent = parent
        self.replaying = states is not None
        self.states: list[dict[str, Any]] = [] if states is None else states
        self.pos = 0

    def take(self, rng: np.random.Generator) -> np.random.Generator:
        if self.replaying:
            if self.pos >= len(self.states):
                raise LampyError(
                    "lampy.remat: the recomputation draws more random numbers than the first "
                    "run did; fn must make the same calls each time it runs (no Python-level "
                    "randomness or state that changes between runs)."
                )
            state = self.states[self.pos]
            self.pos += 1
            restored = np.random.Generator(type(rng.bit_generator)())
            restored.bit_generator.state = state
            return restored
        gen = rng if self.parent is None else self.parent.take(rng)
        self.states.append(dict(gen.bit_generator.state))
        return gen


_DRAWS: ContextVar[_Draws | None] = ContextVar("lampy_remat_draws", default=None)


def replayable(rng: np.random.Generator) -> np.random.Generator:
    """The generator an op should draw from: ``rng`` itself, except inside ``lampy.remat``.

    Ops that draw random numbers (dropout) call this before each draw. Inside a remat's
    first run it records ``rng``'s state; inside its recomputation it returns a copy of
    the generator restored to the recorded state, so the draws repeat exactly.
    """
    draws = _DRAWS.get()
    return rng if draws is None else draws.take(rng)


def recomputing() -> bool:
    """Whether this code runs inside ``lampy.remat``'s recomputation (in backward).

    An op with side effects outside the graph (``lampy.nn.functional.batch_norm``
    updating the running statistics) skips them when this is True: the recomputation
    repeats a forward call that already made them. Also True in the first run of a remat
    nested inside a recomputation.

    Examples:
        >>> import lampy
        >>> lampy.autograd.recomputing()
        False
    """
    draws = _DRAWS.get()
    while draws is not None:
        if draws.replaying:
            return True
        draws = draws.parent
    return False


class _Fingerprint:
    """A sample of an output's first value (at most ``SIZE`` elements, evenly strided), to
    tell whether the recomputation made the same output."""

    SIZE = 1024
    __slots__ = ("sample",)

    def __init__(self, value: np.ndarray) -> None:
        self.sample = self._take(value)

    @classmethod
    def _take(cls, value: np.ndarray) -> np.ndarray:
        a = np.asarray(value)
        step = max(1, a.size // cls.SIZE)
        index = np.arange(0, a.size, step)[: cls.SIZE]
        sample = a.flat[index]  # no copy of the whole array, whatever its layout
        return np.asarray(sample, dtype=np.complex128 if a.dtype.kind == "c" else np.float64)

    def matches(self, value: np.ndarray) -> bool:
        """Whether ``value`` has the first run's sample, up to rounding (threads in BLAS
        may change the last bits; new random numbers change far more)."""
        again = self._take(value)
        if again.shape != self.sample.shape:
            return False
        finite = np.abs(self.sample[np.isfinite(self.sample)])
        scale = float(finite.max()) if finite.size else 1.0
        return bool(np.allclose(again, self.sample, rtol=1e-5, atol=1e-6 * scale, equal_nan=True))


def _changed(name: str, k: int) -> LampyError:
    return LampyError(
        f"lampy.remat({name}): the recomputation in backward gave output {k} other values "
        "than the first run did, so its gradient would belong to another function. fn "
        "probably draws random numbers from a numpy Generator directly (rng.normal(...)), "
        "which lampy cannot replay, or depends on state that changed since the forward "
        "call. Draw through lampy.autograd.replayable(rng) (`replayable(rng).normal(...)`: "
        "the recomputation then replays the same draws), or draw outside fn and pass the "
        "noise as an argument. (The recomputation has advanced the generator.)"
    )


def _outputs(name: str, out: Any) -> tuple[list[Variable], Structure]:
    """The Variables ``fn`` returned (the leaves of its result), and the result's structure."""
    outs, structure = flatten(out)
    bad = [(path, leaf) for path, leaf in leaves_with_paths(out) if type(leaf) is not Variable]
    if bad or not outs:
        got = type(out).__name__
        if bad and bad[0][0]:
            got = f"a {got} holding {type(bad[0][1]).__name__} at {list(bad[0][0])}"
        elif not outs:
            got = f"a {got} with no Variable in it"
        raise LampyTypeError(
            f"lampy.remat({name}): fn must return a Variable or a tree of Variables (tuples, "
            f"lists, dicts, namedtuples... of Variables, see lampy.tree), got {got}. Return "
            "the Variables and compute other results outside the rematerialised function."
        )
    return outs, structure


def _external(name: str, outs: list[Variable], inner: Scope, args: set[Node]) -> list[Node]:
    """The nodes outside ``inner`` that the outputs depend on and that need gradients.

    Each is an argument's node or a leaf ``fn`` uses directly (a module's param); an op
    result made outside ``fn`` and used without being passed is an error, because the
    recomputation would have to backpropagate through the graph outside it.
    """
    found: dict[Node, None] = {}
    seen: set[Node] = set()
    stack = [o.node for o in outs]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.scope is not inner:
            if node.needs_grad:
                if node.params is not None and node not in args:
                    raise LampyError(
                        f"lampy.remat({name}): fn uses a Variable made outside it by "
                        f"{node.describe()} without receiving it as an argument. Pass it "
                        "to fn as an argument, so the recomputation can start from it."
                    )
                found[node] = None
            continue
        params = node.params
        if params is not None:
            stack.extend(e[NODE] for e in params)
    return list(found)


def remat(fn: F) -> F:
    """Recompute ``fn`` in backward instead of keeping its intermediate values.

    ``lampy.remat(fn)(*args)`` returns what ``fn(*args)`` returns, but only the
    arguments' values and the outputs stay in memory: the values ``fn`` makes inside
    are released as soon as it returns. Backprop through the result runs ``fn`` again
    on the same argument values, backpropagates through that fresh graph, and releases
    it. The gradients equal those without remat: bitwise for deterministic ops when
    each argument and param has one consumer inside ``fn`` (a stack of layers), up to
    rounding otherwise (the contributions are added in another order);
    dropout and other random ops inside ``fn`` replay the same draws. A draw straight
    from a numpy Generator in ``fn`` cannot be replayed: draw through
    ``lampy.autograd.replayable(rng)``, or outside ``fn``; otherwise backward finds the
    recomputed output changed and raises ``LampyError``. The recomputation does not
    update module buffers again (BatchNorm's running statistics change once per call,
    see ``lampy.autograd.recomputing``). Memory for
    compute: each backward through the result costs one more forward run of ``fn``.
    The params' gradients reach the pass one at a time, as the recomputation finds
    them, so with ``backward(atomic=False)`` or ``lampy.backward_iter`` (which add each
    into ``.grad`` at once) they are not held together (an atomic pass keeps every
    gradient until its end anyway).

    This is JAX's ``jax.checkpoint``/``remat`` and PyTorch's
    ``torch.utils.checkpoint.checkpoint`` (in lampy a "checkpoint" is a weight file, see
    ``lampy.save``).
    See ``lampy.nn.remat_sequential`` to rematerialise a stack of layers in segments.

    Args:
        fn: A function of Variables (and other arguments) returning a Variable or a tree
            of Variables (a tuple, list, dict, namedtuple... of them, ``lampy.tree``'s
            rules; the result has the same structure). Variables may be anywhere in
            trees of the arguments. It may use params it does not receive (a module's weights),
            but not other Variables computed outside it: pass those as arguments. It
            must make the same ops each time it runs. Arguments that are not
            Variables (a numpy batch) are handed to it again as they are: do not
            change them in place before backward.

    Returns:
        A function with ``fn``'s signature. Under ``lampy.no_grad`` it just calls ``fn``.

    Raises:
        LampyTypeError: if ``fn`` is not callable or returns something other than
            Variables.
        ReleasedError: if an argument (or a Variable ``fn`` uses) was released.
        LampyError: if ``fn`` uses an op result made outside it without receiving it;
            in backward, if the recomputation's output differs from the first run's
            (``fn`` drew from a Generator directly).

    Examples:
        >>> import numpy as np, lampy
        >>> def block(x):
        ...     return lampy.tanh(lampy.tanh(x) * 2.0)
        >>> with lampy.Scope():
        ...     x = lampy.param(np.array([0.1, 0.2]))
        ...     lampy.remat(block)(x).sum().backward()
        ...     print(np.round(x.grad, 4))
        [1.9035 1.6511]
    """
    if not callable(fn):
        raise LampyTypeError(
            f"lampy.remat: fn must be callable (a function or a module), got {type(fn).__name__}."
        )

    @functools.wraps(fn)
    def rematerialised(*args: Any, **kwargs: Any) -> Any:
        return _call(fn, args, kwargs)

    return rematerialised  # type: ignore[return-value]


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name = getattr(fn, "__name__", type(fn).__name__)
    if current_or_none() is None:
        raise no_scope(f"lampy.remat({name})")
    if not GRAD_ENABLED.get():
        return fn(*args, **kwargs)
    # The arguments' nodes and values: the values are what the recomputation starts from.
    arg_nodes: dict[Node, np.ndarray] = {}

    def note(v: Variable) -> Variable:
        node = v.node
        if node.scope is None:
            raise ReleasedError(
                f"lampy.remat({name}): an argument (made by {node.describe()}) was released: "
                "its scope has exited. Pass Variables of an open scope."
            )
        arg_nodes[node] = v.value
        return v

    for v in leaves((args, kwargs)):
        if type(v) is Variable:
            note(v)
    draws = _Draws(_DRAWS.get())
    token = _DRAWS.set(draws)
    try:
        with Scope() as inner:
            try:
                returned = fn(*args, **kwargs)
                outs, structure = _outputs(name, returned)
            except ReleasedError as e:
                raise ReleasedError(
                    f"lampy.remat({name}): fn uses a released Variable (one of a scope "
                    f"that has exited): {e}"
                ) from e
            external = _external(name, outs, inner, set(arg_nodes))
            results: list[tuple[np.ndarray | Variable, bool]] = []
            for o in outs:
                if o.node.scope is not inner:  # an argument or a captured Variable, as is
                    results.append((o, False))
                else:
                    v = o.value
                    results.append((v if v.base is None else v.copy(), o.needs_grad))
    finally:
        _DRAWS.reset(token)
    # The op's params: the arguments last, so the loop serves one of them first and its
    # closure runs the recomputation (an argument's gradient is final last in it).
    external.sort(key=lambda n: n in arg_nodes)
    prints = [
        _Fingerprint(res) if needs and isinstance(res, np.ndarray) else None
        for res, needs in results
    ]
    run = _Recompute(
        fn, name, args, kwargs, tuple(arg_nodes.items()), external, draws.states, prints
    )
    final: list[Variable] = []
    for k, (res, needs) in enumerate(results):
        if type(res) is Variable:
            final.append(res)
            continue
        assert isinstance(res, np.ndarray)
        if not needs or not external:
            final.append(op(f"remat({name})", res))
            continue
        shared = _Shared(functools.partial(run, k))
        params = [_param(shared, n) for n in external]
        final.append(op(f"remat({name})", res, *params))
    return structure.unflatten(final)


class _Recompute:
    """What backward needs to run ``fn`` again, and the run itself."""

    __slots__ = ("args", "external", "fn", "kwargs", "name", "prints", "states", "values")

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        values: tuple[tuple[Node, np.ndarray], ...],
        external: list[Node],
        states: list[dict[str, Any]],
        prints: list[_Fingerprint | None],
    ) -> None:
        self.fn, self.name, self.args, self.kwargs = fn, name, args, kwargs
        self.values, self.external, self.states = values, external, states
        self.prints = prints

    def __call__(
        self, k: int, g: np.ndarray, first: Node, outer: Pass | None
    ) -> dict[Node, Grad | None]:
        """Run fn again, backpropagate ``g`` from its output ``k``, and release the graph.

        Each external node's gradient is handed straight to the enclosing pass
        ``outer`` as soon as it is final there (``Pass.hand_over``: a param used only
        here is added into its ``.grad`` at once, or kept for the end of an atomic
        pass), so a segment's param gradients are never all held at once. The others
        are returned (None: no gradient reached the node), ``first``'s always: its
        closure runs this, and the loop has already served its edge.
        """
        name = self.name
        replay = _Draws(None, list(self.states))
        token = _DRAWS.set(replay)
        gtoken = GRAD_ENABLED.set(True)
        try:
            with Scope():
                # Arguments that are op results start the recomputation as new leaves
                # holding their saved values; params are used as they are.
                made: dict[Node, Variable] = {}
                back: dict[Node, Node] = {}
                for node, value in self.values:
                    if node.params is None and node.needs_grad:
                        continue
                    v = param(value, copy=False) if node.needs_grad else const(value, copy=False)
                    made[node] = v
                    back[v.node] = node
                new_args, new_kwargs = map_leaves(
                    lambda v: made.get(v.node, v) if type(v) is Variable else v,
                    (self.args, self.kwargs),
                )
                outs, _ = _outputs(name, self.fn(*new_args, **new_kwargs))
                fingerprint = self.prints[k]
                if fingerprint is not None and not fingerprint.matches(outs[k].value):
                    raise _changed(name, k)
                roots = [outs[k]]
                del outs  # the output's value goes once the pass has read it, unless saved
                wanted = self.external
                targets = None if outer is None else outer.targets
                if targets is not None:  # the leaves the enclosing pass asks for
                    wanted = [n for n in wanted if n.params is not None or n in targets]
                grads: dict[Node, Grad | None] = dict.fromkeys(wanted)

                def sink(node: Node, d: Grad) -> None:
                    n = back.get(node, node)
                    # A param's gradient goes straight to the enclosing pass if it can
                    # take it; the others wait for their closures.
                    if (
                        n is not first
                        and n.params is None
                        and outer is not None
                        and outer.hand_over(n, d)
                    ):
                        del grads[n]
                    else:
                        grads[n] = d

                if roots[0].needs_grad:
                    inner_targets = {made[n].node if n in made else n for n in wanted}
                    passing = _propagate(roots, [g], (), inner_targets, sink=sink)
                    del roots
                    for _ in passing:
                        pass
                return grads
        finally:
            GRAD_ENABLED.reset(gtoken)
            _DRAWS.reset(token)


class _Shared:
    """One output's recomputation, shared by the closures of its op: run by the first
    closure a pass calls; the gradients it did not hand over wait for their closures.

    A new pass (another ``g``, or another running pass) runs it again. Thread-safe:
    with ``workers`` > 1 the closures may run in several threads.
    """

    __slots__ = ("_grads", "_key", "_lock", "_run")

    def __init__(
        self, run: Callable[[np.ndarray, Node, Pass | None], dict[Node, Grad | None]]
    ) -> None:
        self._run = run
        self._lock = threading.Lock()
        self._key: tuple[Callable[[], Any], weakref.ref[Pass] | None] | None = None
        self._grads: dict[Node, Grad | None] = {}

    def take(self, g: np.ndarray, node: Node) -> Grad | None:
        """``node``'s gradient for the output gradient ``g`` (None: zero)."""
        running = RUNNING.get()
        # Gradients are handed over only to the serial pass calling this closure.
        outer = running if running is not None and running.thread == threading.get_ident() else None
        with self._lock:
            key = self._key
            if (
                key is None
                or key[0]() is not g
                or (outer is None) != (key[1] is None)
                or (key[1] is not None and key[1]() is not outer)
            ):
                self._key = None
                self._grads = {}  # what an interrupted pass left
                self._grads = self._run(g, node, outer)
                self._key = (ref_of(g), None if outer is None else weakref.ref(outer))
            grads = self._grads
            d = grads.pop(node, None)
            if not grads:  # every closure of this pass has had its gradient
                self._key = None
            return d


def _param(shared: _Shared, node: Node) -> Param:
    """The param of one external node, a contribution edge: its gradient from the
    shared recomputation, taken out of it, so each array is held once (the engine keeps
    it as the node's buffer: it is a new array of the recomputation's pass)."""

    def d_input(g: np.ndarray) -> Any:
        d = shared.take(g, node)
        return np.zeros(node.shape, node.dtype) if d is None else d

    return contribution_edge(node, d_input, True)


# The recomputed graph's own ops apply the complex rules (each op's conjugations), so the
# contributions a remat op hands its inputs are complex-correct as they are.
complex_rule(OWN, "remat")
