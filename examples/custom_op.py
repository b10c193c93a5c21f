"""Define your own op with ``lampy.op`` and check its gradient with ``lampy.testing``.

``softplus(x) = log(1 + exp(x))`` computed stably, with its gradient
``sigmoid(x)`` written as a zip-backward closure that adds into ``out``.

    python examples/custom_op.py
"""

from __future__ import annotations

import numpy as np

import lampy
from lampy.testing import check_grad


def softplus(x: lampy.Variable) -> lampy.Variable:
    """Elementwise ``log(1 + exp(x))``, stable for large ``|x|``.

    Gradient:
        ``dx = g * sigmoid(x)``.
    """
    a = x.value
    value = np.logaddexp(0.0, a).astype(a.dtype)

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        sigmoid = np.exp(a - value)  # exp(x - softplus(x)) = sigmoid(x), no overflow
        np.add(out, g * sigmoid, out=out)

    return lampy.op("softplus", value, x.zip_backward(d_x))


def main() -> None:
    rng = np.random.default_rng(0)
    x0 = rng.uniform(-30, 30, size=(4, 5))

    check_grad(softplus, x0)  # raises AssertionError with details if the gradient is wrong
    check_grad(softplus, x0.astype(np.float32))
    print("softplus gradient matches finite differences (float64 and float32)")

    with lampy.Scope():
        x = lampy.param([-1000.0, -1.0, 0.0, 1.0, 1000.0])
        y = softplus(x)
        y.sum().backward()
        print("softplus(x)  =", y.value)
        print("d/dx         =", x.grad)


if __name__ == "__main__":
    main()
