"""The t distribution, as ``scipy.stats.t``'s functions of the same names,
differentiable in the point and the parameters (implemented in ``lampy.stats._continuous``)."""

from lampy.stats._continuous import t_cdf as cdf
from lampy.stats._continuous import t_logcdf as logcdf
from lampy.stats._continuous import t_logpdf as logpdf
from lampy.stats._continuous import t_pdf as pdf

__all__ = ["logpdf", "pdf", "cdf", "logcdf"]
