"""Data-parallel training over MPI: every rank trains the same model on its own shard of
each batch, and gradients are averaged across ranks while backprop still runs.

Needs the ``mpi`` extra (``pip install "lampy[mpi]"``: mpi4py and Open MPI); importing
this package does not import mpi4py, ``lampy.distributed.init`` does. See
docs/distributed.md.
"""

from lampy.distributed._broadcast import broadcast_optimizer_state as broadcast_optimizer_state
from lampy.distributed._broadcast import broadcast_parameters as broadcast_parameters
from lampy.distributed._data_parallel import DEFAULT_BUCKET_BYTES as DEFAULT_BUCKET_BYTES
from lampy.distributed._data_parallel import DataParallel as DataParallel
from lampy.distributed._world import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from lampy.distributed._world import DistributedError as DistributedError
from lampy.distributed._world import DistributedTimeoutError as DistributedTimeoutError
from lampy.distributed._world import NotInitializedError as NotInitializedError
from lampy.distributed._world import barrier as barrier
from lampy.distributed._world import init as init
from lampy.distributed._world import is_initialized as is_initialized
from lampy.distributed._world import is_main_process as is_main_process
from lampy.distributed._world import rank as rank
from lampy.distributed._world import reduce_metrics as reduce_metrics
from lampy.distributed._world import world_size as world_size

__all__ = [
    "init",
    "is_initialized",
    "rank",
    "world_size",
    "is_main_process",
    "barrier",
    "broadcast_parameters",
    "broadcast_optimizer_state",
    "DataParallel",
    "DEFAULT_BUCKET_BYTES",
    "reduce_metrics",
    "DEFAULT_TIMEOUT",
    "DistributedError",
    "DistributedTimeoutError",
    "NotInitializedError",
]
