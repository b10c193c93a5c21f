"""Complex matrices in lampy.linalg (and vdot, convolve, correlate, signal.convolve):
numpy's (scipy's) values and dtypes, and PyTorch's gradients (``dL/dRe + i dL/dIm``)
checked against central differences in the real and imaginary parts.

One table drives the hypothesis tests: each case draws well-conditioned inputs
(separated singular values and eigenvalues) and reduces the op's result through a
function that does not depend on the phases numpy picks for eigenvectors and singular
vectors (``V diag(c) V^H``, ``|V|**2``, ``U diag(c) Vh``...), so that finite differences
are meaningful. Real inputs with complex results, 0-size stacks, and the ops that still
refuse complex matrices have their own tests below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest
import scipy.signal
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import lampy
from lampy import linalg as la
from lampy.autograd._complex import OWN, complex_kind
from lampy.testing import check_grad
from lampy.testing import strategies as ls

Draw = Callable[..., Any]
BATCHES: list[tuple[int, ...]] = [(), (2,)]
C = np.array([1.0, -2.0, 0.5, 1.5])  # fixed weights for gauge-invariant reductions


# ------------------------------------------------------------------ input builders
def _complex(d: Draw, shape: tuple[int, ...], lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """A complex array whose real and imaginary parts hypothesis draws in ``[lo, hi]``."""
    re = d(ls.arrays(shape, np.float64, min_value=lo, max_value=hi))
    im = d(ls.arrays(shape, np.float64, min_value=lo, max_value=hi))
    return re + 1j * im


def _unitary(d: Draw, batch: tuple[int, ...], n: int) -> np.ndarray:
    """A unitary matrix (the Householder QR of any complex matrix, zeros included)."""
    return np.linalg.qr(_complex(d, (*batch, n, n)))[0]


def _separated(d: Draw, batch: tuple[int, ...], k: int, lo: float) -> np.ndarray:
    """``k`` real values in descending order, the smallest ``lo``, gaps of 0.3 to 0.8."""
    gaps = d(ls.arrays((*batch, k), np.float64, min_value=0.3, max_value=0.8))
    return (lo - 0.3 + np.cumsum(gaps, axis=-1))[..., ::-1]


def conditioned(d: Draw, batch: tuple[int, ...], m: int, n: int) -> np.ndarray:
    """``U diag(s) V^H`` with unitary factors and singular values ``s >= 0.5``, at least
    0.3 apart."""
    k = min(m, n)
    s = _separated(d, batch, k, 0.5)
    u, v = _unitary(d, batch, m)[..., :k], _unitary(d, batch, n)[..., :k]
    return (u * s[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))


def hermitian(d: Draw, batch: tuple[int, ...], n: int, lo: float = -1.0) -> np.ndarray:
    """``U diag(w) U^H`` with eigenvalues ``w >= lo``, at least 0.3 apart (positive
    definite for ``lo > 0``)."""
    u = _unitary(d, batch, n)
    a = (u * _separated(d, batch, n, lo)[..., None, :]) @ np.conj(np.swapaxes(u, -1, -2))
    return 0.5 * (a + np.conj(np.swapaxes(a, -1, -2)))


def general(d: Draw, batch: tuple[int, ...], n: int) -> np.ndarray:
    """``S diag(w) S^{-1}``: a well-conditioned (generally non-normal) ``S`` and complex
    eigenvalues whose real parts are at least 0.3 apart."""
    im = d(ls.arrays((*batch, n), np.float64, min_value=-1, max_value=1))
    w = _separated(d, batch, n, -0.5) + 1j * im
    s = conditioned(d, batch, n, n)
    return (s * w[..., None, :]) @ np.linalg.inv(s)


def real_with_complex_pair(d: Draw, batch: tuple[int, ...], n: int) -> np.ndarray:
    """A real ``S B S^{-1}``: ``B`` holds the rotation-scaling block ``[[a, -b], [b, a]]``
    (eigenvalues ``a +- ib``, ``b >= 0.3``) and, for ``n = 3``, a real eigenvalue."""
    a = d(st.floats(-1, 1))
    b = d(st.floats(0.3, 1.5))
    block = np.zeros((n, n))
    block[:2, :2] = [[a, -b], [b, a]]
    if n == 3:
        block[2, 2] = d(st.floats(-1, 1))
    q = np.linalg.qr(d(ls.arrays((*batch, n, n), np.float64, min_value=-1, max_value=1)))[0]
    s = q * np.linspace(1.0, 2.0, n) + 0.3 * np.eye(n)
    return s @ block @ np.linalg.inv(s)


def square(d: Draw, batch: tuple[int, ...], n: int) -> np.ndarray:
    """A well-conditioned square matrix (:func:`conditioned`)."""
    return conditioned(d, batch, n, n)


# Fixed unitary matrices of sizes 1, 2, 3 with generic complex entries (see qr_input).
_RNG = np.random.default_rng(27)
_GENERIC = [
    np.linalg.qr(_RNG.normal(size=(k, k)) + 1j * _RNG.normal(size=(k, k)))[0] for k in (1, 2, 3)
]


def qr_input(d: Draw, batch: tuple[int, ...], m: int, n: int) -> np.ndarray:
    """Full rank, and for ``m < n`` a well-conditioned leading ``m x m`` block; turned by
    fixed generic unitary matrices. LAPACK's complex QR jumps where a pivot's real part
    crosses 0 (``R``'s diagonal is real, of the sign of ``-re(pivot)``), and hypothesis
    likes matrices with such pivots (zeros, identities)."""
    if m >= n:
        return _GENERIC[m - 1] @ conditioned(d, batch, m, n) @ _GENERIC[n - 1]
    x = np.concatenate([conditioned(d, batch, m, m), _complex(d, (*batch, m, n - m))], -1)
    return _GENERIC[m - 1] @ x


def generic(d: Draw, shape: tuple[int, ...]) -> np.ndarray:
    """Drawn values kept at least 0.1 from 0 in modulus (``sign(x)``, ``|x|**(p-1)``)."""
    x = _complex(d, shape, -2.0, 2.0)
    assume(x.size == 0 or np.abs(x).min() > 0.1)
    return x


# ------------------------------------------------------------------ losses and helpers
def H(x: Any) -> Any:
    """The batched conjugate transpose of a Variable."""
    return lampy.conj(lampy.swapaxes(x, -1, -2))


def herm(x: Any) -> Any:
    """The Hermitian part ``(x + x^H) / 2`` of a Variable: the symmetric-input ops'
    gradients are Hermitian, the derivative of ``f(herm(x))``."""
    return (x + H(x)) * 0.5


def flat(*parts: Any) -> Any:
    """The Variables ``parts`` flattened and joined (complex if any is)."""
    return lampy.concatenate([lampy.ravel(p) for p in parts])


def abs2(v: Any) -> Any:
    """``|v|**2``, real: invariant to the phase of each column."""
    return lampy.real(v * lampy.conj(v))


def weights(k: int) -> np.ndarray:
    return C[:k]


def _svd_loss(full: bool) -> Callable[[Any], Any]:
    def loss(x: Any) -> Any:
        u, s, vh = la.svd(x, full_matrices=full)
        k = s.shape[-1]
        u1, vh1 = u[..., :k], vh[..., :k, :]
        parts = [s, (u1 * weights(k)) @ vh1, (u1 * weights(k)) @ H(u1), (H(vh1) * weights(k)) @ vh1]
        if full:  # the complements, through their spans
            u2, v2 = u[..., k:], H(vh[..., k:, :])
            parts += [u2 @ H(u2), v2 @ H(v2)]
        return flat(*parts)

    return loss


def _qr_loss(mode: str) -> Callable[[Any], Any]:
    def loss(x: Any) -> Any:
        if mode == "r":
            return la.qr(x, mode="r")
        q, r = la.qr(x, mode=mode)
        k = min(x.shape[-2:])
        q1, q2 = q[..., :k], q[..., k:]
        return flat(q1, q2 @ H(q2), r)

    return loss


def _power_sums(w: Any) -> Any:
    """``sum(w**p)`` for ``p = 1, 2, 3`` over the last axis: invariant to the order of
    the eigenvalues, which LAPACK may change in a jump (at triangular matrices)."""
    return flat(*(lampy.sum(w**p, axis=-1) for p in (1, 2, 3)))


def _eig_loss(x: Any) -> Any:
    """Functions of eig invariant to the eigenvalues' order and the eigenvectors'
    phases: power sums, ``V diag(h(w)) V^{-1}`` and ``|V|**2 h(w)`` (``h(w) = w**2 + i
    w``, summed over the eigenpairs)."""
    w, v = la.eig(x)
    h = w * w + 1j * w
    n = w.shape[-1]
    row = lampy.reshape(h, (*w.shape[:-1], 1, n))
    return flat(_power_sums(w), (v * row) @ la.inv(v), lampy.sum(abs2(v) * row, axis=-1))


def _eigh_loss(x: Any) -> Any:
    w, v = la.eigh(herm(x))
    n = w.shape[-1]
    return flat(w, (v * weights(n)) @ H(v), abs2(v) * weights(n))


def _svd_hermitian_loss(x: Any) -> Any:
    u, s, vh = la.svd(herm(x), hermitian=True)
    return flat(s, (u * weights(s.shape[-1])) @ vh)


def _lstsq_case(d: Draw, batch: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    m, n = d(st.sampled_from([(3, 2), (2, 2), (4, 3)]))
    rhs = d(st.sampled_from([(m,), (m, 2)]))
    return conditioned(d, (), m, n), _complex(d, rhs)


def _norm_case(ords: Any, matrix: bool) -> Callable[[Draw, tuple[int, ...]], tuple[Any, ...]]:
    def build(d: Draw, batch: tuple[int, ...]) -> tuple[Any, ...]:
        x = generic(d, (*batch, d(st.integers(1, 3)), d(st.integers(1, 3))))
        ord = d(st.sampled_from(ords))
        axis = (-2, -1) if matrix else d(st.sampled_from([-1, -2]))
        if ord in (1, -1, np.inf, -np.inf):  # a max / min away from ties
            if matrix:
                sums = np.abs(x).sum(axis=-2 if ord in (1, -1) else -1)
            else:
                sums = np.moveaxis(np.abs(x), axis, -1)
            gaps = np.diff(np.sort(sums, axis=-1), axis=-1)
            assume(gaps.size == 0 or gaps.min() > 1e-3)
        if ord in (2, -2, "nuc"):  # separated singular values, away from 0
            s = np.linalg.svd(x, compute_uv=False)
            assume(s.shape[-1] == 1 or np.diff(s, axis=-1).max() < -1e-2)
            assume(s.min() > 1e-2)
        return x, ord, axis

    return build


# ------------------------------------------------------------------ the table
@attrs.frozen
class Case:
    """One op on complex inputs.

    Attributes:
        name: Test id (the op's name, with a variant).
        inputs: ``inputs(draw, batch)``: the complex128 arrays (and, after them,
            non-array arguments) of one call.
        fn: The lampy call on the arrays (Variables) and arguments.
        ref: numpy's (scipy's) call on the same.
        loss: A function of the inputs whose gradient is well defined (gauge-invariant),
            built on ``fn``.
        arrays: How many leading inputs are arrays (the others are arguments).
        batched: Whether the op takes stacks (drawn with a batch axis or not).
        tol64: check_grad's tolerance for complex64 inputs.
    """

    name: str
    inputs: Callable[[Draw, tuple[int, ...]], tuple[Any, ...]]
    fn: Callable[..., Any]
    ref: Callable[..., Any]
    loss: Callable[..., Any] | None = None
    arrays: int = 1
    batched: bool = True
    tol64: float = 2e-2

    def __repr__(self) -> str:
        return self.name


def _square(build: Callable[..., np.ndarray], sizes: tuple[int, ...] = (1, 2, 3)) -> Any:
    return lambda d, b: (build(d, b, d(st.sampled_from(sizes))),)


def _rect(build: Callable[..., np.ndarray]) -> Any:
    return lambda d, b: (build(d, b, d(st.integers(1, 3)), d(st.integers(1, 3))),)


_NUMPY_SVD = np.linalg.svd
CASES = [
    Case("eig", _square(general), la.eig, np.linalg.eig, _eig_loss, tol64=5e-2),
    Case(
        "eigvals",
        _square(general),
        la.eigvals,
        np.linalg.eigvals,
        lambda x: _power_sums(la.eigvals(x)),
    ),
    Case("eigh", _square(hermitian), la.eigh, np.linalg.eigh, _eigh_loss),
    Case(
        "eigh-upper",
        _square(hermitian),
        lambda x: la.eigh(x, UPLO="U"),
        lambda x: np.linalg.eigh(x, UPLO="U"),
    ),
    Case(
        "eigvalsh",
        _square(hermitian),
        la.eigvalsh,
        np.linalg.eigvalsh,
        lambda x: la.eigvalsh(herm(x)),
    ),
    Case(
        "svd-thin",
        _rect(conditioned),
        lambda x: la.svd(x, False),
        lambda x: _NUMPY_SVD(x, False),
        _svd_loss(False),
    ),
    Case("svd-full", _rect(conditioned), la.svd, _NUMPY_SVD, _svd_loss(True)),
    Case(
        "svd-values",
        _rect(conditioned),
        lambda x: la.svd(x, compute_uv=False),
        lambda x: _NUMPY_SVD(x, compute_uv=False),
        lambda x: la.svd(x, compute_uv=False),
    ),
    Case(
        "svd-hermitian",
        _square(lambda d, b, n: hermitian(d, b, n, 0.5)),
        lambda x: la.svd(x, hermitian=True),
        lambda x: _NUMPY_SVD(x, hermitian=True),
        _svd_hermitian_loss,
    ),
    Case("qr-reduced", _rect(qr_input), la.qr, np.linalg.qr, _qr_loss("reduced")),
    Case(
        "qr-complete",
        _rect(qr_input),
        lambda x: la.qr(x, "complete"),
        lambda x: np.linalg.qr(x, "complete"),
        _qr_loss("complete"),
    ),
    Case(
        "qr-r",
        _rect(qr_input),
        lambda x: la.qr(x, "r"),
        lambda x: np.linalg.qr(x, "r"),
        _qr_loss("r"),
    ),
    Case(
        "cholesky",
        _square(lambda d, b, n: hermitian(d, b, n, 0.5)),
        la.cholesky,
        np.linalg.cholesky,
        lambda x: la.cholesky(herm(x)),
    ),
    Case(
        "cholesky-upper",
        _square(lambda d, b, n: hermitian(d, b, n, 0.5)),
        lambda x: la.cholesky(x, upper=True),
        lambda x: np.linalg.cholesky(x, upper=True),
        lambda x: la.cholesky(herm(x), upper=True),
    ),
    Case("slogdet", _square(square), la.slogdet, np.linalg.slogdet, lambda x: la.slogdet(x)[1]),
    Case("pinv", _rect(conditioned), la.pinv, np.linalg.pinv, la.pinv),
    Case(
        "pinv-hermitian",
        _square(lambda d, b, n: hermitian(d, b, n, 0.5)),
        lambda x: la.pinv(x, hermitian=True),
        lambda x: np.linalg.pinv(x, hermitian=True),
        lambda x: la.pinv(herm(x), hermitian=True),
    ),
    Case(
        "lstsq",
        _lstsq_case,
        lambda a, b: la.lstsq(a, b),
        lambda a, b: np.linalg.lstsq(a, b),
        lambda a, b: la.lstsq(a, b)[0],
        arrays=2,
        batched=False,
    ),
    Case(
        "norm-vector",
        _norm_case([None, 1, 2, np.inf, -np.inf, 3, 0.5], matrix=False),
        la.norm,
        np.linalg.norm,
        la.norm,
    ),
    Case(
        "norm-matrix",
        _norm_case(["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf], matrix=True),
        la.norm,
        np.linalg.norm,
        la.norm,
    ),
    Case("norm-flat", lambda d, b: (generic(d, (*b, 3, 2)),), la.norm, np.linalg.norm, la.norm),
    Case("inv", _square(square), la.inv, np.linalg.inv, la.inv),
    Case("det", _square(square), la.det, np.linalg.det, la.det),
    Case(
        "solve",
        lambda d, b: (conditioned(d, b, 2, 2), _complex(d, (*b, 2, 3))),
        la.solve,
        np.linalg.solve,
        la.solve,
        arrays=2,
    ),
    Case(
        "matrix_power",
        lambda d, b: (conditioned(d, b, 2, 2), d(st.sampled_from([-2, 0, 1, 3]))),
        la.matrix_power,
        np.linalg.matrix_power,
        la.matrix_power,
    ),
    Case(
        "vdot",
        lambda d, b: (_complex(d, (2, 3)), _complex(d, (6,))),
        lampy.vdot,
        np.vdot,
        lampy.vdot,
        arrays=2,
        batched=False,
    ),
    Case(
        "convolve",
        lambda d, b: (
            _complex(d, (d(st.integers(1, 5)),)),
            _complex(d, (d(st.integers(1, 5)),)),
            d(st.sampled_from(["full", "same", "valid"])),
        ),
        lampy.convolve,
        np.convolve,
        lampy.convolve,
        arrays=2,
        batched=False,
        tol64=1e-3,
    ),
    Case(
        "correlate",
        lambda d, b: (
            _complex(d, (d(st.integers(1, 5)),)),
            _complex(d, (d(st.integers(1, 5)),)),
            d(st.sampled_from(["full", "same", "valid"])),
        ),
        lampy.correlate,
        np.correlate,
        lampy.correlate,
        arrays=2,
        batched=False,
        tol64=1e-3,
    ),
    Case(
        "signal.convolve",
        lambda d, b: (
            _complex(d, (d(st.integers(1, 4)), d(st.integers(1, 3)))),
            _complex(d, (d(st.integers(1, 3)), d(st.integers(1, 3)))),
            d(st.sampled_from(["full", "same"])),
        ),
        lampy.signal.convolve,
        scipy.signal.convolve,
        lampy.signal.convolve,
        arrays=2,
        batched=False,
        tol64=1e-3,
    ),
]


def _draw(data: st.DataObject, case: Case) -> tuple[list[np.ndarray], list[Any]]:
    batch = data.draw(st.sampled_from(BATCHES)) if case.batched else ()
    drawn = data.draw(st.composite(lambda d: case.inputs(d, batch))())
    return [np.asarray(a) for a in drawn[: case.arrays]], list(drawn[case.arrays :])


def _values(result: Any) -> list[np.ndarray]:
    """The arrays of an op's result (a Variable, a numpy value or a tuple of them)."""
    items = result if isinstance(result, tuple) else (result,)
    return [np.asarray(r.value if isinstance(r, lampy.Variable) else r) for r in items]


# ------------------------------------------------------------------ the table's tests
@pytest.mark.parametrize("case", CASES, ids=repr)
@settings(max_examples=8)
@given(data=st.data(), single=st.booleans())
def test_values_and_dtypes_are_numpys(case: Case, data: st.DataObject, single: bool) -> None:
    """On complex inputs (complex128 or complex64) each op gives numpy's values and
    dtypes (real ones where numpy's are: singular values, norms, logabsdet), whether
    its inputs need a gradient or not."""
    arrays, args = _draw(data, case)
    dtype = np.complex64 if single else np.complex128
    arrays = [a.astype(dtype) for a in arrays]
    expected = _values(case.ref(*arrays, *args))
    rtol = 1e-4 if single else 1e-10
    with lampy.Scope():
        for operands in (arrays, [lampy.param(a) for a in arrays]):
            got = _values(case.fn(*operands, *args))
            assert len(got) == len(expected)
            for g, e in zip(got, expected, strict=True):
                assert g.dtype == e.dtype and g.shape == e.shape
                np.testing.assert_allclose(
                    g, e, rtol=rtol, atol=rtol * max(1, np.abs(e).max(initial=0))
                )


@pytest.mark.parametrize("case", [c for c in CASES if c.loss is not None], ids=repr)
@settings(max_examples=6)
@given(data=st.data())
def test_gradients_match_finite_differences(case: Case, data: st.DataObject) -> None:
    """PyTorch's convention (``dL/dRe + i dL/dIm``): each op's gradient of a
    gauge-invariant function agrees with central differences in the real and imaginary
    parts, complex128."""
    arrays, args = _draw(data, case)
    loss = case.loss
    assert loss is not None
    check_grad(lambda *xs: loss(*xs, *args), *arrays)


@pytest.mark.parametrize("case", [c for c in CASES if c.loss is not None], ids=repr)
@settings(max_examples=3)
@given(data=st.data())
def test_gradients_in_complex64(case: Case, data: st.DataObject) -> None:
    """complex64 inputs keep complex64 gradients, within single precision's tolerance."""
    arrays, args = _draw(data, case)
    loss = case.loss
    assert loss is not None
    check_grad(
        lambda *xs: loss(*xs, *args),
        *[a.astype(np.complex64) for a in arrays],
        atol=case.tol64,
        rtol=case.tol64,
    )


DECLARED = {
    "eig",
    "eigvals",
    "eigh",
    "eigvalsh",
    "svd",
    "qr",
    "cholesky",
    "slogdet",
    "pinv",
    "lstsq",
    "norm",
    "vdot",
    "convolve",
    "correlate",
    "signal.convolve",
}


def test_every_declared_op_is_in_the_table() -> None:
    """The ops declared for complex values with their own rules (OWN) are each driven by
    the table."""
    tested = {c.name.split("-")[0] for c in CASES}
    assert {name: complex_kind(name) for name in DECLARED} == dict.fromkeys(DECLARED, OWN)
    assert tested >= DECLARED


# ------------------------------------------------------------------ real inputs, complex results
@settings(max_examples=10)
@given(data=st.data())
def test_eig_of_a_real_matrix_with_a_complex_pair(data: st.DataObject) -> None:
    """A real matrix with eigenvalues ``a +- ib``: eig and eigvals return numpy's complex
    values (complex64 for float32), and the real matrix gets the real part of the
    complex rule's gradient (finite differences agree)."""
    batch = data.draw(st.sampled_from(BATCHES))
    a = data.draw(
        st.composite(lambda d: real_with_complex_pair(d, batch, d(st.sampled_from([2, 3]))))()
    )
    w, v = np.linalg.eig(a)
    assert w.dtype == np.complex128
    with lampy.Scope():
        res = la.eig(lampy.param(a))
        np.testing.assert_array_equal(res.eigenvalues.value, w)
        np.testing.assert_array_equal(res.eigenvectors.value, v)
        np.testing.assert_array_equal(la.eigvals(lampy.param(a)).value, np.linalg.eigvals(a))
        assert la.eig(a.astype(np.float32)).eigenvalues.dtype == np.complex64
    check_grad(_eig_loss, a)
    check_grad(lambda x: lampy.sum(lampy.imag(la.eigvals(x)) ** 2, axis=-1), a)
    check_grad(_eig_loss, a.astype(np.float32), atol=5e-2, rtol=5e-2)


def test_a_rotation_has_eigenvalues_plus_and_minus_i() -> None:
    """The rotation by 90 degrees ``J``: eigenvalues ``+-i``. The sum of ``Im(w)**2`` is
    ``2 det(a) - tr(a)**2 / 2`` near it, whose gradient there is ``2 J`` (real, as the
    matrix); finite differences agree."""
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    with lampy.Scope():
        x = lampy.param(rot)
        w = la.eigvals(x)
        np.testing.assert_allclose(np.sort_complex(w.value), [-1j, 1j])
        (lampy.imag(w) ** 2).sum().backward()
        assert x.grad.dtype == np.float64
        np.testing.assert_allclose(x.grad, [[0.0, -2.0], [2.0, 0.0]], atol=1e-12)
    check_grad(lambda x: lampy.sum(lampy.imag(la.eigvals(x)) ** 2), rot)


def test_a_real_spectrum_stays_real() -> None:
    """A real matrix whose eigenvalues are all real keeps real results (the path and
    dtypes of before), also when others in its stack would be complex apart."""
    a = np.array([[2.0, 1.0], [0.5, -1.0]])
    with lampy.Scope():
        w, v = la.eig(lampy.param(a))
        assert w.dtype == v.dtype == np.float64
        assert la.eigvals(a).dtype == np.float64
        stack = np.stack([a, np.array([[0.0, -1.0], [1.0, 0.0]])])
        assert la.eigvals(lampy.param(stack)).dtype == np.complex128  # numpy's rule


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: la.lstsq(a, b)[0],
        lampy.vdot,
        lambda a, b: lampy.convolve(a.ravel(), b.ravel(), "same"),
        lambda a, b: lampy.correlate(b.ravel(), a.ravel(), "full"),
        lambda a, b: lampy.signal.convolve(a, b[:2], "full"),
    ],
    ids=["lstsq", "vdot", "convolve", "correlate", "signal.convolve"],
)
def test_real_and_complex_operands_together(fn: Callable[..., Any]) -> None:
    """A real operand next to a complex one: the complex result is recorded and the real
    operand gets the real part of its gradient, in its own dtype."""
    rng = np.random.default_rng(7)
    a = np.linalg.qr(rng.normal(size=(3, 2)))[0] * [1.0, 2.0]
    b = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    check_grad(fn, a, b)
    check_grad(fn, b, a)


