"""The multivariate normal distribution, as ``scipy.stats.multivariate_normal``'s functions
of the same names, differentiable in the point and the parameters."""

from lampy.stats._multivariate import multivariate_normal_logpdf as logpdf
from lampy.stats._multivariate import multivariate_normal_pdf as pdf

__all__ = ["logpdf", "pdf"]
