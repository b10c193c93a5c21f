"""Loss functions: forward against plain-numpy references (loops for the class losses),
gradients against finite differences, PyTorch's conventions, dtypes and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyValueError, ShapeError
from lampy.nn.functional._losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from lampy.testing import check_grad

REDUCTIONS = ["mean", "sum", "none"]
DTYPES = [np.float64, np.float32]


def _reduce(loss: np.ndarray, reduction: str, n: float | None = None) -> Any:
    if reduction == "none":
        return loss
    total = loss.astype(np.float64).sum()
    with np.errstate(invalid="ignore"):
        return np.asarray(total / (loss.size if n is None else n) if reduction == "mean" else total)


def _forward(f: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    with lampy.Scope():
        return f(*args, **kw).value.copy()


def _tol(dtype: Any) -> Any:
    return {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


# --- references ---------------------------------------------------------------------


def _ref_pointwise(name: str, x: np.ndarray, y: np.ndarray, p: float) -> Any:
    d = x.astype(np.float64) - y
    ad = np.abs(d)
    if name == "mse_loss":
        return d * d
    if name == "l1_loss":
        return ad
    if name == "smooth_l1_loss":
        return np.where(ad < p, 0.5 * d * d / p, ad - 0.5 * p)
    return np.where(ad < p, 0.5 * d * d, p * (ad - 0.5 * p))  # huber


def _ref_class_loss(
    logp: np.ndarray, t: np.ndarray, w: np.ndarray, ignore: int, ls: float, reduction: str
) -> Any:
    """Loops over samples of (N, C, d...) log-probabilities, as PyTorch documents."""
    c = logp.shape[1]
    lp = np.moveaxis(logp, 1, -1).reshape(-1, c)
    tt = t.reshape(-1)
    losses = np.zeros(tt.shape)
    denom = 0.0
    for i in range(tt.size):
        if tt[i] == ignore:
            continue
        nll = -w[tt[i]] * lp[i, tt[i]]
        smooth = -sum(w[k] * lp[i, k] for k in range(c))
        losses[i] = (1 - ls) * nll + ls / c * smooth
        denom += w[tt[i]]
    return _reduce(losses.reshape(t.shape), reduction, denom)


def _log_softmax(x: np.ndarray, axis: int) -> Any:
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# --- forward ------------------------------------------------------------------------

POINTWISE = [
    (mse_loss, {}, 0.0),
    (l1_loss, {}, 0.0),
    (smooth_l1_loss, {"beta": 0.7}, 0.7),
    (huber_loss, {"delta": 0.7}, 0.7),
]


@pytest.mark.parametrize(("f", "kw", "p"), POINTWISE, ids=lambda v: getattr(v, "__name__", ""))
@given(seed=st.integers(0, 2**32 - 1), shape=st.lists(st.integers(0, 4), max_size=3))
@settings(max_examples=15)
def test_pointwise_forward(
    f: Any, kw: dict[str, float], p: float, seed: int, shape: list[int]
) -> None:
    """Pointwise losses equal their numpy formulas for each reduction and dtype."""
    rng = np.random.default_rng(seed)
    for dtype in DTYPES:
        x = rng.normal(size=shape).astype(dtype)
        y = rng.normal(size=shape).astype(dtype)
        for r in REDUCTIONS:
            got = _forward(f, x, y, reduction=r, **kw)
            assert got.dtype == dtype and got.shape == (tuple(shape) if r == "none" else ())
            want = _reduce(_ref_pointwise(f.__name__, x, y, p), r)
            if r == "mean" and x.size == 0:
                assert np.isnan(got)
            else:
                np.testing.assert_allclose(got, want, **_tol(dtype))


def _class_case(rng: np.random.Generator, dims: list[int], n: int, c: int) -> tuple[Any, ...]:
    x = rng.normal(size=(n, c, *dims))
    t = rng.integers(0, c, size=(n, *dims))
    t[rng.random(t.shape) < 0.2] = -100
    w = rng.uniform(0.5, 2.0, size=c)
    return x, t, w


@given(
    seed=st.integers(0, 2**32 - 1),
    dims=st.lists(st.integers(1, 3), max_size=2),
    n=st.integers(1, 4),
    c=st.integers(1, 4),
    ls=st.sampled_from([0.0, 0.25]),
    weighted=st.booleans(),
)
@settings(max_examples=25)
def test_cross_entropy_indices_forward(
    seed: int, dims: list[int], n: int, c: int, ls: float, weighted: bool
) -> None:
    """cross_entropy with class indices, weights, ignore_index and label_smoothing matches a
    per-sample loop; weighted mean divides by the kept targets' weights."""
    x, t, w = _class_case(np.random.default_rng(seed), dims, n, c)
    t[0] = np.where(t[0] == -100, 0, t[0])  # at least one kept target
    for r in REDUCTIONS:
        with lampy.Scope():
            got = cross_entropy(
                x, t, weight=w if weighted else None, reduction=r, label_smoothing=ls
            ).value
            want = _ref_class_loss(
                _log_softmax(x, 1), t, w if weighted else np.ones(c), -100, ls, r
            )
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@given(
    seed=st.integers(0, 2**32 - 1),
    dims=st.lists(st.integers(1, 3), max_size=2),
    n=st.integers(1, 4),
    c=st.integers(1, 4),
)
@settings(max_examples=20)
def test_nll_loss_forward(seed: int, dims: list[int], n: int, c: int) -> None:
    """nll_loss matches a per-sample loop with weights and ignore_index."""
    x, t, w = _class_case(np.random.default_rng(seed), dims, n, c)
    t[0] = np.where(t[0] == -100, 0, t[0])
    for r in REDUCTIONS:
        with lampy.Scope():
            got = nll_loss(x, t, weight=w, reduction=r).value
        np.testing.assert_allclose(got, _ref_class_loss(x, t, w, -100, 0.0, r), rtol=1e-12)


