"""The op table's complex column: every op that takes complex values, forward against
numpy and gradient against finite differences in the real and imaginary parts
(PyTorch's convention, ``dL/dRe + i dL/dIm``); and every other op refuses complex
inputs that need a gradient, rather than giving the real rule's answer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy.testing import check_grad
from lampy.testing import strategies as ls

from .op_table import OPS, OpSpec

# The table entries whose ops take complex values (lampy.opkit.complex_rule, and the
# ops whose value is real: abs, var, std).
COMPLEX: frozenset[str] = frozenset(
    {
        "add",
        "subtract",
        "multiply",
        "divide",
        "negative",
        "positive",
        "power",
        "power_integer_exponent",
        "exp",
        "log",
        "tanh",
        "sum",
        "mean",
        "matmul",
        "reshape",
        "transpose",
        "getitem",
        "sinc",
        "sinc_near_zero",
        "abs",
        "sqrt",
        "square",
        "reciprocal",
        "exp2",
        "expm1",
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
        "arcsinh",
        "arccosh",
        "arctanh",
        "where",
        "select",
        "var",
        "std",
        "prod",
        "cumsum",
        "cumprod",
        "average",
        "average_weighted",
        "average_returned_weight_sum",
        "nansum",
        "nanmean",
        "nanprod",
        "nancumsum",
        "nancumprod",
        "dot",
        "inner",
        "outer",
        "tensordot",
        "einsum",
        "trace",
        "diagonal",
        "diag",
        "tril",
        "triu",
        "kron",
        "cross",
        "linalg.inv",
        "linalg.det",
        "linalg.solve_vector",
        "linalg.solve_matrix",
        "linalg.matrix_power",
        "linalg.multi_dot",
        "linalg.sqrtm_symmetric",
        "linalg.sqrtm",
        "linalg.solve_sylvester",
        "ravel",
        "permute_dims",
        "matrix_transpose",
        "swapaxes",
        "moveaxis",
        "rollaxis",
        "squeeze",
        "expand_dims",
        "broadcast_to",
        "broadcast_arrays",
        "concatenate",
        "stack",
        "hstack",
        "vstack",
        "column_stack",
        "append",
        "vstack_one_array",
        "hstack_one_array",
        "column_stack_one_array",
        "stack_one_array",
        "concatenate_one_array",
        "split",
        "array_split",
        "hsplit",
        "vsplit",
        "dsplit",
        "tile",
        "repeat",
        "flip",
        "fliplr",
        "flipud",
        "rot90",
        "roll",
        "pad",
        "atleast_1d",
        "atleast_2d",
        "atleast_3d",
        "take",
        "take_along_axis",
        "put_along_axis",
        "compress",
        "index_select",
        "index_add",
        "gather",
        "scatter_add",
        "masked_fill",
        "diff",
        "gradient",
        "polyval",
        "linspace",
        "linspace_step",
        "full",
        "real",
        "imag",
        "conj",
        "angle",
        "angle_degrees",
        "real_if_close",
        "fft.fft",
        "fft.ifft",
        "fft.irfft",
        "fft.fft2",
        "fft.ifft2",
        "fft.fftn",
        "fft.ifftn",
        "fft.irfft2",
        "fft.irfftn",
        "fft.fftshift",
        "fft.ifftshift",
    }
)

BY_NAME = {spec.name: spec for spec in OPS}
assert set(BY_NAME) >= COMPLEX, sorted(COMPLEX - set(BY_NAME))

CASES = [
    pytest.param(BY_NAME[name], np.dtype(dt), id=f"{name}-{dt}")
    for name in sorted(COMPLEX)
    for dt in ("float64", "float32")
    if dt in BY_NAME[name].dtypes
]


def _complex_inputs(spec: OpSpec, dtype: np.dtype, data: st.DataObject) -> tuple[list, dict]:
    arrays, kwargs = data.draw(spec.inputs(dtype), label="inputs")
    return [data.draw(ls.complexified(a), label="complex") for a in arrays], kwargs


def _as_output(out: object) -> np.ndarray:
    if isinstance(out, lampy.Variable):
        return np.asarray(out.value)
    return np.asarray([np.asarray(o.value) for o in out])  # type: ignore[attr-defined]


@pytest.mark.parametrize(("spec", "dtype"), CASES)
@settings(max_examples=8)
@given(data=st.data())
def test_complex_forward_and_gradient(spec: OpSpec, dtype: np.dtype, data: st.DataObject) -> None:
    """numpy's value (complex64 stays complex64) and the gradient of finite differences in
    the real and imaginary parts of every input."""
    arrays, kwargs = _complex_inputs(spec, dtype, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.asarray(spec.ref(*arrays, **kwargs))
        with lampy.Scope():
            out = spec.fn(*[lampy.param(a) for a in arrays], **kwargs)
            value = _as_output(out)
        single = dtype == np.float32
        rtol = (spec.forward_rtol or 1e-4) if single else 1e-10
        assert value.dtype == expected.dtype
        np.testing.assert_allclose(value, expected, rtol=rtol, atol=rtol)
        atol = spec.grad_atol if spec.grad_atol is not None else (1e-3 if single else 1e-6)
        rtol = spec.grad_rtol if spec.grad_rtol is not None else (1e-2 if single else 1e-5)
        check_grad(lambda *vs: spec.fn(*vs, **kwargs), *arrays, atol=atol, rtol=rtol)


# Ops that take complex values, checked by tests/linalg/test_complex_linalg.py on inputs
# and losses that suit them (phase-invariant losses for eigenvectors and singular
# vectors, Hermitian matrices for eigh and cholesky, QR away from its jumps).
CHECKED_ELSEWHERE: frozenset[str] = frozenset(
    {
        "vdot",
        "convolve",
        "correlate",
        "signal.convolve",
        "linalg.cholesky",
        "linalg.eig",
        "linalg.eigh",
        "linalg.eigvalsh",
        "linalg.lstsq",
        "linalg.norm_default",
        "linalg.norm_matrix",
        "linalg.norm_vector",
        "linalg.pinv",
        "linalg.pinv_hermitian",
        "linalg.qr",
        "linalg.slogdet",
        "linalg.svd",
        "linalg.svd_hermitian",
        "linalg.svd_values",
    }
)
assert set(BY_NAME) >= CHECKED_ELSEWHERE, sorted(CHECKED_ELSEWHERE - set(BY_NAME))

REFUSING = [spec for spec in OPS if spec.name not in COMPLEX | CHECKED_ELSEWHERE]


@pytest.mark.parametrize("spec", REFUSING, ids=repr)
@settings(max_examples=3)
@given(data=st.data())
def test_other_ops_refuse_complex_inputs(spec: OpSpec, data: st.DataObject) -> None:
    """An op without a complex rule never returns a result that needs a gradient from a
    complex input: it raises a DTypeError naming it (or numpy's own error, for a
    function numpy has no complex loop for)."""
    arrays, kwargs = _complex_inputs(spec, np.dtype(np.float64), data)
    with lampy.Scope(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        refused: Exception | None = None
        try:
            out = spec.fn(*[lampy.param(a) for a in arrays], **kwargs)
        except TypeError as e:  # lampy's DTypeError, or numpy's: no complex loop (floor...)
            refused = e
        if refused is not None:
            assert not isinstance(refused, lampy.DTypeError) or "complex" in str(refused)
            return
        outs = [out] if isinstance(out, lampy.Variable) else list(out)
        assert not any(isinstance(o, lampy.Variable) and o.needs_grad for o in outs)


def test_complex_declarations_are_the_tables() -> None:
    """Every op name declared for complex values is one lampy records (a typo would
    leave an op refusing), and the table's complex column covers most of lampy.ops."""
    from lampy.autograd._complex import complex_ops

    declared = complex_ops()
    assert len(declared) > 100
    assert {"multiply", "matmul", "fft.fft", "real", "abs"} <= set(declared)
