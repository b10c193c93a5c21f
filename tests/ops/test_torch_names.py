"""PyTorch's keyword names (``dim``, ``keepdim``) and function names (``cat``,
``unsqueeze``) give exactly what numpy's give; where PyTorch's namesake computes
something else, its spelling is refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy import LampyTypeError

X = np.arange(24.0).reshape(2, 3, 4) / 7 - 1


def _values(out: Any) -> Any:
    if isinstance(out, lampy.TopK):
        return (out.values.value, out.indices)
    if isinstance(out, lampy.Variable):
        return out.value
    return np.asarray(out)


# (op, positional args after x, the axis value, whether it takes keepdim)
CASES: list[tuple[Callable[..., Any], tuple[Any, ...], Any, bool]] = [
    (lampy.sum, (), 1, True),
    (lampy.sum, (), (0, 2), True),
    (lampy.mean, (), -1, True),
    (lampy.prod, (), 2, True),
    (lampy.amax, (), 1, True),
    (lampy.amin, (), 0, True),
    (lampy.argmax, (), 2, True),
    (lampy.argmin, (), 1, True),
    (lampy.logsumexp, (), 1, True),
    (lampy.cumsum, (), 1, False),
    (lampy.cumprod, (), 2, False),
    (lampy.argsort, (), 0, False),
    (lampy.expand_dims, (), 1, False),
    (lampy.topk, (2,), 1, False),
]


@pytest.mark.parametrize(
    ("fn", "args", "axis", "keep"), CASES, ids=[f"{c[0].__name__}-{c[2]}" for c in CASES]
)
def test_dim_and_keepdim_mean_axis_and_keepdims(
    fn: Callable[..., Any], args: tuple[Any, ...], axis: Any, keep: bool
) -> None:
    """``f(x, dim=d)`` is ``f(x, axis=d)`` (and keepdim is keepdims), value and gradient;
    giving both names raises."""
    with lampy.Scope():
        a, b = lampy.param(X), lampy.param(X)
        kw: dict[str, Any] = {"keepdims": True} if keep else {}
        tkw: dict[str, Any] = {"keepdim": True} if keep else {}
        numpy_way = fn(a, *args, axis=axis, **kw)
        torch_way = fn(b, *args, dim=axis, **tkw)
        np.testing.assert_array_equal(_values(torch_way), _values(numpy_way))
        first = numpy_way.values if isinstance(numpy_way, lampy.TopK) else numpy_way
        second = torch_way.values if isinstance(torch_way, lampy.TopK) else torch_way
        if isinstance(first, lampy.Variable):
            first.sum().backward()
            second.sum().backward()
            np.testing.assert_array_equal(a.grad, b.grad)
        other = 0 if axis != 0 else 1
        with pytest.raises(LampyTypeError, match=r"axis \(numpy's name\) or dim \(PyTorch's\)"):
            fn(a, *args, axis=other, dim=axis)


def test_joins_and_squeeze_take_dim() -> None:
    """cat/concatenate, stack and squeeze take dim; cat is concatenate, unsqueeze is
    expand_dims."""
    assert lampy.cat is lampy.concatenate and lampy.unsqueeze is lampy.expand_dims
    with lampy.Scope():
        x = lampy.param(X)
        np.testing.assert_array_equal(
            lampy.cat([x, x], dim=2).value, np.concatenate([X, X], axis=2)
        )
        np.testing.assert_array_equal(lampy.stack([x, x], dim=1).value, np.stack([X, X], 1))
        y = lampy.unsqueeze(x, dim=0)
        assert y.shape == (1, 2, 3, 4)
        assert lampy.squeeze(y, dim=0).shape == (2, 3, 4)
        np.testing.assert_array_equal(
            lampy.take_along_axis(x, np.zeros((2, 3, 1), int), dim=2).value, X[..., :1]
        )
        with pytest.raises(LampyTypeError, match="pass the position of the new axis"):
            lampy.expand_dims(x)


def test_keepdim_conflict_raises() -> None:
    """keepdims=True with keepdim=False is a contradiction, not a silent choice."""
    with lampy.Scope(), pytest.raises(LampyTypeError, match=r"keepdims .* or keepdim"):
        lampy.sum(lampy.param(X), 0, keepdims=True, keepdim=False)


@pytest.mark.parametrize("fn", [lampy.max, lampy.min, lampy.sort, lampy.var, lampy.std])
def test_namesakes_that_differ_from_pytorch_refuse_dim(fn: Callable[..., Any]) -> None:
    """torch.max/min/sort(x, dim) return values and indices, torch.var/std are unbiased
    by default: lampy's numpy versions refuse ``dim`` instead of returning another thing."""
    with lampy.Scope(), pytest.raises(TypeError, match="dim"):
        fn(lampy.param(X), dim=1)
