"""Corner cases of the autograd API found in review against PyTorch's and JAX's semantics.

Three of them failed before their fixes: a detached param written in place, the message
of a non-atomic pass that failed, and a non-sequence seed for a list of roots."""

from __future__ import annotations

import numpy as np
import pytest

import lampy


def _failing(x: lampy.Variable) -> lampy.Variable:
    """An identity op whose backward closure raises."""

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        raise RuntimeError("boom")

    return lampy.op("failing", x.value * 1.0, x.zip_backward(d_x))


def test_detached_param_written_in_place_is_not_a_silently_stale_graph() -> None:
    """A graph that read ``b.detach()`` before ``b`` is changed in place either raises
    StaleGraphError (as PyTorch does) or differentiates the values it read: never the new
    values silently."""
    with lampy.Scope():
        a = lampy.param([1.0, 2.0])
        b = lampy.param([3.0, 4.0])
        loss = (a * b.detach()).sum()  # d loss / d a = b as read: [3, 4]
        with lampy.in_place([b]) as (value,):
            value *= 10.0  # an optimizer step on b before backward
        try:
            loss.backward()
        except lampy.StaleGraphError:
            return
        np.testing.assert_array_equal(a.grad, [3.0, 4.0])  # type: ignore[arg-type]


def test_atomic_false_keeps_gradients_final_before_the_failure() -> None:
    """backward(atomic=False): a param whose gradient was final before a closure raised
    keeps this pass's contribution; one behind the failing closure gets none."""
    with lampy.Scope():
        w1 = lampy.param(1.0)
        w2 = lampy.param(2.0)
        loss = w2 * 3.0 + _failing(w1 * 1.0)
        with pytest.raises(lampy.BackwardError):
            loss.backward(atomic=False)
        assert w2.grad == 3.0
        assert w1.grad is None


def test_atomic_false_error_does_not_claim_that_nothing_changed() -> None:
    """The BackwardError of a non-atomic pass does not tell the caller that no gradient
    changed when some did (here w2's)."""
    with lampy.Scope():
        w1 = lampy.param(1.0)
        w2 = lampy.param(2.0)
        loss = w2 * 3.0 + _failing(w1 * 1.0)
        with pytest.raises(lampy.BackwardError) as info:
            loss.backward(atomic=False)
        assert w2.grad == 3.0
        assert "no gradient was changed" not in str(info.value)


def test_atomic_error_says_that_nothing_changed_and_nothing_did() -> None:
    """The BackwardError of an atomic pass says no gradient changed, and none did."""
    with lampy.Scope():
        w1 = lampy.param(1.0)
        w2 = lampy.param(2.0)
        loss = w2 * 3.0 + _failing(w1 * 1.0)
        with pytest.raises(lampy.BackwardError, match="no gradient was changed") as info:
            loss.backward()
        assert "'failing'" in str(info.value)
        assert w1.grad is None
        assert w2.grad is None


@pytest.mark.parametrize("grads", [np.float64(1.0), np.ones(()), 1.0])
def test_backward_with_a_non_sequence_grads_for_a_list_of_roots_is_a_lampy_error(
    grads: object,
) -> None:
    """lampy.backward([root], g) with g not a sequence of seeds: a LampyError saying to
    pass one grad per root, not numpy's 'len() of unsized object'."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        s = (x * x).sum()
        with pytest.raises(lampy.LampyError, match="one grad per root"):
            lampy.backward([s], grads)  # type: ignore[arg-type]


def test_seeds_must_match_the_root_exactly_as_documented() -> None:
    """A seed array of another dtype or shape (even a broadcastable one) is refused, as
    PyTorch refuses a mismatched grad; Python numbers and lists are converted."""
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0, 3.0], np.float32))
        y = x * x
        with pytest.raises(lampy.DTypeError):
            y.backward(np.ones(3))  # float64 seed for a float32 root
        with pytest.raises(lampy.ShapeError):
            y.backward(np.ones(1, np.float32))  # broadcastable, but not the root's shape
        with pytest.raises(lampy.ShapeError):
            y.backward(2.0)
        assert x.grad is None
        y.backward([1, 0, -1])  # integers converted to the root's dtype
        assert x.grad is not None
        assert x.grad.dtype == np.float32
        np.testing.assert_array_equal(x.grad, [2.0, 0.0, -6.0])


def test_float32_params_with_float64_constants_get_float32_gradients() -> None:
    """Float64 constants promote the values (as numpy), but each param's gradient keeps
    the param's dtype, with the closed-form value."""
    c = np.array([0.5, 0.25])
    with lampy.Scope():
        x = lampy.param(np.array([1.0, 2.0], np.float32))
        for y, want in [
            (x * c, c),
            (c / x, -c / np.array([1.0, 4.0])),
            (x @ c, c),
            (lampy.maximum(x, c), np.ones(2)),
        ]:
            assert y.dtype == np.float64
            x.zero_grad()
            (y.sum() if y.ndim else y).backward()
            assert x.grad is not None
            assert x.grad.dtype == np.float32
            np.testing.assert_allclose(x.grad, want, rtol=1e-7)


