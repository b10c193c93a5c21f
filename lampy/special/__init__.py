"""Special functions with gradients, mirroring ``scipy.special`` (the ``lampy[scipy]``
extra: scipy computes the values, lampy adds the gradients).

Every function takes Variables, arrays or numbers, broadcasts as scipy's ufuncs do and
keeps float32 as float32. Gradients are in the arguments whose derivative has a closed
form; asking for one in an integer or Bessel order, or in ``a`` of ``gammainc``, raises
``LampyValueError``. Without scipy installed, calling any of them raises
``lampy.MissingExtraError`` naming ``pip install "lampy[scipy]"``.
"""

from lampy.special._bessel import i0 as i0
from lampy.special._bessel import i1 as i1
from lampy.special._bessel import iv as iv
from lampy.special._bessel import ive as ive
from lampy.special._bessel import j0 as j0
from lampy.special._bessel import j1 as j1
from lampy.special._bessel import jn as jn
from lampy.special._bessel import y0 as y0
from lampy.special._bessel import y1 as y1
from lampy.special._bessel import yn as yn
from lampy.special._error_functions import erf as erf
from lampy.special._error_functions import erfc as erfc
from lampy.special._error_functions import erfcinv as erfcinv
from lampy.special._error_functions import erfinv as erfinv
from lampy.special._error_functions import log_ndtr as log_ndtr
from lampy.special._error_functions import ndtr as ndtr
from lampy.special._gamma_functions import beta as beta
from lampy.special._gamma_functions import betainc as betainc
from lampy.special._gamma_functions import betaln as betaln
from lampy.special._gamma_functions import digamma as digamma
from lampy.special._gamma_functions import gamma as gamma
from lampy.special._gamma_functions import gammainc as gammainc
from lampy.special._gamma_functions import gammaincc as gammaincc
from lampy.special._gamma_functions import gammaln as gammaln
from lampy.special._gamma_functions import multigammaln as multigammaln
from lampy.special._gamma_functions import polygamma as polygamma
from lampy.special._gamma_functions import psi as psi
from lampy.special._gamma_functions import rgamma as rgamma
from lampy.special._gamma_functions import stdtr as stdtr
from lampy.special._logistic import expit as expit
from lampy.special._logistic import logit as logit
from lampy.special._logistic import logsumexp as logsumexp
from lampy.special._logistic import xlog1py as xlog1py
from lampy.special._logistic import xlogy as xlogy
