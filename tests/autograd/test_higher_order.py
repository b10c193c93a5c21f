"""Higher-order gradients: ``lampy.gradients`` (PyTorch's ``torch.autograd.grad``) with
``create_graph``, the transforms ``jacobian``/``hessian``/``hvp``/``vjp``/``jvp``, and the
workloads the issue names (a gradient penalty, a PINN's second derivative, a MAML inner
step), each against float64 central differences or closed forms."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy.testing import check_grad, numerical_grad
from lampy.testing import strategies as ls

F = lampy.nn.functional


# ---------------------------------------------------------------- lampy.gradients
def test_gradients_returns_variables_and_leaves_grad_alone() -> None:
    """The gradients come back, .grad is untouched, and without create_graph they are
    constants of the current scope."""
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0]))
        (g,) = lampy.gradients((x**3).sum(), x)
        np.testing.assert_array_equal(g.value, [3.0, 12.0])
        assert not g.needs_grad and x.grad is None


def test_create_graph_records_a_differentiable_gradient() -> None:
    """d/dx sum(tanh(2x) x) recorded, then differentiated: the second derivative's
    closed form 4(1 - t^2) - 8 x t (1 - t^2) with t = tanh(2x)."""
    xv = np.array([0.3, -0.7, 1.1])
    with lampy.Scope():
        x = lampy.param(xv)
        (g,) = lampy.gradients((lampy.tanh(x * 2.0) * x).sum(), x, create_graph=True)
        assert g.needs_grad
        (h,) = lampy.gradients(g.sum(), x)
        t = np.tanh(2 * xv)
        np.testing.assert_allclose(h.value, 4 * (1 - t * t) - 8 * xv * t * (1 - t * t), rtol=1e-12)


def test_a_variable_used_many_times_and_shared_subexpressions() -> None:
    """f = s * s + s with s = x * x + x, x used four times: the Hessian diagonal from
    d/dx of the recorded gradient equals the closed form f'' = 2 s'^2 + (2 s + 1) s''."""
    xv = np.array([0.5, -1.5])
    with lampy.Scope():
        x = lampy.param(xv)
        s = x * x + x
        (g,) = lampy.gradients((s * s + s).sum(), x, create_graph=True)
        (h,) = lampy.gradients(g.sum(), x)
        s, ds = xv * xv + xv, 2 * xv + 1
        np.testing.assert_allclose(h.value, 2 * ds * ds + (2 * s + 1) * 2, rtol=1e-12)


def test_grad_outputs_and_several_outputs_and_inputs() -> None:
    """grad_outputs weigh each output; several inputs get one gradient each."""
    with lampy.Scope():
        x, y = lampy.param(np.array([1.0, 2.0])), lampy.param(np.array(3.0))
        out1, out2 = x * y, (x * x).sum()
        gx, gy = lampy.gradients([out1, out2], [x, y], [np.array([1.0, -1.0]), None])
        np.testing.assert_array_equal(gx.value, [3.0 + 2.0, -3.0 + 4.0])
        assert gy.item() == 1.0 - 2.0


def test_an_intermediate_as_input() -> None:
    """The gradient with respect to an op result, not a leaf."""
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0]))
        h = x * 3.0
        (gh,) = lampy.gradients((h * h).sum(), h)
        np.testing.assert_array_equal(gh.value, 2 * h.value)


def test_gradients_refuses_what_it_cannot_answer() -> None:
    """An input needing no gradient, an unused input (unless allow_unused), a
    non-scalar output without grad_outputs, a mismatched grad_outputs."""
    with lampy.Scope():
        x, c = lampy.param(np.array([1.0, 2.0])), lampy.const(np.array([1.0, 2.0]))
        y = lampy.param(1.0)
        out = (x * x).sum()
        with pytest.raises(lampy.LampyValueError, match="does not need a gradient"):
            lampy.gradients(out, c)
        with pytest.raises(lampy.LampyValueError, match="allow_unused=True"):
            lampy.gradients(out, [x, y])
        assert lampy.gradients(out, [x, y], allow_unused=True)[1] is None
        with pytest.raises(lampy.LampyValueError, match="one element"):
            lampy.gradients(x * x, x)
        with pytest.raises(lampy.ShapeError, match="grad_outputs"):
            lampy.gradients(x * x, x, np.ones(3))


