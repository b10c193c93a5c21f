"""Functional neural-network ops with PyTorch's names, arguments and defaults.

Import it as ``import lampy.nn.functional as F``. Each function is one op with an exact
(fused) gradient; layouts are PyTorch's (NCHW for images). ``lampy.Variable``'s methods
``sigmoid``, ``relu``, ``softmax`` and ``log_softmax`` are these functions, installed
from ``lampy._methods`` (the engine does not import this package).
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
from lampy.nn.functional._adaptive_pool import adaptive_avg_pool1d as adaptive_avg_pool1d
from lampy.nn.functional._adaptive_pool import adaptive_avg_pool2d as adaptive_avg_pool2d
from lampy.nn.functional._adaptive_pool import adaptive_max_pool1d as adaptive_max_pool1d
from lampy.nn.functional._adaptive_pool import adaptive_max_pool2d as adaptive_max_pool2d
from lampy.nn.functional._attention import (
    scaled_dot_product_attention as scaled_dot_product_attention,
)
from lampy.nn.functional._batch_norm import batch_norm as batch_norm
from lampy.nn.functional._conv import conv1d as conv1d
from lampy.nn.functional._conv import conv2d as conv2d
from lampy.nn.functional._conv import conv_transpose1d as conv_transpose1d
from lampy.nn.functional._conv import conv_transpose2d as conv_transpose2d
from lampy.nn.functional._distance_losses import cosine_embedding_loss as cosine_embedding_loss
from lampy.nn.functional._distance_losses import cosine_similarity as cosine_similarity
from lampy.nn.functional._distance_losses import hinge_embedding_loss as hinge_embedding_loss
from lampy.nn.functional._distance_losses import margin_ranking_loss as margin_ranking_loss
from lampy.nn.functional._distance_losses import pairwise_distance as pairwise_distance
from lampy.nn.functional._distance_losses import soft_margin_loss as soft_margin_loss
from lampy.nn.functional._distance_losses import triplet_margin_loss as triplet_margin_loss
from lampy.nn.functional._dropout import alpha_dropout as alpha_dropout
from lampy.nn.functional._dropout import dropout as dropout
from lampy.nn.functional._dropout import dropout1d as dropout1d
from lampy.nn.functional._dropout import dropout2d as dropout2d
from lampy.nn.functional._dropout import dropout3d as dropout3d
from lampy.nn.functional._embedding import embedding as embedding
from lampy.nn.functional._fold import fold as fold
from lampy.nn.functional._fold import unfold as unfold
from lampy.nn.functional._linear import bilinear as bilinear
from lampy.nn.functional._linear import linear as linear
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
from lampy.nn.functional._normalization import group_norm as group_norm
from lampy.nn.functional._normalization import layer_norm as layer_norm
from lampy.nn.functional._normalization import normalize as normalize
from lampy.nn.functional._normalization import rms_norm as rms_norm
from lampy.nn.functional._pool import avg_pool1d as avg_pool1d
from lampy.nn.functional._pool import avg_pool2d as avg_pool2d
from lampy.nn.functional._pool import max_pool1d as max_pool1d
from lampy.nn.functional._pool import max_pool2d as max_pool2d
from lampy.nn.functional._resize import interpolate as interpolate
from lampy.nn.functional._resize import pad as pad
