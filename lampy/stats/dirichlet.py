"""The dirichlet distribution, as ``scipy.stats.dirichlet``'s functions of the same names,
differentiable in the point and the parameters (implemented in ``lampy.stats._multivariate``)."""

from lampy.stats._multivariate import dirichlet_logpdf as logpdf
from lampy.stats._multivariate import dirichlet_pdf as pdf

__all__ = ["logpdf", "pdf"]
