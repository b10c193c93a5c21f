"""Trees: nested tuples, lists, dicts, namedtuples, records and registered types holding
Variables, arrays or anything else, walked by one set of rules (JAX's pytrees). See
``lampy/_tree.py`` for the rules; ``Scope.keep``, ``lampy.remat``, ``lampy.grad`` and
``lampy.nn.Module`` all follow them."""

from lampy._tree import Structure as Structure
from lampy._tree import TreeError as TreeError
from lampy._tree import flatten as flatten
from lampy._tree import is_container as is_container
from lampy._tree import leaves as leaves
from lampy._tree import leaves_with_paths as leaves_with_paths
from lampy._tree import map_leaves as map_leaves
from lampy._tree import register as register
