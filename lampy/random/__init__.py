"""lampy's default random generator, with PyTorch's names (``torch.manual_seed``,
``torch.random.fork_rng``...): what initialisers, dropout and sampling draw from when
no ``rng=`` is given. See ``lampy/random/_default.py`` for the rules."""

from lampy.random._default import default_generator as default_generator
from lampy.random._default import fork_rng as fork_rng
from lampy.random._default import get_rng_state as get_rng_state
from lampy.random._default import initial_seed as initial_seed
from lampy.random._default import manual_seed as manual_seed
from lampy.random._default import resolve_rng as resolve_rng
from lampy.random._default import seed as seed
from lampy.random._default import set_rng_state as set_rng_state
from lampy.random._default import using_generator as using_generator
