"""PyTorch habits on every module class: each either works as a PyTorch user expects or
fails at once with a message showing the lampy way (the table is in catalog.py)."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import attrs
import numpy as np
import pytest

import lampy
from lampy import DTypeError, ImmutableModuleError, LampyTypeError, nn
from tests.nn.modules.catalog import BASES, ENTRIES, Entry, torch_call_args

IDS = [e.name for e in ENTRIES]


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _value(out: Any) -> Any:
    """The arrays of a forward pass's result (a Variable or nested tuples of them)."""
    if isinstance(out, lampy.Variable):
        return out.value
    if isinstance(out, tuple):
        return tuple(_value(o) for o in out)
    return out


def _assert_same(a: Any, b: Any) -> None:
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    elif a is None:
        assert b is None
    else:
        np.testing.assert_array_equal(a, b)


def _floating_state(m: nn.Module) -> list[np.dtype[Any]]:
    dtypes = [p.dtype for p in m.parameters()]
    dtypes += [b.dtype for _, b in m.named_buffers() if b.dtype.kind == "f"]
    return dtypes


def test_catalog_names_every_module_class() -> None:
    """The table covers every module class lampy.nn exports (a new one must be added)."""
    exported = {v for v in vars(nn).values() if isinstance(v, type) and issubclass(v, nn.Module)}
    assert exported - BASES == {e.cls for e in ENTRIES}


# ----------------------------------------------------------------- nn.Linear(3, 2)
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_pytorch_constructor_call_builds_what_init_builds(entry: Entry) -> None:
    """``nn.X(*pytorch_args)`` builds the same module as ``nn.X.init(...)`` from the same
    default-generator state: the same repr, state_dict keys and values, and forward."""
    with lampy.Scope():
        lampy.manual_seed(0)
        direct = entry.cls(*torch_call_args(entry, _rng()), **entry.torch_kwargs)
        lampy.manual_seed(0)
        made = entry.cls.init(  # type: ignore[attr-defined]
            *torch_call_args(entry, _rng()), **entry.torch_kwargs
        )
        assert type(direct) is entry.cls
        assert repr(direct) == repr(made)
        a, b = direct.state_dict(), made.state_dict()
        assert list(a) == list(b)
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
        if entry.inputs is not None:
            x = entry.inputs(_rng(), np.float32)
            lampy.manual_seed(1)
            got = _value(direct(*x))
            lampy.manual_seed(1)
            _assert_same(got, _value(made(*x)))


def test_constructor_call_runs_init_for_linear() -> None:
    """The first thing a PyTorch user types works: ``nn.Linear(3, 2)`` is
    ``nn.Linear.init(3, 2)``; a record's fields still build the record."""
    with lampy.Scope():
        layer = nn.Linear(3, 2, bias=False)
        assert repr(layer) == "Linear(in_features=3, out_features=2, bias=False)"
        assert layer.weight.shape == (2, 3) and layer.bias is None
        tied = nn.Linear(layer.weight, None)
        assert tied.weight is layer.weight


def test_constructor_call_that_fits_neither_form_names_both() -> None:
    """Arguments that fit neither init nor the record raise at once, showing init's
    signature and both reasons; outside a scope the message shows the scope to open."""
    with lampy.Scope(), pytest.raises(LampyTypeError) as info:
        nn.Linear(3, 2, bais=True)  # type: ignore[call-arg]
    message = str(info.value)
    assert message.startswith("nn.Linear(3, 2, bais=True): ")
    assert "nn.Linear.init(in_features, out_features, bias=True, *, dtype=float32" in message
    assert "unexpected keyword argument 'bais'" in message
    with pytest.raises(lampy.NoScopeError, match=r"Linear\(3, 2\) makes parameters"):
        nn.Linear(3, 2)


def test_constructor_check_keeps_records_and_subclasses_working() -> None:
    """Building records from fields (init, attrs.evolve, a user's subclass) still works,
    and a subclass field holding the wrong thing is named."""

    @attrs.frozen(eq=False, repr=False)
    class Scale(nn.Module):
        factor: lampy.Variable

        def forward(self, x: Any) -> Any:
            return x * self.factor

    with lampy.Scope():
        s = Scale(lampy.param(2.0))
        assert float(s(3.0).value) == 6.0
        t = attrs.evolve(s, factor=lampy.param(3.0))
        assert float(t(1.0).value) == 3.0
        with pytest.raises(LampyTypeError, match=r"Scale\(2\.0\): .*factor must be a Variable"):
            Scale(2.0)  # type: ignore[arg-type]


