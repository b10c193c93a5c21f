"""Neural networks: modules (frozen records of parameters), ``functional`` ops and ``init``."""

from lampy.nn import functional as functional
from lampy.nn import init as init
from lampy.nn._containers import ModuleDict as ModuleDict
from lampy.nn._containers import ModuleList as ModuleList
from lampy.nn._containers import Sequential as Sequential
from lampy.nn._module import IncompatibleKeys as IncompatibleKeys
from lampy.nn._module import Module as Module
from lampy.nn._module import inline as inline
