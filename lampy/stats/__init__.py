"""Probability distributions with gradients, mirroring ``scipy.stats`` (the
``lampy[scipy]`` extra).

Each distribution is a namespace of functions with scipy's names and signatures:
``lampy.stats.norm.logpdf(x, loc, scale)``, ``lampy.stats.poisson.logpmf(k, mu)``...
Every argument may be a Variable; the log-densities are written with lampy ops and
``lampy.special``, so they are differentiable in the point and in every parameter
(not in counts such as Poisson's ``k``). float32 inputs give float32 results.
"""

from lampy.stats import beta as beta
from lampy.stats import chi2 as chi2
from lampy.stats import dirichlet as dirichlet
from lampy.stats import gamma as gamma
from lampy.stats import multivariate_normal as multivariate_normal
from lampy.stats import norm as norm
from lampy.stats import poisson as poisson
from lampy.stats import t as t