# ----------------------------------------------------------------- model.eval()
@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.inputs is not None], ids=lambda e: e.name
)
def test_eval_and_train_switch_as_pytorchs(entry: Entry) -> None:
    """``model.eval()`` switches the module and every submodule to evaluation mode (it
    then computes what its ``with_training(False)`` copy computes) and returns it;
    ``model.train()`` switches back; ``train(False)`` is ``eval()``."""
    with lampy.Scope():
        m = entry.make(_rng(), np.float32)
        x = entry.inputs(_rng(), np.float32)  # type: ignore[misc]
        evaluation = m.with_training(False)
        assert m.eval() is m
        assert not any(sub.training for sub in m.modules())
        _assert_same(_value(m(*x)), _value(evaluation(*x)))
        assert m.train() is m and all(sub.training for sub in m.modules())
        assert not m.train(False).training and m.train(True).training
        with pytest.raises(LampyTypeError, match="mode must be a bool"):
            m.train("eval")  # type: ignore[arg-type]


def test_eval_covers_the_module_objects_not_later_copies() -> None:
    """The switch belongs to the module objects and their copies (as PyTorch's flag),
    not to ``with_training``'s, whose mode is their field; a submodule switched on its
    own stays switched inside a training parent; ``eval_mode`` still works beside it; a
    switched module that goes leaves nothing behind."""
    from lampy.nn import _modes

    with lampy.Scope():
        model = nn.Sequential.init(nn.Linear.init(3, 3, rng=_rng()), nn.Dropout.init(0.5))
        model[1].eval()
        assert model.training and not model[1].training
        model.train()
        assert model[1].training
        model.eval()
        assert not copy.deepcopy(model).training and not copy.copy(model)[1].training
        assert model.with_training(True).training
        model.train()
        with nn.eval_mode(model):
            assert not model[1].training
        assert model[1].training
        before = len(_modes._SWITCHED_OFF)
        gone = nn.Dropout.init(0.5).eval()
        assert len(_modes._SWITCHED_OFF) == before + 1
        del gone
        assert len(_modes._SWITCHED_OFF) == before


def test_eval_turns_dropout_and_batch_norm_off_until_train() -> None:
    """After ``model.eval()`` dropout passes values through and batch norm uses (and
    keeps) its running statistics, in every later call, until ``model.train()``."""
    rng = _rng()
    x = rng.normal(2.0, 1.0, size=(16, 3)).astype(np.float32)
    with lampy.Scope():
        model = nn.Sequential.init(nn.BatchNorm1d.init(3), nn.Dropout.init(0.5, rng=rng))
        bn = model[0]
        model.eval()
        with lampy.no_grad():
            for _ in range(2):
                np.testing.assert_allclose(model(x).value, x / np.sqrt(1 + 1e-5), rtol=1e-6)
        assert int(bn.num_batches_tracked) == 0  # type: ignore[attr-defined, arg-type]
        model.train()
        assert (model(x).value == 0).any() and int(bn.num_batches_tracked) == 1  # type: ignore[attr-defined, arg-type]


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.inputs is not None], ids=lambda e: e.name
)
def test_eval_mode_matches_an_evaluation_copy(entry: Entry) -> None:
    """Inside ``nn.eval_mode(model)`` every submodule reports training False and computes
    what the ``with_training(False)`` copy computes; outside, training is back on."""
    with lampy.Scope():
        m = entry.make(_rng(), np.float32)
        x = entry.inputs(_rng(), np.float32)  # type: ignore[misc]
        evaluation = m.with_training(False)
        with nn.eval_mode(m):
            assert not any(sub.training for sub in m.modules())
            got = _value(m(*x))
        assert all(sub.training for sub in m.modules())
        _assert_same(got, _value(evaluation(*x)))


