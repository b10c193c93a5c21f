"""The Module base: traversal and dotted names, state_dict / load_state_dict in place,
train/eval copies, containers and scopes, on small hand-written modules."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.autograd._variable import Variable
from lampy.nn import Module, ModuleDict, ModuleList, Sequential, inline


@attrs.frozen(eq=False, repr=False)
class Affine(Module):
    weight: Variable
    bias: Variable | None
    _repr_fields = ("features",)

    @property
    def features(self) -> int:
        return int(self.weight.shape[0])

    @classmethod
    def init(cls, n: int, *, rng: np.random.Generator, bias: bool = True) -> Affine:
        w = lampy.param(rng.normal(size=n).astype(np.float32))
        return cls(w, lampy.param(np.zeros(n, np.float32)) if bias else None)

    def forward(self, x: Any) -> Any:
        y = x * self.weight
        return y if self.bias is None else y + self.bias


@attrs.frozen(eq=False, repr=False)
class Stats(Module):
    """A module with a buffer and a frozen (no-gradient) Variable."""

    scale: Variable
    running: np.ndarray
    count: np.ndarray

    @classmethod
    def init(cls, n: int) -> Stats:
        return cls(lampy.const(np.ones(n)), np.zeros(n), np.zeros((), np.int64))

    def forward(self, x: Any) -> Any:
        return x * self.scale


@attrs.frozen(eq=False, repr=False)
class Net(Module):
    body: Sequential
    heads: dict[str, Module]
    stats: Stats
    extra: tuple[Module, ...] = inline(default=())

    def forward(self, x: Any) -> Any:
        return self.heads["a"](self.body(x))


def _net(rng: np.random.Generator) -> Net:
    body = Sequential.init(Affine.init(3, rng=rng), Affine.init(3, rng=rng, bias=False))
    heads = {"a": Affine.init(3, rng=rng)}
    return Net(body, heads, Stats.init(3), extra=(Affine.init(2, rng=rng),))


NET_KEYS = [
    "body.0.weight",
    "body.0.bias",
    "body.1.weight",
    "heads.a.weight",
    "heads.a.bias",
    "stats.scale",
    "stats.running",
    "stats.count",
    "0.weight",
    "0.bias",
]


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


@attrs.frozen(eq=False, repr=False)
class Reordered(Module):
    """A module that lists its state in its own order (an override of _named_state)."""

    first: Variable
    second: Variable

    def _named_state(self, prefix: str = "") -> Any:
        p = f"{prefix}." if prefix else ""
        yield f"{p}second", self.second
        yield f"{p}first", self.first


def test_parameters_are_named_parameters_without_names() -> None:
    """parameters() (a walk without dotted names) lists exactly named_parameters()' params
    in its order: nested containers, a dict, inline tuples, shared params once, frozen
    Variables and buffers left out, a submodule overriding _named_state followed."""
    with lampy.Scope():
        rng = _rng()
        net = _net(rng)
        a = Affine.init(2, rng=rng)
        odd = Reordered(lampy.param(np.ones(2)), lampy.param(np.zeros(2)))
        outer = Sequential.init(net, ModuleList([a, Stats.init(2)]), ModuleDict({"x": a}), odd)
        for m in (net, outer, a, odd, Stats.init(1)):
            want = [p for _, p in m.named_parameters()]
            got = m.parameters()
            assert len(got) == len(want) and all(g is w for g, w in zip(got, want, strict=True))
        assert outer.parameters()[-2:] == [odd.second, odd.first]
        assert len(outer.parameters()) == 11  # net: 7 (stats.scale is frozen); a once; odd: 2


def test_state_dict_keys_follow_field_order_with_dotted_names() -> None:
    """Keys are dotted paths in field order; inline fields drop their own name."""
    with lampy.Scope():
        net = _net(_rng())
        assert list(net.state_dict()) == NET_KEYS
        assert [n for n, _ in net.named_buffers()] == ["stats.running", "stats.count"]


def test_named_parameters_only_trainable_and_once_when_shared() -> None:
    """Frozen Variables and buffers are not parameters; a shared param is listed once."""
    with lampy.Scope():
        rng = _rng()
        a = Affine.init(2, rng=rng)
        net = Sequential.init(a, Stats.init(2), a)
        assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias"]
        assert net.parameters() == [a.weight, a.bias]
        assert net.num_parameters() == 4
        # As in PyTorch, a shared (tied) module's entries appear under each of its names.
        keys = ["0.weight", "0.bias", "1.scale", "1.running", "1.count", "2.weight", "2.bias"]
        assert list(net.state_dict()) == keys
        assert [n for n, _ in net.named_modules()] == ["", "0", "1"]


def test_named_modules_depth_first() -> None:
    """named_modules lists the module, then each submodule depth first."""
    with lampy.Scope():
        net = _net(_rng())
        names = [n for n, _ in net.named_modules()]
        assert names == ["", "body", "body.0", "body.1", "heads.a", "stats", "0"]
        assert [n for n, _ in net.named_children()] == ["body", "heads.a", "stats", "0"]


def test_state_dict_arrays_are_read_only_views_of_the_module() -> None:
    """state_dict shares memory with the module and cannot be written through."""
    with lampy.Scope():
        net = _net(_rng())
        sd = net.state_dict()
        assert np.shares_memory(sd["stats.running"], net.stats.running)
        weight = net.body.layers[0].weight.value  # type: ignore[attr-defined]
        assert np.shares_memory(sd["body.0.weight"], weight)
        np.testing.assert_array_equal(sd["body.0.weight"], weight)
        with pytest.raises(ValueError, match="read-only"):
            sd["stats.running"][0] = 1.0


@given(seed=st.integers(0, 2**32 - 1))
def test_load_state_dict_round_trip_writes_in_place(seed: int) -> None:
    """Loading another module's state copies values into the same buffers in place."""
    with lampy.Scope():
        src = _net(np.random.default_rng(seed))
        src.stats.running[:] = np.arange(3)
        src.stats.count[()] = 7
        dst = _net(np.random.default_rng(seed + 1))
        before = {k: v for k, v in dst.state_dict().items()}
        result = dst.load_state_dict({k: v.copy() for k, v in src.state_dict().items()})
        assert result == ([], [])
        after = dst.state_dict()
        for k, v in src.state_dict().items():
            np.testing.assert_array_equal(after[k], v)
            assert np.shares_memory(after[k], before[k]), k
        assert not dst.body.layers[0].weight.value.flags.writeable  # type: ignore[attr-defined]
        assert dst.stats.running.flags.writeable