def test_cross_entropy_custom_ignore_index_and_1d() -> None:
    """ignore_index is honoured, and a (C,) input with a 0-d target is one sample."""
    x = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]])
    t = np.array([2, 1])
    with lampy.Scope():
        got = cross_entropy(x, t, ignore_index=1).value
        one = cross_entropy(x[0], np.array(2)).value
    np.testing.assert_allclose(got, -_log_softmax(x, 1)[0, 2])
    np.testing.assert_allclose(one, -_log_softmax(x[0], 0)[2])


@given(seed=st.integers(0, 2**32 - 1), ls=st.sampled_from([0.0, 0.3]))
@settings(max_examples=15)
def test_cross_entropy_probabilities_forward(seed: int, ls: float) -> None:
    """cross_entropy with probability targets: -sum w_c ((1-ls) t_c + ls/C) logp_c, mean over
    samples (not weights)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 4, 2))
    t = rng.uniform(size=(3, 4, 2))
    t /= t.sum(1, keepdims=True)
    w = rng.uniform(0.5, 2.0, size=4)
    logp = _log_softmax(x, 1)
    loss = np.zeros((3, 2))
    for i in range(3):
        for j in range(2):
            loss[i, j] = -sum(
                w[k] * ((1 - ls) * t[i, k, j] + ls / 4) * logp[i, k, j] for k in range(4)
            )
    for r in REDUCTIONS:
        with lampy.Scope():
            got = cross_entropy(x, t, weight=w, reduction=r, label_smoothing=ls).value
        np.testing.assert_allclose(got, _reduce(loss, r), rtol=1e-10)


@given(seed=st.integers(0, 2**32 - 1), shape=st.lists(st.integers(1, 4), min_size=1, max_size=3))
@settings(max_examples=15)
def test_binary_losses_forward(seed: int, shape: list[int]) -> None:
    """binary_cross_entropy(_with_logits) match their formulas with weight and pos_weight."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=shape) * 3
    p = 1 / (1 + np.exp(-z))
    t = rng.uniform(size=shape)
    w = rng.uniform(0.5, 2.0, size=shape[-1])
    pw = rng.uniform(0.5, 2.0, size=shape[-1])
    bce = -w * (t * np.log(p) + (1 - t) * np.log(1 - p))
    bcel = -w * (pw * t * np.log(p) + (1 - t) * np.log(1 - p))
    for r in REDUCTIONS:
        with lampy.Scope():
            got = binary_cross_entropy(p, t, weight=w, reduction=r).value
            got_l = binary_cross_entropy_with_logits(
                z, t, weight=w, reduction=r, pos_weight=pw
            ).value
        np.testing.assert_allclose(got, _reduce(bce, r), rtol=1e-8)
        np.testing.assert_allclose(got_l, _reduce(bcel, r), rtol=1e-8)