# ------------------------------------------------------------------ shapes and refusals
ZERO_SIZE = {
    "eig": la.eig,
    "eigvals": la.eigvals,
    "eigh": la.eigh,
    "eigvalsh": la.eigvalsh,
    "svd": la.svd,
    "svd-values": lambda x: la.svd(x, compute_uv=False),
    "qr": la.qr,
    "cholesky": la.cholesky,
    "slogdet": la.slogdet,
    "pinv": la.pinv,
    "norm": lambda x: la.norm(x, axis=(-2, -1)),
    "norm-nuc": lambda x: la.norm(x, "nuc", axis=(-2, -1)),
}


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
@pytest.mark.parametrize("name", list(ZERO_SIZE))
def test_zero_size_stacks(name: str, shape: tuple[int, ...]) -> None:
    """Empty complex stacks (0 x 0 matrices, or no matrices): numpy's shapes and dtypes,
    and a complex gradient of the input's shape."""
    z = np.zeros(shape, np.complex128)
    with lampy.Scope():
        x = lampy.param(z)
        got = ZERO_SIZE[name](x)
        items = got if isinstance(got, tuple) else (got,)
        total: Any = 0.0
        for item in items:
            if isinstance(item, lampy.Variable):
                total = total + (abs2(item) if item.dtype.kind == "c" else item).sum()
        total.backward()
        assert x.grad is not None and x.grad.shape == shape and x.grad.dtype == np.complex128


