"""lampy: reverse-mode automatic differentiation on numpy, with scopes that own memory.

The public API is re-exported here; implementation modules start with ``_``.
"""

from lampy._errors import BadIndexError as BadIndexError
from lampy._errors import DTypeError as DTypeError
from lampy._errors import LampyError as LampyError
from lampy._errors import LampyTypeError as LampyTypeError
from lampy._errors import LampyValueError as LampyValueError
from lampy._errors import NoScopeError as NoScopeError
from lampy._errors import ReleasedError as ReleasedError
from lampy._errors import ShapeError as ShapeError
from lampy._scope import Scope as Scope
from lampy.autograd import Op as Op
from lampy.autograd import Variable as Variable
from lampy.autograd import backward as backward
from lampy.autograd import backward_iter as backward_iter
from lampy.autograd import const as const
from lampy.autograd import contribution as contribution
from lampy.autograd import grad as grad
from lampy.autograd import is_grad_enabled as is_grad_enabled
from lampy.autograd import no_grad as no_grad
from lampy.autograd import op as op
from lampy.autograd import param as param
from lampy.autograd import unbroadcast as unbroadcast
from lampy.autograd import value_and_grad as value_and_grad

# ops: generated from lampy.ops (re-exported as lampy.<name>)
from lampy.ops import abs as abs
from lampy.ops import absolute as absolute
from lampy.ops import add as add
from lampy.ops import allclose as allclose
from lampy.ops import arccos as arccos
from lampy.ops import arccosh as arccosh
from lampy.ops import arcsin as arcsin
from lampy.ops import arcsinh as arcsinh
from lampy.ops import arctan as arctan
from lampy.ops import arctan2 as arctan2
from lampy.ops import arctanh as arctanh
from lampy.ops import around as around
from lampy.ops import array_equal as array_equal
from lampy.ops import astype as astype
from lampy.ops import cbrt as cbrt
from lampy.ops import ceil as ceil
from lampy.ops import clip as clip
from lampy.ops import copy as copy
from lampy.ops import cos as cos
from lampy.ops import cosh as cosh
from lampy.ops import diag as diag
from lampy.ops import diagonal as diagonal
from lampy.ops import divide as divide
from lampy.ops import dot as dot
from lampy.ops import einsum as einsum
from lampy.ops import equal as equal
from lampy.ops import exp as exp
from lampy.ops import exp2 as exp2
from lampy.ops import expm1 as expm1
from lampy.ops import floor as floor
from lampy.ops import fmax as fmax
from lampy.ops import fmin as fmin
from lampy.ops import getitem as getitem
from lampy.ops import greater as greater
from lampy.ops import greater_equal as greater_equal
from lampy.ops import hypot as hypot
from lampy.ops import inner as inner
from lampy.ops import isclose as isclose
from lampy.ops import isfinite as isfinite
from lampy.ops import isinf as isinf
from lampy.ops import isnan as isnan
from lampy.ops import kron as kron
from lampy.ops import less as less
from lampy.ops import less_equal as less_equal
from lampy.ops import log as log
from lampy.ops import log1p as log1p
from lampy.ops import log2 as log2
from lampy.ops import log10 as log10
from lampy.ops import logaddexp as logaddexp
from lampy.ops import logaddexp2 as logaddexp2
from lampy.ops import logical_and as logical_and
from lampy.ops import logical_not as logical_not
from lampy.ops import logical_or as logical_or
from lampy.ops import logical_xor as logical_xor
from lampy.ops import matmul as matmul
from lampy.ops import maximum as maximum
from lampy.ops import mean as mean
from lampy.ops import minimum as minimum
from lampy.ops import multiply as multiply
from lampy.ops import negative as negative
from lampy.ops import not_equal as not_equal
from lampy.ops import outer as outer
from lampy.ops import positive as positive
from lampy.ops import power as power
from lampy.ops import reciprocal as reciprocal
from lampy.ops import reshape as reshape
from lampy.ops import round as round
from lampy.ops import sign as sign
from lampy.ops import signbit as signbit
from lampy.ops import sin as sin
from lampy.ops import sinh as sinh
from lampy.ops import sqrt as sqrt
from lampy.ops import square as square
from lampy.ops import subtract as subtract
from lampy.ops import sum as sum
from lampy.ops import tan as tan
from lampy.ops import tanh as tanh
from lampy.ops import tensordot as tensordot
from lampy.ops import trace as trace
from lampy.ops import transpose as transpose
from lampy.ops import tril as tril
from lampy.ops import triu as triu
from lampy.ops import trunc as trunc
from lampy.ops import vdot as vdot
from lampy.ops import where as where

# end of ops

__version__ = "0.1.0.dev0"
