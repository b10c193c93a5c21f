"""``Lion``: sign momentum (EvoLved Sign Momentum, Chen et al. 2023)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import Variable
from lampy.optim._optimizer import Optimizer, ParamsT, check_betas, check_nonnegative

__all__ = ["Lion"]


class Lion(Optimizer):
    """Lion, from Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms".

    PyTorch has no Lion; this follows the paper's Algorithm 2 with decoupled weight
    decay, in the order of lucidrains' ``lion-pytorch``. Per param, with ``g`` the
    gradient (negated if ``maximize``)::

        p = p * (1 - lr * weight_decay)
        c = beta1 * m + (1 - beta1) * g
        p = p - lr * sign(c)
        m = beta2 * m + (1 - beta2) * g

    Lion's updates have unit magnitude per coordinate, so it wants a learning rate 3-10x
    smaller than AdamW's and a weight decay 3-10x larger.

    State per param: ``"exp_avg"`` (``m``).

    Args:
        params: Params or param groups (see ``lampy.optim.Optimizer``).
        lr: Learning rate.
        betas: ``beta1`` interpolates the update direction, ``beta2`` the momentum.
        weight_decay: Decoupled weight decay coefficient.
        maximize: Maximize the objective instead of minimizing it.

    Raises:
        LampyValueError: a negative ``lr`` or ``weight_decay``, or a beta outside
            ``[0, 1)``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-4,
        betas: tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": tuple(betas) if isinstance(betas, list) else betas,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_nonnegative("Lion", lr=group["lr"])
        check_betas("Lion", group["betas"])
        check_nonnegative("Lion", weight_decay=group["weight_decay"])

    def _prepare(self, group: dict[str, Any], p: Variable) -> None:
        if not self.state.get(p):
            (exp_avg,) = self._new_states(p, 1)
            self.state[p] = {"exp_avg": exp_avg}
        self._scratch(p, 3)

    def _update(self, group: dict[str, Any], p: Variable, value: np.ndarray, grad: Any) -> None:
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        state = self.state[p]
        g_buf, tmp, update = self._scratch(p, 3)
        g = self._direction(grad, value, 0.0, group["maximize"], g_buf)
        exp_avg = state["exp_avg"]
        if weight_decay != 0:
            np.multiply(value, 1 - lr * weight_decay, out=value)
        np.multiply(exp_avg, beta1, out=update)
        np.multiply(g, 1 - beta1, out=tmp)
        np.add(update, tmp, out=update)
        np.sign(update, out=update)
        np.multiply(update, -lr, out=update)
        np.add(value, update, out=value)
        np.multiply(exp_avg, beta2, out=exp_avg)
        np.multiply(g, 1 - beta2, out=tmp)
        np.add(exp_avg, tmp, out=exp_avg)
