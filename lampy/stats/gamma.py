"""The gamma distribution, as ``scipy.stats.gamma``'s functions of the same names,
differentiable in the point and the parameters (implemented in ``lampy.stats._continuous``)."""

from lampy.stats._continuous import gamma_cdf as cdf
from lampy.stats._continuous import gamma_logcdf as logcdf
from lampy.stats._continuous import gamma_logpdf as logpdf
from lampy.stats._continuous import gamma_pdf as pdf

__all__ = ["logpdf", "pdf", "cdf", "logcdf"]
