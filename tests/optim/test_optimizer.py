"""The Optimizer base: param groups, skipped params, closures, zero_grad, state dicts
(round trips give identical trajectories; bad dicts change nothing) and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ReleasedError, ShapeError
from lampy.optim._adadelta import Adadelta
from lampy.optim._adagrad import Adagrad
from lampy.optim._adam import Adam, AdamW
from lampy.optim._lion import Lion
from lampy.optim._optimizer import Optimizer
from lampy.optim._rmsprop import RMSprop
from lampy.optim._sgd import SGD

MAKERS: dict[str, Callable[[Any], Optimizer]] = {
    "SGD": lambda ps: SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": lambda ps: Adam(ps, lr=0.05, amsgrad=True),
    "AdamW": lambda ps: AdamW(ps, lr=0.05),
    "RMSprop": lambda ps: RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    "Adagrad": lambda ps: Adagrad(ps, lr=0.1, lr_decay=0.01),
    "Adadelta": lambda ps: Adadelta(ps),
    "Lion": lambda ps: Lion(ps, lr=0.01, weight_decay=0.1),
}

TARGET = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])


def _loss_and_backward(w: lampy.Variable, v: lampy.Variable) -> float:
    with lampy.Scope():
        loss = ((w - TARGET) ** 2).sum() + (v * v * v * v).sum()
        loss.backward()
        return float(loss.item())


def _train(opt: Optimizer, w: lampy.Variable, v: lampy.Variable, steps: int) -> list[np.ndarray]:
    out = []
    for _ in range(steps):
        opt.zero_grad()
        _loss_and_backward(w, v)
        opt.step()
        out.append(np.concatenate([w.value.ravel(), v.value.ravel()]))
    return out


@pytest.mark.parametrize("name", list(MAKERS))
def test_state_dict_round_trip_continues_identically(name: str) -> None:
    """Saving after some steps, loading into a new optimizer and continuing matches not stopping."""
    rng = np.random.default_rng(0)
    w0, v0 = rng.standard_normal((2, 3)), rng.standard_normal(4)
    with lampy.Scope():
        w, v = lampy.param(w0), lampy.param(v0)
        opt = MAKERS[name]([{"params": [w]}, {"params": [v], "lr": 0.02}])
        _train(opt, w, v, 3)
        saved, w_mid, v_mid = opt.state_dict(), w.numpy(), v.numpy()
        straight = _train(opt, w, v, 4)
    with lampy.Scope():
        w, v = lampy.param(w_mid), lampy.param(v_mid)
        opt = MAKERS[name]([{"params": [w]}, {"params": [v], "lr": 0.3}])
        opt.load_state_dict(saved)
        assert opt.param_groups[1]["lr"] == 0.02
        resumed = _train(opt, w, v, 4)
    np.testing.assert_array_equal(np.array(resumed), np.array(straight))


def test_state_dict_layout_is_pytorchs() -> None:
    """state is keyed by param index; param_groups hold hyper-parameters and indices."""
    with lampy.Scope():
        a, b, c = lampy.param([1.0]), lampy.param([2.0, 3.0]), lampy.param([4.0])
        opt = Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}])
        ((a * b).sum() + c.sum()).backward()
        opt.step()
        sd = opt.state_dict()
        assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
        assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["lr"] == 1e-3
        assert sd["param_groups"][0]["betas"] == (0.9, 0.999)
        assert set(sd["state"]) == {0, 1, 2}
        assert set(sd["state"][1]) == {"step", "exp_avg", "exp_avg_sq"}
        assert sd["state"][1]["exp_avg"].shape == (2,)
        before = sd["state"][1]["exp_avg"].copy()
        opt.step()
        np.testing.assert_array_equal(sd["state"][1]["exp_avg"], before)  # a snapshot


def test_load_state_dict_errors_change_nothing() -> None:
    """Bad dicts raise clear errors and leave the state and groups as they were."""
    with lampy.Scope():
        a, b = lampy.param([1.0, 2.0]), lampy.param([3.0])
        opt = SGD([a, b], lr=0.1, momentum=0.9)
        (a.sum() + b.sum()).backward()
        opt.step()
        good = opt.state_dict()
        state_before, groups_before = opt.state, opt.param_groups
        bad_shape = opt.state_dict()
        bad_shape["param_groups"][0]["lr"] = 7.0
        bad_shape["state"][1]["momentum_buffer"] = np.zeros(3)
        with pytest.raises(ShapeError, match=r"momentum_buffer.*\(3,\).*\(1,\)"):
            opt.load_state_dict(bad_shape)
        with pytest.raises(LampyValueError, match="2 param groups"):
            opt.load_state_dict({"state": {}, "param_groups": good["param_groups"] * 2})
        short = {"state": {}, "param_groups": [dict(good["param_groups"][0], params=[0])]}
        with pytest.raises(LampyValueError, match="1 params"):
            opt.load_state_dict(short)
        unknown = {"state": {5: {}}, "param_groups": good["param_groups"]}
        with pytest.raises(LampyValueError, match="param 5"):
            opt.load_state_dict(unknown)
        with pytest.raises(LampyValueError, match="'state' and 'param_groups'"):
            opt.load_state_dict({"state": {}})
        assert opt.state is state_before and opt.param_groups is groups_before
        assert opt.param_groups[0]["lr"] == 0.1


def test_load_state_dict_validates_groups() -> None:
    """Loaded hyper-parameters are checked as by the constructor, a group without
    'params' is refused with a clear error, and nothing changes when either fails."""
    with lampy.Scope():
        a = lampy.param([1.0, 2.0])
        opt = SGD([a], lr=0.1, momentum=0.9)
        a.sum().backward()
        opt.step()
        good = opt.state_dict()
        state_before, groups_before = opt.state, opt.param_groups
        negative = {"state": good["state"], "param_groups": [dict(good["param_groups"][0])]}
        negative["param_groups"][0]["lr"] = -5.0
        with pytest.raises(LampyValueError, match="lr"):
            opt.load_state_dict(negative)
        bad_nesterov = {"state": {}, "param_groups": [dict(good["param_groups"][0])]}
        bad_nesterov["param_groups"][0].update(nesterov=True, momentum=0.0)
        with pytest.raises(LampyValueError, match="Nesterov"):
            opt.load_state_dict(bad_nesterov)
        no_params = {k: v for k, v in good["param_groups"][0].items() if k != "params"}
        with pytest.raises(LampyValueError, match=r"group 0.*'params'"):
            opt.load_state_dict({"state": {}, "param_groups": [no_params]})
        with pytest.raises(LampyValueError, match=r"group 0.*'params'"):
            opt.load_state_dict({"state": {}, "param_groups": [[0]]})
        assert opt.state is state_before and opt.param_groups is groups_before
        assert opt.param_groups[0]["lr"] == 0.1


def test_load_state_dict_keeps_missing_hyper_parameters() -> None:
    """A loaded group lacking a hyper-parameter keeps the current value, so the next
    step works (no KeyError)."""
    with lampy.Scope():
        a = lampy.param([1.0, 2.0])
        opt = SGD([a], lr=0.1, momentum=0.9, nesterov=True)
        saved = opt.state_dict()
        del saved["param_groups"][0]["nesterov"]
        saved["param_groups"][0]["lr"] = 0.5
        opt.load_state_dict(saved)
        assert opt.param_groups[0]["nesterov"] is True and opt.param_groups[0]["lr"] == 0.5
        a.sum().backward()
        opt.step()
        np.testing.assert_allclose(a.value, [1.0 - 0.5 * 1.9, 2.0 - 0.5 * 1.9])


def test_load_state_dict_casts_to_param_dtype() -> None:
    """Loaded arrays are copies in the param's dtype (float32 stays float32)."""
    with lampy.Scope():
        w = lampy.param(np.ones(3, np.float32))
        opt = Adam([w])
        state = {"step": 2, "exp_avg": np.arange(3.0), "exp_avg_sq": np.ones(3)}
        opt.load_state_dict(
            {"state": {0: state}, "param_groups": [dict(opt.state_dict()["param_groups"][0])]}
        )
        assert opt.state[w]["exp_avg"].dtype == np.float32
        assert opt.state[w]["exp_avg"] is not state["exp_avg"]


