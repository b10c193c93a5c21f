"""Second derivatives (``check_grad(order=2)``) of the join, magnitude, rounding, reduction,
product, einsum, indexing, scatter, masking, pad, cumulative, diagonal, reordering and
binary-math ops, over their op-table inputs and on awkward cases (repeated indices,
broadcasting, 0-d and empty arrays, zeros in products)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lampy
from lampy.testing import check_grad

from .op_table import OPS, OpSpec

NAMES = [
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "column_stack",
    "append",
    "vstack_one_array",
    "hstack_one_array",
    "column_stack_one_array",
    "stack_one_array",
    "concatenate_one_array",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "fabs",
    "nan_to_num",
    "positive",
    "abs",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "round",
    "round_decimals_1",
    "round_decimals_-1",
    "clip",
    "clip_variable_bounds",
    "clip_variable_min",
    "clip_keyword_bounds",
    "var",
    "std",
    "prod",
    "average",
    "average_weighted",
    "average_returned_weight_sum",
    "dot",
    "vdot",
    "inner",
    "outer",
    "tensordot",
    "kron",
    "cross",
    "einsum",
    "take",
    "compress",
    "take_along_axis",
    "gather",
    "index_select",
    "masked_fill",
    "index_add",
    "scatter_add",
    "put_along_axis",
    "pad",
    "cumsum",
    "cumprod",
    "trace",
    "diagonal",
    "diag",
    "tril",
    "triu",
    "tile",
    "repeat",
    "flip",
    "fliplr",
    "flipud",
    "rot90",
    "roll",
    "arctan2",
    "hypot",
    "logaddexp",
    "logaddexp2",
]

SPECS = [spec for spec in OPS if spec.name in NAMES]


def test_every_name_is_in_the_table() -> None:
    assert sorted(spec.name for spec in SPECS) == sorted(NAMES)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_second_order_over_the_table(spec: OpSpec, data: st.DataObject) -> None:
    """The recorded gradient's own gradient matches central differences of the gradient."""
    arrays, kwargs = data.draw(spec.inputs(np.dtype("float64")), label="inputs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check_grad(
            lambda *vs: spec.fn(*vs, **kwargs),
            *arrays,
            atol=spec.grad_atol,
            rtol=spec.grad_rtol,
            order=2,
        )


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def _square(f: Any) -> Any:
    """``f(...) ** 2``: makes a linear op's second derivative non-zero."""
    return lambda *vs: f(*vs) * f(*vs)


# ------------------------------------------------------------- indexing and scattering
def test_repeated_indices() -> None:
    x = _rng().normal(size=(4, 3))
    idx = np.array([0, 2, 0, 0, 3])
    check_grad(_square(lambda v: lampy.take(v, idx, axis=0)), x, order=2)
    check_grad(_square(lambda v: lampy.take(v, idx)), x, order=2)
    check_grad(_square(lambda v: lampy.index_select(v, 0, idx)), x, order=2)
    along = np.array([[0, 0, 1], [2, 2, 2]])
    check_grad(_square(lambda v: lampy.take_along_axis(v, along, axis=0)), x, order=2)
    check_grad(_square(lambda v: lampy.gather(v, 0, along)), x, order=2)
    check_grad(_square(lambda v: lampy.repeat(v, [2, 0, 1, 3], axis=0)), x, order=2)
    check_grad(_square(lambda v: lampy.repeat(v, 3)), x, order=2)


def test_scatter_ops_with_repeats() -> None:
    r = _rng()
    x, src = r.normal(size=(3, 4)), r.normal(size=(3, 4))
    idx = np.array([[0, 0, 2, 0], [0, 1, 1, 0]])
    check_grad(_square(lambda a, s: lampy.scatter_add(a, 0, idx, s)), x, src, order=2)
    source = r.normal(size=(3, 3))
    check_grad(
        _square(lambda a, s: lampy.index_add(a, 1, [0, 3, 0], s, alpha=2.0)), x, source, order=2
    )
    values = r.normal(size=(1, 4))
    put = np.array([[1, 1, 1, 2], [1, 0, 1, 2]])
    check_grad(_square(lambda a, v: lampy.put_along_axis(a, put, v, axis=0)), x, values, order=2)


