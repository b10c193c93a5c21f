"""``RMSprop``: gradient scaled by a running root mean square, optionally centered."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import Variable
from lampy.optim._optimizer import Optimizer, ParamsT, check_nonnegative

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture 6e; centered form from Graves, 2013), as PyTorch's.

    Per param, with ``g`` the gradient (negated if ``maximize``)::

        g = g + weight_decay * p                     (if weight_decay != 0)
        v = alpha * v + (1 - alpha) * g * g
        a = lerp(a, g, 1 - alpha); s = sqrt(v - a * a) + eps     if centered
        s = sqrt(v) + eps                                        otherwise
        b = momentum * b + g / s; p = p - lr * b                 if momentum > 0
        p = p - lr * g / s                                       otherwise

    State per param: ``"step"``, ``"square_avg"``, and ``"momentum_buffer"`` (with
    momentum) and ``"grad_avg"`` (centered).

    Args:
        params: Params or param groups (see ``lampy.optim.Optimizer``).
        lr: Learning rate.
        alpha: Smoothing constant of the squared-gradient average.
        eps: Added to the denominator (after the square root).
        weight_decay: L2 penalty added to the gradient.
        momentum: Momentum factor.
        centered: Normalize by an estimate of the gradient's variance.
        maximize: Maximize the objective instead of minimizing it.

    Raises:
        LampyValueError: a negative ``lr``, ``eps``, ``momentum``, ``weight_decay`` or
            ``alpha``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "alpha": alpha,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "centered": centered,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_nonnegative(
            "RMSprop",
            lr=group["lr"],
            eps=group["eps"],
            momentum=group["momentum"],
            weight_decay=group["weight_decay"],
            alpha=group["alpha"],
        )

    def _prepare(self, group: dict[str, Any], p: Variable) -> None:
        if not self.state.get(p):
            (square_avg,) = self._new_states(p, 1)
            self.state[p] = {"step": 0, "square_avg": square_avg}
        state = self.state[p]
        if group["momentum"] > 0 and "momentum_buffer" not in state:
            (state["momentum_buffer"],) = self._new_states(p, 1)
        if group["centered"] and "grad_avg" not in state:
            (state["grad_avg"],) = self._new_states(p, 1)
        self._scratch(p, 3)

    def _update(self, group: dict[str, Any], p: Variable, value: np.ndarray, grad: Any) -> None:
        alpha, momentum = group["alpha"], group["momentum"]
        state = self.state[p]
        g_buf, tmp, avg = self._scratch(p, 3)
        state["step"] += 1
        g = self._direction(grad, value, group["weight_decay"], group["maximize"], g_buf)
        square_avg = state["square_avg"]
        np.multiply(g, 1 - alpha, out=tmp)
        np.multiply(tmp, g, out=tmp)
        np.multiply(square_avg, alpha, out=square_avg)
        np.add(square_avg, tmp, out=square_avg)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            self._lerp(grad_avg, g, 1 - alpha, tmp)
            np.multiply(grad_avg, grad_avg, out=avg)
            np.subtract(square_avg, avg, out=avg)
            np.sqrt(avg, out=avg)
        else:
            np.sqrt(square_avg, out=avg)
        np.add(avg, group["eps"], out=avg)
        if momentum > 0:
            buf = state["momentum_buffer"]
            np.multiply(buf, momentum, out=buf)
            np.divide(g, avg, out=tmp)
            np.add(buf, tmp, out=buf)
            np.multiply(buf, -group["lr"], out=tmp)
        else:
            np.multiply(g, -group["lr"], out=tmp)
            np.divide(tmp, avg, out=tmp)
        np.add(value, tmp, out=value)
