"""Learning-rate schedulers: lr sequences against closed forms and hand-computed values,
PyTorch's construction semantics (initial step, initial_lr), state dicts and errors."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError
from lampy.optim._adagrad import Adagrad
from lampy.optim._adam import Adam
from lampy.optim._optimizer import Optimizer
from lampy.optim._schedulers import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    LRScheduler,
    MultiStepLR,
    StepLR,
)
from lampy.optim._schedulers_special import OneCycleLR, ReduceLROnPlateau, SequentialLR
from lampy.optim._sgd import SGD

BASES = [0.1, 0.03]


@contextmanager
def _optimizer(cls: Any = SGD, **kw: Any) -> Iterator[Optimizer]:
    with lampy.Scope():
        a, b = lampy.param([1.0]), lampy.param([2.0])
        yield cls([{"params": [a]}, {"params": [b], "lr": BASES[1]}], lr=BASES[0], **kw)


def _sequence(make: Callable[[Optimizer], LRScheduler], steps: int, **kw: Any) -> np.ndarray:
    """The lrs of both groups after construction and after each of ``steps`` steps."""
    with _optimizer(**kw) as opt:
        sched = make(opt)
        out = [sched.get_last_lr()]
        for _ in range(steps):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
            assert out[-1] == [g["lr"] for g in opt.param_groups]
    return np.array(out)


def _closed(f: Callable[[float, int], float], steps: int) -> np.ndarray:
    return np.array([[f(base, e) for base in BASES] for e in range(steps + 1)])


@given(st.integers(1, 6), st.floats(0.1, 0.9), st.integers(0, 30))
def test_step_lr(step_size: int, gamma: float, steps: int) -> None:
    """StepLR gives initial_lr * gamma ** (epoch // step_size)."""
    got = _sequence(lambda o: StepLR(o, step_size, gamma), steps)
    want = _closed(lambda b, e: b * gamma ** (e // step_size), steps)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@given(st.lists(st.integers(1, 20), max_size=4), st.floats(0.1, 0.9))
def test_multistep_lr(milestones: list[int], gamma: float) -> None:
    """MultiStepLR multiplies by gamma at each milestone (twice for a repeated one)."""
    got = _sequence(lambda o: MultiStepLR(o, milestones, gamma), 25)
    ms = sorted(milestones)
    want = _closed(lambda b, e: b * gamma ** bisect_right(ms, e), 25)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_exponential_and_lambda_lr() -> None:
    """ExponentialLR is initial_lr * gamma**epoch; LambdaLR is initial_lr * lambda(epoch)."""
    got = _sequence(lambda o: ExponentialLR(o, 0.9), 50)
    np.testing.assert_allclose(got, _closed(lambda b, e: b * 0.9**e, 50), rtol=1e-12)
    lambdas = [lambda e: 1 / (1 + e), lambda e: 0.5 ** (e % 3)]
    got = _sequence(lambda o: LambdaLR(o, lambdas), 10)
    want = np.array([[BASES[0] / (1 + e), BASES[1] * 0.5 ** (e % 3)] for e in range(11)])
    np.testing.assert_allclose(got, want, rtol=1e-14)


@given(st.integers(1, 40), st.sampled_from([0.0, 1e-3]))
def test_cosine_annealing_matches_closed_form(t_max: int, eta_min: float) -> None:
    """The recursive form gives the closed form to 1e-12 over many periods."""
    got = _sequence(lambda o: CosineAnnealingLR(o, t_max, eta_min), 300)
    want = _closed(
        lambda b, e: eta_min + (b - eta_min) * (1 + math.cos(math.pi * e / t_max)) / 2, 300
    )
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@given(st.floats(0.05, 1.0), st.floats(0.0, 1.0), st.integers(1, 10))
def test_linear_lr(start: float, end: float, total: int) -> None:
    """LinearLR moves the factor linearly from start_factor to end_factor in total_iters."""
    got = _sequence(lambda o: LinearLR(o, start, end, total), 15)
    want = _closed(lambda b, e: b * (start + (end - start) * min(e, total) / total), 15)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_linear_lr_defaults() -> None:
    """The defaults are start_factor=1/3, end_factor=1, total_iters=5."""
    got = _sequence(LinearLR, 6)[:, 0]
    np.testing.assert_allclose(got, [0.1 * (1 / 3 + 2 / 3 * min(e, 5) / 5) for e in range(7)])


def test_one_cycle_two_phases_with_momentum() -> None:
    """1cycle: up to max_lr in pct_start, down to initial/final_div; momentum inversely."""
    with _optimizer(momentum=0.9) as opt:
        sched = OneCycleLR(opt, max_lr=1.0, total_steps=11, pct_start=0.2)
        lrs, moms = [sched.get_last_lr()[0]], [opt.param_groups[0]["momentum"]]
        for _ in range(10):
            sched.step()
            lrs.append(sched.get_last_lr()[0])
            moms.append(opt.param_groups[0]["momentum"])
        sched.step()  # step 11 of 11
        with pytest.raises(LampyValueError, match="total_steps is 11"):
            sched.step()
    initial, low = 1.0 / 25, 1.0 / 25 / 1e4
    up_end = 0.2 * 11 - 1  # 1.2 steps

    def cos(a: float, b: float, pct: float) -> float:
        return b + (a - b) / 2 * (math.cos(math.pi * pct) + 1)

    want_lr = [
        cos(initial, 1.0, e / up_end)
        if e <= up_end
        else cos(1.0, low, (e - up_end) / (10 - up_end))
        for e in range(11)
    ]
    want_m = [
        cos(0.95, 0.85, e / up_end)
        if e <= up_end
        else cos(0.85, 0.95, (e - up_end) / (10 - up_end))
        for e in range(11)
    ]
    np.testing.assert_allclose(lrs, want_lr, rtol=1e-12)
    np.testing.assert_allclose(moms, want_m, rtol=1e-12)
    assert lrs[0] == pytest.approx(initial) and lrs[-1] == pytest.approx(low)


def test_one_cycle_three_phase_linear_on_adam_betas() -> None:
    """three_phase goes up, back to initial_lr, then to min_lr; Adam's beta1 cycles."""
    with _optimizer(Adam) as opt:
        sched = OneCycleLR(
            opt, [1.0, 2.0], epochs=2, steps_per_epoch=5, anneal_strategy="linear", three_phase=True
        )
        lrs, beta1 = [sched.get_last_lr()], [opt.param_groups[1]["betas"][0]]
        for _ in range(9):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
            beta1.append(opt.param_groups[1]["betas"][0])
        assert opt.param_groups[1]["betas"][1] == 0.999
    # phases end at steps 2, 4 and 9
    want = [0.04, 0.52, 1.0, 0.52, 0.04, 0.04 - 0.04 * (1 - 1e-4) * 0.2 * np.arange(1, 6)]
    np.testing.assert_allclose([r[0] for r in lrs[:5]], want[:5], rtol=1e-12)
    np.testing.assert_allclose([r[0] for r in lrs[5:]], want[5], rtol=1e-12)
    np.testing.assert_allclose([r[1] for r in lrs], 2 * np.array([r[0] for r in lrs]), rtol=1e-12)
    np.testing.assert_allclose(beta1[:5], [0.95, 0.9, 0.85, 0.9, 0.95], rtol=1e-12)
    np.testing.assert_allclose(beta1[5:], 0.95)


def test_reduce_lr_on_plateau() -> None:
    """The lr is cut after more than `patience` bad epochs, then waits `cooldown` epochs."""
    with _optimizer() as opt:
        sched = ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1, min_lr=[0.02, 0.0])
        metrics = [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.4, 0.4, 0.4]
        lrs = []
        for m in metrics:
            sched.step(m)
            lrs.append(sched.get_last_lr())
    # bad epochs 3, 4: cut at 4, cooldown absorbs 5; bad 6, 7: cut; 8 improves; bad 9, 10: cut
    want0 = [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.02]
    np.testing.assert_allclose([r[0] for r in lrs], want0)
    np.testing.assert_allclose(
        [r[1] for r in lrs], [w / 0.1 * 0.03 if w > 0.02 else 0.03 / 8 for w in want0]
    )


def test_reduce_lr_on_plateau_max_abs_and_eps() -> None:
    """mode='max' with an absolute threshold; cuts smaller than eps are skipped."""
    with _optimizer() as opt:
        sched = ReduceLROnPlateau(
            opt, mode="max", threshold_mode="abs", threshold=0.1, patience=0, eps=0.04
        )
        for m in [1.0, 1.05, 1.2]:
            sched.step(m)
        # 1.05 is not better than 1.0 + 0.1: cut group 0 (0.1 -> 0.01); group 1's cut 0.027 < eps
        assert sched.get_last_lr() == [pytest.approx(0.01), 0.03]


def test_sequential_lr() -> None:
    """SequentialLR warms up linearly, then restarts the next schedule at the milestone."""
    got = _sequence(
        lambda o: SequentialLR(o, [LinearLR(o, 0.1, total_iters=4), ExponentialLR(o, 0.5)], [4]), 8
    )
    want = _closed(lambda b, e: b * (0.1 + 0.9 * e / 4) if e < 4 else b * 0.5 ** (e - 4), 8)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda o: CosineAnnealingLR(o, 7, 0.001),
        lambda o: OneCycleLR(o, 1.0, total_steps=20),
        lambda o: SequentialLR(o, [LinearLR(o), StepLR(o, 2)], [3]),
        lambda o: LambdaLR(o, lambda e: 0.9**e),
    ],
)
def test_scheduler_state_dict_round_trip(make: Any) -> None:
    """A scheduler loaded from a saved state continues with the same lrs."""
    with _optimizer(momentum=0.9) as opt:
        sched = make(opt)
        for _ in range(6):
            sched.step()
        saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
        rest = []
        for _ in range(6):
            sched.step()
            rest.append(sched.get_last_lr())
    with _optimizer(momentum=0.9) as opt:
        sched = make(opt)
        opt.load_state_dict(saved_opt)
        sched.load_state_dict(saved_sched)
        again = []
        for _ in range(6):
            sched.step()
            again.append(sched.get_last_lr())
    assert again == rest