def test_param_groups_have_their_own_lr() -> None:
    """Each group steps with its own lr; other hyper-parameters come from the defaults."""
    with lampy.Scope():
        a, b = lampy.param([1.0]), lampy.param([1.0])
        opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.0)
        (a.sum() + b.sum()).backward()
        opt.step()
        np.testing.assert_allclose([a.item(), b.item()], [0.9, 0.5])
        assert opt.param_groups[1]["momentum"] == 0.0
        opt.param_groups[0]["lr"] = 0.2  # hyper-parameters are mutable between steps
        opt.step()
        np.testing.assert_allclose(a.item(), 0.7)


def test_params_without_grad_are_skipped_and_values_stay_read_only() -> None:
    """A param whose grad is None is not touched; values are read-only after a step."""
    with lampy.Scope():
        a, b = lampy.param([1.0]), lampy.param([2.0])
        opt = Adam([a, b], lr=0.1, weight_decay=0.5)
        (a * 3.0).sum().backward()
        opt.step()
        assert b.item() == 2.0 and b not in opt.state
        assert a.item() != 1.0
        assert not a.value.flags.writeable and not b.value.flags.writeable


def test_updates_are_in_place() -> None:
    """The param keeps its value array: optimizers update it in place, never replace it."""
    with lampy.Scope():
        w = lampy.param(np.ones((2, 2)))
        before = w.value
        opt = RMSprop([w])
        for _ in range(3):
            opt.zero_grad()
            with lampy.Scope():
                (w * w).sum().backward()
            opt.step()
        assert w.value is before and before[0, 0] != 1.0


