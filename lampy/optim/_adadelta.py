"""``Adadelta``: step sizes from running averages of squared gradients and updates."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError
from lampy.opkit import Variable
from lampy.optim._optimizer import Optimizer, ParamsT, check_nonnegative

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), as PyTorch's ``torch.optim.Adadelta``.

    Per param, with ``g`` the gradient (negated if ``maximize``)::

        g = g + weight_decay * p                     (if weight_decay != 0)
        v = rho * v + (1 - rho) * g * g
        d = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * d * d
        p = p - lr * d

    State per param: ``"step"``, ``"square_avg"`` (``v``) and ``"acc_delta"`` (``u``).

    Args:
        params: Params or param groups (see ``lampy.optim.Optimizer``).
        lr: Coefficient that scales the update.
        rho: Decay rate of the running averages.
        eps: Added inside both square roots.
        weight_decay: L2 penalty added to the gradient.
        maximize: Maximize the objective instead of minimizing it.

    Raises:
        LampyValueError: a negative ``lr``, ``eps`` or ``weight_decay``, or ``rho``
            outside ``[0, 1]``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_nonnegative("Adadelta", lr=group["lr"])
        if not 0.0 <= group["rho"] <= 1.0:
            raise LampyValueError(
                f"Adadelta: invalid rho value {group['rho']}: it must be in [0, 1]."
            )
        check_nonnegative("Adadelta", eps=group["eps"], weight_decay=group["weight_decay"])

    def _prepare(self, group: dict[str, Any], p: Variable) -> None:
        if not self.state.get(p):
            square_avg, acc_delta = self._new_states(p, 2)
            self.state[p] = {"step": 0, "square_avg": square_avg, "acc_delta": acc_delta}
        self._scratch(p, 3)

    def _update(self, group: dict[str, Any], p: Variable, value: np.ndarray, grad: Any) -> None:
        rho, eps = group["rho"], group["eps"]
        state = self.state[p]
        g_buf, tmp, delta = self._scratch(p, 3)
        state["step"] += 1
        g = self._direction(grad, value, group["weight_decay"], group["maximize"], g_buf)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        np.multiply(g, 1 - rho, out=tmp)
        np.multiply(tmp, g, out=tmp)
        np.multiply(square_avg, rho, out=square_avg)
        np.add(square_avg, tmp, out=square_avg)
        np.add(square_avg, eps, out=tmp)
        np.sqrt(tmp, out=tmp)  # std
        np.add(acc_delta, eps, out=delta)
        np.sqrt(delta, out=delta)
        np.divide(delta, tmp, out=delta)
        np.multiply(delta, g, out=delta)
        np.multiply(delta, 1 - rho, out=tmp)
        np.multiply(tmp, delta, out=tmp)
        np.multiply(acc_delta, rho, out=acc_delta)
        np.add(acc_delta, tmp, out=acc_delta)
        np.multiply(delta, -group["lr"], out=tmp)
        np.add(value, tmp, out=value)
