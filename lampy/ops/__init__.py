"""The op library, one module per family. Each op is built with ``lampy.op``.

Besides re-exporting, this package gives `Variable`'s operators and methods their op
functions (``provide_operators``): the engine does not import the library built on it.
"""

from lampy.autograd._operators import provide_operators as _provide_operators
from lampy.ops._arithmetic import add as add
from lampy.ops._arithmetic import divide as divide
from lampy.ops._arithmetic import mod as mod
from lampy.ops._arithmetic import multiply as multiply
from lampy.ops._arithmetic import negative as negative
from lampy.ops._arithmetic import power as power
from lampy.ops._arithmetic import remainder as remainder
from lampy.ops._arithmetic import subtract as subtract
from lampy.ops._binary_math import arctan2 as arctan2
from lampy.ops._binary_math import hypot as hypot
from lampy.ops._binary_math import logaddexp as logaddexp
from lampy.ops._binary_math import logaddexp2 as logaddexp2
from lampy.ops._cast import astype as astype
from lampy.ops._cast import copy as copy
from lampy.ops._comparison import allclose as allclose
from lampy.ops._comparison import array_equal as array_equal
from lampy.ops._comparison import equal as equal
from lampy.ops._comparison import greater as greater
from lampy.ops._comparison import greater_equal as greater_equal
from lampy.ops._comparison import isclose as isclose
from lampy.ops._comparison import isfinite as isfinite
from lampy.ops._comparison import isinf as isinf
from lampy.ops._comparison import isnan as isnan
from lampy.ops._comparison import less as less
from lampy.ops._comparison import less_equal as less_equal
from lampy.ops._comparison import logical_and as logical_and
from lampy.ops._comparison import logical_not as logical_not
from lampy.ops._comparison import logical_or as logical_or
from lampy.ops._comparison import logical_xor as logical_xor
from lampy.ops._comparison import not_equal as not_equal
from lampy.ops._comparison import signbit as signbit
from lampy.ops._convolve import convolve as convolve
from lampy.ops._convolve import correlate as correlate
from lampy.ops._creation import arange as arange
from lampy.ops._creation import from_numpy as from_numpy
from lampy.ops._creation import full as full
from lampy.ops._creation import linspace as linspace
from lampy.ops._creation import tensor as tensor
from lampy.ops._cumulative import cumprod as cumprod
from lampy.ops._cumulative import cumsum as cumsum
from lampy.ops._diagonal import diag as diag
from lampy.ops._diagonal import diagonal as diagonal
from lampy.ops._diagonal import trace as trace
from lampy.ops._diagonal import tril as tril
from lampy.ops._diagonal import triu as triu
from lampy.ops._differences import diff as diff
from lampy.ops._differences import gradient as gradient
from lampy.ops._einsum import einsum as einsum
from lampy.ops._exp_log import exp as exp
from lampy.ops._exp_log import exp2 as exp2
from lampy.ops._exp_log import expm1 as expm1
from lampy.ops._exp_log import log as log
from lampy.ops._exp_log import log1p as log1p
from lampy.ops._exp_log import log2 as log2
from lampy.ops._exp_log import log10 as log10
from lampy.ops._extrema import fmax as fmax
from lampy.ops._extrema import fmin as fmin
from lampy.ops._extrema import maximum as maximum
from lampy.ops._extrema import minimum as minimum
from lampy.ops._extreme_reductions import amax as amax
from lampy.ops._extreme_reductions import amin as amin
from lampy.ops._extreme_reductions import argmax as argmax
from lampy.ops._extreme_reductions import argmin as argmin
from lampy.ops._extreme_reductions import logsumexp as logsumexp
from lampy.ops._extreme_reductions import max as max
from lampy.ops._extreme_reductions import min as min
from lampy.ops._hyperbolic import arccosh as arccosh
from lampy.ops._hyperbolic import arcsinh as arcsinh
from lampy.ops._hyperbolic import arctanh as arctanh
from lampy.ops._hyperbolic import cosh as cosh
from lampy.ops._hyperbolic import sinh as sinh
from lampy.ops._hyperbolic import tanh as tanh
from lampy.ops._indexing import compress as compress
from lampy.ops._indexing import getitem as getitem
from lampy.ops._indexing import take as take
from lampy.ops._interp import interp as interp
from lampy.ops._join import append as append
from lampy.ops._join import array_split as array_split
from lampy.ops._join import broadcast_arrays as broadcast_arrays
from lampy.ops._join import cat as cat
from lampy.ops._join import column_stack as column_stack
from lampy.ops._join import concatenate as concatenate
from lampy.ops._join import dsplit as dsplit
from lampy.ops._join import hsplit as hsplit
from lampy.ops._join import hstack as hstack
from lampy.ops._join import split as split
from lampy.ops._join import stack as stack
from lampy.ops._join import vsplit as vsplit
from lampy.ops._join import vstack as vstack
from lampy.ops._magnitude import abs as abs
from lampy.ops._magnitude import absolute as absolute
from lampy.ops._magnitude import clip as clip
from lampy.ops._magnitude import fabs as fabs
from lampy.ops._magnitude import positive as positive
from lampy.ops._masking import masked_fill as masked_fill
from lampy.ops._masking import nan_to_num as nan_to_num
from lampy.ops._masking import one_hot as one_hot
from lampy.ops._nan_reductions import nanargmax as nanargmax
from lampy.ops._nan_reductions import nanargmin as nanargmin
from lampy.ops._nan_reductions import nancumprod as nancumprod
from lampy.ops._nan_reductions import nancumsum as nancumsum
from lampy.ops._nan_reductions import nanmax as nanmax
from lampy.ops._nan_reductions import nanmean as nanmean
from lampy.ops._nan_reductions import nanmin as nanmin
from lampy.ops._nan_reductions import nanprod as nanprod
from lampy.ops._nan_reductions import nanstd as nanstd
from lampy.ops._nan_reductions import nansum as nansum
from lampy.ops._nan_reductions import nanvar as nanvar
from lampy.ops._order_statistics import median as median
from lampy.ops._order_statistics import nanmedian as nanmedian
from lampy.ops._order_statistics import nanpercentile as nanpercentile
from lampy.ops._order_statistics import nanquantile as nanquantile
from lampy.ops._order_statistics import percentile as percentile
from lampy.ops._order_statistics import quantile as quantile
from lampy.ops._pad import flip as flip
from lampy.ops._pad import fliplr as fliplr
from lampy.ops._pad import flipud as flipud
from lampy.ops._pad import pad as pad
from lampy.ops._pad import repeat as repeat
from lampy.ops._pad import roll as roll
from lampy.ops._pad import rot90 as rot90
from lampy.ops._pad import tile as tile
from lampy.ops._polynomials import polyval as polyval
from lampy.ops._powers_roots import cbrt as cbrt
from lampy.ops._powers_roots import reciprocal as reciprocal
from lampy.ops._powers_roots import sqrt as sqrt
from lampy.ops._powers_roots import square as square
from lampy.ops._products import cross as cross
from lampy.ops._products import dot as dot
from lampy.ops._products import inner as inner
from lampy.ops._products import kron as kron
from lampy.ops._products import matmul as matmul
from lampy.ops._products import outer as outer
from lampy.ops._products import tensordot as tensordot
from lampy.ops._products import vdot as vdot
from lampy.ops._reductions import average as average
from lampy.ops._reductions import mean as mean
from lampy.ops._reductions import prod as prod
from lampy.ops._reductions import std as std
from lampy.ops._reductions import sum as sum
from lampy.ops._reductions import var as var
from lampy.ops._rounding import around as around
from lampy.ops._rounding import ceil as ceil
from lampy.ops._rounding import floor as floor
from lampy.ops._rounding import round as round
from lampy.ops._rounding import sign as sign
from lampy.ops._rounding import trunc as trunc
from lampy.ops._sampling import multinomial as multinomial
from lampy.ops._sampling import rand as rand
from lampy.ops._sampling import randint as randint
from lampy.ops._sampling import randn as randn
from lampy.ops._sampling import randperm as randperm
from lampy.ops._scatter import gather as gather
from lampy.ops._scatter import index_add as index_add
from lampy.ops._scatter import index_select as index_select
from lampy.ops._scatter import put_along_axis as put_along_axis
from lampy.ops._scatter import scatter_add as scatter_add
from lampy.ops._scatter import take_along_axis as take_along_axis
from lampy.ops._shape import atleast_1d as atleast_1d
from lampy.ops._shape import atleast_2d as atleast_2d
from lampy.ops._shape import atleast_3d as atleast_3d
from lampy.ops._shape import broadcast_to as broadcast_to
from lampy.ops._shape import expand_dims as expand_dims
from lampy.ops._shape import matrix_transpose as matrix_transpose
from lampy.ops._shape import moveaxis as moveaxis
from lampy.ops._shape import permute_dims as permute_dims
from lampy.ops._shape import ravel as ravel
from lampy.ops._shape import reshape as reshape
from lampy.ops._shape import rollaxis as rollaxis
from lampy.ops._shape import squeeze as squeeze
from lampy.ops._shape import swapaxes as swapaxes
from lampy.ops._shape import transpose as transpose
from lampy.ops._shape import unsqueeze as unsqueeze
from lampy.ops._sorting import TopK as TopK
from lampy.ops._sorting import argsort as argsort
from lampy.ops._sorting import partition as partition
from lampy.ops._sorting import sort as sort
from lampy.ops._sorting import topk as topk
from lampy.ops._trig import arccos as arccos
from lampy.ops._trig import arcsin as arcsin
from lampy.ops._trig import arctan as arctan
from lampy.ops._trig import cos as cos
from lampy.ops._trig import deg2rad as deg2rad
from lampy.ops._trig import degrees as degrees
from lampy.ops._trig import rad2deg as rad2deg
from lampy.ops._trig import radians as radians
from lampy.ops._trig import sin as sin
from lampy.ops._trig import sinc as sinc
from lampy.ops._trig import tan as tan
from lampy.ops._where import select as select
from lampy.ops._where import where as where