def test_masks_broadcast() -> None:
    r = _rng()
    x, value = r.normal(size=(1, 4)), np.array(0.5)
    mask = np.array([[True, False, False, True], [False, False, True, True]])
    check_grad(_square(lambda a, v: lampy.masked_fill(a, mask, v)), x, value, order=2)
    y = np.array([0.0, np.inf, 0.0, np.nan])  # a constant: differences perturb only x
    check_grad(
        _square(lambda a, n: lampy.nan_to_num(a + y, nan=n, posinf=3.0)),
        np.array([1.0, 2.0, -2.0, 0.5]),
        np.array(0.25),
        order=2,
    )


def test_compress_and_take_empty() -> None:
    x = _rng().normal(size=(3, 2))
    check_grad(_square(lambda v: lampy.compress([True, False, True], v, axis=0)), x, order=2)
    check_grad(_square(lambda v: lampy.compress([False, False], v, axis=1)), x, order=2)
    check_grad(_square(lambda v: lampy.take(v, np.zeros(0, int), axis=1)), x, order=2)


# ---------------------------------------------------------------- joins and splits
def test_joins_with_0d_and_empty() -> None:
    r = _rng()
    a, b, e = r.normal(size=()), r.normal(size=()), np.zeros((0, 2))
    check_grad(_square(lambda u, w: lampy.stack([u, w])), a, b, order=2)
    check_grad(_square(lambda u, w: lampy.hstack([u, w])), a, b, order=2)
    m = r.normal(size=(2, 2))
    check_grad(_square(lambda u, w: lampy.concatenate([u, w], axis=0)), e, m, order=2)
    check_grad(_square(lambda u: lampy.concatenate(u, axis=None)), m, order=2)
    check_grad(_square(lambda u: lampy.vstack(u)), m, order=2)


def test_split_at_python_slice_indices() -> None:
    x = _rng().normal(size=(5, 2))
    for indices in ([1, 3], [3, 1], [-2], [0, 7], 5):

        def f(v: Any, indices: Any = indices) -> Any:
            parts = lampy.split(v, indices) if np.ndim(indices) else lampy.split(v, 5)
            return lampy.concatenate([p * (i + 1.0) for i, p in enumerate(parts)] * 2, axis=0)

        check_grad(_square(f), x, order=2)


def test_broadcast_arrays() -> None:
    r = _rng()
    a, b = r.normal(size=(3, 1)), r.normal(size=(4,))
    check_grad(lambda u, w: lampy.stack(lampy.broadcast_arrays(u, w)) ** 3, a, b, order=2)


# ---------------------------------------------------------------------- reductions
@pytest.mark.parametrize(
    "x",
    [
        np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]]),
        np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]),
        np.array([[1.5, 0.0, 3.0, 0.0, 2.0, 0.0, 1.0]]),
        np.array([[1.5, -0.5, 3.0]]),
    ],
)
def test_prod_and_cumprod_with_zeros(x: np.ndarray) -> None:
    check_grad(lambda v: lampy.prod(v, axis=1), x, order=2)
    check_grad(lambda v: lampy.prod(v), x, order=2)
    check_grad(lambda v: lampy.cumprod(v, axis=1), x, order=2)
    check_grad(lambda v: lampy.cumprod(v), x, order=2)


def test_var_std_average() -> None:
    r = _rng()
    x = r.normal(size=(3, 4))
    check_grad(lambda v: lampy.var(v, axis=(0, 1), ddof=1), x, order=2)
    check_grad(lambda v: lampy.std(v, axis=0, keepdims=True), x, order=2)
    w = r.uniform(0.5, 2.0, size=(4, 3))
    check_grad(
        lambda v, u: lampy.average(v, axis=(1, 0), weights=u, returned=True)[0] ** 2,
        x,
        w,
        order=2,
    )
    check_grad(
        lambda v, u: lampy.average(v, axis=1, weights=u[:, 0], returned=True)[1] ** 2,
        x,
        w,
        order=2,
    )