def test_an_op_without_a_second_order_rule_raises_naming_it() -> None:
    """An op given without a vjp (here a user's op): create_graph raises, naming it; the
    first-order gradient through it still works."""

    def cube(x: Any) -> Any:
        a = x.value
        return lampy.op(
            "my_cube", a**3, x.zip_backward(lambda g, out: np.add(out, 3 * a * a * g, out=out))
        )

    with lampy.Scope():
        x = lampy.param(np.array([3.0, 1.0, 2.0]))
        out = cube(x).sum()
        with pytest.raises(lampy.NoSecondOrderError, match="'my_cube'"):
            lampy.gradients(out, x, create_graph=True)
        (g,) = lampy.gradients(out, x)
        np.testing.assert_array_equal(g.value, 3 * x.value**2)


def test_a_spent_or_released_graph_is_an_error() -> None:
    """After a backward that did not retain the graph, and after the scope released it."""
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0]))
        out = (lampy.tanh(x) * x).sum()
        lampy.backward(out)
        with pytest.raises(lampy.SpentGraphError):
            lampy.gradients(out, x, create_graph=True)
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0]))
        with lampy.Scope():
            out = (x * x).sum()
            kept = out * 1.0
        with pytest.raises(lampy.ReleasedError):
            lampy.gradients(out, x)
        del kept


def test_the_recorded_graph_is_owned_counted_and_released() -> None:
    """create_graph's nodes belong to the current scope, its memory counts them, and the
    scope's exit releases them."""
    with lampy.Scope():
        x = lampy.param(np.ones(10_000))
        with lampy.Scope() as inner:
            out = (lampy.tanh(x) * x).sum()
            before = inner.memory.live_bytes
            (g,) = lampy.gradients(out, x, create_graph=True)
            assert inner.memory.live_bytes >= before + g.value.nbytes
        with pytest.raises(lampy.ReleasedError):
            _ = g.value
        assert inner.memory.live_bytes == 0


def test_float32_stays_float32() -> None:
    """Gradients and second derivatives keep the input's dtype."""
    with lampy.Scope():
        x = lampy.param(np.array([0.5, 1.5], np.float32))
        (g,) = lampy.gradients((x**3).sum(), x, create_graph=True)
        (h,) = lampy.gradients(g.sum(), x)
        assert g.dtype == np.float32 and h.dtype == np.float32
        np.testing.assert_allclose(h.value, 6 * x.value, rtol=1e-6)


# ------------------------------------------------------------- the transforms
def _mlp_loss(w1: Any, w2: Any, x: np.ndarray, y: np.ndarray) -> Any:
    """A 2-layer tanh MLP's squared error."""
    return ((lampy.tanh(x @ w1) @ w2 - y) ** 2).mean()


def _numeric_hessian(f: Any, x: np.ndarray) -> np.ndarray:
    """Central differences of lampy's first-order gradient (float64)."""
    eps, flat = 1e-6, x.reshape(-1)
    rows = []
    for i in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        g_up = lampy.grad(f)(up.reshape(x.shape))
        g_down = lampy.grad(f)(down.reshape(x.shape))
        rows.append(((g_up - g_down) / (2 * eps)).reshape(-1))
    return np.array(rows).T.reshape(*x.shape, *x.shape)


RNG = np.random.default_rng(7)
X_IN, Y_OUT = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))
W1, W2 = RNG.normal(size=(3, 4)) * 0.7, RNG.normal(size=(4, 2)) * 0.7


