"""The beta distribution, as ``scipy.stats.beta``'s functions of the same names,
differentiable in the point and the parameters (implemented in ``lampy.stats._continuous``)."""

from lampy.stats._continuous import beta_cdf as cdf
from lampy.stats._continuous import beta_logcdf as logcdf
from lampy.stats._continuous import beta_logpdf as logpdf
from lampy.stats._continuous import beta_pdf as pdf

__all__ = ["logpdf", "pdf", "cdf", "logcdf"]
