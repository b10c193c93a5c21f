"""Second derivatives through lampy.nn.functional: the losses, layer/group/batch norm,
dropout, embedding and the activations with a recorded backward rule, checked with
``check_grad(..., order=2)`` against central differences of the first-order gradients.

Order 2 is checked in float64 (differences of differences need it); float32 is checked
for dtype and against float64 with a loose tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
import lampy.nn.functional as F
from lampy.testing import check_grad

seeds = st.integers(0, 2**16)
REDUCTIONS = ["mean", "sum", "none"]


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------------ losses
POINTWISE = {
    "mse_loss": F.mse_loss,
    "l1_loss": F.l1_loss,
    "huber_loss": F.huber_loss,
    "huber_loss_delta": lambda a, b, reduction: F.huber_loss(a, b, reduction, delta=0.7),
    "smooth_l1_loss": F.smooth_l1_loss,
    "smooth_l1_loss_beta": lambda a, b, reduction: F.smooth_l1_loss(a, b, reduction, beta=0.5),
}


@pytest.mark.parametrize("name", list(POINTWISE))
@settings(max_examples=10)
@given(seed=seeds, reduction=st.sampled_from(REDUCTIONS), broadcast=st.booleans())
def test_pointwise_losses(name: str, seed: int, reduction: str, broadcast: bool) -> None:
    rng = _rng(seed)
    x = rng.standard_normal((3, 4)) * 2
    t = rng.standard_normal((4,) if broadcast else (3, 4))
    loss = POINTWISE[name]
    check_grad(lambda a, b: loss(a, b, reduction=reduction), x, t, order=2)
    check_grad(lambda a: loss(a, t, reduction=reduction) ** 2, x, order=2)


@settings(max_examples=15)
@given(
    seed=seeds,
    shape=st.sampled_from([(4,), (3, 4), (2, 4, 3)]),
    reduction=st.sampled_from(REDUCTIONS),
    ls=st.sampled_from([0.0, 0.2]),
    weighted=st.booleans(),
    ignore=st.booleans(),
)
def test_cross_entropy_class_indices(
    seed: int, shape: tuple[int, ...], reduction: str, ls: float, weighted: bool, ignore: bool
) -> None:
    rng = _rng(seed)
    x = rng.standard_normal(shape)
    c = 4
    t = rng.integers(0, c, () if len(shape) == 1 else (shape[0], *shape[2:]))
    if ignore and t.ndim:
        t.flat[0] = -100
    w = rng.random(c) + 0.5 if weighted else None
    check_grad(
        lambda a: F.cross_entropy(a, t, weight=w, reduction=reduction, label_smoothing=ls),
        x,
        order=2,
    )
    if len(shape) > 1:
        check_grad(
            lambda a: F.nll_loss(F.log_softmax(a, 1), t, weight=w, reduction=reduction), x, order=2
        )
        check_grad(lambda a: F.nll_loss(a * a, t, weight=w, reduction=reduction), x, order=2)


@settings(max_examples=15)
@given(
    seed=seeds,
    shape=st.sampled_from([(4,), (3, 4), (2, 4, 3)]),
    reduction=st.sampled_from(REDUCTIONS),
    ls=st.sampled_from([0.0, 0.3]),
    weighted=st.booleans(),
)
def test_cross_entropy_probabilities(
    seed: int, shape: tuple[int, ...], reduction: str, ls: float, weighted: bool
) -> None:
    rng = _rng(seed)
    x = rng.standard_normal(shape)
    p = rng.random(shape)
    p /= p.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)
    w = rng.random(shape[0 if len(shape) == 1 else 1]) + 0.5 if weighted else None
    check_grad(
        lambda a, b: F.cross_entropy(a, b, weight=w, reduction=reduction, label_smoothing=ls),
        x,
        p,
        order=2,
    )


@settings(max_examples=10)
@given(seed=seeds, reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans())
def test_binary_losses_and_kl_div(seed: int, reduction: str, weighted: bool) -> None:
    rng = _rng(seed)
    x = rng.random((3, 4)) * 0.8 + 0.1
    t = rng.random((3, 4))
    z = rng.standard_normal((3, 4)) * 2
    w = rng.random(4) + 0.5 if weighted else None
    pw = rng.random(4) + 0.5 if weighted else None
    check_grad(
        lambda a, b: F.binary_cross_entropy(a, b, weight=w, reduction=reduction), x, t, order=2
    )
    check_grad(
        lambda a, b: F.binary_cross_entropy_with_logits(
            a, b, weight=w, reduction=reduction, pos_weight=pw
        ),
        z,
        t,
        order=2,
    )
    check_grad(lambda a, b: F.kl_div(a, b, reduction=reduction), z, t + 0.1, order=2)
    check_grad(lambda a, b: F.kl_div(a, b, reduction="batchmean", log_target=True), z, -t, order=2)


def test_cross_entropy_hessian_is_softmax_covariance() -> None:
    """d^2 CE / dx^2 = diag(p) - p p^T for one sample, a closed form."""
    x = np.array([0.3, -1.2, 2.0, 0.1])
    h = np.asarray(lampy.hessian(lambda a: F.cross_entropy(a, np.array(2)))(x))
    p = np.exp(x - x.max())
    p /= p.sum()
    np.testing.assert_allclose(h, np.diag(p) - np.outer(p, p), atol=1e-12)


# ------------------------------------------------------------------------ normalization
@settings(max_examples=10)
@given(
    seed=seeds,
    case=st.sampled_from([((3, 4), (4,)), ((2, 3, 4), (3, 4)), ((5,), (5,))]),
    affine=st.sampled_from(["none", "weight", "both"]),
)
def test_layer_norm(seed: int, case: Any, affine: str) -> None:
    shape, ns = case
    rng = _rng(seed)
    x, w, b = rng.standard_normal(shape), rng.standard_normal(ns), rng.standard_normal(ns)
    if affine == "none":
        check_grad(lambda a: F.layer_norm(a, ns), x, order=2)
    elif affine == "weight":
        check_grad(lambda a, v: F.layer_norm(a, ns, v), x, w, order=2)
    else:
        check_grad(lambda a, v, c: F.layer_norm(a, ns, v, c) ** 2, x, w, b, order=2)


@settings(max_examples=8)
@given(seed=seeds, case=st.sampled_from([((2, 4, 3), 2), ((3, 4), 4), ((2, 6, 2, 2), 3)]))
def test_group_norm(seed: int, case: Any) -> None:
    shape, groups = case
    rng = _rng(seed)
    c = shape[1]
    x, w, b = rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c)
    check_grad(lambda a: F.group_norm(a, groups), x, order=2)
    check_grad(lambda a, v, d: F.group_norm(a, groups, v, d) ** 2, x, w, b, order=2)


@settings(max_examples=8)
@given(seed=seeds, shape=st.sampled_from([(4, 3), (2, 3, 5), (3, 2, 2, 2)]))
def test_batch_norm(seed: int, shape: tuple[int, ...]) -> None:
    rng = _rng(seed)
    c = shape[1]
    x, w, b = rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c)
    rm, rv = rng.standard_normal(c), rng.random(c) + 0.5
    check_grad(lambda a: F.batch_norm(a, None, None, training=True), x, order=2)
    check_grad(
        lambda a, v, d: F.batch_norm(a, None, None, v, d, training=True) ** 2, x, w, b, order=2
    )
    check_grad(lambda a, v, d: F.batch_norm(a, rm, rv, v, d, training=False) ** 2, x, w, b, order=2)


# ------------------------------------------------------------------ dropout, embedding
@pytest.mark.parametrize(
    "drop",
    [
        lambda a: F.dropout(a, 0.4, training=True),
        lambda a: F.dropout2d(a, 0.5, training=True),
        lambda a: F.alpha_dropout(a, 0.3, training=True),
        lambda a: F.dropout(a, 1.0, training=True),
        lambda a: F.dropout(a, 0.5, training=False),
    ],
    ids=["dropout", "dropout2d", "alpha_dropout", "p=1", "eval"],
)
def test_dropout_mask_is_a_constant(drop: Any) -> None:
    x = _rng(0).standard_normal((2, 3, 4))

    def f(a: Any) -> Any:
        lampy.manual_seed(0)  # the same mask in every evaluation
        return drop(a) ** 3 + a * a

    check_grad(f, x, order=2)


def test_embedding_second_order() -> None:
    rng = _rng(0)
    w = rng.standard_normal((5, 3))
    ids = np.array([[0, 2, 2], [4, 1, 2]])  # row 2 repeated, row 3 unused
    x = rng.standard_normal((2, 3, 3))
    check_grad(lambda v: F.embedding(ids, v) ** 3, w, order=2)
    check_grad(lambda v, y: F.embedding(ids, v) * y, w, x, order=2)


@pytest.mark.parametrize(
    "kw", [{"padding_idx": 2}, {"scale_grad_by_freq": True}, {"padding_idx": 0}]
)
def test_embedding_recorded_gradient_is_the_gather(kw: dict[str, Any]) -> None:
    """With padding_idx and scale_grad_by_freq the first-order gradient is PyTorch's
    convention, not a derivative, so finite differences do not apply: the recorded
    gradient equals the first-order one, and its derivative w.r.t. the cotangent is
    the rows gathered back (times 1 / count, 0 at padding_idx)."""
    rng = _rng(1)
    w0 = rng.standard_normal((5, 3))
    ids = np.array([[0, 2, 2], [4, 1, 2]])
    x0, v = rng.standard_normal((2, 3, 3)), rng.standard_normal((5, 3))
    with lampy.Scope():
        w, x = lampy.param(w0), lampy.param(x0)
        (gw,) = lampy.gradients((F.embedding(ids, w, **kw) * x).sum(), [w], create_graph=True)
        w2 = lampy.param(w0)
        (F.embedding(ids, w2, **kw) * x0).sum().backward()
        np.testing.assert_allclose(gw.value, w2.grad)
        (gx,) = lampy.gradients((gw * v).sum(), [x])
        flat = ids.reshape(-1)
        f = np.ones(flat.size)
        if kw.get("scale_grad_by_freq"):
            f /= np.bincount(flat, minlength=5)[flat]
        if "padding_idx" in kw:
            f[flat == kw["padding_idx"]] = 0
        np.testing.assert_allclose(gx.value, (v[flat] * f[:, None]).reshape(2, 3, 3))


def test_embedding_with_max_norm_has_no_second_order() -> None:
    w = _rng(2).standard_normal((5, 3)) * 3
    with pytest.raises(lampy.NoSecondOrderError, match="embedding"):
        check_grad(lambda v: F.embedding(np.array([0, 1]), v, max_norm=0.5) ** 2, w, order=2)


# ------------------------------------------------------------------------- activations
ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda a: F.gelu(a, approximate="tanh"),
    "mish": F.mish,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "softsign": F.softsign,
    "glu": lambda a: F.glu(a, 1),
    "glu_dim0": lambda a: F.glu(a, 0),
}

# away from the kinks: hardswish's and hardsigmoid's at +-3, softsign's second
# derivative's at 0
finite = st.floats(-5, 5).filter(lambda v: min(abs(v - 3), abs(v + 3), abs(v)) > 1e-3)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@settings(max_examples=10)
@given(values=st.lists(finite, min_size=8, max_size=8))
def test_activations(name: str, values: list[float]) -> None:
    x = np.array(values).reshape(2, 4)
    act = ACTIVATIONS[name]
    check_grad(act, x, order=2)
    check_grad(lambda a: act(a) * act(a), x, order=2)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_third_order(approximate: str) -> None:
    x = np.linspace(-3, 3, 8).reshape(2, 4)
    check_grad(
        lambda a: lampy.grad(lambda b: F.gelu(b, approximate=approximate).sum())(a),
        x,
        order=2,
    )


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("name", ["gelu", "mish", "softsign", "hardswish"])
def test_float32_second_derivative(name: str, approximate: str) -> None:
    """float32 (the compiled kernels' path when Numba is installed) gives float32
    second derivatives, close to float64's."""
    act = ACTIVATIONS[name] if name != "gelu" else lambda a: F.gelu(a, approximate=approximate)
    x = np.linspace(-2.5, 2.5, 12).reshape(3, 4)

    def second(dtype: Any) -> np.ndarray:
        with lampy.Scope():
            p = lampy.param(x.astype(dtype))
            (g,) = lampy.gradients(act(p).sum(), [p], create_graph=True)
            (h,) = lampy.gradients(g.sum(), [p])
            assert h.dtype == dtype
            return h.value.astype(np.float64)

    np.testing.assert_allclose(second(np.float32), second(np.float64), atol=2e-5)
