"""The autograd engine: Variable, Op, Scope, backprop, and the functional API."""

from lampy.autograd._backprop import backward as backward
from lampy.autograd._backprop import backward_iter as backward_iter
from lampy.autograd._functional import grad as grad
from lampy.autograd._functional import value_and_grad as value_and_grad
from lampy.autograd._grad_mode import is_grad_enabled as is_grad_enabled
from lampy.autograd._grad_mode import no_grad as no_grad
from lampy.autograd._inplace import in_place as in_place
from lampy.autograd._node import Node as Node
from lampy.autograd._scope import Scope as Scope
from lampy.autograd._scope import current_or_none as current_or_none
from lampy.autograd._shared import Lazy as Lazy
from lampy.autograd._shared import SharedInBackward as SharedInBackward
from lampy.autograd._unbroadcast import Contribution as Contribution
from lampy.autograd._unbroadcast import accumulate as accumulate
from lampy.autograd._unbroadcast import contribution as contribution
from lampy.autograd._unbroadcast import unbroadcast as unbroadcast
from lampy.autograd._variable import Backward as Backward
from lampy.autograd._variable import Op as Op
from lampy.autograd._variable import Param as Param
from lampy.autograd._variable import Variable as Variable
from lampy.autograd._variable import const as const
from lampy.autograd._variable import op as op
from lampy.autograd._variable import param as param
from lampy.autograd._workers import get_num_workers as get_num_workers
from lampy.autograd._workers import parallel_map as parallel_map
from lampy.autograd._workers import set_num_workers as set_num_workers
