"""``lampy.nn.utils``, PyTorch's ``torch.nn.utils``: gradient clipping
(``clip_grad_norm_``, ``clip_grad_value_``), also re-exported by ``lampy.optim``."""

from lampy.nn.utils._clip import NonFiniteNormError as NonFiniteNormError
from lampy.nn.utils._clip import clip_grad_norm_ as clip_grad_norm_
from lampy.nn.utils._clip import clip_grad_value_ as clip_grad_value_
