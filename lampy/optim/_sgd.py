"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError
from lampy.opkit import Variable
from lampy.optim._optimizer import Optimizer, ParamsT, check_nonnegative
from lampy.optim._real_pairs import real_pairs

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (PyTorch's ``torch.optim.SGD``).

    Per param, with ``g`` the gradient (negated if ``maximize``)::

        g = g + weight_decay * p                          (if weight_decay != 0)
        b = g  at the first step, else  b = momentum * b + (1 - dampening) * g
        g = g + momentum * b  if nesterov  else  g = b    (if momentum != 0)
        p = p - lr * g

    State per param (with momentum only): ``"momentum_buffer"``.

    Args:
        params: Params or param groups (see ``lampy.optim.Optimizer``).
        lr: Learning rate.
        momentum: Momentum factor.
        dampening: Dampening of the momentum.
        weight_decay: L2 penalty added to the gradient.
        nesterov: Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
        maximize: Maximize the objective instead of minimizing it.

    Raises:
        LampyValueError: a negative ``lr``, ``momentum`` or ``weight_decay``, or
            ``nesterov`` without momentum or with dampening.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
        }
        super().__init__(params, defaults)
        self._fresh: dict[Variable, np.ndarray] = {}  # momentum buffers before their first use

    def _check_group(self, group: dict[str, Any]) -> None:
        check_nonnegative(
            "SGD", lr=group["lr"], momentum=group["momentum"], weight_decay=group["weight_decay"]
        )
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise LampyValueError(
                "SGD: Nesterov momentum requires a momentum > 0 and zero dampening, got "
                f"momentum={group['momentum']}, dampening={group['dampening']}."
            )

    def _prepare(self, group: dict[str, Any], p: Variable) -> None:
        if group["momentum"] != 0:
            state = self.state.setdefault(p, {})
            if state.get("momentum_buffer") is not None:
                if p in self._fresh:  # a buffer was loaded since: the spare one goes
                    self._charges.refund(self._fresh.pop(p))
            elif p not in self._fresh:
                # filled with the first direction at the first update, as PyTorch's clone
                (self._fresh[p],) = self._new_states(p, 1)
        self._scratch(p, 2)

    def close(self) -> None:
        """Free and refund the state, as ``lampy.optim.Optimizer.close``."""
        self._fresh = {}
        super().close()

    def __copy__(self) -> SGD:
        new = super().__copy__()
        assert isinstance(new, SGD)
        new._fresh = {}  # the original's spare buffers stay the original's
        return new

    def _update(self, group: dict[str, Any], p: Variable, value: np.ndarray, grad: Any) -> None:
        momentum = group["momentum"]
        g_buf, tmp = self._scratch(p, 2)
        d = self._direction(grad, value, group["weight_decay"], group["maximize"], g_buf)
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                fresh = self._fresh.pop(p)  # a complex param's: seen as real pairs here
                buf = fresh if fresh.shape == value.shape else real_pairs(fresh)
                state["momentum_buffer"] = buf
                np.copyto(buf, d)
            else:
                np.multiply(buf, momentum, out=buf)
                dampening = group["dampening"]
                if dampening == 0:
                    np.add(buf, d, out=buf)
                else:
                    np.multiply(d, 1 - dampening, out=tmp)
                    np.add(buf, tmp, out=buf)
            if group["nesterov"]:
                np.multiply(buf, momentum, out=tmp)
                d = np.add(d, tmp, out=tmp)
            else:
                d = buf
        np.multiply(d, -group["lr"], out=tmp)
        np.add(value, tmp, out=value)
