"""Adam's compiled update (``lampy.optim._adam_kernel``, with Numba) against numpy's
sequence of ufuncs: the same numbers, bit for bit, for every variant it takes, and
numpy's code for what it does not take (AMSGrad, arrays that are not C-contiguous)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy import optim
from lampy.optim import _adam

pytest.importorskip("numba")

CONFIGS: list[tuple[type[optim.Adam], dict[str, Any]]] = [
    (optim.Adam, {}),
    (optim.Adam, {"weight_decay": 0.1}),
    (optim.Adam, {"maximize": True}),
    (optim.Adam, {"weight_decay": 0.1, "maximize": True}),
    (optim.Adam, {"betas": (0.3, 0.99), "eps": 1e-3}),  # lerp's other form (weight >= 0.5)
    (optim.AdamW, {}),
    (optim.AdamW, {"weight_decay": 0.3, "maximize": True, "lr": 0.05}),
    (optim.Adam, {"amsgrad": True}),  # numpy's code in both runs
]


def _run(cls: type[optim.Adam], kw: dict[str, Any], dtype: Any) -> list[np.ndarray]:
    """Four steps on two params (grads with a nan, an inf and zeros on the last step);
    the params and the moment averages after them."""
    rng = np.random.default_rng(0)
    start = [rng.normal(size=(5, 7)).astype(dtype), rng.normal(size=13).astype(dtype)]
    with lampy.Scope():
        ps = [lampy.param(a) for a in start]
        opt = cls(ps, **{"lr": 0.01, **kw})
        for step in range(4):
            grads = [rng.normal(size=a.shape).astype(dtype) for a in start]
            if step == 3:
                grads[0][0, :3] = (np.nan, np.inf, -np.inf)
                grads[1][:4] = 0
            with lampy.Scope():
                loss = sum(lampy.sum(p * g) for p, g in zip(ps, grads, strict=True))
                loss.backward()
            opt.step()
            opt.zero_grad()
        out = [p.numpy() for p in ps]
        for p in ps:
            out += [np.array(opt.state[p]["exp_avg"]), np.array(opt.state[p]["exp_avg_sq"])]
        return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("cls", "kw"), CONFIGS)
def test_compiled_update_gives_numpys_bits(
    monkeypatch: pytest.MonkeyPatch, cls: Any, kw: dict[str, Any], dtype: Any
) -> None:
    """Params and states after four steps are the same bits with the compiled update and
    with numpy's code (Numba hidden), infinities included; nan where numpy has nan (the
    sign of a nan, which IEEE arithmetic leaves open, may differ)."""
    calls: list[int] = []
    kernel = _adam._kernel()
    assert kernel is not None

    def counted(*args: Any) -> None:
        calls.append(1)
        kernel(*args)

    monkeypatch.setattr(_adam, "_kernel", lambda: counted)
    compiled = _run(cls, kw, dtype)
    assert len(calls) == (0 if kw.get("amsgrad") else 8)  # two params, four steps
    monkeypatch.setattr(_adam, "_kernel", lambda: None)
    numpy = _run(cls, kw, dtype)
    for a, b in zip(compiled, numpy, strict=True):
        assert a.dtype == dtype
        np.testing.assert_array_equal(a, b)  # nan where nan
        numbers = ~np.isnan(a)
        assert np.array_equal(a[numbers].view(np.uint8), b[numbers].view(np.uint8))
    assert any(np.isnan(a).any() for a in numpy)  # the nan and inf gradients did reach


def test_the_compiled_update_takes_one_contiguous_layout() -> None:
    """``_one_layout``: C-contiguous arrays of one float32 or float64 dtype and one shape;
    anything else goes to numpy's code."""
    a = np.zeros((3, 4), np.float32)
    assert _adam._one_layout(a, a.copy(), a.copy())
    assert not _adam._one_layout(np.asfortranarray(a), a.copy())
    assert not _adam._one_layout(a, np.asfortranarray(a))
    assert not _adam._one_layout(a, a.T.copy())
    assert not _adam._one_layout(a, a.astype(np.float64))
    assert not _adam._one_layout(a.astype(np.float16), a.astype(np.float16))
    assert not _adam._one_layout(a, a[:, ::2])
    assert not _adam._one_layout(a, np.float32(0))
