"""The norm distribution, as ``scipy.stats.norm``'s functions of the same names,
differentiable in the point and the parameters (implemented in ``lampy.stats._continuous``)."""

from lampy.stats._continuous import norm_cdf as cdf
from lampy.stats._continuous import norm_logcdf as logcdf
from lampy.stats._continuous import norm_logpdf as logpdf
from lampy.stats._continuous import norm_logsf as logsf
from lampy.stats._continuous import norm_pdf as pdf
from lampy.stats._continuous import norm_sf as sf

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