def test_eval_mode_turns_dropout_and_batch_norm_off_only_in_the_block() -> None:
    """Dropout passes values through and batch norm uses (and keeps) its running
    statistics in the block; after it, both train again."""
    rng = _rng()
    x = rng.normal(2.0, 1.0, size=(16, 3)).astype(np.float32)
    with lampy.Scope():
        model = nn.Sequential.init(nn.BatchNorm1d.init(3), nn.Dropout.init(0.5, rng=rng))
        bn = model[0]
        with nn.eval_mode(model), lampy.no_grad():
            out = model(x).value
            assert int(bn.num_batches_tracked) == 0  # type: ignore[attr-defined, arg-type]
        np.testing.assert_allclose(out, x / np.sqrt(1 + 1e-5), rtol=1e-6)  # fresh statistics
        trained = model(x).value
        assert int(bn.num_batches_tracked) == 1  # type: ignore[attr-defined, arg-type]
        assert (trained == 0).any()  # dropout is back


def test_eval_mode_nests_and_restores_on_error() -> None:
    """Nested blocks cover the union of their modules; an exception restores the mode."""
    with lampy.Scope():
        a, b = nn.Dropout.init(0.5, rng=_rng()), nn.Dropout.init(0.5, rng=_rng())
        with nn.eval_mode(a):
            with nn.eval_mode(b):
                assert not a.training and not b.training
            assert not a.training and b.training
        with pytest.raises(KeyError), nn.eval_mode(a):
            raise KeyError("x")
        assert a.training
    with pytest.raises(LampyTypeError, match="pass the modules"), nn.eval_mode():
        pass
    with pytest.raises(LampyTypeError, match=r"expected lampy\.nn\.Module"), nn.eval_mode(3):  # type: ignore[arg-type]
        pass


# ----------------------------------------------------------------- model.x = ...
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_assigning_an_attribute_explains_immutability(entry: Entry) -> None:
    """Assigning or deleting a field raises ImmutableModuleError (still attrs'
    FrozenInstanceError) explaining why, with attrs.evolve in the message."""
    with lampy.Scope():
        m = entry.make(_rng(), np.float32)
        fields = [f.alias for f in attrs.fields(type(m)) if f.name != "_training"]
        name = fields[0] if fields else "anything"
        with pytest.raises(attrs.exceptions.FrozenInstanceError) as info:
            setattr(m, name, None)
        assert isinstance(info.value, ImmutableModuleError)
        assert "immutable" in str(info.value)
        if fields:
            assert f"attrs.evolve(model, {name}=new_value)" in str(info.value)
        with pytest.raises(ImmutableModuleError, match="eval_mode"):
            m.training = False  # type: ignore[misc]
        with pytest.raises(ImmutableModuleError, match=f"del {entry.name}"):
            delattr(m, name)


# ----------------------------------------------------------------- float64 into float32
@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.inputs is not None], ids=lambda e: e.name
)
def test_dtype_rule(entry: Entry) -> None:
    """A module with floating parameters (or statistics) takes inputs of their dtype only:
    a float64 input into a float32 module raises a DTypeError with the fix, and never
    promotes the pass; a module without them keeps its input's dtype."""
    with lampy.Scope():
        m = entry.make(_rng(), np.float32)
        assert entry.inputs is not None
        x64 = entry.inputs(_rng(), np.float64)
        x32 = entry.inputs(_rng(), np.float32)
        if _floating_state(m):
            assert set(_floating_state(m)) == {np.dtype(np.float32)}
            if any(np.asarray(a).dtype.kind == "f" for a in x64):
                with pytest.raises(DTypeError, match=r"x\.astype\(np\.float32\)"):
                    m(*x64)
            out = m(*x32)
            first = out[0] if isinstance(out, tuple) else out
            assert first.dtype == np.float32
            m64 = entry.make(_rng(), np.float64)
            out64 = m64(*x64)
            first64 = out64[0] if isinstance(out64, tuple) else out64
            assert first64.dtype == np.float64
        else:
            for x, want in ((x64, np.float64), (x32, np.float32)):
                out = m(*x)
                first = out[0] if isinstance(out, tuple) else out
                assert first.dtype == want


