"""Activation modules: each one (from one table) against a plain numpy formula, its
gradient, PyTorch's reprs and defaults, no state, and constructor errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import LampyTypeError, LampyValueError
from lampy.nn import _activation_modules as act
from lampy.testing import check_grad

_erf = np.vectorize(math.erf)


def _sig(x: Any) -> Any:
    return 1 / (1 + np.exp(-x))


def _softmax(x: Any, d: int) -> Any:
    e = np.exp(x - x.max(axis=d, keepdims=True))
    return e / e.sum(axis=d, keepdims=True)


_A, _S = 1.6732632423543772, 1.0507009873554805
# (class name, init args, numpy reference, torch repr)
TABLE: list[tuple[str, tuple[Any, ...], Callable[[Any], Any], str]] = [
    ("ReLU", (), lambda x: np.maximum(x, 0), "ReLU()"),
    ("ReLU6", (), lambda x: np.clip(x, 0, 6), "ReLU6()"),
    ("LeakyReLU", (0.2,), lambda x: np.where(x > 0, x, 0.2 * x), "LeakyReLU(negative_slope=0.2)"),
    ("ELU", (), lambda x: np.where(x > 0, x, np.expm1(x)), "ELU(alpha=1.0)"),
    ("SELU", (), lambda x: _S * np.where(x > 0, x, _A * np.expm1(x)), "SELU()"),
    (
        "CELU",
        (2.0,),
        lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(x / 2)),
        "CELU(alpha=2.0)",
    ),
    ("GELU", (), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), "GELU(approximate='none')"),
    (
        "GELU",
        ("tanh",),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        "GELU(approximate='tanh')",
    ),
    ("SiLU", (), lambda x: x * _sig(x), "SiLU()"),
    ("Mish", (), lambda x: x * np.tanh(np.log1p(np.exp(x))), "Mish()"),
    (
        "Softplus",
        (2.0, 3.0),
        lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2),
        "Softplus(beta=2.0, threshold=3.0)",
    ),
    ("Sigmoid", (), _sig, "Sigmoid()"),
    ("LogSigmoid", (), lambda x: np.log(_sig(x)), "LogSigmoid()"),
    ("Tanh", (), np.tanh, "Tanh()"),
    ("Hardtanh", (-2.0, 1.5), lambda x: np.clip(x, -2, 1.5), "Hardtanh(min_val=-2.0, max_val=1.5)"),
    ("Hardsigmoid", (), lambda x: np.clip(x / 6 + 0.5, 0, 1), "Hardsigmoid()"),
    ("Hardswish", (), lambda x: x * np.clip(x / 6 + 0.5, 0, 1), "Hardswish()"),
    ("Softsign", (), lambda x: x / (1 + np.abs(x)), "Softsign()"),
    ("Softmax", (1,), lambda x: _softmax(x, 1), "Softmax(dim=1)"),
    ("LogSoftmax", (-1,), lambda x: np.log(_softmax(x, -1)), "LogSoftmax(dim=-1)"),
    ("GLU", (), lambda x: x[:, :2] * _sig(x[:, 2:]), "GLU(dim=-1)"),
]

# Away from the kinks (0, ±3, 6, thresholds) so central differences are exact enough.
X = np.array([[-4.1, -2.2, -0.7, 0.4], [1.3, 2.6, 4.2, 7.1], [-0.35, 0.9, -1.6, 2.05]])


@pytest.mark.parametrize(
    ("name", "args", "ref", "text"), TABLE, ids=[f"{t[0]}{t[1]}" for t in TABLE]
)
def test_activation_matches_numpy(name: str, args: tuple[Any, ...], ref: Any, text: str) -> None:
    """The module computes its formula, has the right gradient, torch's repr, no state."""
    cls = getattr(act, name)
    m = cls.init(*args)
    assert repr(m) == text and m.state_dict() == {} and m.num_parameters() == 0
    with lampy.Scope():
        np.testing.assert_allclose(m(X).value, ref(X), rtol=1e-12, atol=1e-14)
        y32 = m(X.astype(np.float32))
        assert y32.dtype == np.float32
        np.testing.assert_allclose(y32.value, ref(X), rtol=1e-5, atol=1e-6)
    check_grad(m, X)
    assert m.with_training(False).training is False and repr(m.with_training(False)) == text


def test_every_activation_has_a_module() -> None:
    """Each activation of lampy.nn.functional has a module here and in the table."""
    from lampy.nn.functional import _activations

    fns = {n.replace("_", "") for n in _activations.__all__}
    mods = {n.lower() for n in act.__all__} - {"tanh"}
    assert fns <= mods
    assert {t[0] for t in TABLE} == set(act.__all__)


def test_activation_constructor_errors() -> None:
    """Unknown arguments, a bad approximate and a missing dim fail; PyTorch's inplace
    keyword is accepted (and has no effect)."""
    assert isinstance(act.ReLU.init(inplace=True), act.ReLU)
    assert act.LeakyReLU.init(0.2, inplace=True).negative_slope == 0.2
    with pytest.raises(LampyTypeError, match="inplace must be a bool"):
        act.ReLU.init(inplace="yes")
    with pytest.raises(LampyTypeError, match=r"It takes \['negative_slope'\]"):
        act.LeakyReLU.init(slope=0.1)
    with pytest.raises(LampyValueError, match="approximate"):
        act.GELU.init("exact")
    with pytest.raises(LampyValueError, match="pass dim explicitly"):
        act.Softmax.init()
    with pytest.raises(LampyTypeError, match="dim must be an int"):
        act.LogSoftmax.init(1.5)
