"""Training: the fit loop, evaluation, callbacks, checkpoints and anomaly detection."""

from lampy.io import CheckpointError as CheckpointError
from lampy.io import CheckpointWriteError as CheckpointWriteError
from lampy.train._anomaly import NonFiniteError as NonFiniteError
from lampy.train._anomaly import find_nonfinite as find_nonfinite
from lampy.train._callbacks import BestCheckpoint as BestCheckpoint
from lampy.train._callbacks import Callback as Callback
from lampy.train._callbacks import EarlyStopping as EarlyStopping
from lampy.train._callbacks import MetricsLogger as MetricsLogger
from lampy.train._callbacks import PeakMemory as PeakMemory
from lampy.train._checkpoint import load as load
from lampy.train._checkpoint import load_metadata as load_metadata
from lampy.train._checkpoint import save as save
from lampy.train._evaluate import accuracy as accuracy
from lampy.train._evaluate import evaluate as evaluate
from lampy.train._fit import fit as fit
from lampy.train._state import History as History
from lampy.train._state import TrainState as TrainState