def test_dtype_error_names_the_layer() -> None:
    """The message names the module with its settings, both dtypes and both fixes."""
    with lampy.Scope():
        layer = nn.Linear.init(3, 2, rng=_rng())
        with pytest.raises(DTypeError) as info:
            layer(np.ones((4, 3)))
    text = str(info.value)
    assert text.startswith("Linear(in_features=3, out_features=2, bias=True): the input is float64")
    assert "x.astype(np.float32)" in text and "dtype=np.float64" in text


# ----------------------------------------------------------------- copies and pickles
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_deepcopy_makes_new_parameters_in_the_current_scope(entry: Entry) -> None:
    """copy.deepcopy gives new parameters and buffers with the same values, owned by the
    scope current at the copy, computing the same outputs; copy.copy shares them."""
    with lampy.Scope():
        m = entry.make(_rng(), np.float32)
        shallow = copy.copy(m)
        assert shallow is not m and all(
            p is q for p, q in zip(shallow.parameters(), m.parameters(), strict=True)
        )
        with lampy.Scope():
            twin = copy.deepcopy(m)
            assert type(twin) is type(m) and repr(twin) == repr(m)
            assert list(twin.state_dict()) == list(m.state_dict())
            for (k, a), b in zip(m.state_dict().items(), twin.state_dict().values(), strict=True):
                np.testing.assert_array_equal(a, b, err_msg=k)
                assert not np.shares_memory(a, b), k
            assert all(p.needs_grad for p in twin.parameters())
            if entry.inputs is not None and "Dropout" not in entry.name:
                x = entry.inputs(_rng(), np.float32)
                _assert_same(_value(twin(*x)), _value(m(*x)))
            inner = twin.parameters()
        # the copy's parameters belonged to the inner scope: released with it
        for p in inner:
            with pytest.raises(lampy.ReleasedError):
                p.value
        for p in m.parameters():
            assert p.value is not None


def test_deepcopy_keeps_tied_parameters_tied() -> None:
    """A parameter shared by two submodules is copied once and stays shared."""
    with lampy.Scope():
        lin = nn.Linear.init(4, 4, rng=_rng())
        model = nn.Sequential.init(lin, nn.ReLU.init(), lin)
        twin = copy.deepcopy(model)
        assert twin[0] is twin[2] and twin[0] is not lin
        assert len(twin.parameters()) == 2


def test_deepcopy_is_an_independent_snapshot() -> None:
    """Training the original (in-place updates) leaves a deep copy as it was: the
    best-model snapshot and EMA habits."""
    with lampy.Scope():
        model = nn.Linear.init(3, 2, rng=_rng())
        snapshot = copy.deepcopy(model)
        before = snapshot.weight.value.copy()
        model.load_state_dict({k: v + 1 for k, v in model.state_dict().items()})
        np.testing.assert_array_equal(snapshot.weight.value, before)


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.cls is not nn.Lambda], ids=lambda e: e.name
)
def test_pickle_round_trip_rebuilds_from_the_state(entry: Entry) -> None:
    """pickle saves the values and settings (no graph); loading inside a scope makes new
    parameters there, with the same values, mode and outputs."""
    with lampy.Scope():
        m = entry.make(_rng(), np.float32).with_training(False)
        data = pickle.dumps(m)
        back = pickle.loads(data)
        assert type(back) is type(m) and repr(back) == repr(m) and not back.training
        for (k, a), b in zip(m.state_dict().items(), back.state_dict().values(), strict=True):
            np.testing.assert_array_equal(a, b, err_msg=k)
        assert not set(map(id, back.parameters())) & set(map(id, m.parameters()))
        if entry.inputs is not None:
            x = entry.inputs(_rng(), np.float32)
            _assert_same(_value(back(*x)), _value(m(*x)))


def test_unpickling_outside_a_scope_says_where_parameters_go() -> None:
    """Without a scope, loading a pickled module says to open one; the pickle of a module
    whose scope has exited cannot be written (its values are gone)."""
    with lampy.Scope():
        m = nn.Linear.init(3, 2, rng=_rng())
        data = pickle.dumps(m)
    with pytest.raises(lampy.NoScopeError, match=r"Unpickling a Linear .*with lampy.Scope\(\)"):
        pickle.loads(data)
    with pytest.raises(lampy.ReleasedError):
        pickle.dumps(m)
