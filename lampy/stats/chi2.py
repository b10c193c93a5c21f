"""The chi2 distribution, as ``scipy.stats.chi2``'s functions of the same names,
differentiable in the point and the parameters (implemented in ``lampy.stats._continuous``)."""

from lampy.stats._continuous import chi2_cdf as cdf
from lampy.stats._continuous import chi2_logcdf as logcdf
from lampy.stats._continuous import chi2_logpdf as logpdf
from lampy.stats._continuous import chi2_pdf as pdf

__all__ = ["logpdf", "pdf", "cdf", "logcdf"]
