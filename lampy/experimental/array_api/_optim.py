"""Stochastic gradient descent over params of any array namespace."""

from __future__ import annotations

import attrs

from lampy.autograd import zero_grads
from lampy.opkit import Variable, replace_values


@attrs.frozen(eq=False)
class SGD:
    """Plain stochastic gradient descent, ``p = p - lr * g`` (``lampy.optim.SGD`` without
    momentum, dampening or weight decay), over params of any namespace.

    A step computes each new value in the param's namespace and hands them all to
    ``lampy.opkit.replace_values``: a param of another namespace takes the new array (the
    standard makes in-place updates optional), a numpy param is written in place as
    ``lampy.optim.SGD`` writes it. Either way its version goes up by one.

    Attributes:
        params: The params, in order.
        lr: The learning rate.
    """

    params: tuple[Variable, ...] = attrs.field(converter=tuple)  # any iterable of params
    lr: float = 1e-3

    def step(self) -> None:
        """Update every param that has a gradient: ``p = p - lr * p.grad``."""
        ready, values = [], []
        for p in self.params:
            g = p.grad
            if g is not None:
                ready.append(p)
                values.append(p.value - self.lr * g)
        replace_values(ready, values)

    def zero_grad(self) -> None:
        """Drop every param's gradient (``.grad`` becomes None), as ``lampy.zero_grads``."""
        zero_grads(self.params)


__all__ = ["SGD"]
