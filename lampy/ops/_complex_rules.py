"""Which ops of ``lampy.ops`` take complex values, and how (``lampy.opkit.complex_rule``).

An op listed here computes with complex values and its gradient follows PyTorch's
convention (``dL/dRe + i dL/dIm``); any other op refuses a complex value that needs a
gradient with a ``DTypeError``. Ordering ops (``maximum``, ``sort``, ``clip``,
``median``, ``round``...) are left out on purpose, as in PyTorch: complex numbers have no
order. The names are those the ops give ``lampy.op``; ``tests/ops/test_complex_ops.py``
checks every one against finite differences in the real and imaginary parts.
"""

from __future__ import annotations

from lampy.opkit import HOLOMORPHIC, LINEAR, OWN, complex_rule

# Closures with real coefficients only: right for complex values as they are.
complex_rule(
    LINEAR,
    # arithmetic and reductions
    "add",
    "subtract",
    "negative",
    "positive",
    "sum",
    "mean",
    "nansum",
    "nanmean",
    "cumsum",
    "nancumsum",
    "trace",
    # shapes
    "reshape",
    "ravel",
    "transpose",
    "permute_dims",
    "matrix_transpose",
    "swapaxes",
    "moveaxis",
    "rollaxis",
    "squeeze",
    "expand_dims",
    "broadcast_to",
    "broadcast_arrays",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "diagonal",
    "diag",
    "tril",
    "triu",
    "flip",
    "fliplr",
    "flipud",
    "rot90",
    "roll",
    "tile",
    "repeat",
    "copy",
    "astype",
    # joining and splitting
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "column_stack",
    "append",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    # indexing
    "getitem",
    "take",
    "take_along_axis",
    "compress",
    "index_select",
    "gather",
)

# Holomorphic ops, and linear ones whose closures multiply by an operand's value: the
# engine conjugates their closures (``conj(fn(conj(g)))``).
complex_rule(
    HOLOMORPHIC,
    # arithmetic
    "multiply",
    "divide",
    "power",
    "square",
    "reciprocal",
    "sqrt",
    # exponentials, logarithms, trigonometric and hyperbolic functions
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "sinc",
    # products
    "prod",
    "nanprod",
    "cumprod",
    "nancumprod",
    "matmul",
    "dot",
    "inner",
    "outer",
    "tensordot",
    "einsum",
    "kron",
    "cross",
    "polyval",
    "average",
    # ops with value operands besides the array (selection, scatter, padding, creation)
    "where",
    "select",
    "masked_fill",
    "index_add",
    "scatter_add",
    "put_along_axis",
    "pad",
    "diff",
    "gradient",
    "linspace",
    "full",
)

# Non-holomorphic ops whose closures are written for complex values (``vdot`` conjugates
# its first operand); ``real``, ``imag``, ``conj``, ``angle``, ``convolve`` and
# ``correlate`` are declared next to their code.
complex_rule(OWN, "vdot")
