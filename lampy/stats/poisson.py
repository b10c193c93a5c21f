"""The poisson distribution, as ``scipy.stats.poisson``'s functions of the same names,
differentiable in the point and the parameters (implemented in ``lampy.stats._discrete``)."""

from lampy.stats._discrete import poisson_cdf as cdf
from lampy.stats._discrete import poisson_logcdf as logcdf
from lampy.stats._discrete import poisson_logpmf as logpmf
from lampy.stats._discrete import poisson_pmf as pmf

__all__ = ["logpmf", "pmf", "cdf", "logcdf"]