def test_closure_and_zero_grad() -> None:
    """step(closure) returns the closure's loss; zero_grad sets grads to None (PyTorch's
    default), or with set_to_none=False zero-fills the kept buffers."""
    with lampy.Scope():
        w = lampy.param([3.0])
        opt = SGD([w], lr=0.25)

        def closure() -> float:
            with lampy.Scope():
                loss = (w * w).sum()
                loss.backward()
                return float(loss.item())

        assert opt.step(closure) == 9.0
        np.testing.assert_array_equal(w.value, [1.5])
        grad = w.grad
        opt.zero_grad(set_to_none=False)
        assert w.grad is grad
        np.testing.assert_array_equal(w.grad, [0.0])
        opt.zero_grad()
        assert w.grad is None
        before = w.value.copy()
        opt.step()  # no gradient: the param is skipped, as in PyTorch
        np.testing.assert_array_equal(w.value, before)


def test_add_param_group() -> None:
    """A group added later takes the defaults and its own settings, and trains."""
    with lampy.Scope():
        a, b = lampy.param([1.0]), lampy.param([1.0])
        opt = SGD([a], lr=0.1)
        opt.add_param_group({"params": b, "lr": 0.01})
        assert opt.param_groups[1]["params"] == [b] or opt.param_groups[1]["params"][0] is b
        (a.sum() + b.sum()).backward()
        opt.step()
        np.testing.assert_allclose([a.item(), b.item()], [0.9, 0.99])
        with pytest.raises(LampyValueError, match="more than one param group"):
            opt.add_param_group({"params": [a]})
        with pytest.raises(LampyValueError, match="lr"):
            opt.add_param_group({"params": [lampy.param([0.0])], "lr": -1.0})
        assert len(opt.param_groups) == 2