def test_load_state_dict_casts_to_the_parameter_dtype() -> None:
    """float64 and integer arrays load into float32 params, cast to float32."""
    with lampy.Scope():
        net = _net(_rng())
        sd = {k: np.asarray(v, dtype=np.float64) for k, v in net.state_dict().items()}
        sd["stats.count"] = np.asarray(3)
        sd["body.1.weight"] = np.array([1, 2, 3])
        net.load_state_dict(sd)
        w = net.body.layers[1].weight.value  # type: ignore[attr-defined]
        assert w.dtype == np.float32
        np.testing.assert_array_equal(w, [1, 2, 3])
        assert net.stats.count.dtype == np.int64
        assert net.stats.count == 3


def _snapshot(m: Module) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in m.state_dict().items()}


def _assert_unchanged(m: Module, snap: dict[str, np.ndarray]) -> None:
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(v, snap[k])


def test_load_state_dict_errors_change_nothing() -> None:
    """Missing, unexpected, misshapen and uncastable entries raise and load nothing."""
    with lampy.Scope():
        net = _net(_rng())
        snap = _snapshot(net)
        good = {k: v + 1 for k, v in snap.items()}
        missing = {k: v for k, v in good.items() if k != "heads.a.bias"}
        with pytest.raises(LampyValueError, match=r"Net.load_state_dict.*heads\.a\.bias"):
            net.load_state_dict(missing)
        with pytest.raises(LampyValueError, match=r"unexpected: \['zzz'\]"):
            net.load_state_dict({**good, "zzz": np.ones(1)})
        bad_shape = {**good, "0.weight": np.ones(3)}
        with pytest.raises(ShapeError, match=r"'0\.weight' has shape \(2,\).*\(3,\)"):
            net.load_state_dict(bad_shape)
        with pytest.raises(LampyTypeError, match="complex128"):
            net.load_state_dict({**good, "0.bias": np.ones(2, complex)})
        _assert_unchanged(net, snap)


