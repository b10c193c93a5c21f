"""Experimental features: opt-in, not on lampy's default path, and free to change.

- ``lampy.experimental.array_api`` (``import lampy.experimental.array_api as lx``): ops
  whose values may be arrays of any namespace of the array API standard (numpy,
  ``array_api_strict``, CuPy...), recorded, backpropagated, owned and counted by
  lampy's own engine. The prototype of issue 29 (see the design note "Array backends").
"""
