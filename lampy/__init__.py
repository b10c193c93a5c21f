"""lampy: reverse-mode automatic differentiation on numpy, with scopes that own memory.

The public API is re-exported here; implementation modules start with ``_``.
"""

from lampy._errors import BadIndexError as BadIndexError
from lampy._errors import DTypeError as DTypeError
from lampy._errors import LampyError as LampyError
from lampy._errors import NoScopeError as NoScopeError
from lampy._errors import ReleasedError as ReleasedError
from lampy._errors import ShapeError as ShapeError
from lampy._scope import Scope as Scope
from lampy.autograd import Op as Op
from lampy.autograd import Variable as Variable
from lampy.autograd import backward as backward
from lampy.autograd import backward_iter as backward_iter
from lampy.autograd import const as const
from lampy.autograd import grad as grad
from lampy.autograd import is_grad_enabled as is_grad_enabled
from lampy.autograd import no_grad as no_grad
from lampy.autograd import op as op
from lampy.autograd import param as param
from lampy.autograd import unbroadcast as unbroadcast
from lampy.autograd import value_and_grad as value_and_grad
from lampy.ops import add as add
from lampy.ops import divide as divide
from lampy.ops import exp as exp
from lampy.ops import getitem as getitem
from lampy.ops import log as log
from lampy.ops import matmul as matmul
from lampy.ops import mean as mean
from lampy.ops import multiply as multiply
from lampy.ops import negative as negative
from lampy.ops import power as power
from lampy.ops import reshape as reshape
from lampy.ops import subtract as subtract
from lampy.ops import sum as sum
from lampy.ops import tanh as tanh
from lampy.ops import transpose as transpose

__version__ = "0.1.0.dev0"