def test_zero_gradient_ops_give_a_zero_second_derivative() -> None:
    x = np.array([0.4, -1.6, 2.3, 3.2])  # away from the jumps
    for f in (lampy.floor, lampy.ceil, lampy.trunc, lampy.sign, lampy.round):
        check_grad(lambda v, f=f: f(v) * v * v, x, order=2)
    with lampy.Scope():
        v = lampy.param(x)
        (g,) = lampy.gradients(lampy.floor(v).sum(), [v], create_graph=True)
        np.testing.assert_array_equal(g.value, np.zeros(4))


# -------------------------------------------------------------- products and einsum
def test_products_with_0d_and_broadcast() -> None:
    r = _rng()
    s, m, v = r.normal(size=()), r.normal(size=(2, 3)), r.normal(size=(3,))
    check_grad(_square(lambda a, b: lampy.dot(a, b)), s, m, order=2)
    check_grad(_square(lambda a, b: lampy.inner(a, b)), m, v, order=2)
    check_grad(_square(lambda a, b: lampy.outer(a, b)), m, v, order=2)
    check_grad(_square(lambda a, b: lampy.kron(a, b)), v, m, order=2)
    t = r.normal(size=(2, 3, 4))
    check_grad(_square(lambda a, b: lampy.dot(a, b)), m, t, order=2)  # tensordot form


def test_cross_with_2_vectors() -> None:
    r = _rng()
    a2, b2, b3 = r.normal(size=(3, 2)), r.normal(size=(1, 2)), r.normal(size=(3,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            np.cross(a2, b2)
        except ValueError:
            pytest.skip("this numpy refuses 2-vectors in cross")
        check_grad(_square(lambda a, b: lampy.cross(a, b)), a2, b2, order=2)
        check_grad(_square(lambda a, b: lampy.cross(a, b)), a2, b3, order=2)


@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [
        ("ii->i", [(3, 3)]),
        ("iij,jk->ik", [(2, 2, 3), (3, 2)]),
        ("ii,ij->j", [(3, 3), (3, 2)]),
        ("m,m", [(3,), (1,)]),
        ("...j,...j->...", [(2, 3), (1, 3)]),
        ("ij,j", [(2, 0), (0,)]),
    ],
)
def test_einsum_diagonals_and_broadcasting(subscripts: str, shapes: list[Any]) -> None:
    arrays = [_rng().normal(size=s) for s in shapes]
    check_grad(_square(lambda *vs: lampy.einsum(subscripts, *vs)), *arrays, order=2)


# ------------------------------------------------------------- pad, diagonals, binary
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad_modes(mode: str) -> None:
    x = _rng().normal(size=(2, 3))
    check_grad(_square(lambda v: lampy.pad(v, ((1, 4), (2, 0)), mode)), x, order=2)


def test_pad_constant_value_and_0d() -> None:
    x, c = _rng().normal(size=(2,)), np.array(0.3)
    check_grad(_square(lambda v, k: lampy.pad(v, 2, constant_values=k)), x, c, order=2)
    check_grad(_square(lambda v: lampy.pad(v, 1)), np.array(1.5), order=2)


def test_diagonals() -> None:
    x = _rng().normal(size=(2, 3, 4))
    check_grad(_square(lambda v: lampy.trace(v, 1, 2, 1)), x, order=2)
    check_grad(_square(lambda v: lampy.diagonal(v, -1, 1, 2)), x, order=2)
    check_grad(_square(lambda v: lampy.diag(v, 1)), x[0], order=2)
    check_grad(_square(lambda v: lampy.diag(v, -1)), x[0, 0], order=2)
    check_grad(_square(lambda v: lampy.tril(v, -1)), x[0, 0], order=2)  # 1-d: rows


def test_binary_math_broadcast_and_origin() -> None:
    r = _rng()
    a, b = r.normal(size=(3, 1)), r.normal(size=(4,))
    for f in (lampy.arctan2, lampy.hypot, lampy.logaddexp, lampy.logaddexp2):
        check_grad(lambda u, w, f=f: f(u, w), a, b, order=2)
    with lampy.Scope():  # at the origin the gradient is 0 and the pass records no nan
        u, w = lampy.param(np.zeros(2)), lampy.param(np.zeros(2))
        for f in (lampy.arctan2, lampy.hypot):
            gu, gw = lampy.gradients(f(u, w).sum(), [u, w], create_graph=True)
            assert np.all(gu.value == 0) and np.all(gw.value == 0)
