"""lampy.special beyond the op table: scipy's values at the edges of each domain,
refused gradients, bad input, 0-d and empty arrays, and logsumexp's signs. (Values and
gradients inside the domains: tests/ops/table_special.py.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.special as sc

import lampy
from lampy import special
from lampy.testing import check_grad

_INF, _NAN = np.inf, np.nan

# Each function with points at or past the ends of its domain, its poles and infinities.
EDGES: list[tuple[str, list[float]]] = [
    ("erf", [_INF, -_INF, _NAN, 0.0]),
    ("erfc", [_INF, -_INF, 30.0]),
    ("erfinv", [1.0, -1.0, 1.5, -2.0]),
    ("erfcinv", [0.0, 2.0, -1.0, 3.0]),
    ("ndtr", [_INF, -_INF, -40.0]),
    ("log_ndtr", [_INF, -_INF, -40.0, 40.0]),
    ("gamma", [0.0, -0.0, -1.0, -2.0, -_INF, _INF, 172.0]),
    ("gammaln", [0.0, -1.0, _INF, 1e308]),
    ("rgamma", [0.0, -1.0, -2.0, 200.0]),
    ("digamma", [0.0, -0.0, -1.0, _INF]),
    ("logit", [0.0, 1.0, 1.5, -0.5]),
    ("expit", [_INF, -_INF, 800.0, -800.0]),
    ("i0", [0.0, 800.0]),
    ("i1", [0.0, -800.0]),
    ("j0", [0.0, 1e300]),
    ("j1", [0.0, -1e300]),
    ("y0", [0.0, -1.0]),
    ("y1", [0.0, -1.0]),
]


@pytest.mark.parametrize(("name", "points"), EDGES, ids=[e[0] for e in EDGES])
def test_values_at_domain_edges_are_scipys(name: str, points: list[float]) -> None:
    """At the ends of the domain, poles and infinities, the value is scipy's (inf, nan
    and all, without a warning) and backward runs without raising."""
    x = np.array(points)
    with lampy.Scope():
        v = lampy.param(x)
        out = getattr(special, name)(v)
        np.testing.assert_array_equal(out.value, getattr(sc, name)(x))
        out.backward(np.ones(x.shape))
        assert v.grad.shape == x.shape


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("xlogy", ([0.0, 0.0, 1.0, 1.0], [0.0, -1.0, 0.0, -1.0])),
        ("xlog1py", ([0.0, 0.0, 1.0], [-1.0, -2.0, -1.0])),
        ("beta", ([0.0, -0.5, 1.0], [1.0, 1.0, _INF])),
        ("betaln", ([0.0, -1.0, 1e300], [1.0, 2.0, 1.0])),
    ],
)
def test_binary_values_at_domain_edges_are_scipys(name: str, args: tuple[Any, Any]) -> None:
    """Binary functions at the ends of their domains give scipy's values."""
    a, b = (np.array(v) for v in args)
    with lampy.Scope():
        out = getattr(special, name)(lampy.param(a), lampy.param(b))
        np.testing.assert_array_equal(out.value, getattr(sc, name)(a, b))
        out.backward(np.ones(out.shape))


def test_xlogy_gradient_in_y_is_zero_where_x_is_zero() -> None:
    """xlogy and xlog1py are 0 on the line x = 0, so their y-gradient is 0 there, even
    at y = 0 (JAX's convention); their x-gradient is log(y) (log1p(y))."""
    with lampy.Scope():
        x, y = lampy.param([0.0, 0.0, 2.0]), lampy.param([0.0, 3.0, 4.0])
        special.xlogy(x, y).sum().backward()
        assert y.grad.tolist() == [0.0, 0.0, 0.5]
        assert x.grad[1:].tolist() == [np.log(3.0), np.log(4.0)]
    with lampy.Scope():
        x, y = lampy.param([0.0, 2.0]), lampy.param([-1.0, 1.0])
        special.xlog1py(x, y).sum().backward()
        assert y.grad.tolist() == [0.0, 1.0]


def test_erfinv_gradient_is_infinite_at_the_ends() -> None:
    """erfinv's derivative sqrt(pi)/2 exp(erfinv(y)**2) is inf at y = ±1, as its value is."""
    with lampy.Scope():
        y = lampy.param([-1.0, 0.0, 1.0])
        special.erfinv(y).backward(np.ones(3))
        assert y.grad.tolist() == [_INF, np.sqrt(np.pi) / 2, _INF]


def test_log_ndtr_gradient_stays_finite_far_in_the_left_tail() -> None:
    """log_ndtr's gradient (the normal hazard ratio) is about -x far in the left tail,
    where pdf / cdf computed apart would be 0 / 0."""
    with lampy.Scope():
        x = lampy.param([-40.0, -200.0])
        special.log_ndtr(x).sum().backward()
        np.testing.assert_allclose(x.grad, [40.025, 200.005], rtol=1e-4)


# ------------------------------------------------------------------ refused gradients

ORDERED: list[tuple[str, str, Callable[..., Any], float]] = [
    ("polygamma", "n", special.polygamma, 1.0),
    ("iv", "v", special.iv, 0.5),
    ("ive", "v", special.ive, 0.5),
    ("jn", "n", special.jn, 2.0),
    ("yn", "n", special.yn, 2.0),
    ("gammainc", "a", special.gammainc, 1.5),
    ("gammaincc", "a", special.gammaincc, 1.5),
    ("stdtr", "df", special.stdtr, 3.0),
    ("betainc", "a", lambda a, x: special.betainc(a, 2.0, x * 0.3), 1.5),
    ("betainc", "b", lambda b, x: special.betainc(2.0, b, x * 0.3), 1.5),
]