def test_construction_sets_initial_lr_and_last_epoch() -> None:
    """Making a scheduler records initial_lr, sets last_epoch to 0; resuming needs initial_lr."""
    with _optimizer() as opt:
        sched = StepLR(opt, 2)
        assert sched.last_epoch == 0 and sched.base_lrs == BASES
        assert [g["initial_lr"] for g in opt.param_groups] == BASES
        resumed = StepLR(opt, 2, last_epoch=3)
        assert resumed.last_epoch == 4
    with _optimizer() as opt, pytest.raises(LampyValueError, match="initial_lr"):
        StepLR(opt, 2, last_epoch=3)


def test_scheduler_errors() -> None:
    """Bad arguments raise clear errors, as PyTorch's checks."""
    with pytest.raises(LampyTypeError, match="Optimizer"):
        StepLR(object(), 2)  # type: ignore[arg-type]
    with _optimizer() as opt:
        with pytest.raises(LampyValueError, match="start_factor"):
            LinearLR(opt, start_factor=0.0)
        with pytest.raises(LampyValueError, match="end_factor"):
            LinearLR(opt, end_factor=1.5)
        with pytest.raises(LampyValueError, match="step_size"):
            StepLR(opt, 0)
        lr = opt.param_groups[0]["lr"]
        cosine = CosineAnnealingLR(opt, 0)  # allowed, as in PyTorch (T_max=epochs, 0 epochs)
        with pytest.raises(LampyValueError, match=r"CosineAnnealingLR\.step: T_max is 0"):
            cosine.step()  # was a bare ZeroDivisionError
        assert opt.param_groups[0]["lr"] == lr
        assert (cosine.last_epoch, cosine._step_count) == (0, 1)  # the failed step undone
        with pytest.raises(LampyValueError, match="total_steps"):
            OneCycleLR(opt, 1.0)
        with pytest.raises(LampyValueError, match="pct_start"):
            OneCycleLR(opt, 1.0, total_steps=10, pct_start=1.5)
        with pytest.raises(LampyValueError, match="anneal_strategy"):
            OneCycleLR(opt, 1.0, total_steps=10, anneal_strategy="exp")
        with pytest.raises(LampyValueError, match="one value per param group"):
            OneCycleLR(opt, [1.0], total_steps=10)
        with pytest.raises(LampyValueError, match="milestone"):
            SequentialLR(opt, [StepLR(opt, 2), StepLR(opt, 3)], [])
        with pytest.raises(LampyValueError, match="ReduceLROnPlateau"):
            SequentialLR(opt, [ReduceLROnPlateau(opt)], [])
        with pytest.raises(LampyValueError, match="factor"):
            ReduceLROnPlateau(opt, factor=1.0)
        with pytest.raises(LampyValueError, match="mode"):
            ReduceLROnPlateau(opt, mode="up")
        with pytest.raises(LampyValueError, match="lr_lambda"):
            LambdaLR(opt, [lambda e: 1.0])
    with _optimizer(Adagrad) as opt, pytest.raises(LampyValueError, match="cycle_momentum"):
        OneCycleLR(opt, 1.0, total_steps=10)


def test_one_cycle_with_an_empty_phase_is_a_clear_error() -> None:
    """Where PyTorch divides by a zero-length phase, lampy names the phase and the fix."""
    with lampy.Scope():
        opt = SGD([lampy.param(np.zeros(1))], lr=0.1, momentum=0.9)
        with pytest.raises(LampyValueError, match=r"step 0 falls in phase 1 .* lasts 0 steps"):
            OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.1)