@given(seed=st.integers(0, 2**32 - 1), shape=st.lists(st.integers(1, 4), min_size=1, max_size=3))
@settings(max_examples=15)
def test_kl_div_forward(seed: int, shape: list[int]) -> None:
    """kl_div: t (log t - x) (0 at t = 0) or exp(t) (t - x); mean over all elements,
    batchmean over the first axis."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    t = rng.uniform(size=shape)
    t.flat[0] = 0.0
    safe = np.where(t > 0, t, 1.0)
    plain = np.where(t > 0, t * (np.log(safe) - x), 0.0)
    logt = rng.normal(size=shape)
    logged = np.exp(logt) * (logt - x)
    for r in [*REDUCTIONS, "batchmean"]:
        n = shape[0] if r == "batchmean" else None
        rr = "mean" if r == "batchmean" else r
        with lampy.Scope():
            got = kl_div(x, t, reduction=r).value
            got_l = kl_div(x, logt, reduction=r, log_target=True).value
        np.testing.assert_allclose(got, _reduce(plain, rr, n), rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(got_l, _reduce(logged, rr, n), rtol=1e-10)


# --- gradients ----------------------------------------------------------------------


def _grad_cases(rng: np.random.Generator) -> list[tuple[str, Callable[..., Any], list[np.ndarray]]]:
    x = rng.normal(size=(3, 4))
    # Keep |x - y| away from 0 and from beta/delta = 0.7.
    d = rng.choice([-1.0, 1.0], size=(3, 4)) * rng.choice([0.3, 1.4], size=(3, 4))
    y = x - d
    t = np.array([0, 3, -100])
    t3 = np.array([[1, 2], [0, -100]])
    t_all = np.array([0, 3, 1])
    t3_all = np.array([[1, 2], [0, 0]])
    w = rng.uniform(0.5, 2.0, size=4)
    x3 = rng.normal(size=(2, 4, 2))
    prob = rng.uniform(size=(3, 4))
    p = rng.uniform(0.1, 0.9, size=(3, 4))
    cases: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = []
    for r in REDUCTIONS:
        cases += [
            (f"mse-{r}", lambda a, b, r=r: mse_loss(a, b, reduction=r), [x, y]),
            (f"l1-{r}", lambda a, b, r=r: l1_loss(a, b, reduction=r), [x, y]),
            (f"sl1-{r}", lambda a, b, r=r: smooth_l1_loss(a, b, reduction=r, beta=0.7), [x, y]),
            (f"huber-{r}", lambda a, b, r=r: huber_loss(a, b, reduction=r, delta=0.7), [x, y]),
            (
                f"ce-{r}",
                lambda a, r=r: cross_entropy(a, t, weight=w, reduction=r, label_smoothing=0.2),
                [x],
            ),
            (f"ce3-{r}", lambda a, r=r: cross_entropy(a, t3, weight=w, reduction=r), [x3]),
            # No weight and no ignored target: the path that skips the per-target weights.
            (f"ce-plain-{r}", lambda a, r=r: cross_entropy(a, t_all, reduction=r), [x]),
            (f"ce3-plain-{r}", lambda a, r=r: cross_entropy(a, t3_all, reduction=r), [x3]),
            (f"ce1-plain-{r}", lambda a, r=r: cross_entropy(a, np.array(2), reduction=r), [x[0]]),
            (
                f"ce-plain-ls-{r}",
                lambda a, r=r: cross_entropy(a, t_all, reduction=r, label_smoothing=0.2),
                [x],
            ),
            (
                f"ceprob-{r}",
                lambda a, b, r=r: cross_entropy(a, b, weight=w, reduction=r, label_smoothing=0.1),
                [x, prob],
            ),
            (f"nll-{r}", lambda a, r=r: nll_loss(a, t, weight=w, reduction=r), [x]),
            (f"nll3-{r}", lambda a, r=r: nll_loss(a, t3, reduction=r), [x3]),
            (
                f"bce-{r}",
                lambda a, b, r=r: binary_cross_entropy(a, b, weight=w, reduction=r),
                [p, prob],
            ),
            (
                f"bcel-{r}",
                lambda a, b, r=r: binary_cross_entropy_with_logits(
                    a, b, weight=w, reduction=r, pos_weight=w[::-1].copy()
                ),
                [x, prob],
            ),
            (
                f"bcel0-{r}",
                lambda a, b, r=r: binary_cross_entropy_with_logits(a, b, reduction=r),
                [x, prob],
            ),
            (f"kl-{r}", lambda a, b, r=r: kl_div(a, b, reduction=r), [x, p]),
            (f"kllog-{r}", lambda a, b, r=r: kl_div(a, b, reduction=r, log_target=True), [x, y]),
        ]
    cases.append(("kl-batchmean", lambda a, b: kl_div(a, b, reduction="batchmean"), [x, p]))
    return cases


GRAD_CASES = _grad_cases(np.random.default_rng(0))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize(("name", "f", "arrays"), GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients(name: str, f: Callable[..., Any], arrays: list[np.ndarray], dtype: Any) -> None:
    """Gradients w.r.t. the input (and the target where PyTorch has one) match finite
    differences, in float64 and float32."""
    check_grad(f, *[a.astype(dtype) for a in arrays])


# --- conventions, dtypes, edge cases --------------------------------------------------


def _grads(f: Callable[..., Any], *arrays: np.ndarray) -> list[np.ndarray]:
    with lampy.Scope():
        ps = [lampy.param(a) for a in arrays]
        lampy.backward(f(*ps))
        return [np.array(p.grad) for p in ps]


def test_l1_gradient_is_zero_at_zero_difference() -> None:
    """l1_loss and smooth_l1_loss(beta=0) have a zero gradient where input == target."""
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 1.0, 4.0])
    np.testing.assert_array_equal(_grads(l1_loss, x, y)[0], [0.0, 1 / 3, -1 / 3])
    with lampy.Scope():
        a = smooth_l1_loss(x, y, beta=0.0).value
        b = l1_loss(x, y).value
    assert a == b


@pytest.mark.parametrize(("name", "f", "arrays"), GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_float32_preserved(name: str, f: Callable[..., Any], arrays: list[np.ndarray]) -> None:
    """float32 inputs give a float32 loss and float32 gradients."""
    with lampy.Scope():
        ps = [lampy.param(a.astype(np.float32)) for a in arrays]
        out = f(*ps)
        assert out.dtype == np.float32
        lampy.backward(out, [np.ones(out.shape, np.float32)])
        assert all(p.grad is None or p.grad.dtype == np.float32 for p in ps)


def test_bce_with_logits_is_stable_and_bce_clamps() -> None:
    """Huge logits give finite losses and gradients; binary_cross_entropy clamps log at -100."""
    z = np.array([-1000.0, 1000.0])
    t = np.array([1.0, 0.0])
    with lampy.Scope():
        v = binary_cross_entropy_with_logits(z, t, reduction="none").value
    np.testing.assert_allclose(v, [1000.0, 1000.0])
    assert np.all(np.isfinite(_grads(binary_cross_entropy_with_logits, z, t)[0]))
    with lampy.Scope():
        v = binary_cross_entropy(np.array([0.0, 1.0]), t, reduction="none").value
    np.testing.assert_array_equal(v, [100.0, 100.0])


def test_all_ignored_mean_is_nan_and_empty() -> None:
    """Mean over no kept targets (or no elements) is nan, as PyTorch, without warnings."""
    with lampy.Scope():
        assert np.isnan(cross_entropy(np.ones((2, 3)), np.array([-100, -100])).value)
        assert np.isnan(mse_loss(np.ones((0, 3)), np.ones((0, 3))).value)
        assert mse_loss(np.ones((0, 3)), np.ones((0, 3)), reduction="sum").value == 0


def test_variable_used_twice() -> None:
    """A Variable that is both input and target of mse_loss gets a zero gradient."""
    x = np.array([1.0, -2.0])
    with lampy.Scope():
        p = lampy.param(x)
        lampy.backward(mse_loss(p, p))
        np.testing.assert_array_equal(p.grad, [0.0, 0.0])


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: mse_loss(np.ones(3), np.ones(4)), "mse_loss"),
        (lambda: l1_loss(np.ones(3), np.ones((2, 4))), "l1_loss"),
        (lambda: huber_loss(np.ones(3), np.ones(2)), "huber_loss"),
        (lambda: smooth_l1_loss(np.ones(3), np.ones(2)), "smooth_l1_loss"),
        (lambda: cross_entropy(np.ones((2, 3)), np.array([0, 1, 2])), "cross_entropy"),
        (lambda: cross_entropy(np.ones((2, 3)), np.ones((2, 4))), "cross_entropy"),
        (lambda: nll_loss(np.ones((2, 3)), np.array([0])), "nll_loss"),
        (
            lambda: nll_loss(np.ones((2, 3)), np.array([0, 1]), weight=np.ones(2)),
            "nll_loss",
        ),
        (
            lambda: binary_cross_entropy(np.full(3, 0.5), np.ones((3, 1))),
            "binary_cross_entropy",
        ),
        (
            lambda: binary_cross_entropy_with_logits(np.ones(3), np.ones(2)),
            "binary_cross_entropy_with_logits",
        ),
        (lambda: kl_div(np.ones(3), np.ones(2)), "kl_div"),
    ],
)
def test_shape_errors_name_the_op(call: Callable[[], Any], name: str) -> None:
    """Mismatched shapes raise ShapeError naming the op."""
    with lampy.Scope(), pytest.raises(ShapeError, match=name):
        call()


def test_value_errors() -> None:
    """Bad reduction, out-of-range targets and probabilities outside [0, 1] are errors."""
    with lampy.Scope():
        with pytest.raises(ValueError, match="mse_loss: reduction"):
            mse_loss(np.ones(2), np.ones(2), reduction="avg")
        with pytest.raises(ValueError, match="reduction"):
            cross_entropy(np.ones((1, 2)), np.array([0]), reduction="batchmean")
        with pytest.raises(IndexError, match="cross_entropy"):
            cross_entropy(np.ones((1, 2)), np.array([2]))
        with pytest.raises(ValueError, match="between 0 and 1"):
            binary_cross_entropy(np.array([1.5]), np.array([1.0]))


@pytest.mark.parametrize("t", [1.5, -0.5])
def test_binary_cross_entropy_refuses_a_target_outside_0_1(t: float) -> None:
    """A target outside [0, 1] is not a probability: PyTorch raises, and so does lampy
    (it used to extend the formula silently, giving a loss PyTorch never computes)."""
    with lampy.Scope():
        x = lampy.param(np.array([0.3, 0.6]))
        with pytest.raises(LampyValueError, match="binary_cross_entropy: all elements of target"):
            binary_cross_entropy(x, np.array([t, 0.0]))
        ok = binary_cross_entropy(x, np.array([1.0, 0.0]), reduction="sum")  # bounds are legal
        np.testing.assert_allclose(ok.value, -np.log(0.3) - np.log(0.4))


@given(
    seed=st.integers(0, 2**32 - 1),
    dims=st.lists(st.integers(1, 3), max_size=2),
    n=st.integers(0, 4),
    c=st.integers(1, 4),
    ls=st.sampled_from([0.0, 0.25]),
    ignored=st.booleans(),
    dtype=st.sampled_from(DTYPES),
)
@settings(max_examples=30)
def test_class_losses_without_weights_match_unit_weights(
    seed: int, dims: list[int], n: int, c: int, ls: float, ignored: bool, dtype: Any
) -> None:
    """cross_entropy and nll_loss without ``weight`` (where no target is ignored, they
    skip the per-target weights) give the values and gradients of ``weight=ones``, for
    1-d inputs too, empty batches and every reduction."""
    rng = np.random.default_rng(seed)
    x, t, _ = _class_case(rng, dims, n, c)
    if not ignored:
        t = np.where(t == -100, 0, t)
    cases = [(x.astype(dtype), t)]
    if n and not dims:  # also one sample: a (C,) input with a 0-d target
        cases.append((x[0].astype(dtype), t[0]))
    ones = np.ones(c)
    for xx, tt in cases:
        for r in REDUCTIONS:
            calls = [
                lambda a, w, r=r: cross_entropy(a, tt, weight=w, reduction=r, label_smoothing=ls),
                lambda a, w, r=r: nll_loss(a, tt, weight=w, reduction=r),
            ]
            for f in calls:
                got, want = [], []
                for w, out in ((None, got), (ones, want)):
                    with lampy.Scope():
                        a = lampy.param(xx)
                        loss = f(a, w)
                        lampy.backward(loss, [np.ones(loss.shape, loss.dtype)])
                        out += [loss.value.copy(), np.array(a.grad)]
                for g, h in zip(got, want, strict=True):
                    assert g.dtype == h.dtype == dtype
                    np.testing.assert_allclose(g, h, **_tol(dtype), equal_nan=True)


@pytest.mark.parametrize("dtype", ["int8", "int32", ">i8", "uint8", "uint64"])
def test_class_targets_of_any_integer_dtype_are_checked(dtype: str) -> None:
    """Targets of every integer dtype (byte-swapped too) give the int64 result, and a
    target outside [0, C) that is not ignore_index is an IndexError."""
    x = np.array([[0.3, -1.0, 2.0], [1.0, 0.5, 0.1]])
    want = _forward(cross_entropy, x, np.array([2, 0]))
    for f in (cross_entropy, nll_loss):
        np.testing.assert_array_equal(
            _forward(f, x, np.array([2, 0], dtype)), _forward(f, x, np.array([2, 0]))
        )
    assert _forward(cross_entropy, x, np.array([2, 0], dtype)) == want
    bad = [np.array([3, 0], dtype)]
    if np.dtype(dtype).kind == "i":
        bad.append(np.array([-1, 0], dtype))
    with lampy.Scope():
        for t in bad:
            for f in (cross_entropy, nll_loss):
                with pytest.raises(IndexError, match="outside"):
                    f(x, t)
                with pytest.raises(IndexError, match="outside"):
                    f(x, t, ignore_index=0)  # the other target is ignored


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("ignored", [False, True])
def test_changing_the_callers_arrays_after_the_loss_does_not_change_the_gradient(
    name: str, ignored: bool
) -> None:
    """The closures keep the class-index targets (without an ignored one, as they are):
    they are copied from a caller's writable array, so writing into it between the
    forward and the backward pass changes nothing. cross_entropy reads a logits array
    without a copy: its closures keep only arrays computed from it (here for the
    gradient of probability targets)."""
    f = cross_entropy if name == "cross_entropy" else nll_loss
    x = np.array([[0.3, -1.0, 2.0], [1.0, 0.5, 0.1]])
    t = np.array([2, -100 if ignored else 0])
    want = _grads(lambda a: f(a, t.copy()), x)[0]
    with lampy.Scope():
        p = lampy.param(x)
        loss = f(p, t)
        t[:] = [1, 1]
        loss.backward()
        np.testing.assert_array_equal(p.grad, want)
    if name == "nll_loss":
        return
    logits = x.copy()
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]])
    want = _grads(lambda q: cross_entropy(x, q), probs)[0]
    with lampy.Scope():
        q = lampy.param(probs)
        loss = cross_entropy(logits, q)
        logits[:] = 0.0
        loss.backward()
        np.testing.assert_array_equal(q.grad, want)


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
def test_mean_over_only_ignored_targets_is_nan_with_zero_gradient(name: str) -> None:
    """Every target ignored: the mean is 0/0 = nan (as PyTorch) but the gradient is 0."""
    f = cross_entropy if name == "cross_entropy" else nll_loss
    with lampy.Scope():
        x = lampy.param(np.array([[0.3, -1.0, 2.0], [1.0, 0.5, 0.1]]))
        loss = f(x, np.array([0, 0]), ignore_index=0)
        assert np.isnan(loss.item())
        loss.backward()
        assert x.grad is not None
        np.testing.assert_array_equal(x.grad, np.zeros((2, 3)))


@pytest.mark.parametrize("t_dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("ls", [0.0, 0.2])
@pytest.mark.parametrize("contiguous", [True, False])
def test_class_losses_read_targets_of_any_integer_dtype_and_any_layout(
    t_dtype: Any, ls: float, contiguous: bool
) -> None:
    """cross_entropy and nll_loss (with an ignored target and class weights or none)
    give for targets of every integer dtype bitwise the values and gradients of int64
    targets (uint64 ones are read as (rows, t) pairs, the others as flat indices), for
    a C-ordered and a Fortran-ordered (N, C) input."""

    def run(dtype: Any, c_order: bool, weighted: bool) -> list[bytes]:
        rng = np.random.default_rng(5)
        logits = rng.normal(size=(7, 4)).astype(np.float32)
        t = np.array([0, 3, 1, 2, 3, 0, 1]).astype(dtype)
        weight = np.array([1.0, 2.0, 0.5, 1.5], np.float32) if weighted else None
        with lampy.Scope():
            x = lampy.param(logits if c_order else np.asfortranarray(logits))
            ce = cross_entropy(x, t, weight=weight, ignore_index=2, label_smoothing=ls)
            nll = nll_loss(x * 0.5, t, weight=weight, ignore_index=2)
            (ce + nll).backward()
            return [ce.value.tobytes(), nll.value.tobytes(), x.grad.tobytes()]  # type: ignore[union-attr]

    for weighted in (False, True):
        assert run(t_dtype, contiguous, weighted) == run(np.int64, contiguous, weighted)


def test_cross_entropy_refuses_ignore_index_with_probability_targets() -> None:
    """ignore_index means nothing for probability targets: PyTorch raises, and lampy
    used to ignore it silently (computing the loss of every sample)."""
    logits = np.zeros((2, 3))
    probs = np.full((2, 3), 1.0 / 3.0)
    with lampy.Scope():
        x = lampy.param(logits)
        with pytest.raises(LampyValueError, match=r"ignore_index=1 applies to class-index"):
            cross_entropy(x, probs, ignore_index=1)
        assert x.grad is None
        loss = cross_entropy(x, probs, ignore_index=-100)  # the default: allowed
        np.testing.assert_allclose(loss.item(), np.log(3.0))