@pytest.mark.parametrize(
    ("name", "arg", "fn", "order"), ORDERED, ids=[f"{o[0]}-{o[1]}" for o in ORDERED]
)
def test_gradient_in_an_order_is_refused(
    name: str, arg: str, fn: Callable[..., Any], order: float
) -> None:
    """An order or shape argument that needs a gradient (none in closed form) raises an
    error naming the function and the argument and saying to pass it as a constant;
    passed as a constant (a number, an array, a const Variable) it works."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        with pytest.raises(
            lampy.LampyValueError, match=rf"lampy\.special\.{name}: no gradient in {arg}.*constant"
        ):
            fn(lampy.param(order), x)
        for constant in (order, np.array([order]), lampy.const(order)):
            out = fn(constant, x)
            out.sum().backward()
            assert np.all(np.isfinite(x.grad))


def test_constant_integer_order_keeps_float32() -> None:
    """An integer order array next to a float32 argument gives a float32 value and
    gradient (scipy would compute and return float64)."""
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0], np.float32))
        for fn in (special.jn, special.yn, special.iv, special.polygamma):
            out = fn(np.array([1, 2]), x)
            assert out.dtype == np.float32
            out.sum().backward()
            assert x.grad.dtype == np.float32


# ---------------------------------------------------------------------- bad input


def test_shapes_that_do_not_broadcast_raise_shape_error() -> None:
    """Arguments whose shapes do not broadcast raise lampy.ShapeError naming the
    function and both shapes."""
    with lampy.Scope():
        a, b = lampy.param(np.ones(2)), lampy.param(np.ones(3))
        for fn in (special.beta, special.betaln, special.xlogy, special.xlog1py):
            with pytest.raises(lampy.ShapeError, match=r"\(2,\).*\(3,\)"):
                fn(a, b)
        with pytest.raises(lampy.ShapeError, match=r"jn.*\(2,\).*\(3,\)"):
            special.jn(np.ones(2), b)
        with pytest.raises(lampy.ShapeError, match="logsumexp"):
            special.logsumexp(a, b=np.ones(3))


def test_non_numbers_raise_type_error() -> None:
    """A string argument raises lampy.LampyTypeError, as lampy's ops do."""
    with lampy.Scope(), pytest.raises(lampy.LampyTypeError):
        special.erf("one")


def test_multigammaln_outside_its_domain_raises() -> None:
    """multigammaln needs a > (d - 1) / 2 and an integer d >= 1; it says so."""
    with lampy.Scope():
        with pytest.raises(lampy.LampyValueError, match=r"multigammaln.*\(d - 1\) / 2"):
            special.multigammaln(lampy.param([0.5, 3.0]), 3)
        with pytest.raises(TypeError):
            special.multigammaln(lampy.param([3.0]), 2.5)  # type: ignore[arg-type]


# ------------------------------------------------------------------- 0-d and empty

UNARY = [
    "erf", "erfc", "erfinv", "erfcinv", "ndtr", "log_ndtr", "gamma", "gammaln", "rgamma",
    "digamma", "psi", "logit", "expit", "i0", "i1", "j0", "j1", "y0", "y1",
]  # fmt: skip


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0)])
def test_zero_d_and_empty_arguments(name: str, shape: tuple[int, ...]) -> None:
    """0-d and empty arguments give values of their shape (scipy's) and gradients of
    their shape."""
    x = np.full(shape, 0.3)
    check_grad(getattr(special, name), x)
    with lampy.Scope():
        out = getattr(special, name)(lampy.param(x))
        assert out.shape == shape
        np.testing.assert_allclose(out.value, getattr(sc, name)(x))


def test_multigammaln_and_logsumexp_of_zero_d() -> None:
    """multigammaln of a 0-d argument and logsumexp of a 0-d argument are 0-d."""
    check_grad(lambda a: special.multigammaln(a, 3), np.array(2.5))
    check_grad(special.logsumexp, np.array(2.5))


# -------------------------------------------------------------------- logsumexp


def test_logsumexp_with_negative_weights_and_return_sign() -> None:
    """With weights of both signs, return_sign gives log|sum| and the sign (scipy's);
    without it a negative sum is nan. The gradient of log|sum| matches central
    differences in both a and b."""
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.5, -1.0]])
    b = np.array([1.0, -2.0, 0.5])
    expected, sign = sc.logsumexp(a, axis=1, b=b, return_sign=True)
    with lampy.Scope():
        out, s = special.logsumexp(lampy.param(a), axis=1, b=b, return_sign=True)
        np.testing.assert_allclose(out.value, expected)
        np.testing.assert_array_equal(s, sign)
        plain = special.logsumexp(lampy.param(a), axis=1, b=b)
        assert np.isnan(plain.value[sign < 0]).all()
    check_grad(lambda x, w: special.logsumexp(x, axis=1, b=w, return_sign=True)[0], a, b)


def test_logsumexp_matches_lampy_logsumexp_without_weights() -> None:
    """Without weights, lampy.special.logsumexp is lampy.logsumexp, -inf slices included."""
    a = np.array([[-np.inf, -np.inf], [0.0, 1.0]])
    with lampy.Scope():
        np.testing.assert_array_equal(
            special.logsumexp(a, axis=1).value, lampy.logsumexp(a, axis=1).value
        )