def test_load_state_dict_refuses_values_that_overflow_the_parameter_dtype() -> None:
    """Issue 16 #5: a float64 1e300 loading into a float32 param is a LampyValueError
    naming the entry (numpy only warned and stored inf), and nothing is loaded; inf and
    nan stay as they are, and the largest finite float32 loads."""
    with lampy.Scope():
        net = _net(_rng())
        snap = _snapshot(net)
        good = {k: np.asarray(v, np.float64) + 1 for k, v in snap.items()}
        good["stats.count"] = snap["stats.count"]
        bad = {**good, "heads.a.weight": np.array([1.0, 1e300, -2e300])}
        with pytest.raises(
            LampyValueError,
            match=r"Net.load_state_dict: 'heads\.a\.weight' holds 2 value\(s\) that do not "
            r"fit float32 \(the largest in magnitude is -2e\+300",
        ):
            net.load_state_dict(bad)
        _assert_unchanged(net, snap)
        edge = np.array([np.inf, np.nan, float(np.finfo(np.float32).max)])
        net.load_state_dict({**good, "heads.a.weight": edge})
        w = net.heads["a"].weight.value  # type: ignore[attr-defined]
        np.testing.assert_array_equal(w, edge.astype(np.float32))


def test_load_state_dict_not_strict_reports_keys() -> None:
    """strict=False loads the common keys and returns the missing and unexpected ones."""
    with lampy.Scope():
        net = _net(_rng())
        keys = net.load_state_dict({"0.bias": np.ones(2), "other": np.ones(1)}, strict=False)
        assert keys.unexpected_keys == ["other"]
        assert "0.weight" in keys.missing_keys and "0.bias" not in keys.missing_keys
        np.testing.assert_array_equal(net.extra[0].bias.value, [1, 1])  # type: ignore[attr-defined]


def test_with_training_returns_copies_sharing_parameters() -> None:
    """with_training flips every submodule's flag on a copy that shares the state."""
    with lampy.Scope():
        net = _net(_rng())
        ev = net.with_training(False)
        assert net.training and not ev.training
        assert all(not m.training for m in ev.modules())
        assert all(m.training for m in net.modules())
        assert ev.parameters() == net.parameters()
        assert ev.stats.running is net.stats.running
        back = ev.with_training(True)
        assert all(m.training for m in back.modules())


def test_apply_rebuilds_bottom_up() -> None:
    """apply visits submodules before their owner and returns the rebuilt tree."""
    seen: list[str] = []

    def visit(m: Module) -> Module:
        seen.append(type(m).__name__)
        return m

    with lampy.Scope():
        Sequential.init(Affine.init(2, rng=_rng()), Stats.init(2)).apply(visit)
    assert seen == ["Affine", "Stats", "Sequential"]


def test_forward_in_child_scope_keeps_parameters_and_their_gradients() -> None:
    """A forward/backward pass in a child scope releases its graph, not the params."""
    with lampy.Scope() as outer:
        net = _net(_rng())
        with lampy.Scope():
            loss = net(np.ones((4, 3), np.float32)).sum()
            loss.backward()
        for name, p in net.named_parameters():
            if name.startswith(("body", "heads")):
                assert p.grad is not None, name
        assert len(outer) == len(list(net.state_dict())) - 2  # Variables only
        net.zero_grad()
        assert all(p.grad is None or not p.grad.any() for p in net.parameters())


