"""Linear algebra with gradients, mirroring ``numpy.linalg``.

Every function takes Variables, arrays or nested lists, is batched over leading axes
where numpy's is, keeps float32 as float32, and returns Variables (constant numpy
values where numpy's result has no gradient: ``slogdet``'s sign, ``lstsq``'s residuals,
rank and singular values, ``matrix_rank``).

Three functions of ``scipy.linalg`` (the ``lampy[scipy]`` extra), with scipy's names and
signatures: ``solve_triangular``, ``sqrtm``, ``solve_sylvester``.
"""

from numpy.linalg import LinAlgError as LinAlgError

from lampy.linalg._common import EighResult as EighResult
from lampy.linalg._common import EigResult as EigResult
from lampy.linalg._common import QRResult as QRResult
from lampy.linalg._common import SlogdetResult as SlogdetResult
from lampy.linalg._common import SVDResult as SVDResult
from lampy.linalg._decompositions import cholesky as cholesky
from lampy.linalg._decompositions import qr as qr
from lampy.linalg._determinant import det as det
from lampy.linalg._determinant import slogdet as slogdet
from lampy.linalg._eigen import eig as eig
from lampy.linalg._eigen import eigh as eigh
from lampy.linalg._eigen import eigvals as eigvals
from lampy.linalg._eigen import eigvalsh as eigvalsh
from lampy.linalg._inverse import inv as inv
from lampy.linalg._inverse import lstsq as lstsq
from lampy.linalg._inverse import matrix_power as matrix_power
from lampy.linalg._inverse import multi_dot as multi_dot
from lampy.linalg._inverse import pinv as pinv
from lampy.linalg._inverse import solve as solve
from lampy.linalg._norms import matrix_rank as matrix_rank
from lampy.linalg._norms import norm as norm
from lampy.linalg._scipy_linalg import solve_sylvester as solve_sylvester
from lampy.linalg._scipy_linalg import solve_triangular as solve_triangular
from lampy.linalg._scipy_linalg import sqrtm as sqrtm
from lampy.linalg._svd import svd as svd
