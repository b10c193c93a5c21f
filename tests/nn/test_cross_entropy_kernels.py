"""cross_entropy with class-index targets on both of its paths (the ``path`` fixture): the
compiled row kernels (Numba, the lampy[fast] extra: ``cross_entropy_rows`` and its
backward) and the numpy code. Each path against float64 math, the two against each
other, gradients against finite differences, ignored targets and class weights, every
reduction, special values, which inputs take the kernels, second order through the
kernel path, and workers and threads (bitwise the serial gradient)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lampy
import lampy.nn.functional as F
from lampy.testing import check_grad

F32 = np.float32
REDUCTIONS = ("mean", "sum", "none")


def _reference(
    x: np.ndarray, t: np.ndarray, w: np.ndarray | None, ignore: int, reduction: str
) -> tuple[np.ndarray, np.ndarray]:
    """The loss and the logits' gradient (for an output gradient of ones) in float64:
    ``-w[t] log softmax(x)[t]`` per kept sample, and ``w[t] (softmax(x) - onehot(t))``."""
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    kept = t != ignore
    safe = np.where(kept, t, 0)
    wt = (np.ones(x.shape[1]) if w is None else w.astype(np.float64))[safe] * kept
    rows = np.arange(len(t))
    loss = -wt * logp[rows, safe]
    d = np.exp(logp)
    d[rows, safe] -= 1
    d *= wt[:, None]
    if reduction == "none":
        return loss, d
    if reduction == "sum":
        return np.asarray(loss.sum()), d
    return np.asarray(loss.sum() / wt.sum()), d / wt.sum()


def _run(x: np.ndarray, t: np.ndarray, **kw: Any) -> tuple[np.ndarray, np.ndarray]:
    """The loss's value and the logits' gradient for an output gradient of ones."""
    with lampy.Scope():
        p = lampy.param(x)
        loss = F.cross_entropy(p, t, **kw)
        loss.backward(np.ones(loss.shape, loss.dtype))
        assert p.grad is not None
        return np.array(loss.value), np.array(p.grad)


def _case(seed: int, n: int, c: int, dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(n, c)) * rng.choice([0.1, 3.0, 30.0])).astype(dtype)
    t = rng.integers(0, c, n)
    t[rng.random(n) < 0.25] = -100
    t[0] = rng.integers(0, c)  # one kept target at least
    return x, t, rng.uniform(0.5, 2.0, c).astype(dtype)


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 9),
    c=st.integers(1, 12),
    dtype=st.sampled_from([F32, np.float64]),
    weighted=st.booleans(),
    reduction=st.sampled_from(REDUCTIONS),
)
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_against_float64(
    path: Counter[str] | None,
    seed: int,
    n: int,
    c: int,
    dtype: Any,
    weighted: bool,
    reduction: str,
) -> None:
    """Value and gradient, in the logits' dtype, within a few ulps of float64 math, with
    ignored targets (-100) and class weights, for every reduction, on each path."""
    x, t, w = _case(seed, n, c, dtype)
    before = Counter(path or {})
    value, grad = _run(x, t, weight=w if weighted else None, reduction=reduction)
    want, dwant = _reference(x, t, w if weighted else None, -100, reduction)
    assert value.dtype == dtype and grad.dtype == dtype
    tol = {"rtol": 2e-5, "atol": 2e-5} if dtype == F32 else {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(value, want, **tol)
    np.testing.assert_allclose(grad, dwant, **tol)
    if path is not None:  # the fixture's counts run over every example
        assert path["cross_entropy_rows"] - before["cross_entropy_rows"] == 1
        assert path["cross_entropy_rows_backward"] - before["cross_entropy_rows_backward"] == 1


def test_paths_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels and the numpy code give the same losses and gradients to float32's
    precision, on logits of every magnitude."""
    pytest.importorskip("numba")
    from lampy.nn.functional import _shared

    x, t, w = _case(3, 64, 10, F32)
    x[1] *= 1000  # a row far above the others: the numpy path shifts by each row's max
    compiled = _run(x, t, weight=w)
    monkeypatch.setattr(_shared, "numba_kernels", lambda: None)
    numpy_path = _run(x, t, weight=w)
    for a, b in zip(compiled, numpy_path, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradient_against_finite_differences(path: Any, reduction: str) -> None:
    """``check_grad`` (float64 central differences) on both paths, with ignored targets
    and class weights."""
    x, t, w = _case(7, 5, 4, np.float64)
    check_grad(lambda v: F.cross_entropy(v, t, weight=w, reduction=reduction), x)


def test_special_values(path: Any) -> None:
    """A row holding nan or +inf, or only -inf, gives a nan loss for that sample (as
    numpy's arithmetic does), the other rows are unaffected; huge finite logits give
    finite losses and gradients."""
    x = np.array(
        [[1.0, 2.0, 3.0], [np.nan, 0.0, 1.0], [np.inf, 0.0, 1.0], [-np.inf] * 3, [1e30, -1e30, 0]]
    )
    t = np.array([2, 1, 1, 0, 1])
    with np.errstate(invalid="ignore"):
        value, grad = _run(x, t, reduction="none")
    assert np.isfinite(value[0]) and np.all(np.isnan(value[1:4]))
    np.testing.assert_allclose(value[0], _reference(x[:1], t[:1], None, -100, "none")[0][0])
    assert value[4] == 2e30  # -(log softmax at the smallest logit)
    np.testing.assert_array_equal(grad[4], [1.0, -1.0, 0.0])
    assert np.all(np.isfinite(grad[0]))


def test_every_target_ignored(path: Any) -> None:
    """A mean over no kept target is nan and its gradient zero, as in PyTorch."""
    x = np.ones((2, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        value, grad = _run(x, np.array([-100, -100]))
    assert np.isnan(value)
    np.testing.assert_array_equal(grad, np.zeros((2, 3)))


@pytest.mark.parametrize("t_dtype", [np.int32, np.uint8, np.int64])
def test_target_dtypes_and_strided_logits(path: Any, t_dtype: Any) -> None:
    """Targets of any integer dtype, logits that are a strided view: the same results as
    contiguous int64 inputs."""
    x, t, _ = _case(11, 6, 8, np.float64)
    t = np.abs(t) % 8
    wide = np.repeat(x, 2, axis=1)[:, ::2]  # x's values, not contiguous
    np.testing.assert_array_equal(_run(wide, t.astype(t_dtype))[0], _run(x, t)[0])


def test_which_inputs_take_the_kernels(path: Counter[str] | None) -> None:
    """(N, C) logits of float32 or float64 without label smoothing take the kernels; a
    class axis that is not last (N, C, d), label smoothing, and probability targets
    take numpy's code."""
    if path is None:
        pytest.skip("the numpy path calls no kernel")
    x, t, _ = _case(5, 4, 3, F32)
    t = np.abs(t) % 3
    _run(x, t)
    assert path["cross_entropy_rows"] == 1
    _run(x, t, label_smoothing=0.1)
    _run(np.stack([x, x], axis=2), np.stack([t, t], axis=1))
    probs = np.full(x.shape, 1 / 3, F32)
    _run(x, probs)
    assert path["cross_entropy_rows"] == 1 and path["cross_entropy_rows_backward"] == 1


def test_second_order_through_the_kernel_path(path: Any) -> None:
    """The Hessian of the mean loss in the logits (through the kernel path's
    differentiable rule) is the softmax's Jacobian per row, weighted and divided by the
    number of kept targets."""
    x, t, _ = _case(13, 3, 4, np.float64)
    t = np.abs(t) % 4
    h = lampy.hessian(lambda v: F.cross_entropy(v, t))(x)
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    want = np.zeros((3, 4, 3, 4))
    for i in range(3):
        want[i, :, i, :] = (np.diag(p[i]) - np.outer(p[i], p[i])) / 3
    np.testing.assert_allclose(np.asarray(h), want, atol=1e-12)


def _two_losses(x: np.ndarray, t: np.ndarray, workers: int) -> bytes:
    """The logits' gradient, as bytes, of two cross-entropies of the same logits (their
    closures may run in two workers at once) with class weights and ignored targets."""
    w = np.linspace(0.5, 2.0, x.shape[1]).astype(x.dtype)
    with lampy.Scope():
        p = lampy.param(x)
        loss = F.cross_entropy(p, t, weight=w) + F.cross_entropy(p * 2, t, reduction="sum")
        loss.backward(workers=workers)
        assert p.grad is not None
        return bytes(p.grad.tobytes())


@pytest.mark.parametrize("dtype", [F32, np.float64])
def test_workers_give_the_serial_gradient_bitwise(
    path: Any, always_concurrent: None, dtype: Any
) -> None:
    """Backward with 2, 3 and 8 workers gives the serial gradient bit for bit."""
    x, t, _ = _case(17, 64, 33, dtype)
    serial = _two_losses(x, t, 1)
    for workers in (2, 3, 8):
        assert _two_losses(x, t, workers) == serial


def test_many_threads_at_once(path: Any) -> None:
    """Eight threads running the op (the kernels release the GIL) at the same time, each
    many times, give the serial results bit for bit."""
    import threading

    cases = [_case(100 + k, 48, 21, F32)[:2] for k in range(8)]
    serial = [_two_losses(x, t, 1) for x, t in cases]
    results: list[list[bytes]] = [[] for _ in cases]
    barrier = threading.Barrier(len(cases))

    def target(k: int) -> None:
        barrier.wait()
        results[k] = [_two_losses(*cases[k], 1) for _ in range(20)]

    threads = [threading.Thread(target=target, args=(k,)) for k in range(len(cases))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for k, got in enumerate(results):
        assert got == [serial[k]] * 20, k