_provide_operators(
    abs=abs, add=add, amax=amax, amin=amin, argmax=argmax, argmin=argmin,
    argsort=argsort, astype=astype, broadcast_to=broadcast_to, clip=clip,
    compress=compress, copy=copy, cos=cos, cumprod=cumprod, cumsum=cumsum,
    diagonal=diagonal, divide=divide, dot=dot, equal=equal, exp=exp,
    expand_dims=expand_dims, expm1=expm1, gather=gather, getitem=getitem,
    greater=greater, greater_equal=greater_equal, index_select=index_select, less=less,
    less_equal=less_equal, log=log, log1p=log1p, logsumexp=logsumexp,
    masked_fill=masked_fill, matmul=matmul, matrix_transpose=matrix_transpose,
    maximum=maximum, minimum=minimum,
    mean=mean, multiply=multiply, negative=negative, not_equal=not_equal,
    permute_dims=permute_dims, power=power, prod=prod, ravel=ravel,
    reciprocal=reciprocal, remainder=remainder, repeat=repeat, reshape=reshape,
    round=round, sign=sign, sin=sin, split=split, sqrt=sqrt, square=square,
    squeeze=squeeze, std=std, subtract=subtract, sum=sum, swapaxes=swapaxes, take=take,
    take_along_axis=take_along_axis, tile=tile,
    tanh=tanh, topk=topk, trace=trace, transpose=transpose, var=var,
)  # fmt: skip