def test_complex_phase_in_slogdet() -> None:
    """slogdet of a complex matrix: the sign is numpy's complex ``det / |det|`` (a
    Variable, see below) and logabsdet a real Variable."""
    a = np.array([[1 + 1j, 2], [0.5j, 3 - 1j]])
    with lampy.Scope():
        sign, logabsdet = la.slogdet(lampy.param(a))
        assert sign.dtype == np.complex128
        assert logabsdet.dtype == np.float64
        np.testing.assert_allclose(sign.value * np.exp(logabsdet.value), np.linalg.det(a))


def test_second_order_through_a_complex_matrix() -> None:
    """A differentiable pass through a complex matrix: the functions with a recorded rule
    give the gradient's gradient (finite differences of the first-order one agree);
    eig and the non-Euclidean norms, which have none, raise NoSecondOrderError rather
    than give a wrong answer."""
    a = np.array([[2 + 1j, 1.0], [0.5, -1j]])
    with lampy.Scope():
        x = lampy.param(a)
        with pytest.raises(lampy.NoSecondOrderError):
            lampy.gradients(abs2(la.eigvals(x)).sum(), [x], create_graph=True)
        with pytest.raises(lampy.NoSecondOrderError):
            lampy.gradients(la.norm(x, 1), [x], create_graph=True)
    check_grad(lambda v: la.svd(v, compute_uv=False), a, order=2, atol=1e-5, rtol=1e-4)
    check_grad(lambda v: la.slogdet(v).logabsdet, a, order=2, atol=1e-5, rtol=1e-4)


