"""The engine with complex values (PyTorch's convention: ``z.grad = dL/dRe + i dL/dIm``):
complex params, real inputs of complex results (their real part), 0-d scalars, shared
subexpressions, accumulation, seeds, second order, and ops written outside lampy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy.opkit import HOLOMORPHIC, complex_rule
from lampy.testing import check_grad

Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])


def test_complex_params_keep_their_dtype() -> None:
    """complex128 and complex64 params need a gradient, and their gradients keep the dtype."""
    for dtype in (np.complex128, np.complex64):
        with lampy.Scope():
            z = lampy.param(Z.astype(dtype))
            assert z.dtype == dtype and z.needs_grad
            (lampy.abs(z) ** 2).sum().backward()
            assert z.grad.dtype == dtype
            np.testing.assert_allclose(z.grad, 2 * Z, rtol=1e-6)  # d|z|^2 = 2z


def test_a_complex_root_needs_an_explicit_seed() -> None:
    """As PyTorch: only a real loss seeds itself; a complex root takes ``grad=`` (the
    gradient of the real loss with respect to it)."""
    with lampy.Scope():
        z = lampy.param(Z)
        y = (z * z).sum()
        with pytest.raises(lampy.DTypeError, match="real loss"):
            y.backward()
    with lampy.Scope():
        z = lampy.param(Z)
        (z * z).sum().backward(np.complex128(1.0))  # L = Re(sum z^2): dL = conj(2z)
        np.testing.assert_allclose(z.grad, np.conj(2 * Z))


def test_a_real_input_of_a_complex_result_gets_the_real_part() -> None:
    """x real, y = x (1 + 2i): |y|^2 = 5 x^2, so dL/dx = 10 x, whichever op made the
    complex value (multiply, add, a complex constant, astype)."""
    x = np.array([0.5, -1.5, 2.0])
    for f in (
        lambda v: v * (1 + 2j),
        lambda v: v + 2j * v,
        lambda v: lampy.astype(v, np.complex128) * (1 + 2j),
        lambda v: lampy.concatenate([v * 1j, v])[:3] * (2 - 1j),
    ):
        with lampy.Scope():
            v = lampy.param(x)
            (lampy.abs(f(v)) ** 2).sum().backward()
            assert v.grad.dtype == np.float64
            np.testing.assert_allclose(v.grad, 10 * x, rtol=1e-12)
        check_grad(f, x)


def test_zero_d_values_and_many_uses() -> None:
    """A 0-d real param feeding several complex results (the engine's numpy-scalar
    buffers), and a complex param used many times with shared subexpressions."""
    check_grad(
        lambda v: lampy.real(v * (1 + 1j) * (v * (2 - 1j)) + lampy.exp(1j * v)), np.array(0.7)
    )
    z0 = np.array(0.3 - 0.8j)
    check_grad(lambda z: z * z * lampy.conj(z) + lampy.abs(z) * z, z0)
    check_grad(lambda z: (lambda s: s * s + s * lampy.conj(s))(lampy.sin(z) + z), Z)


@pytest.mark.parametrize(
    ("s1", "s2"), [((3, 1), (4,)), ((1, 4), (3, 1)), ((), (2, 3)), ((2, 0), (1,))]
)
def test_broadcasting_in_every_direction(s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    """Complex and real operands broadcast either way; gradients sum back to each shape."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=s1) + 1j * rng.normal(size=s1)
    b = rng.normal(size=s2)
    check_grad(lambda u, v: u * v + lampy.exp(u) / (v * v + 1), a, b)
    check_grad(lambda u, v: u - v * lampy.conj(u), a, b)


def test_gradients_accumulate_across_passes() -> None:
    """Two backward passes add their complex gradients, as real ones."""
    with lampy.Scope():
        z = lampy.param(Z)
        for _ in range(2):
            (lampy.abs(z) ** 2).sum().backward()
        np.testing.assert_allclose(z.grad, 4 * Z)
        z.zero_grad()
        assert z.grad is None


def test_second_order_through_complex_values() -> None:
    """L = sum |z|^4 has gradient 4 |z|^2 z; the recorded gradient's own gradient, of
    H = sum |grad L|^2 = 16 sum |z|^6, is 96 |z|^4 z."""
    with lampy.Scope():
        z = lampy.param(Z)
        (g,) = lampy.gradients((lampy.abs(z) ** 4).sum(), [z], create_graph=True)
        np.testing.assert_allclose(g.value, 4 * np.abs(Z) ** 2 * Z, rtol=1e-12)
        (lampy.abs(g) ** 2).sum().backward()
        np.testing.assert_allclose(z.grad, 96 * np.abs(Z) ** 4 * Z, rtol=1e-12)


