"""Optimizers (``torch.optim``'s names, arguments and update rules), gradient clipping,
and learning-rate schedules in ``lampy.optim.lr_scheduler``. Updates are in place."""

from lampy.nn.utils import NonFiniteNormError as NonFiniteNormError
from lampy.nn.utils import clip_grad_norm_ as clip_grad_norm_
from lampy.nn.utils import clip_grad_value_ as clip_grad_value_
from lampy.optim import lr_scheduler as lr_scheduler
from lampy.optim._adadelta import Adadelta as Adadelta
from lampy.optim._adagrad import Adagrad as Adagrad
from lampy.optim._adam import Adam as Adam
from lampy.optim._adam import AdamW as AdamW
from lampy.optim._lion import Lion as Lion
from lampy.optim._optimizer import Optimizer as Optimizer
from lampy.optim._rmsprop import RMSprop as RMSprop
from lampy.optim._sgd import SGD as SGD