def test_construction_errors() -> None:
    """Non-params, duplicates, sets, a single Variable and empty lists are refused."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        c = lampy.const([1.0])
        with pytest.raises(LampyValueError, match="constant"):
            SGD([w, c])
        with pytest.raises(LampyValueError, match="op result"):
            SGD([w * 2.0])
        with pytest.raises(LampyValueError, match="more than once"):
            SGD([w, w])
        with pytest.raises(LampyValueError, match="more than one param group"):
            SGD([{"params": [w]}, {"params": [w]}])
        with pytest.raises(LampyTypeError, match="set"):
            SGD({w})
        with pytest.raises(LampyTypeError, match="single Variable"):
            SGD(w)  # type: ignore[arg-type]
        with pytest.raises(LampyTypeError, match="ndarray"):
            SGD([np.zeros(2)])  # type: ignore[list-item]
        with pytest.raises(LampyValueError, match="empty"):
            SGD([])
        with pytest.raises(LampyValueError, match="'params'"):
            SGD([{"lr": 0.1}])


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda ps: SGD(ps, lr="abc"), r"SGD: invalid lr value 'abc' \(str\): it must be a number"),
        (lambda ps: Adam(ps, eps=None), r"Adam: invalid eps value None"),
        (lambda ps: Adam(ps, betas=(0.9, "x")), r"beta parameter at index 1: 'x'"),
        (lambda ps: RMSprop(ps, alpha=True), r"invalid alpha value True \(bool\)"),
    ],
)
def test_hyper_parameters_of_the_wrong_type_are_lampy_errors(make: Any, match: str) -> None:
    """A hyper-parameter that is not a number is a LampyTypeError naming it (it was a raw
    TypeError from comparing it with 0)."""
    with lampy.Scope(), pytest.raises(LampyTypeError, match=match):
        make([lampy.param([1.0])])


@pytest.mark.parametrize(
    ("step", "error", "match"),
    [
        (-5, LampyValueError, r"'step' of param 0 is -5; a count of steps must be >= 0"),
        ("3", LampyTypeError, r"'step' of param 0 is '3' \(str\); it must be a whole number"),
        (1.5, LampyTypeError, r"'step' of param 0 is 1\.5"),
        (np.array([1.0, 2.0]), LampyTypeError, r"'step' of param 0 is array"),
    ],
)
def test_load_state_dict_refuses_bad_step_counts(step: Any, error: type, match: str) -> None:
    """A step count that is not a whole number >= 0 is refused before anything changes
    (-5 used to load, then fail at the next step with a complex-dtype error)."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        opt = Adam([w])
        sd = opt.state_dict()
        sd["state"] = {0: {"step": step, "exp_avg": np.zeros(2), "exp_avg_sq": np.zeros(2)}}
        with pytest.raises(error, match=match):
            opt.load_state_dict(sd)
        assert opt.state == {}


def test_load_state_dict_takes_pytorch_style_step_counts() -> None:
    """A step stored as a float or a one-element array (as PyTorch's tensors) loads as an int."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        opt = Adam([w])
        for step in (3.0, np.array(3.0), np.array([3], np.int64), np.int32(3)):
            sd = opt.state_dict()
            sd["state"] = {0: {"step": step, "exp_avg": np.zeros(2), "exp_avg_sq": np.zeros(2)}}
            opt.load_state_dict(sd)
            assert type(opt.state[w]["step"]) is int and opt.state[w]["step"] == 3


def test_load_state_dict_refuses_hyper_parameters_of_another_kind() -> None:
    """A loaded flag that is not a bool, or a number that is not a number, is refused."""
    with lampy.Scope():
        w = lampy.param([1.0, 2.0])
        opt = Adam([w], amsgrad=True)
        for key, bad in (("amsgrad", "yes"), ("maximize", None), ("weight_decay", "0")):
            sd = opt.state_dict()
            sd["param_groups"][0][key] = bad
            with pytest.raises(LampyTypeError, match=rf"'{key}' of param group 0 is {bad!r}"):
                opt.load_state_dict(sd)
        assert opt.param_groups[0]["amsgrad"] is True


def test_released_param_is_reported() -> None:
    """Stepping params whose scope has exited raises ReleasedError."""
    with lampy.Scope():
        with lampy.Scope():
            w = lampy.param([1.0])
            opt = SGD([w])
        with pytest.raises(ReleasedError):
            opt.step()


def test_repr_lists_groups() -> None:
    """repr shows each group's hyper-parameters, as PyTorch's."""
    with lampy.Scope():
        text = repr(AdamW([lampy.param([1.0])], lr=0.5))
    assert "AdamW (" in text and "Parameter Group 0" in text and "lr: 0.5" in text