def test_hessian_of_an_mlp_loss_in_its_weights() -> None:
    """hessian(f)(w1) against central differences of the gradient; symmetric."""
    f = lambda w1: _mlp_loss(w1, W2, X_IN, Y_OUT)
    h = lampy.hessian(f)(W1)
    assert h.shape == (3, 4, 3, 4)
    np.testing.assert_allclose(h, _numeric_hessian(f, W1), rtol=1e-5, atol=1e-7)
    m = h.reshape(12, 12)
    np.testing.assert_allclose(m, m.T, atol=1e-12)


def test_hvp_equals_the_hessian_times_the_vector() -> None:
    """hvp along v equals H v, for one primal and for a tuple of two."""
    f = lambda w1: _mlp_loss(w1, W2, X_IN, Y_OUT)
    v = RNG.normal(size=W1.shape)
    value, hv = lampy.hvp(f, W1, v)
    h = lampy.hessian(f)(W1).reshape(12, 12)
    np.testing.assert_allclose(hv.reshape(-1), h @ v.reshape(-1), rtol=1e-10, atol=1e-12)
    assert value == pytest.approx(float(lampy.value_and_grad(f)(W1)[0]))
    v2 = RNG.normal(size=W2.shape)
    _, (hv1, hv2) = lampy.hvp(lambda a, b: _mlp_loss(a, b, X_IN, Y_OUT), (W1, W2), (v, v2))
    flat = np.concatenate([W1.reshape(-1), W2.reshape(-1)])
    g = lambda z: _mlp_loss(z[:12].reshape(3, 4), z[12:].reshape(4, 2), X_IN, Y_OUT)
    full = lampy.hessian(g)(flat) @ np.concatenate([v.reshape(-1), v2.reshape(-1)])
    np.testing.assert_allclose(np.concatenate([hv1.reshape(-1), hv2.reshape(-1)]), full, rtol=1e-10)


def test_jacobian_jvp_and_vjp_agree() -> None:
    """jacobian against central differences; jvp = J t and vjp = c J."""
    f = lambda x: lampy.tanh(x @ W1) * 2.0
    x = X_IN[:2]
    jac = lampy.jacobian(f)(x)
    assert jac.shape == (2, 4, 2, 3)
    for i in range(2):
        for j in range(4):
            c = np.zeros((2, 4))
            c[i, j] = 1
            (num,) = numerical_grad(f, x, cotangent=c)
            np.testing.assert_allclose(jac[i, j], num, rtol=1e-6, atol=1e-8)
    t = RNG.normal(size=x.shape)
    out, jt = lampy.jvp(f, x, t)
    np.testing.assert_allclose(jt, np.tensordot(jac, t, axes=2), rtol=1e-10)
    np.testing.assert_allclose(out, np.tanh(x @ W1) * 2.0, rtol=1e-12)
    c = RNG.normal(size=(2, 4))
    out2, vjp_fn = lampy.vjp(f, x)
    (ct,) = vjp_fn(c)
    np.testing.assert_allclose(ct, np.tensordot(c, jac, axes=2), rtol=1e-10)
    np.testing.assert_array_equal(out2, out)


def test_jacobian_of_several_arguments_and_jacrev() -> None:
    """A tuple argnums gives one Jacobian per argument; jacrev is jacobian."""
    ja, jb = lampy.jacobian(lambda a, b: a * b, argnums=(0, 1))(np.array([1.0, 2.0]), 3.0)
    np.testing.assert_array_equal(ja, np.diag([3.0, 3.0]))
    np.testing.assert_array_equal(jb, [1.0, 2.0])
    assert lampy.jacrev is lampy.jacobian


def test_transforms_refuse_mismatched_tangents() -> None:
    with pytest.raises(lampy.ShapeError, match="tangent 0"):
        lampy.jvp(lambda x: x * x, np.ones(2), np.ones(3))
    with pytest.raises(lampy.LampyValueError, match="2 primals but 1 tangents"):
        lampy.hvp(lambda a, b: (a * b).sum(), (np.ones(2), np.ones(2)), (np.ones(2),))


