"""The op library, one module per family. Each op is built with [lampy.op][]."""

from lampy.ops._arithmetic import add as add
from lampy.ops._arithmetic import divide as divide
from lampy.ops._arithmetic import multiply as multiply
from lampy.ops._arithmetic import negative as negative
from lampy.ops._arithmetic import power as power
from lampy.ops._arithmetic import subtract as subtract
from lampy.ops._exp_log import exp as exp
from lampy.ops._exp_log import log as log
from lampy.ops._hyperbolic import tanh as tanh
from lampy.ops._indexing import getitem as getitem
from lampy.ops._linalg import matmul as matmul
from lampy.ops._reductions import mean as mean
from lampy.ops._reductions import sum as sum
from lampy.ops._shape import reshape as reshape
from lampy.ops._shape import transpose as transpose