def test_an_op_written_outside_lampy_declares_how_it_takes_complex_values() -> None:
    """A user's op written for reals (a plain ``(g, out)`` closure) is refused with complex
    values until declared; declared holomorphic, the engine conjugates its closure."""

    def cube(x: lampy.Variable, name: str) -> lampy.Variable:
        a = x.value

        def d_x(g: np.ndarray, out: np.ndarray) -> None:
            np.add(out, g * 3 * a**2, out=out)

        return lampy.op(name, a**3, x.zip_backward(d_x))

    with (
        lampy.Scope(),
        pytest.raises(lampy.DTypeError, match="op 'my_cube' does not support complex"),
    ):
        cube(lampy.param(Z), "my_cube")
    complex_rule(HOLOMORPHIC, "my_holomorphic_cube")
    check_grad(lambda z: cube(z, "my_holomorphic_cube"), Z)
    with lampy.Scope():
        z = lampy.param(Z)
        (lampy.abs(cube(z, "my_holomorphic_cube")) ** 2).sum().backward()
        np.testing.assert_allclose(z.grad, 6 * np.abs(Z) ** 4 * Z, rtol=1e-12)  # |z|^6


def test_ops_without_a_complex_rule_refuse_complex_inputs() -> None:
    """Ordering ops and ops whose value is real but whose rule is not written for complex
    inputs raise a DTypeError naming them, before anything is recorded."""
    cases: list[Any] = [
        lambda z: lampy.maximum(z, 0),
        lambda z: lampy.sort(z),
        lambda z: lampy.clip(z, 0, 1),
        lambda z: lampy.nanvar(z),
        lambda z: lampy.special.erf(z),
        lambda z: lampy.linalg.solve_triangular(lampy.outer(z, z), z),
    ]
    with lampy.Scope():
        z = lampy.param(Z)
        for f in cases:
            with pytest.raises(lampy.DTypeError, match="complex"):
                f(z)
        with lampy.no_grad():  # nothing to lose: numpy's values as constants
            assert lampy.maximum(z, 0).dtype == np.complex128


def test_complex_parts_on_real_values() -> None:
    """On real Variables, real and conj are the Variable itself (numpy's views), imag and
    angle constants, the is* helpers numpy's."""
    with lampy.Scope():
        x = lampy.param([1.0, -2.0])
        assert lampy.real(x) is x and x.conj() is x and x.real is x
        assert not lampy.imag(x).needs_grad and not lampy.angle(x).needs_grad
        np.testing.assert_array_equal(lampy.angle(x).value, [0.0, np.pi])
        assert lampy.isrealobj(x) and not lampy.iscomplexobj(x)
        z = lampy.param(np.array([1 + 0j, 1 + 1e-20j, 2j]))
        np.testing.assert_array_equal(lampy.iscomplex(z), [False, True, True])
        np.testing.assert_array_equal(lampy.isreal(z), [True, False, False])
        assert lampy.real_if_close(z).dtype == np.complex128
        assert lampy.real_if_close(lampy.param(np.array([1 + 0j, 2 + 1e-20j]))).dtype == np.float64


