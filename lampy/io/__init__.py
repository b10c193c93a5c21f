"""Reading and writing tensors on disk: the safetensors format, in numpy alone."""

from lampy.io._safetensors import CheckpointError as CheckpointError
from lampy.io._safetensors import CheckpointWriteError as CheckpointWriteError
from lampy.io._safetensors import read_safetensors as read_safetensors
from lampy.io._safetensors import read_safetensors_metadata as read_safetensors_metadata
from lampy.io._safetensors import write_safetensors as write_safetensors