def test_solve_triangular_still_refuses_complex_matrices() -> None:
    """scipy's solve_triangular (its trans='C' would conjugate) is not declared: a
    complex matrix that needs a gradient raises DTypeError naming it."""
    with lampy.Scope():
        x = lampy.param(np.eye(2) * (1 + 1j))
        with pytest.raises(lampy.DTypeError, match="solve_triangular"):
            la.solve_triangular(x, np.ones(2))


def test_slogdet_sign_of_a_complex_matrix_carries_the_phase_gradient() -> None:
    """For a complex matrix the sign det/|det| moves with the matrix: it is a Variable
    whose gradient (and the gradient's gradient) matches finite differences, as
    PyTorch's; a real matrix's sign stays a constant numpy array."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(2, 3, 3)) + 1j * rng.normal(size=(2, 3, 3))
    check_grad(lambda v: la.slogdet(v).sign, a)
    check_grad(lambda v: la.slogdet(v).sign * la.slogdet(v).logabsdet, a)
    check_grad(lambda v: la.slogdet(v).sign, a[0], order=2, atol=1e-5, rtol=1e-4)
    with lampy.Scope():
        assert isinstance(la.slogdet(lampy.param(a)).sign, lampy.Variable)
        assert isinstance(la.slogdet(lampy.param(a.real)).sign, np.ndarray)
        assert isinstance(la.slogdet(lampy.const(a)).sign, np.ndarray)
