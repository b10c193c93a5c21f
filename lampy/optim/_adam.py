"""``Adam`` and ``AdamW``: adaptive moment estimation, with L2 or decoupled weight decay."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from lampy.opkit import Variable
from lampy.optim._optimizer import Optimizer, ParamsT, check_betas, check_nonnegative

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015), as PyTorch's ``torch.optim.Adam``.

    Per param at step ``t``, with ``g`` the gradient (negated if ``maximize``)::

        p = p * (1 - lr * weight_decay)       if decoupled_weight_decay (AdamW)
        g = g + weight_decay * p              otherwise (L2 penalty), if weight_decay != 0
        m = lerp(m, g, 1 - beta1)             # m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                 if amsgrad, and v_max is used below for v
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    State per param: ``"step"`` (an int), ``"exp_avg"``, ``"exp_avg_sq"`` and, with
    ``amsgrad``, ``"max_exp_avg_sq"``, all of the param's dtype.

    Args:
        params: Params or param groups (see ``lampy.optim.Optimizer``).
        lr: Learning rate.
        betas: Decay rates of the first and second moment averages.
        eps: Added to the denominator (after the bias-corrected square root).
        weight_decay: Weight decay coefficient.
        amsgrad: Use the running maximum of the second moment (AMSGrad, Reddi et al.).
        maximize: Maximize the objective instead of minimizing it.
        decoupled_weight_decay: Decay the weights directly (AdamW) instead of adding an
            L2 penalty to the gradient.

    Raises:
        LampyValueError: a negative ``lr``, ``eps`` or ``weight_decay``, or a beta outside
            ``[0, 1)``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": tuple(betas) if isinstance(betas, list) else betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        name = type(self).__name__
        check_nonnegative(name, lr=group["lr"], eps=group["eps"])
        check_betas(name, group["betas"])
        check_nonnegative(name, weight_decay=group["weight_decay"])

    def _prepare(self, group: dict[str, Any], p: Variable) -> None:
        if not self.state.get(p):
            exp_avg, exp_avg_sq = self._new_states(p, 2)
            self.state[p] = {"step": 0, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
        if group["amsgrad"] and "max_exp_avg_sq" not in self.state[p]:
            (self.state[p]["max_exp_avg_sq"],) = self._new_states(p, 1)
        if _compiled(group, p.value, p.grad, self.state[p]) is None:
            self._scratch(p, 3)  # numpy's code: three scratch arrays (the kernel needs none)

    def _update(self, group: dict[str, Any], p: Variable, value: np.ndarray, grad: Any) -> None:
        beta1, beta2 = group["betas"]
        lr, weight_decay, amsgrad = group["lr"], group["weight_decay"], group["amsgrad"]
        state = self.state[p]
        state["step"] += 1
        step = state["step"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        kernel = _compiled(group, value, grad, state)
        if kernel is not None:
            # the same update in one compiled pass, bit for bit (lampy.optim._adam_kernel)
            t = value.dtype.type
            decoupled = weight_decay != 0 and group["decoupled_weight_decay"]
            weight = 1 - beta1
            kernel(
                value.reshape(-1),
                grad.reshape(-1),
                exp_avg.reshape(-1),
                exp_avg_sq.reshape(-1),
                t(1 - lr * weight_decay) if decoupled else t(1),
                t(0) if decoupled else t(weight_decay),
                bool(group["maximize"]),
                weight < 0.5,
                t(weight) if weight < 0.5 else t(1 - weight),
                t(1 - beta2),
                t(beta2),
                t((1 - beta2**step) ** 0.5),
                t(group["eps"]),
                t(-(lr / (1 - beta1**step))),
            )
            return
        g_buf, tmp, denom = self._scratch(p, 3)
        if weight_decay != 0 and group["decoupled_weight_decay"]:
            np.multiply(value, 1 - lr * weight_decay, out=value)
            weight_decay = 0
        g = self._direction(grad, value, weight_decay, group["maximize"], g_buf)
        self._lerp(exp_avg, g, 1 - beta1, tmp)
        np.multiply(g, 1 - beta2, out=tmp)
        np.multiply(tmp, g, out=tmp)
        np.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
        np.add(exp_avg_sq, tmp, out=exp_avg_sq)

        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        second = exp_avg_sq
        if amsgrad:
            second = state["max_exp_avg_sq"]
            np.maximum(second, exp_avg_sq, out=second)
        np.sqrt(second, out=denom)
        np.divide(denom, bias_correction2_sqrt, out=denom)
        np.add(denom, group["eps"], out=denom)
        np.multiply(exp_avg, -step_size, out=tmp)
        np.divide(tmp, denom, out=tmp)
        np.add(value, tmp, out=value)


@functools.cache
def _kernel() -> Any:
    """The compiled update (``lampy.optim._adam_kernel.adam_update``) when Numba is
    installed, else None (imported on first use: Numba takes a while to import)."""
    try:
        from lampy.optim._adam_kernel import adam_update
    except ImportError:
        return None
    return adam_update


def _compiled(group: dict[str, Any], value: Any, grad: Any, state: dict[str, Any]) -> Any:
    """The compiled update if it takes this param's step (Numba installed, no AMSGrad,
    one contiguous layout: ``_one_layout``), else None: numpy's code runs."""
    if group["amsgrad"]:
        return None
    kernel = _kernel()
    if kernel is None or not _one_layout(value, grad, state["exp_avg"], state["exp_avg_sq"]):
        return None
    return kernel


_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _one_layout(value: np.ndarray, *arrays: Any) -> bool:
    """Whether the compiled update takes ``value`` and ``arrays``: C-contiguous ndarrays of
    one shape and of one float32 or float64 dtype (the layout it is compiled for)."""
    if value.dtype not in _KERNEL_DTYPES or not value.flags.c_contiguous:
        return False
    for a in arrays:
        if (
            type(a) is not np.ndarray
            or a.dtype != value.dtype
            or a.shape != value.shape
            or not a.flags.c_contiguous
        ):
            return False
    return True


class AdamW(Adam):
    """AdamW (Loshchilov and Hutter, 2019): Adam with decoupled weight decay.

    As PyTorch's ``torch.optim.AdamW``: the same update as ``lampy.optim.Adam`` with
    ``decoupled_weight_decay=True``: ``p = p * (1 - lr * weight_decay)`` before the Adam
    step, and the decay never enters the moment averages. The default weight decay is
    ``1e-2``.

    Args:
        params: Params or param groups (see ``lampy.optim.Optimizer``).
        lr: Learning rate.
        betas: Decay rates of the first and second moment averages.
        eps: Added to the denominator.
        weight_decay: Decoupled weight decay coefficient.
        amsgrad: Use the AMSGrad variant.
        maximize: Maximize the objective instead of minimizing it.

    Raises:
        LampyValueError: as ``lampy.optim.Adam``.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            decoupled_weight_decay=True,
        )
