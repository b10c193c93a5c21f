"""Variable's numpy-style methods and properties match numpy's ndarray methods."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad

A = np.arange(1.0, 7.0).reshape(2, 3) / 3.0


@pytest.mark.parametrize(
    ("method", "ref"),
    [
        (lambda v: v.mT, lambda a: np.swapaxes(a, -1, -2)),
        (lambda v: abs(v - 1.0), lambda a: np.abs(a - 1.0)),
        (lambda v: v.clip(0.5, 1.5), lambda a: a.clip(0.5, 1.5)),
        (lambda v: v.round(1), lambda a: a.round(1)),
        (lambda v: v.dot(v.T), lambda a: a.dot(a.T)),
        (lambda v: v.trace(), lambda a: a.trace()),
        (lambda v: v.diagonal(), lambda a: a.diagonal()),
        (lambda v: v.astype(np.float32), lambda a: a.astype(np.float32)),
        (lambda v: v.copy(), lambda a: a.copy()),
        (lambda v: v.sum(axis=0), lambda a: a.sum(axis=0)),
        (lambda v: v.mean(1, keepdims=True), lambda a: a.mean(1, keepdims=True)),
    ],
)
def test_method_matches_numpy(method: object, ref: object) -> None:
    """Each method gives numpy's value and dtype, and a correct gradient."""
    expected = np.asarray(ref(A))  # type: ignore[operator]
    with lampy.Scope():
        out = method(lampy.param(A))  # type: ignore[operator]
        np.testing.assert_allclose(out.value, expected, rtol=1e-6)
        assert out.dtype == expected.dtype
    if expected.dtype == np.float64:
        check_grad(method, A)  # type: ignore[arg-type]


def test_numpy_functions_dispatch_to_methods() -> None:
    """np.sum, np.mean, np.reshape and np.transpose work on Variables through methods."""
    with lampy.Scope():
        x = lampy.param(A)
        assert isinstance(np.sum(x), lampy.Variable)
        assert isinstance(np.mean(x, axis=0), lampy.Variable)
        assert np.reshape(x, (3, 2)).shape == (3, 2)
        assert np.transpose(x).shape == (3, 2)


def test_out_argument_is_refused() -> None:
    """out= cannot be honoured on an immutable Variable and says so."""
    with lampy.Scope():
        x = lampy.param(A)
        with pytest.raises(TypeError, match="out= is not supported"):
            x.sum(out=np.zeros(()))


def test_mt_needs_two_dimensions() -> None:
    """.mT of a 1-d Variable is a ShapeError, as numpy raises for ndarray.mT."""
    with lampy.Scope(), pytest.raises(ValueError, match=r"matrix_transpose: needs .* shape \(2,\)"):
        lampy.param([1.0, 2.0]).mT


def test_tolist() -> None:
    """tolist gives nested Python lists of the value."""
    with lampy.Scope():
        assert lampy.param(A).tolist() == A.tolist()


def test_astype_to_integer_is_a_constant() -> None:
    """Casting to an integer dtype gives a constant integer Variable."""
    with lampy.Scope():
        y = lampy.param(A * 3).astype(np.int64)
        assert y.dtype == np.int64
        assert not y.needs_grad


@pytest.mark.parametrize(
    ("method", "ref"),
    [
        (lambda v: v.var(axis=1, ddof=1), lambda a: a.var(axis=1, ddof=1)),
        (lambda v: v.std(ddof=0), lambda a: a.std()),
        (lambda v: v.prod(axis=0, keepdims=True), lambda a: a.prod(axis=0, keepdims=True)),
        (lambda v: v.max(axis=1, initial=-np.inf), lambda a: a.max(axis=1)),
        (lambda v: v.min(), lambda a: a.min()),
        (lambda v: v.cumsum(axis=1), lambda a: a.cumsum(axis=1)),
        (lambda v: v.cumprod(), lambda a: a.cumprod()),
    ],
)
def test_reduction_methods_match_numpy(method: object, ref: object) -> None:
    """Reduction methods take ndarray's signatures and differentiate correctly."""
    expected = np.asarray(ref(A))  # type: ignore[operator]
    with lampy.Scope():
        out = method(lampy.param(A))  # type: ignore[operator]
        np.testing.assert_allclose(out.value, expected, rtol=1e-12)
    check_grad(method, A)  # type: ignore[arg-type]


def test_argmax_argmin_methods_return_numpy_indices() -> None:
    """argmax/argmin methods give numpy integer results, not Variables."""
    with lampy.Scope():
        x = lampy.param(A)
        np.testing.assert_array_equal(x.argmax(axis=1), A.argmax(axis=1))
        assert x.argmin() == A.argmin()
        assert not isinstance(x.argmax(), lampy.Variable)


def test_indexing_methods_match_numpy() -> None:
    """take, compress and argsort methods follow ndarray's signatures."""
    with lampy.Scope():
        x = lampy.param(A)
        np.testing.assert_array_equal(x.take([0, 0, 2], axis=1).value, A.take([0, 0, 2], axis=1))
        np.testing.assert_array_equal(x.compress([True, False], axis=0).value, A[:1])
        np.testing.assert_array_equal(x.argsort(axis=0), A.argsort(axis=0))
    check_grad(lambda v: v.take([0, 0, 2], axis=1), A)


@pytest.mark.parametrize(
    ("method", "ref"),
    [
        (lambda v: v.ravel(), lambda a: a.ravel()),
        (lambda v: v.flatten("F"), lambda a: a.flatten("F")),
        (lambda v: v.reshape(1, 6).squeeze(0), lambda a: a.reshape(1, 6).squeeze(0)),
        (lambda v: v.swapaxes(0, 1), lambda a: a.swapaxes(0, 1)),
        (lambda v: v.repeat(2, axis=1), lambda a: a.repeat(2, axis=1)),
    ],
)
def test_shape_methods_match_numpy(method: object, ref: object) -> None:
    """Shape methods take ndarray's signatures and differentiate correctly."""
    expected = np.asarray(ref(A))  # type: ignore[operator]
    with lampy.Scope():
        out = method(lampy.param(A))  # type: ignore[operator]
        np.testing.assert_array_equal(out.value, expected)
    check_grad(method, A)  # type: ignore[arg-type]


def test_boolean_methods_return_numpy_results() -> None:
    """all, any and nonzero read the value and return numpy results."""
    with lampy.Scope():
        x = lampy.param(A - 1.0)
        assert x.all() == (A - 1.0).all()
        np.testing.assert_array_equal(x.any(axis=0), (A - 1.0).any(axis=0))
        for got, want in zip(x.nonzero(as_tuple=True), (A - 1.0).nonzero(), strict=True):
            np.testing.assert_array_equal(got, want)
