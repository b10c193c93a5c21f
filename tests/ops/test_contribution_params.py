"""Ops whose closures are ``lampy.contribution(...)`` hand their gradient to the engine as
the input's first buffer: ``param_of`` makes them ``CONTRIBUTION`` edges, as
``zip_backward`` does (and the shape ops build such edges with ``contrib_of``), so
backward through reshape, transpose, stack, pad, sort... allocates no zero-filled buffer
to add a view of ``g`` into."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.autograd import _backprop
from lampy.autograd._edge import CONTRIBUTION, KIND, PLAIN
from lampy.opkit import contribution, param_of


def test_param_of_a_contribution_is_the_zip_backward_edge(scope: lampy.Scope) -> None:
    """``param_of(x, contribution(fn, fresh=f))`` is ``x.zip_backward(...)``'s edge: kind
    ``CONTRIBUTION``, ``fn`` itself and ``f``; a plain closure stays ``PLAIN``."""
    x = lampy.param(np.ones(3))
    fn = lambda g: g
    for fresh in (False, True):
        edge = param_of(x, contribution(fn, fresh=fresh))
        assert edge is not None
        assert edge[:4] == x.zip_backward(contribution(fn, fresh=fresh))[:4]
        assert edge[KIND] == CONTRIBUTION and edge[1] is fn and edge[3] is fresh
    plain = param_of(x, lambda g, out: None)
    assert plain is not None and plain[KIND] == PLAIN


VIEWS: list[tuple[str, Callable[[Any], Any]]] = [
    ("reshape", lambda v: v.reshape(3, 8)),
    ("swapaxes", lambda v: v.swapaxes(0, 2)),
    ("transpose", lambda v: v.transpose(2, 0, 1)),
    ("moveaxis", lambda v: lampy.moveaxis(v, 0, -1)),
    ("expand_dims", lambda v: lampy.expand_dims(v, 1)),
    ("squeeze", lambda v: lampy.squeeze(lampy.expand_dims(v, 0), 0)),
    ("ravel", lambda v: lampy.ravel(v)),
    ("matrix_transpose", lambda v: lampy.matrix_transpose(v)),
    # ops that pair their input with lampy.contribution(...) through param_of
    ("stack", lambda v: lampy.stack([v])),
    ("pad", lambda v: lampy.pad(v, 1)),
    ("sort", lambda v: lampy.sort(v, axis=-1)),
    ("flip", lambda v: lampy.flip(v, 1)),
]


@pytest.mark.parametrize(("name", "view"), VIEWS, ids=[n for n, _ in VIEWS])
def test_views_take_no_zero_filled_buffer(
    scope: lampy.Scope, monkeypatch: pytest.MonkeyPatch, name: str, view: Callable[[Any], Any]
) -> None:
    """Backward through a view op of a leaf makes no zero-filled buffer (the engine's
    ``first_buffer``, for plain closures only, is never called) and gives the gradient
    numpy's rearrangement gives."""
    calls = []
    real = _backprop.first_buffer

    def counted(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(_backprop, "first_buffer", counted)
    a = np.arange(24.0).reshape(2, 3, 4)
    x = lampy.param(a)
    y = view(x)
    w = np.arange(float(np.size(y.value))).reshape(y.shape)
    (y * w).sum().backward()
    assert not calls, name
    want = np.zeros_like(a)
    # the same op on the element numbers (from 1; pad's zeros become -1) says where
    # each weight lands
    where = view(lampy.const(np.arange(1.0, 25.0).reshape(2, 3, 4))).value.astype(int) - 1
    kept = where >= 0
    np.add.at(want.reshape(-1), where[kept], w[kept])
    np.testing.assert_array_equal(x.grad, want)