def test_a_param_reached_only_through_no_grad_gets_no_gradient() -> None:
    """A branch computed under no_grad is a constant: a param reached only through it gets
    no gradient, and one also reached directly gets only the direct path's."""
    with lampy.Scope():
        p = lampy.param(2.0)
        q = lampy.param(1.0)
        with lampy.no_grad():
            u = p * 3.0
        (u * p + q).backward()
        assert p.grad == 6.0  # d(u p)/dp with u constant: u
        p.zero_grad()
        (u + q).backward()
        assert p.grad is None
        assert q.grad == 2.0


def test_a_param_written_before_any_op_is_not_stale_and_a_step_between_passes_is() -> None:
    """An in-place write before the forward pass is fine; one between two backward calls
    on the same graph makes the second a StaleGraphError that changes no gradient."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        with lampy.in_place([w]) as (value,):
            value *= 2.0
        loss = (w * w).sum()
        loss.backward(retain=True)
        np.testing.assert_array_equal(w.grad, [4.0, 8.0])  # type: ignore[arg-type]
        lampy.optim.SGD([w], lr=0.1).step()
        with pytest.raises(lampy.StaleGraphError):
            loss.backward()
        np.testing.assert_array_equal(w.grad, [4.0, 8.0])  # type: ignore[arg-type]


def test_retain_of_a_leaf_or_of_a_variable_outside_the_graph() -> None:
    """retain= of a param gives its gradient once (not twice); of a Variable the pass does
    not reach, it leaves its .grad None; an op result not retained has no .grad."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        other = lampy.param(1.0) * 2.0
        y = x * x
        y.sum().backward(retain=[x, other])
        np.testing.assert_array_equal(x.grad, [2.0, 4.0])  # type: ignore[arg-type]
        assert other.grad is None
        assert y.grad is None


def test_remat_of_an_argument_used_inside_twice_and_outside_matches_the_plain_gradient() -> None:
    """remat's gradients equal the plain ones up to rounding also when an argument is used
    twice inside fn and again outside it (its inner contributions are summed first, so
    the last bits may differ: the docs no longer promise bitwise equality there)."""
    rng = np.random.default_rng(1)
    w0, x0 = rng.standard_normal((4, 4)), rng.standard_normal((3, 4))

    def grads(use_remat: bool) -> list[np.ndarray]:
        with lampy.Scope():
            w, x = lampy.param(w0), lampy.param(x0)

            def block(h: lampy.Variable) -> lampy.Variable:
                return lampy.tanh(h @ w) * 2.0 + h

            run = lampy.remat(block) if use_remat else block
            h1 = run(x)
            loss = (run(h1) ** 2).sum() + (h1 * x).sum()
            loss.backward()
            return [w.grad.copy(), x.grad.copy()]  # type: ignore[union-attr]

    for plain, remat in zip(grads(False), grads(True), strict=True):
        np.testing.assert_allclose(remat, plain, rtol=1e-12, atol=1e-12)
