"""Functional neural-network ops with PyTorch's names and defaults.

Import it as ``import lampy.nn.functional as F``. Activations and losses so far; layers
come with the modules.
"""

from lampy.nn.functional._activations import celu as celu
from lampy.nn.functional._activations import elu as elu
from lampy.nn.functional._activations import gelu as gelu
from lampy.nn.functional._activations import glu as glu
from lampy.nn.functional._activations import hardsigmoid as hardsigmoid
from lampy.nn.functional._activations import hardswish as hardswish
from lampy.nn.functional._activations import hardtanh as hardtanh
from lampy.nn.functional._activations import leaky_relu as leaky_relu
from lampy.nn.functional._activations import log_sigmoid as log_sigmoid
from lampy.nn.functional._activations import log_softmax as log_softmax
from lampy.nn.functional._activations import mish as mish
from lampy.nn.functional._activations import relu as relu
from lampy.nn.functional._activations import relu6 as relu6
from lampy.nn.functional._activations import selu as selu
from lampy.nn.functional._activations import sigmoid as sigmoid
from lampy.nn.functional._activations import silu as silu
from lampy.nn.functional._activations import softmax as softmax
from lampy.nn.functional._activations import softplus as softplus
from lampy.nn.functional._activations import softsign as softsign
from lampy.nn.functional._losses import binary_cross_entropy as binary_cross_entropy
from lampy.nn.functional._losses import (
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from lampy.nn.functional._losses import cross_entropy as cross_entropy
from lampy.nn.functional._losses import huber_loss as huber_loss
from lampy.nn.functional._losses import kl_div as kl_div
from lampy.nn.functional._losses import l1_loss as l1_loss
from lampy.nn.functional._losses import mse_loss as mse_loss
from lampy.nn.functional._losses import nll_loss as nll_loss
from lampy.nn.functional._losses import smooth_l1_loss as smooth_l1_loss
