"""PyTorch's tensor methods on Variable compute what the lampy function they stand for
computes (the set of notes/variable-aliases.md, in lampy/_methods.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
BIG = X > 1
IDX, SEL = np.array([[0], [2]]), np.array([2, 0])
F16, F32, F64 = np.float16, np.float32, np.float64
ZERO32 = np.zeros(1, F32)


def _arrays(out: Any) -> Any:
    if isinstance(out, lampy.TopK):
        return (out.values.value, out.indices)
    if isinstance(out, lampy.Variable):
        return out.value
    if isinstance(out, tuple | list):
        return tuple(_arrays(o) for o in out)
    return np.asarray(out)


Case = tuple[str, Callable[[Any], Any], Callable[[Any], Any]]

CASES: list[Case] = [
    # elementwise
    ("exp", lambda x: x.exp(), lampy.exp),
    ("log", lambda x: abs(x).log(), lambda x: lampy.log(abs(x))),
    ("log1p", lambda x: abs(x).log1p(), lambda x: lampy.log1p(abs(x))),
    ("expm1", lambda x: x.expm1(), lampy.expm1),
    ("sqrt", lambda x: abs(x).sqrt(), lambda x: lampy.sqrt(abs(x))),
    ("square", lambda x: x.square(), lampy.square),
    ("tanh", lambda x: x.tanh(), lampy.tanh),
    ("sin", lambda x: x.sin(), lampy.sin),
    ("cos", lambda x: x.cos(), lampy.cos),
    ("sign", lambda x: x.sign(), lampy.sign),
    ("reciprocal", lambda x: x.reciprocal(), lampy.reciprocal),
    ("abs", lambda x: x.abs(), lampy.abs),
    ("neg", lambda x: x.neg(), lampy.negative),
    ("pow", lambda x: x.pow(3), lambda x: lampy.power(x, 3)),
    ("clamp", lambda x: x.clamp(min=-0.5, max=1.0), lambda x: lampy.clip(x, -0.5, 1.0)),
    ("add", lambda x: x.add(2.0), lambda x: x + 2.0),
    ("sub", lambda x: x.sub(2.0), lambda x: x - 2.0),
    ("mul", lambda x: x.mul(2.0), lambda x: x * 2.0),
    ("div", lambda x: x.div(2.0), lambda x: x / 2.0),
    ("matmul", lambda x: x.matmul(x.T), lambda x: x @ x.T),
    ("mm", lambda x: x.mm(x.T), lambda x: x @ x.T),
    ("bmm", lambda x: x[None].bmm(x.T[None]), lambda x: x[None] @ x.T[None]),
    ("masked_fill", lambda x: x.masked_fill(BIG, 0.0), lambda x: lampy.masked_fill(x, BIG, 0.0)),
    ("sigmoid", lambda x: x.sigmoid(), F.sigmoid),
    ("relu", lambda x: x.relu(), F.relu),
    ("softmax", lambda x: x.softmax(dim=-1), lambda x: F.softmax(x, -1)),
    ("log_softmax", lambda x: x.log_softmax(-1), lambda x: F.log_softmax(x, -1)),
    # reductions with dim / keepdim
    ("sum-dim", lambda x: x.sum(dim=1, keepdim=True), lambda x: lampy.sum(x, 1, keepdims=True)),
    ("mean-dim", lambda x: x.mean(dim=0), lambda x: lampy.mean(x, 0)),
    ("prod-dim", lambda x: x.prod(dim=1), lambda x: lampy.prod(x, 1)),
    ("amax-dim", lambda x: x.amax(dim=1), lambda x: lampy.amax(x, 1)),
    ("amin-dim", lambda x: x.amin(dim=0, keepdim=True), lambda x: lampy.amin(x, 0, keepdims=True)),
    ("argmax-dim", lambda x: x.argmax(dim=1), lambda x: lampy.argmax(x, 1)),
    ("argmin-dim", lambda x: x.argmin(dim=0), lambda x: lampy.argmin(x, 0)),
    ("logsumexp-dim", lambda x: x.logsumexp(dim=1), lambda x: lampy.logsumexp(x, 1)),
    ("cumsum-dim", lambda x: x.cumsum(dim=1), lambda x: lampy.cumsum(x, 1)),
    ("cumprod-dim", lambda x: x.cumprod(dim=0), lambda x: lampy.cumprod(x, 0)),
    ("argsort-dim", lambda x: x.argsort(dim=0), lambda x: lampy.argsort(x, 0)),
    ("topk", lambda x: x.topk(2, dim=1), lambda x: lampy.topk(x, 2, 1)),
    ("squeeze-dim", lambda x: x[None].squeeze(dim=0), lambda x: lampy.squeeze(x[None], 0)),
    # shape
    ("unsqueeze", lambda x: x.unsqueeze(0), lambda x: lampy.expand_dims(x, 0)),
    ("permute", lambda x: x.permute(1, 0), lambda x: lampy.permute_dims(x, (1, 0))),
    ("permute-tuple", lambda x: x.permute((1, 0)), lambda x: lampy.permute_dims(x, (1, 0))),
    ("view", lambda x: x.view(3, 2), lambda x: lampy.reshape(x, (3, 2))),
    ("view_as", lambda x: x.view_as(x.T), lambda x: lampy.reshape(x, (3, 2))),
    ("reshape_as", lambda x: x.reshape_as(x.T), lambda x: lampy.reshape(x, (3, 2))),
    ("expand", lambda x: x[None].expand(4, -1, -1), lambda x: lampy.broadcast_to(x, (4, 2, 3))),
    ("expand_as", lambda x: x[:1].expand_as(x), lambda x: lampy.broadcast_to(x[:1], (2, 3))),
    ("flatten-start", lambda x: x[None].flatten(1), lambda x: lampy.reshape(x, (1, 6))),
    ("t", lambda x: x.t(), lambda x: lampy.matrix_transpose(x)),
    ("chunk", lambda x: x.chunk(2, dim=1), lambda x: lampy.split(x, [2], axis=1)),
    ("gather", lambda x: x.gather(1, IDX), lambda x: lampy.gather(x, 1, IDX)),
    ("index_select", lambda x: x.index_select(1, SEL), lambda x: lampy.index_select(x, 1, SEL)),
    # autograd and dtypes
    ("detach", lambda x: x.detach(), lambda x: lampy.const(x.value)),
    ("clone", lambda x: x.clone(), lampy.copy),
    ("float", lambda x: x.float(), lambda x: lampy.astype(x, np.float32)),
    ("double", lambda x: x.half().double(), lambda x: lampy.astype(lampy.astype(x, F16), F64)),
    ("half", lambda x: x.half(), lambda x: lampy.astype(x, np.float16)),
    ("to", lambda x: x.to(np.float32), lambda x: lampy.astype(x, np.float32)),
    ("type_as", lambda x: x.type_as(lampy.const(ZERO32)), lambda x: lampy.astype(x, F32)),
    ("cpu", lambda x: x.cpu(), lambda x: x),
    ("contiguous", lambda x: x.contiguous(), lambda x: x),
]


@pytest.mark.parametrize(
    ("alias", "function"),
    [pytest.param(a, f, id=name) for name, a, f in CASES],
)
def test_method_alias_computes_the_lampy_function(
    alias: Callable[[Any], Any], function: Callable[[Any], Any]
) -> None:
    """The method's value (and dtype) is the lampy function's."""
    with lampy.Scope():
        x = lampy.param(X)
        got, want = _arrays(alias(x)), _arrays(function(x))
        if isinstance(want, tuple):
            assert isinstance(got, tuple) and len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype


def test_detach_and_requires_grad() -> None:
    """detach() gives the value with no gradient path; requires_grad mirrors needs_grad;
    dim() and numel() are ndim and size."""
    with lampy.Scope():
        x = lampy.param(X)
        d = x.detach()
        assert x.requires_grad and not d.requires_grad
        assert np.shares_memory(d.value, x.value) or np.array_equal(d.value, x.value)
        (d * x).sum().backward()
        np.testing.assert_array_equal(x.grad, X)  # no gradient through d
        assert x.dim() == 2 and x.numel() == 6


def test_to_a_device_other_than_cpu_says_lampy_runs_on_numpy() -> None:
    """x.to("cuda") fails with a message, not an AttributeError."""
    with lampy.Scope(), pytest.raises(lampy.LampyValueError, match="numpy"):
        lampy.param(X).to("cuda")


def test_no_grad_as_a_bare_decorator() -> None:
    """``@lampy.no_grad`` without parentheses works as ``@lampy.no_grad()`` does."""

    @lampy.no_grad
    def inside() -> bool:
        return lampy.is_grad_enabled()

    assert inside() is False and lampy.is_grad_enabled()


def test_namesakes_that_differ_from_pytorch_fail_loudly() -> None:
    """The calls numpy and PyTorch read differently raise (tests/autograd/
    test_shared_names.py has the whole table): max/min with an axis alone, var/std
    without the divisor."""
    with lampy.Scope():
        x = lampy.param(X)
        for call in (
            lambda: x.max(1),
            lambda: x.min(axis=1),
            lambda: x.var(0),
            lambda: x.std(),
        ):
            with pytest.raises(lampy.AmbiguousMethodError):
                call()


def test_to_cpu_and_to_other_variable() -> None:
    """x.to("cpu") and x.cpu() are x; x.to(other) takes other's dtype; a dtype name works."""
    with lampy.Scope():
        x = lampy.param(X)
        assert x.to("cpu") is x and x.to(device="cpu:0") is x and x.cpu() is x
        assert x.to(lampy.const(ZERO32)).dtype == F32 and x.to("float16").dtype == F16
        assert x.to("cpu", F32).dtype == F32 and x.to(dtype=F32).needs_grad