def test_transforms_nest_into_an_enclosing_grad() -> None:
    """Inside an enclosing grad the transforms return Variables of its graph: the
    gradient of a Hessian's trace (third derivatives of sum x**4: 24 x)."""
    trace = lambda x: lampy.trace(lampy.hessian(lambda y: (y**4).sum())(x))
    np.testing.assert_allclose(lampy.grad(trace)(np.array([1.0, -2.0])), [24.0, -48.0])


# --------------------------------------------------- the workloads
def _outer_numeric(objective: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    """Central differences of a scalar objective written with nested lampy.grad (under
    numerical_grad's no_grad the inner grads return numbers, a first-order computation)."""
    return numerical_grad(objective, *arrays)


def test_a_wgan_gp_gradient_penalty() -> None:
    """A critic's loss with the penalty (||d critic / d x_hat||_2 - 1)^2 at points between
    real and fake samples: the weights' gradient against central differences."""
    rng = np.random.default_rng(3)
    real, fake = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    alpha = rng.uniform(size=(6, 1))
    w1, b1, w2 = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(1, 4))

    def critic_loss(w1: Any, b1: Any, w2: Any) -> Any:
        critic = lambda x: F.linear(F.leaky_relu(F.linear(x, w1, b1), 0.2), w2)
        x_hat = alpha * real + (1 - alpha) * fake
        gx = lampy.grad(lambda x: critic(x).sum())(x_hat)
        norm = lampy.sqrt((gx * gx).sum(axis=1) + 1e-12)
        return critic(fake).mean() - critic(real).mean() + 10.0 * ((norm - 1.0) ** 2).mean()

    g = lampy.grad(critic_loss, argnums=(0, 1, 2))(w1, b1, w2)
    for got, want in zip(g, _outer_numeric(critic_loss, w1, b1, w2), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_a_pinn_loss_with_a_second_derivative_in_the_input() -> None:
    """u(x) an MLP of a scalar input; the residual u'' + sin(x) u at collocation points:
    u'' through two nested grads, the weights' gradient against central differences."""
    rng = np.random.default_rng(4)
    xs = np.linspace(-1.0, 1.0, 5)
    w1, b1, w2 = rng.normal(size=(6, 1)), rng.normal(size=6), rng.normal(size=(1, 6))

    def loss(w1: Any, b1: Any, w2: Any) -> Any:
        u = lambda x: F.linear(lampy.tanh(F.linear(x[:, None], w1, b1)), w2).sum()
        du = lambda x: lampy.grad(u)(x).sum()
        d2u = lampy.grad(du)(xs)
        values = F.linear(lampy.tanh(F.linear(xs[:, None], w1, b1)), w2)[:, 0]
        return ((d2u + np.sin(xs) * values) ** 2).mean()

    g = lampy.grad(loss, argnums=(0, 1, 2))(w1, b1, w2)
    for got, want in zip(g, _outer_numeric(loss, w1, b1, w2), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_one_maml_inner_step() -> None:
    """Adapt the weights by one gradient step on a support batch, evaluate on a query
    batch: the meta-gradient (through the inner step) against central differences."""
    rng = np.random.default_rng(5)
    xs, ys, xq, yq = (rng.normal(size=s) for s in [(4, 3), (4,), (4, 3), (4,)])
    w0, b0 = rng.normal(size=(1, 3)), rng.normal(size=1)

    def inner(w: Any, b: Any, x: Any, y: Any) -> Any:
        return F.mse_loss(F.linear(x, w, b)[:, 0], y)

    def meta(w: Any, b: Any) -> Any:
        gw, gb = lampy.grad(inner, argnums=(0, 1))(w, b, xs, ys)
        return inner(w - 0.1 * gw, b - 0.1 * gb, xq, yq)

    g = lampy.grad(meta, argnums=(0, 1))(w0, b0)
    for got, want in zip(g, _outer_numeric(meta, w0, b0), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


# ------------------------------------------ lampy.testing's second-order check
@settings(max_examples=10)
@given(data=ls.arrays(ls.shapes(max_dims=2, max_side=3), np.float64, min_value=-2, max_value=2))
def test_check_grad_order_2_passes_for_a_composite(data: np.ndarray) -> None:
    """check_grad(order=2) over drawn shapes, 0-d included, for a function mixing most
    op families that have second-order rules."""
    check_grad(
        lambda x: (lampy.tanh(x) * lampy.exp(-x * x) + lampy.sin(x) ** 2).sum(keepdims=True),
        data,
        order=2,
    )


def test_check_grad_order_2_catches_a_wrong_second_derivative() -> None:
    """An op whose vjp is wrong (a factor of 2) passes order 1 and fails order 2."""

    def bad_square(x: Any) -> Any:
        a = x.value
        n = x.node
        return lampy.op(
            "bad_square",
            a * a,
            lampy.opkit.contrib_of(
                x,
                lambda g: g * 2 * a,
                vjp=lambda g, out: g * lampy.opkit.graph_value(n, a),  # should be 2x
            ),
        )

    x = np.array([0.5, -1.5])
    check_grad(bad_square, x)
    with pytest.raises(AssertionError, match="gradient of input 0"):
        check_grad(bad_square, x, order=2)
    with pytest.raises(ValueError, match="order must be 1 or 2"):
        check_grad(bad_square, x, order=3)


@pytest.mark.parametrize("n", [1, 3])
@given(st.integers(0, 3))
@settings(max_examples=4)
def test_third_order_through_nested_hessian(n: int, k: int) -> None:
    """d/dx of a Hessian-vector product is a third derivative: for sum x**(k+3) it is
    (k+3)(k+2)(k+1) x**k along the vector (here ones)."""
    x = np.linspace(0.5, 1.5, n)
    p = k + 3

    def hv_sum(y: Any) -> Any:
        return lampy.hvp(lambda z: (z**p).sum(), y, np.ones(n))[1].sum()

    np.testing.assert_allclose(lampy.grad(hv_sum)(x), p * (p - 1) * (p - 2) * x**k, rtol=1e-10)


# ------------------------------------------------- backward(create_graph=True)
def test_backward_create_graph_fills_grad_and_grad_graph() -> None:
    """PyTorch's gradient penalty written with backward: .grad gets the value, .grad_graph
    the recorded gradient, which a second backward differentiates (d/dw sum(d**2) with
    d = x (1 - tanh(x w)**2) is 2 d x**2 (-2 t)(1 - t**2)); zero_grad resets both."""
    x = np.array([3.0, 4.0, -0.5])
    with lampy.Scope():
        w = lampy.param([0.1, -0.2, 0.3])
        lampy.tanh(x * w).sum().backward(create_graph=True)
        t = np.tanh(x * w.value)
        d = x * (1 - t * t)
        np.testing.assert_allclose(w.grad, d, rtol=1e-12)
        gg = w.grad_graph
        assert isinstance(gg, lampy.Variable) and gg.needs_grad
        np.testing.assert_array_equal(gg.value, w.grad)
        penalty = (gg**2).sum()
        w.zero_grad()
        assert w.grad_graph is None
        penalty.backward()
        np.testing.assert_allclose(w.grad, 2 * d * x * x * (-2 * t) * (1 - t * t), rtol=1e-12)


def test_backward_create_graph_accumulates_over_passes() -> None:
    """Two passes add up in .grad and in .grad_graph (recorded), as PyTorch's .grad."""
    with lampy.Scope():
        w = lampy.param(np.array([1.0, 2.0]))
        (w * w).sum().backward(create_graph=True)
        (w * w * w).sum().backward(create_graph=True)
        np.testing.assert_array_equal(w.grad, 2 * w.value + 3 * w.value**2)
        (h,) = lampy.gradients(w.grad_graph.sum(), w)
        np.testing.assert_array_equal(h.value, 2 + 6 * w.value)
        without = lampy.param(1.0)
        (without * 2.0).backward()
        assert without.grad_graph is None
