"""Op table of the parts of complex numbers: real, imag, conj, angle, real_if_close.

Their params here are real, as every op table entry's (where ``real`` and ``conj`` are
the identity and ``imag`` and ``angle`` constants); ``test_complex_ops.py`` draws complex
inputs for them, away from 0 where ``angle``'s gradient has its pole.
"""

from __future__ import annotations

import numpy as np

import lampy

from .spec import OpSpec, unary

OPS: list[OpSpec] = [
    OpSpec("real", lampy.real, np.real, unary()),
    OpSpec("imag", lampy.imag, np.imag, unary()),
    OpSpec("conj", lampy.conj, np.conj, unary()),
    OpSpec("angle", lampy.angle, np.angle, unary(avoid=(0.0,), margin=0.1)),
    OpSpec(
        "angle_degrees",
        lambda z: lampy.angle(z, deg=True),
        lambda z: np.angle(z, deg=True),
        unary(avoid=(0.0,), margin=0.1),
    ),
    OpSpec("real_if_close", lampy.real_if_close, np.real_if_close, unary()),
]
