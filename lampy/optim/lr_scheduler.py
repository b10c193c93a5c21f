"""Learning-rate schedulers with PyTorch's names and semantics (``torch.optim.lr_scheduler``)."""

from lampy.optim._schedulers import CosineAnnealingLR as CosineAnnealingLR
from lampy.optim._schedulers import ExponentialLR as ExponentialLR
from lampy.optim._schedulers import LambdaLR as LambdaLR
from lampy.optim._schedulers import LinearLR as LinearLR
from lampy.optim._schedulers import LRScheduler as LRScheduler
from lampy.optim._schedulers import MultiStepLR as MultiStepLR
from lampy.optim._schedulers import StepLR as StepLR
from lampy.optim._schedulers_special import OneCycleLR as OneCycleLR
from lampy.optim._schedulers_special import ReduceLROnPlateau as ReduceLROnPlateau
from lampy.optim._schedulers_special import SequentialLR as SequentialLR
