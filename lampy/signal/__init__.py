"""Signal processing with gradients, mirroring ``scipy.signal`` (the ``lampy[scipy]``
extra: scipy computes the values, lampy adds the gradients). For 1-d ``numpy.convolve``
and ``numpy.correlate`` see ``lampy.convolve`` and ``lampy.correlate``."""

from lampy.signal._ndconvolve import convolve as convolve