def _c(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


_R = np.random.default_rng(3)
_A, _B, _V = _c(_R, 3, 3), _c(_R, 3, 2), _c(_R, 4)
SECOND_ORDER: dict[str, tuple[Any, np.ndarray]] = {
    "exp-multiply-conj": (lambda v: lampy.exp(v) * v * lampy.conj(v), _V),
    "abs": (lambda v: lampy.abs(v) ** 3, _V),
    "angle": (lambda v: lampy.angle(v), _V),
    "fft": (lambda v: lampy.fft.fft(v * v), _V),
    "irfft": (lambda v: lampy.fft.irfft(v * v, n=6), _V),
    "vdot": (lambda v: lampy.vdot(v, v * v), _V),
    "matmul": (lambda v: v @ v, _A),
    "inv": (lampy.linalg.inv, _A),
    "det": (lampy.linalg.det, _A),
    "solve": (lambda v: lampy.linalg.solve(v, _B), _A),
    "eigvalsh": (lambda v: lampy.linalg.eigvalsh(v + lampy.conj(v).T), _A),
    "svd-values": (lambda v: lampy.linalg.svd(v, compute_uv=False), _A),
    "cholesky": (lambda v: lampy.linalg.cholesky(v @ lampy.conj(v).T + 3 * np.eye(3)), _A),
    "slogdet": (lambda v: lampy.linalg.slogdet(v).logabsdet, _A),
    "pinv": (lampy.linalg.pinv, _B),
    "norm": (lampy.linalg.norm, _A),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_order_of_complex_ops(name: str) -> None:
    """gradgradcheck with complex inputs: the recorded gradient's gradient against central
    differences (in both parts) of the first-order one, for the holomorphic ops
    (conjugated vjps), the complex parts, the transforms and the linear algebra."""
    f, x = SECOND_ORDER[name]
    check_grad(f, x, order=2, atol=1e-5, rtol=1e-4)


def test_a_complex_value_is_not_written_into_a_real_array() -> None:
    """masked_fill, put_along_axis and pad with a complex fill and a real array raise a
    DTypeError naming the op (numpy's assignment would drop the imaginary part with a
    ComplexWarning); with a complex array they write it."""
    mask = np.array([True, False, True])
    with lampy.Scope():
        x = lampy.param(np.ones(3))
        with pytest.raises(lampy.DTypeError, match="masked_fill: the value is complex"):
            lampy.masked_fill(x, mask, 1j)
        with pytest.raises(lampy.DTypeError, match="put_along_axis: values is complex"):
            lampy.put_along_axis(x, np.array([0]), 1j, 0)
        with pytest.raises(lampy.DTypeError, match="pad: constant_values is complex"):
            lampy.pad(x, 1, constant_values=1j)
        z = lampy.masked_fill(x.astype(np.complex128), mask, 2j)
        np.testing.assert_array_equal(z.value, [2j, 1, 2j])


def test_remat_and_threads_with_complex_values() -> None:
    """A remat block of complex ops gives the gradient of the same ops without it (the
    recomputation applies each op's complex rule), and a concurrent backward pass gives
    the serial one's gradient bitwise."""
    rng = np.random.default_rng(7)
    z0 = rng.normal(size=64) + 1j * rng.normal(size=64)

    def block(v: lampy.Variable) -> lampy.Variable:
        return lampy.sin(v) * lampy.conj(v) + lampy.exp(v * 0.1j)

    grads = []
    for wrapped in (False, True):
        with lampy.Scope():
            z = lampy.param(z0)
            y = lampy.remat(block)(z) if wrapped else block(z)
            (lampy.abs(y) ** 2).sum().backward()
            grads.append(z.grad.copy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-13)
    check_grad(lambda v: lampy.remat(block)(v), z0[:4])
    per_workers = []
    for workers in (1, 4):
        with lampy.Scope():
            z = lampy.param(z0)
            terms = [(lampy.abs(lampy.exp(z * (0.1 * k))) ** 2).sum() for k in range(8)]
            lampy.backward(sum(terms[1:], terms[0]), workers=workers)
            per_workers.append(z.grad.copy())
    np.testing.assert_array_equal(per_workers[0], per_workers[1])


def test_gradients_of_a_complex_output_need_grad_outputs() -> None:
    """lampy.gradients, as backward: a complex output's seed is not implied."""
    with lampy.Scope():
        z = lampy.param(Z)
        y = (z * z).sum()
        with pytest.raises(lampy.DTypeError, match="implied only for a real output"):
            lampy.gradients(y, [z])
        (g,) = lampy.gradients(y, [z], grad_outputs=[np.complex128(1.0)])
        np.testing.assert_allclose(g.value, np.conj(2 * Z))


def test_function_transforms_refuse_complex_arguments_and_results() -> None:
    """jacobian, hessian, hvp and jvp take real inputs and outputs (a complex Jacobian
    would need both parts of each row); real functions through complex values work, and
    vjp takes a complex cotangent (the gradient of Re<cotangent, f>)."""
    x = np.array([1.0, 2.0, 3.0])
    z = np.array([1 + 2j, 1j])
    with pytest.raises(lampy.DTypeError, match="argument 0 is complex"):
        lampy.hessian(lambda v: (lampy.abs(v) ** 2).sum())(z)
    with pytest.raises(lampy.DTypeError, match="f returns a complex Variable"):
        lampy.jacobian(lambda v: lampy.fft.fft(v))(x)
    with pytest.raises(lampy.DTypeError, match="f returns a complex Variable"):
        lampy.jvp(lambda v: lampy.fft.fft(v), (x,), (np.ones(3),))
    power = lambda v: (lampy.abs(lampy.fft.fft(v)) ** 2).sum()
    np.testing.assert_allclose(lampy.hessian(power)(x), 2 * 3 * np.eye(3), atol=1e-12)
    _, vjp_fn = lampy.vjp(lambda v: lampy.fft.fft(v), x)
    ct = np.array([1 + 1j, 2.0, -1j])
    (g,) = vjp_fn(ct)
    np.testing.assert_allclose(g, np.real(np.fft.ifft(ct, norm="forward")), atol=1e-12)