def test_shape_methods_follow_pytorch_at_the_edges() -> None:
    """flatten's numpy order and ranges, expand's -1, t() of 0-d/1-d, chunk's sizes and
    mm/bmm's ranks, each bad call a ShapeError or LampyValueError."""
    with lampy.Scope():
        x = lampy.param(X)
        np.testing.assert_array_equal(x.flatten("F").value, X.flatten("F"))
        assert x.flatten(0, 0).shape == (2, 3) and x[None].flatten(0, 1).shape == (2, 3)
        assert lampy.param(2.0).flatten().shape == (1,)
        with pytest.raises(lampy.ShapeError, match="start_dim"):
            x.flatten(1, 0)
        with pytest.raises(lampy.ShapeError, match="out of range"):
            x.flatten(2)
        with pytest.raises(lampy.ShapeError, match="leading"):
            x.expand(-1, 2, 3)
        v = lampy.param(np.zeros(7))
        assert v.t().shape == (7,) and v.t().needs_grad
        with pytest.raises(lampy.ShapeError, match="mT"):
            x[None].t()
        assert [c.shape for c in v.chunk(3)] == [(3,), (3,), (1,)]
        assert [c.shape for c in lampy.param(np.zeros(6)).chunk(4)] == [(2,), (2,), (2,)]
        with pytest.raises(lampy.LampyValueError, match="at least 1"):
            v.chunk(0)
        with pytest.raises(lampy.ShapeError, match="mm"):
            x.mm(v)
        with pytest.raises(lampy.ShapeError, match="bmm"):
            x.bmm(x.T)


def test_method_gradients_flow_as_the_functions() -> None:
    """A chain of PyTorch-style methods backpropagates as the lampy functions do."""
    with lampy.Scope():
        x = lampy.param(X)
        x.unsqueeze(0).expand(2, -1, -1).permute(0, 2, 1).flatten(1).sum(dim=1).sum().backward()
        np.testing.assert_array_equal(x.grad, np.full_like(X, 2.0))
