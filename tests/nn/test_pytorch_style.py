"""Modules written as PyTorch users write them (a class whose ``__init__`` assigns
submodules after ``super().__init__()``) work as the built-in records do, and are
frozen once ``__init__`` returns (issue 25, item 2)."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy import nn


class Block(nn.Module):
    def __init__(self, n: int, *, rng: np.random.Generator) -> None:
        super().__init__()
        self.ln = nn.LayerNorm.init(n)
        self.fc = nn.Linear.init(n, n, rng=rng)
        self.scale = 0.5  # a setting

    def forward(self, x: Any) -> Any:
        return x + self.scale * F.gelu(self.fc(self.ln(x)))


class TinyLM(nn.Module):
    def __init__(self, vocab: int, n: int, layers: int, *, rng: np.random.Generator) -> None:
        super().__init__()
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding.init(vocab, n, rng=rng),
                h=nn.ModuleList([Block(n, rng=rng) for _ in range(layers)]),
                ln_f=nn.LayerNorm.init(n),
            )
        )
        # Weight tying, lampy's way: the head is built from the embedding's param.
        self.lm_head = nn.Linear(self.transformer.wte.weight, None)

    def forward(self, idx: Any) -> Any:
        x = self.transformer.wte(idx)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


KEYS = [
    "transformer.wte.weight",
    "transformer.h.0.ln.weight",
    "transformer.h.0.ln.bias",
    "transformer.h.0.fc.weight",
    "transformer.h.0.fc.bias",
    "transformer.h.1.ln.weight",
    "transformer.h.1.ln.bias",
    "transformer.h.1.fc.weight",
    "transformer.h.1.fc.bias",
    "transformer.ln_f.weight",
    "transformer.ln_f.bias",
    "lm_head.weight",
]


def _model() -> TinyLM:
    return TinyLM(11, 8, 2, rng=np.random.default_rng(0))


def test_state_dict_keys_and_parameters_as_pytorch() -> None:
    """state_dict has PyTorch's keys (the tied weight under both names), parameters()
    lists the tied weight once, and a forward and backward pass runs."""
    with lampy.Scope():
        model = _model()
        assert list(model.state_dict()) == KEYS
        assert len(model.parameters()) == len(KEYS) - 1
        assert model.lm_head.weight is model.transformer.wte.weight
        with lampy.Scope():
            loss = F.cross_entropy(
                model(np.array([[1, 2, 3]])).reshape(-1, 11), np.array([2, 3, 4])
            )
            loss.backward()
        assert model.transformer.wte.weight.grad is not None


def test_frozen_after_init() -> None:
    """Assigning or deleting an attribute after __init__ raises ImmutableModuleError."""
    with lampy.Scope():
        model = _model()
        with pytest.raises(lampy.ImmutableModuleError, match="__init__"):
            model.lm_head = None  # type: ignore[assignment]
        with pytest.raises(lampy.ImmutableModuleError):
            del model.transformer
        with pytest.raises(lampy.ImmutableModuleError):
            model.transformer.h[0].scale = 1.0


def test_copies_pickles_and_files_keep_the_tie(tmp_path: Path) -> None:
    """deepcopy, pickle and lampy.save/load keep keys, values and the tie."""
    with lampy.Scope():
        model = _model()
        for other in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
            assert type(other) is TinyLM and list(other.state_dict()) == KEYS
            assert other.lm_head.weight is other.transformer.wte.weight
            assert other.lm_head.weight is not model.lm_head.weight
            for k, v in model.state_dict().items():
                np.testing.assert_array_equal(other.state_dict()[k], v)
        shallow = copy.copy(model)
        assert shallow is not model and shallow.lm_head is model.lm_head
        lampy.save(tmp_path / "m.safetensors", model)
        fresh = TinyLM(11, 8, 2, rng=np.random.default_rng(1))
        lampy.load(tmp_path / "m.safetensors", fresh)
        np.testing.assert_array_equal(fresh.lm_head.weight.value, model.lm_head.weight.value)
        assert fresh.lm_head.weight is fresh.transformer.wte.weight


def test_apply_with_in_place_initialisers() -> None:
    """model.apply(fn) with PyTorch's fn (returns None, nn.init.*_ in place) returns the
    model itself, with every Linear's weight drawn from N(0, 0.02) and biases zero."""
    rng = np.random.default_rng(0)

    def init_weights(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02, generator=rng)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02, generator=rng)

    with lampy.Scope():
        model = _model()
        before = model.transformer.h[0].fc.weight.version
        assert model.apply(init_weights) is model
        fc = model.transformer.h[0].fc
        assert fc.weight.version > before and not fc.bias.value.any()
        assert abs(float(fc.weight.value.std()) - 0.02) < 0.01


def test_apply_rejects_other_results() -> None:
    """apply's fn must return None or a Module; anything else is named."""
    with lampy.Scope(), pytest.raises(lampy.LampyTypeError, match="must return None"):
        _model().apply(lambda m: 1)  # type: ignore[arg-type,return-value]


