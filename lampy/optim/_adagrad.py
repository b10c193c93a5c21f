"""``Adagrad``: per-coordinate learning rates from the sum of squared gradients."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import Variable
from lampy.optim._optimizer import Optimizer, ParamsT, check_nonnegative

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi, Hazan and Singer, 2011), as PyTorch's ``torch.optim.Adagrad``.

    Per param at step ``t``, with ``g`` the gradient (negated if ``maximize``)::

        g = g + weight_decay * p                     (if weight_decay != 0)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                                # s starts at initial_accumulator_value
        p = p - clr * g / (sqrt(s) + eps)

    State per param, made when the optimizer is (as PyTorch): ``"step"`` and ``"sum"``.
    As in PyTorch, the sums of the params given to the constructor start at its
    ``initial_accumulator_value`` even where a param group sets another; params added
    later with ``add_param_group`` start at their group's value.

    Args:
        params: Params or param groups (see ``lampy.optim.Optimizer``).
        lr: Learning rate.
        lr_decay: Learning rate decay.
        weight_decay: L2 penalty added to the gradient.
        initial_accumulator_value: Initial value of the sums of squares.
        eps: Added to the denominator (after the square root).
        maximize: Maximize the objective instead of minimizing it.

    Raises:
        LampyValueError: a negative ``lr``, ``lr_decay``, ``weight_decay``,
            ``initial_accumulator_value`` or ``eps``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "maximize": maximize,
        }
        super().__init__(params, defaults)
        # As PyTorch: the sums of the params given here start at the constructor's
        # initial_accumulator_value, even where a param group sets its own.
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p, initial_accumulator_value)

    def _init_state(
        self, group: dict[str, Any], p: Variable, initial: float | None = None
    ) -> dict[str, Any]:
        value = group["initial_accumulator_value"] if initial is None else initial
        (total,) = self._new_states(p, 1, fill=value)
        state = self.state[p] = {"step": 0, "sum": total}
        return state

    def _check_group(self, group: dict[str, Any]) -> None:
        check_nonnegative(
            "Adagrad",
            lr=group["lr"],
            lr_decay=group["lr_decay"],
            weight_decay=group["weight_decay"],
            initial_accumulator_value=group["initial_accumulator_value"],
            eps=group["eps"],
        )

    def _prepare(self, group: dict[str, Any], p: Variable) -> None:
        if not self.state.get(p):
            self._init_state(group, p)
        self._scratch(p, 3)

    def _update(self, group: dict[str, Any], p: Variable, value: np.ndarray, grad: Any) -> None:
        state = self.state[p]
        g_buf, tmp, std = self._scratch(p, 3)
        state["step"] += 1
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        g = self._direction(grad, value, group["weight_decay"], group["maximize"], g_buf)
        total = state["sum"]
        np.multiply(g, g, out=tmp)
        np.add(total, tmp, out=total)
        np.sqrt(total, out=std)
        np.add(std, group["eps"], out=std)
        np.multiply(g, -clr, out=tmp)
        np.divide(tmp, std, out=tmp)
        np.add(value, tmp, out=value)
