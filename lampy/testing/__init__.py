"""Gradient testing tools, public so users test their own ops the way lampy does.

``lampy.testing.strategies`` (imported separately, it needs hypothesis) holds the
hypothesis strategies.
"""

from lampy.testing._check_grad import check_grad as check_grad
from lampy.testing._check_grad import numerical_grad as numerical_grad