def test_scope_keep_moves_a_module_to_the_parent() -> None:
    """Scope.keep walks a module record, so a model built in a child scope can outlive it."""
    with lampy.Scope():
        with lampy.Scope() as inner:
            net = inner.keep(_net(_rng()))
        assert net.body.layers[0].weight.value.shape == (3,)  # type: ignore[attr-defined]


def test_containers() -> None:
    """Sequential slices and indexes; ModuleList and ModuleDict index and iterate."""
    with lampy.Scope():
        rng = _rng()
        a, b = Affine.init(2, rng=rng), Affine.init(2, rng=rng)
        seq = Sequential.init(a, b)
        assert len(seq) == 2 and seq[1] is b and list(seq) == [a, b]
        assert seq[:1].layers == (a,)
        x = np.ones(2, np.float32)
        np.testing.assert_allclose(seq(x).value, b(a(x)).value)
        ml = ModuleList.init([a, b])
        assert list(ml.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
        assert ml[0] is a and len(ml) == 2
        md = ModuleDict.init({"x": a})
        assert "x" in md and md["x"] is a and list(md.keys()) == ["x"]
        assert list(md.state_dict()) == ["x.weight", "x.bias"]
        with pytest.raises(
            LampyTypeError, match=r"item 1 is a builtin_function_or_method, not a lampy\.nn\.Module"
        ):
            Sequential.init(a, len)  # type: ignore[arg-type]
        with pytest.raises(LampyTypeError, match=r"without '\.'"):
            ModuleDict.init({"a.b": a})


def test_module_dict_mapping_api() -> None:
    """ModuleDict has the mapping API (keys, values, items) as torch.nn.ModuleDict; the
    modules are held in ``entries`` (ModuleList's too), which names no parameter."""
    with lampy.Scope():
        rng = _rng()
        a, b = Affine.init(2, rng=rng), Affine.init(2, rng=rng)
        md = ModuleDict.init({"x": a, "y": b})
        assert list(md.items()) == [("x", a), ("y", b)]
        assert list(md.values()) == [a, b] and dict(md.items()) == md.entries
        ml = ModuleList.init([a, b])
        assert ml.entries == (a, b)
        assert list(md.state_dict()) == ["x.weight", "x.bias", "y.weight", "y.bias"]


def test_repr_shows_settings_and_children() -> None:
    """The repr is PyTorch-like: settings in parentheses, children indented by name."""
    with lampy.Scope():
        seq = Sequential.init(Affine.init(2, rng=_rng()))
        assert repr(seq) == "Sequential(\n  (0): Affine(features=2)\n)"


def test_forward_not_defined_is_a_clear_error() -> None:
    """Calling a module without forward says what to define."""
    with pytest.raises(NotImplementedError, match=r"Module\.forward is not defined"):
        Module()(1)


@attrs.frozen(eq=False)
class _Doubling(Module):
    """A module that overrides __call__ (doubling what forward returns)."""

    def forward(self, x: Any) -> Any:
        return x + 1.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return super().__call__(*args, **kwargs) * 2.0


def test_sequential_calls_a_layer_that_overrides_call_through_it() -> None:
    """Sequential runs a layer through its own __call__ when its class overrides it, and
    through forward (the same result as Module.__call__) otherwise."""
    with lampy.Scope():
        lin = lampy.nn.Linear.init(2, 2, rng=np.random.default_rng(0))
        x = np.array([[1.0, -2.0]], np.float32)
        y = Sequential.init(lin, _Doubling(), lampy.nn.Tanh.init())(x)
        np.testing.assert_array_equal(y.value, np.tanh((lin(x).value + 1.0) * 2.0))
