"""The default random generator: what lampy draws from when no ``rng=`` is given.

PyTorch draws initialisations, dropout masks and samples from one process-wide
generator, seeded from the operating system's entropy unless ``torch.manual_seed`` is
called; lampy does the same with a ``numpy.random.Generator`` (PCG64):

- ``default_generator()`` is the generator in use here and now: the one a
  ``using_generator``/``fork_rng`` block of this thread (or asyncio task) put in place,
  else the process-wide one, made on first use from OS entropy.
- ``manual_seed(seed)`` reseeds that generator in place (the same object, as PyTorch's
  ``manual_seed`` reseeds ``torch.default_generator``): its draws are then those of
  ``numpy.random.default_rng(seed)``.
- ``fork_rng()`` draws, inside a block, from a copy of the current state, and leaves
  the outer generator where it was; ``using_generator(rng)`` makes ``rng`` the default
  inside a block. Both are context-local (a ``ContextVar``): a block in one thread does
  not change what other threads draw from.

Threads without such a block share the process-wide generator. Each draw holds the
generator's lock (numpy's ``bit_generator.lock``), so concurrent draws are safe, but
their order between threads is not reproducible: for reproducible threads, give each
its own generator (``with lampy.random.using_generator(np.random.default_rng(i)):``).

An explicit ``rng=`` (or PyTorch's ``generator=``) always wins over the default.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError

__all__ = [
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "resolve_rng",
    "seed",
    "set_rng_state",
    "using_generator",
]

_LOCK = threading.Lock()
# The process-wide generator and the seed it was last seeded with, made on first use
# (importing lampy draws no entropy).
_PROCESS: list[tuple[np.random.Generator, int]] = []
# The generator a using_generator/fork_rng block put in place, in this context.
_OVERRIDE: ContextVar[tuple[np.random.Generator, int | None] | None] = ContextVar(
    "lampy_default_generator", default=None
)


def _process() -> tuple[np.random.Generator, int]:
    if not _PROCESS:
        with _LOCK:
            if not _PROCESS:
                entropy = np.random.SeedSequence().entropy
                assert isinstance(entropy, int)
                _PROCESS.append((np.random.default_rng(entropy), entropy))
    return _PROCESS[0]


def default_generator() -> np.random.Generator:
    """The generator lampy draws from when no ``rng=`` is given (PyTorch's
    ``torch.default_generator``, a function here because it depends on the context).

    Returns:
        The generator of the innermost ``using_generator``/``fork_rng`` block of this
        context, else the process-wide one (seeded from OS entropy on first use, or by
        ``manual_seed``).

    Examples:
        >>> import lampy
        >>> g = lampy.manual_seed(0)
        >>> lampy.default_generator() is g
        True
    """
    override = _OVERRIDE.get()
    return override[0] if override is not None else _process()[0]


def resolve_rng(owner: str, rng: Any) -> np.random.Generator:
    """``rng`` if given, else the default generator: what every random op and
    initialiser calls before drawing.

    Args:
        owner: The op or factory, named first in the error (``"Linear.init"``).
        rng: What the caller passed (None for the default).

    Raises:
        LampyTypeError: if ``rng`` is neither None nor a ``numpy.random.Generator``.
    """
    if rng is None:
        return default_generator()
    if not isinstance(rng, np.random.Generator):
        raise LampyTypeError(
            f"{owner}: rng must be a numpy.random.Generator (np.random.default_rng(seed)) "
            f"or None for lampy's default generator, got {type(rng).__name__}."
        )
    return rng


def _seed_value(seed: Any) -> int:
    try:
        s = operator.index(seed)
    except TypeError:
        raise LampyTypeError(f"manual_seed: seed must be an int, got {seed!r}.") from None
    if s < 0:
        raise LampyValueError(
            f"manual_seed: seed must be >= 0 (numpy's seeds are non-negative), got {s}."
        )
    return s


def _reseed(g: np.random.Generator, s: int) -> None:
    """Put ``g`` in the state ``numpy.random.default_rng(s)`` starts in (for another
    bit generator type, that type's state for seed ``s``)."""
    bit = g.bit_generator
    fresh = type(bit)(s).state
    with bit.lock:
        bit.state = fresh


def manual_seed(seed: int) -> np.random.Generator:
    """Seed the default generator, as ``torch.manual_seed``.

    The generator is reseeded in place, so a reference taken before sees the new
    seed too; its draws are then those of ``numpy.random.default_rng(seed)``. Inside a
    ``fork_rng`` or ``using_generator`` block this seeds that block's generator.
    (``Generator.spawn`` still derives from the generator's first seed, which numpy
    keeps: spawn from ``np.random.default_rng(seed)`` for reproducible children.)

    Args:
        seed: A non-negative int.

    Returns:
        The default generator.

    Raises:
        LampyTypeError: if ``seed`` is not an int.
        LampyValueError: if it is negative.

    Examples:
        >>> import lampy, numpy as np
        >>> a = lampy.manual_seed(0).random()
        >>> a == np.random.default_rng(0).random()
        True
    """
    s = _seed_value(seed)
    override = _OVERRIDE.get()
    if override is not None:
        _reseed(override[0], s)
        _OVERRIDE.set((override[0], s))
        return override[0]
    g, _ = _process()
    with _LOCK:
        _reseed(g, s)
        _PROCESS[0] = (g, s)
    return g


def seed() -> int:
    """Seed the default generator from OS entropy and return the seed, as ``torch.seed``.

    Examples:
        >>> import lampy
        >>> s = lampy.seed()
        >>> lampy.initial_seed() == s
        True
    """
    entropy = np.random.SeedSequence().entropy
    assert isinstance(entropy, int)
    manual_seed(entropy)
    return entropy


def initial_seed() -> int:
    """The seed the default generator was last seeded with (from OS entropy unless
    ``manual_seed`` or ``seed`` was called), as ``torch.initial_seed``.

    Raises:
        LampyValueError: inside a ``using_generator`` block whose generator lampy did not
            seed (the seed of a generator you made is yours to know).
    """
    override = _OVERRIDE.get()
    if override is None:
        return _process()[1]
    if override[1] is None:
        raise LampyValueError(
            "initial_seed: the default generator is one given to using_generator, whose "
            "seed lampy does not know; call lampy.manual_seed(seed) in the block to "
            "seed it, or read the seed where you made the generator."
        )
    return override[1]


def get_rng_state() -> dict[str, Any]:
    """A copy of the default generator's state (numpy's ``bit_generator.state`` dict),
    as ``torch.get_rng_state``; give it to ``set_rng_state`` to draw the same again."""
    bit = default_generator().bit_generator
    with bit.lock:
        return _copied(dict(bit.state))


def set_rng_state(new_state: Mapping[str, Any]) -> None:
    """Restore the default generator to a state from ``get_rng_state``, as
    ``torch.set_rng_state``.

    Raises:
        LampyValueError: if the state is not one of the generator's bit generator type.
    """
    bit = default_generator().bit_generator
    try:
        with bit.lock:
            bit.state = _copied(dict(new_state))
    except (TypeError, ValueError, KeyError) as e:
        raise LampyValueError(
            f"set_rng_state: the state does not fit the default generator "
            f"({type(bit).__name__}): {e}. Pass a state from lampy.random.get_rng_state()."
        ) from None


def _copied(state: dict[str, Any]) -> dict[str, Any]:
    return {k: _copied(v) if isinstance(v, dict) else v for k, v in state.items()}


@contextmanager
def using_generator(rng: np.random.Generator) -> Iterator[np.random.Generator]:
    """Make ``rng`` the default generator inside the block (this thread or task only).

    Every draw that takes no ``rng=`` (module initialisation, dropout, ``nn.init.*_``,
    ``lampy.multinomial``) draws from ``rng`` and advances it; the previous default is
    back when the block exits.

    Args:
        rng: A ``numpy.random.Generator``.

    Yields:
        ``rng``.

    Raises:
        LampyTypeError: if ``rng`` is not a ``numpy.random.Generator``.

    Examples:
        >>> import lampy, numpy as np
        >>> with lampy.random.using_generator(np.random.default_rng(0)) as g:
        ...     lampy.default_generator() is g
        True
    """
    if not isinstance(rng, np.random.Generator):
        raise LampyTypeError(
            f"using_generator: rng must be a numpy.random.Generator, got {type(rng).__name__}."
        )
    token = _OVERRIDE.set((rng, None))
    try:
        yield rng
    finally:
        _OVERRIDE.reset(token)


@contextmanager
def fork_rng(devices: Any = None, enabled: bool = True) -> Iterator[np.random.Generator]:
    """Draw inside the block without advancing the default generator, as
    ``torch.random.fork_rng``: the block draws from a copy of the current default
    (same state, so the same numbers the default would give), and the default is as
    it was when the block exits, even after ``manual_seed`` inside it.

    Args:
        devices: Accepted for PyTorch compatibility and ignored (lampy has one device).
        enabled: False makes the block do nothing (draws advance the default).

    Yields:
        The block's generator (the default generator inside it).

    Examples:
        >>> import lampy
        >>> _ = lampy.manual_seed(0)
        >>> with lampy.random.fork_rng():
        ...     a = lampy.default_generator().random()
        >>> a == lampy.default_generator().random()
        True
    """
    if not enabled:
        yield default_generator()
        return
    bit = default_generator().bit_generator
    with bit.lock:
        state = bit.state
    forked = np.random.Generator(type(bit)())
    forked.bit_generator.state = state
    override = _OVERRIDE.get()
    seed_of = _process()[1] if override is None else override[1]
    token = _OVERRIDE.set((forked, seed_of))
    try:
        yield forked
    finally:
        _OVERRIDE.reset(token)