def test_modes_and_remat_sequential() -> None:
    """with_training, eval_mode and remat_sequential work on PyTorch-style classes."""
    with lampy.Scope():
        model = _model()
        frozen = model.with_training(False)
        assert type(frozen) is TinyLM and not frozen.transformer.h[0].training
        assert frozen.lm_head.weight is model.lm_head.weight
        with nn.eval_mode(model):
            assert not model.transformer.h[1].training
        x = np.ones((2, 8), np.float32)
        with lampy.Scope():
            want = model.transformer.h[1](model.transformer.h[0](x)).value
            got = nn.remat_sequential(list(model.transformer.h), x, segments=2)
            np.testing.assert_allclose(got.value, want, rtol=1e-6)
            got.sum().backward()
        assert model.transformer.h[0].fc.weight.grad is not None


def test_module_dict_attribute_access() -> None:
    """ModuleDict keys are attributes; an unknown one names the keys."""
    with lampy.Scope():
        d = nn.ModuleDict(dict(a=nn.ReLU(), b=nn.Tanh()))
        assert d.a is d["a"] and d.b is d["b"]
        with pytest.raises(AttributeError, match=r"\['a', 'b'\]"):
            _ = d.c


def test_init_in_place_draws_from_the_default_generator() -> None:
    """nn.init.normal_ without generator= draws from lampy's default generator (as
    PyTorch's from its global one); a generator that is not one is named; zeros_,
    ones_ and constant_ draw nothing."""
    with lampy.Scope():
        w = lampy.param(np.ones(3, np.float32))
        lampy.manual_seed(0)
        nn.init.normal_(w, 0.0, 0.02)
        want = np.random.default_rng(0).normal(0.0, 0.02, 3).astype(np.float32)
        np.testing.assert_array_equal(w.value, want)
        with pytest.raises(lampy.LampyTypeError, match=r"nn\.init\.normal_: rng must be"):
            nn.init.normal_(w, 0.0, 0.02, generator=0)
        assert nn.init.ones_(nn.init.zeros_(w)) is w and w.value.tolist() == [1, 1, 1]
        nn.init.constant_(w, 0.5)
        assert w.value.tolist() == [0.5] * 3 and w.version == 4


def test_in_place_init_marks_old_graphs_stale() -> None:
    """A graph built before nn.init.normal_ cannot be backpropagated (version counter)."""
    with lampy.Scope():
        w = lampy.param(np.ones(3, np.float32))
        with lampy.Scope():
            y = (w * 2.0).sum()
            nn.init.normal_(w, generator=np.random.default_rng(0))
            with pytest.raises(lampy.StaleGraphError):
                y.backward()


def test_initialiser_numbers_follow_pytorch() -> None:
    """The deterministic initialisers give PyTorch's values; the random ones PyTorch's
    bounds (kaiming_uniform_ with a=sqrt(5) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)))."""
    torch = pytest.importorskip("torch")
    with lampy.Scope():
        w = lampy.param(np.zeros((64, 50), np.float32))
        t = torch.zeros(64, 50)
        nn.init.constant_(w, 0.3)
        torch.nn.init.constant_(t, 0.3)
        np.testing.assert_array_equal(w.value, t.numpy())
        nn.init.kaiming_uniform_(w, a=5**0.5, generator=np.random.default_rng(0))
        torch.nn.init.kaiming_uniform_(t, a=5**0.5)
        bound = 1 / 50**0.5
        assert abs(w.value).max() <= bound and abs(t.numpy()).max() <= bound
        assert abs(w.value).max() > 0.9 * bound


class _Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleDict(dict(wte=nn.Embedding(5, 3)))
        self.head = nn.Linear(3, 5, bias=False)
        self.blocks.wte.weight = self.head.weight  # PyTorch's weight tying

    def forward(self, idx: Any) -> Any:
        return self.head(self.blocks.wte(idx))


def test_weight_tying_by_assignment_inside_init() -> None:
    """``self.a.sub.weight = self.b.weight`` inside a PyTorch-style __init__ ties the
    weight: listed once in parameters(), under both keys in state_dict, kept tied by
    deepcopy; after __init__ returns the submodules are frozen again."""
    with lampy.Scope():
        m = _Tied()
        assert m.blocks.wte.weight is m.head.weight
        assert len(m.parameters()) == 1
        assert list(m.state_dict()) == ["blocks.wte.weight", "head.weight"]
        c = copy.deepcopy(m)
        assert c.blocks.wte.weight is c.head.weight and c.head.weight is not m.head.weight
        with pytest.raises(lampy.ImmutableModuleError, match="To tie weights"):
            m.blocks.wte.weight = m.head.weight
        with pytest.raises(lampy.ImmutableModuleError):
            m.head = nn.Linear(3, 5)


def test_assignment_inside_init_is_checked_as_the_record_is() -> None:
    """A field assigned in the construction window takes what the record takes: a
    Variable of the same shape and dtype for a weight, a known field name."""

    class Bad(nn.Module):
        def __init__(self, value: Any, name: str = "weight") -> None:
            super().__init__()
            self.lin = nn.Linear(3, 2)
            setattr(self.lin, name, value)

    with lampy.Scope():
        with pytest.raises(lampy.ShapeError, match=r"shape \(3, 3\).*\(2, 3\)"):
            Bad(lampy.param(np.zeros((3, 3), np.float32)))
        with pytest.raises(lampy.LampyTypeError, match="weight must be a Variable"):
            Bad(np.zeros((2, 3), np.float32))
        with pytest.raises(lampy.ImmutableModuleError, match="no field 'scale'"):
            Bad(1.0, "scale")
