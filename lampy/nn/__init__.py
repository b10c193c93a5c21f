"""Neural networks: functional ops (``lampy.nn.functional``); modules and layers to come."""

from lampy.nn import functional as functional
