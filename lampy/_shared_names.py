"""How a Variable method that numpy and PyTorch share is read: the method-argument
readings behind the methods ``lampy._methods`` installs on ``lampy.Variable`` (and
``lampy.autograd._operators``' own), decided before any op runs.

A call is computed in one library's meaning only when the other's cannot apply (or
gives the same result); where both apply and differ it raises
``lampy.AmbiguousMethodError`` showing both spellings (``ambiguous``). The table of
every shared name and its outcome is in docs/coming-from-pytorch.md.
"""

from __future__ import annotations

import contextlib
import math
import operator
import warnings
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from lampy._errors import AmbiguousMethodError, LampyTypeError, ShapeError

if TYPE_CHECKING:
    from lampy.autograd import Variable


def shape_arg(args: tuple[Any, ...]) -> Any:
    """``(2, 3)`` from ``f(2, 3)`` and ``f((2, 3))``."""
    if len(args) == 1 and not isinstance(args[0], int | np.integer):
        return args[0]
    return args


def axis_index(name: str, what: str, d: Any, shape: tuple[int, ...]) -> int:
    """``d`` as an axis in ``[0, ndim)`` (a 0-d value counts as 1-d, as PyTorch)."""
    k, n = operator.index(d), max(len(shape), 1)
    if not -n <= k < n:
        raise ShapeError(
            f"{name}: {what} {k} is out of range for a Variable of shape {shape} "
            f"({len(shape)} dimensions)."
        )
    return k % n


def is_dtype_name(s: str) -> bool:
    with warnings.catch_warnings():  # numpy 2 deprecates some one-letter names ("a")
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            np.dtype(s)
        except TypeError:
            return False
    return True


def no_out(name: str, out: Any) -> None:
    if out is not None:
        raise LampyTypeError(
            f"{name}: out= is not supported, Variables are immutable; use the returned Variable."
        )


def is_int(a: Any) -> bool:
    return isinstance(a, int | np.integer) and not isinstance(a, bool)


def ambiguous(call: str, shape: tuple[int, ...], why: str, *, numpy: str, torch: str) -> str:
    """The message of a call that numpy and PyTorch read differently."""
    return (
        f"x.{call} on a Variable of shape {shape} is ambiguous: {why}. lampy computes "
        "neither silently; write the one you mean:\n"
        f"    numpy's meaning:   {numpy}\n"
        f"    PyTorch's meaning: {torch}\n"
        "(see 'Coming from PyTorch' in the docs: names numpy and PyTorch share)."
    )


def axis_or_dim(name: str, axis: Any, dim: Any, default: Any = None) -> Any:
    """The axis given as numpy's ``axis`` or PyTorch's ``dim`` (not both).

    Args:
        name: The op, for the error message.
        axis: The ``axis`` argument.
        dim: The ``dim`` argument (None when not given).
        default: ``axis``'s default: an ``axis`` equal to it counts as not given.

    Raises:
        LampyTypeError: if both are given.
    """
    if dim is None:
        return axis
    if axis is not default and axis != default:
        raise LampyTypeError(
            f"{name}: pass axis (numpy's name) or dim (PyTorch's), not both; got "
            f"axis={axis!r} and dim={dim!r}."
        )
    return dim


def shape_ints(name: str, args: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of ``x.reshape(2, 3)`` or ``x.reshape((2, 3))`` as ints, or a clear error."""
    target = shape_arg(args)
    items = (target,) if is_int(target) else target
    try:
        return tuple(operator.index(n) for n in items)
    except TypeError:
        pass
    raise LampyTypeError(
        f"{name}: the new shape must be ints, got {args!r} for a Variable of shape {shape}. "
        f"Accepted: x.{name}(2, 3), x.{name}((2, 3)) or x.{name}([2, 3]), with -1 for one "
        "size inferred from the others."
    )


def is_dtype_like(a: Any) -> bool:
    if isinstance(a, np.dtype) or (isinstance(a, type) and issubclass(a, np.generic)):
        return True
    return type(a).__module__ == "torch" and type(a).__name__ == "dtype"


def dtype_name(dtype: Any) -> str:
    return getattr(dtype, "__name__", None) or str(dtype)


_NUMPY_MOMENT_KEYS = ("axis", "dtype", "out", "ddof", "keepdims")
_TORCH_MOMENT_KEYS = ("dim", "correction", "unbiased", "keepdim")


def read_moments(
    name: str, shape: tuple[int, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Any, float, bool]:
    """(axis, dtype, ddof, keepdims) of ``x.var(...)``/``x.std(...)`` in either library's
    words, or an error when the divisor is not said."""
    unknown = set(kwargs) - set(_NUMPY_MOMENT_KEYS) - set(_TORCH_MOMENT_KEYS)
    if unknown:
        raise LampyTypeError(f"{name}: unexpected arguments {sorted(unknown)}.")
    shown = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    if args and isinstance(args[0], bool):  # PyTorch's var(unbiased)
        args = (None, *args)
    if len(args) >= 2 and isinstance(args[1], bool):  # PyTorch's var(dim, unbiased, keepdim)
        if len(args) > 3:
            raise LampyTypeError(f"{name}: PyTorch's form is {name}(dim, unbiased, keepdim).")
        kwargs = {"dim": args[0], "unbiased": args[1], **kwargs}
        if len(args) == 3:
            kwargs["keepdim"] = args[2]
        args = ()
    if len(args) > len(_NUMPY_MOMENT_KEYS):
        raise LampyTypeError(f"{name}: takes at most 5 positional arguments, got {len(args)}.")
    for key, value in zip(_NUMPY_MOMENT_KEYS, args, strict=False):
        if key in kwargs:
            raise LampyTypeError(f"{name}: got {key} twice.")
        kwargs[key] = value
    no_out(name, kwargs.get("out"))
    said = [k for k in ("ddof", "correction", "unbiased") if kwargs.get(k) is not None]
    if len(said) > 1:
        raise LampyTypeError(f"{name}: pass one of ddof, correction and unbiased, got {said}.")
    if "dim" in kwargs and kwargs.get("axis") is not None:
        raise LampyTypeError(f"{name}: pass axis (numpy's name) or dim (PyTorch's), not both.")
    axis = kwargs.get("dim", kwargs.get("axis"))
    if not said:
        if "dim" not in kwargs and "keepdim" not in kwargs:
            raise AmbiguousMethodError(
                ambiguous(
                    f"{name}({shown})",
                    shape,
                    f"numpy's {name} divides by n (ddof=0) and PyTorch's by n - 1 "
                    "(correction=1), and both read an axis given this way",
                    numpy=f"x.{name}(axis={axis!r}, ddof=0)",
                    torch=f"x.{name}(dim={axis!r}) or x.{name}({axis!r}, correction=1)",
                )
            )
        ddof: float = 1
    elif said[0] == "unbiased":
        ddof = 1 if kwargs["unbiased"] else 0
    else:
        ddof = kwargs[said[0]]
    keepdims = bool(kwargs.get("keepdim", kwargs.get("keepdims", False)))
    return axis, kwargs.get("dtype"), ddof, keepdims


class MinMax(tuple["Variable", np.ndarray]):
    """What ``x.max(dim=...)`` and ``x.min(dim=...)`` return, as PyTorch's
    ``torch.return_types.max``: ``values`` (a Variable) and ``indices`` (int64, numpy)."""

    __slots__ = ()

    def __new__(cls, values: Variable, indices: np.ndarray) -> MinMax:
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self) -> Variable:
        return self[0]

    @property
    def indices(self) -> np.ndarray:
        return self[1]

    def __repr__(self) -> str:
        return f"MinMax(values={self[0]!r}, indices={self[1]!r})"


def read_extreme(
    name: str, shape: tuple[int, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[str, Any, Any]:
    """How to compute ``x.max(...)``/``x.min(...)`` (see ``Variable.max``):
    ``("elementwise", other, None)``, ``("pair", dim, keepdim)`` (PyTorch's values and
    indices) or ``("numpy", axis, numpy_kwargs)``; an error for an ambiguous call."""
    known = {"axis", "out", "keepdims", "initial", "where", "dim", "keepdim", "other"}
    unknown = set(kwargs) - known
    if unknown:
        raise LampyTypeError(f"{name}: unexpected arguments {sorted(unknown)}.")
    numpy_only = {"out", "initial", "where"} & set(kwargs)  # PyTorch takes keepdims too
    torch_only = {"dim", "keepdim", "other"} & set(kwargs)
    if numpy_only and torch_only:
        raise LampyTypeError(
            f"{name}: numpy's arguments {sorted(numpy_only)} and PyTorch's "
            f"{sorted(torch_only)} cannot be mixed."
        )
    if "other" in kwargs or (len(args) == 1 and not kwargs and not _axis_like(args[0])):
        return "elementwise", kwargs.get("other", args[0] if args else None), None
    if len(args) >= 2 and isinstance(args[1], bool) and not numpy_only:  # max(dim, keepdim)
        if len(args) > 2 or "keepdim" in kwargs:
            raise LampyTypeError(f"{name}: PyTorch's form is {name}(dim, keepdim).")
        kwargs = {"dim": args[0], "keepdim": args[1], **kwargs}
        args = ()
        torch_only = {"dim"}
    if torch_only:
        if args:
            kwargs = {"dim": args[0], **kwargs}
        if kwargs.get("dim") is None:
            raise LampyTypeError(
                f"{name}: dim=None; for the {name} over everything call x.{name}()."
            )
        return "pair", operator.index(kwargs["dim"]), bool(kwargs.get("keepdim", False))
    kwargs = dict(kwargs)
    for key, value in zip(("axis", "out", "keepdims", "initial", "where"), args, strict=False):
        if key in kwargs:
            raise LampyTypeError(f"{name}: got {key} twice.")
        kwargs[key] = value
    no_out(name, kwargs.pop("out", None))
    axis = kwargs.pop("axis", None)
    if axis is not None and not numpy_only:
        raise AmbiguousMethodError(
            ambiguous(
                f"{name}({axis!r})" if args else f"{name}(axis={axis!r})",
                shape,
                f"numpy returns the {name}imal values along the axis, PyTorch (which takes "
                "axis= too) a pair (values, indices)",
                numpy=f"x.a{name}(axis={axis!r}) or lampy.a{name}(x, axis={axis!r})",
                torch=f"x.{name}(dim={axis!r}) (values, indices), or x.a{name}(dim={axis!r}) "
                "for the values alone",
            )
        )
    return "numpy", axis, kwargs


def read_repeat(
    shape: tuple[int, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[str, Any, Any]:
    """How to compute ``x.repeat(...)`` (see ``Variable.repeat``): ``("numpy", repeats,
    axis)`` or ``("torch", reps, None)`` (``lampy.tile``); an error where both readings
    apply and differ, or neither does. Decided on the shape alone (an index array)."""
    unknown = set(kwargs) - {"repeats", "axis"}
    if unknown:
        raise LampyTypeError(f"repeat: unexpected arguments {sorted(unknown)}.")
    if "repeats" in kwargs:
        args = (kwargs["repeats"], *args)
    if not args:
        raise LampyTypeError("repeat: give the repeats, as x.repeat(2, axis=0) or x.repeat(2, 1).")
    if "axis" in kwargs:  # numpy's keyword
        if len(args) != 1:
            raise LampyTypeError("repeat: numpy's form is x.repeat(repeats, axis=axis).")
        return "numpy", args[0], kwargs["axis"]
    index = np.arange(math.prod(shape)).reshape(shape)
    axis_arg = args[1] if len(args) == 2 else None
    as_numpy = as_torch = None
    if len(args) <= 2:
        with contextlib.suppress(TypeError, ValueError, IndexError):
            as_numpy = np.repeat(index, args[0], axis_arg)
    reps = shape_arg(args)
    reps = (reps,) if is_int(reps) else reps
    if (
        isinstance(reps, tuple | list)
        and all(is_int(r) and r >= 0 for r in reps)
        and len(reps) >= len(shape)
    ):
        as_torch = np.tile(index, tuple(reps))
    if as_numpy is not None and (as_torch is None or np.array_equal(as_numpy, as_torch)):
        return "numpy", args[0], axis_arg
    if as_torch is not None and as_numpy is None:
        return "torch", tuple(reps), None
    call = ", ".join(map(repr, args))
    if as_torch is None or as_numpy is None:
        raise LampyTypeError(
            f"repeat({call}): neither numpy's reading (repeats, axis) nor PyTorch's (one "
            f"count per axis, at least {len(shape)}) applies to a Variable of shape {shape}."
        )
    axis = f", axis={axis_arg!r}" if len(args) == 2 else ""
    raise AmbiguousMethodError(
        ambiguous(
            f"repeat({call})",
            shape,
            "numpy repeats each element (its result would have shape "
            f"{as_numpy.shape}), PyTorch tiles the whole Variable (shape {as_torch.shape})",
            numpy=f"x.repeat({args[0]!r}{axis or ', axis=None'}) or "
            f"lampy.repeat(x, {args[0]!r}{axis})",
            torch=f"lampy.tile(x, {tuple(reps)!r})",
        )
    )


def _axis_like(a: Any) -> bool:
    """Whether a lone argument of ``max``/``min`` is an axis (else it is PyTorch's other)."""
    return a is None or is_int(a) or (isinstance(a, tuple) and all(map(is_int, a)))


IN_PLACE_NAMES = """
    abs_ absolute_ acos_ acosh_ add_ addbmm_ addcdiv_ addcmul_ addmm_ addmv_ addr_
    apply_ arccos_ arccosh_ arcsin_ arcsinh_ arctan2_ arctan_ arctanh_ as_strided_ asin_
    asinh_ atan2_ atan_ atanh_ baddbmm_ bernoulli_ bitwise_and_ bitwise_left_shift_
    bitwise_not_ bitwise_or_ bitwise_right_shift_ bitwise_xor_ cauchy_ ceil_ clamp_
    clamp_max_ clamp_min_ clip_ conj_physical_ copy_ copysign_ cos_ cosh_ cumprod_
    cumsum_ deg2rad_ detach_ digamma_ div_ divide_ eq_ erf_ erfc_ erfinv_ exp2_ exp_
    expm1_ exponential_ fill_ fill_diagonal_ fix_ float_power_ floor_ floor_divide_
    fmod_ frac_ gcd_ ge_ geometric_ greater_ greater_equal_ gt_ heaviside_ hypot_ i0_
    igamma_ igammac_ index_add_ index_copy_ index_fill_ index_put_ index_reduce_ lcm_
    ldexp_ le_ lerp_ less_ less_equal_ lgamma_ log10_ log1p_ log2_ log_ log_normal_
    logical_and_ logical_not_ logical_or_ logical_xor_ logit_ lt_ map2_ map_
    masked_fill_ masked_scatter_ mul_ multiply_ mvlgamma_ nan_to_num_ ne_ neg_ negative_
    nextafter_ normal_ not_equal_ polygamma_ pow_ put_ rad2deg_ random_ reciprocal_
    relu_ remainder_ renorm_ requires_grad_ resize_ resize_as_ resize_as_sparse_ round_
    rsqrt_ scatter_ scatter_add_ scatter_reduce_ set_ sgn_ share_memory_ sigmoid_ sign_
    sin_ sinc_ sinh_ sparse_resize_ sparse_resize_and_clear_ sqrt_ square_ squeeze_ sub_
    subtract_ swapaxes_ swapdims_ t_ tan_ tanh_ transpose_ tril_ triu_ true_divide_
    trunc_ uniform_ unsqueeze_ xlogy_ zero_
""".split()  # noqa: SIM905 (162 names, one a word)
"""PyTorch's in-place ``Tensor`` methods (2.13): a Variable has none of them (it is
immutable), and reading one raises ``AttributeError`` with advice (``advise``)."""


class Advice:
    """A class attribute whose read raises ``AttributeError`` with advice: installed for
    each name of PyTorch's and numpy's that lampy does not have (``advise``), instead of
    a ``__getattr__``, which would make every attribute read of a Variable slower (CPython
    does not specialise attribute reads on a class that defines one). ``hasattr`` is
    False for these names, as for any missing attribute."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        no_such_attribute(self.name)


def advise(cls: type) -> None:
    """Install ``Advice`` on ``cls`` for the names of ``NO_SUCH_METHOD`` and
    ``IN_PLACE_NAMES`` that it does not define."""
    for name in (*NO_SUCH_METHOD, *IN_PLACE_NAMES):
        if not hasattr(cls, name):
            setattr(cls, name, Advice(name))


def no_such_attribute(name: str) -> NoReturn:
    """The AttributeError of a missing Variable attribute, with advice for PyTorch's and
    numpy's names that lampy does not have."""
    hint = NO_SUCH_METHOD.get(name)
    if hint is None and name.endswith("_") and not name.startswith("_"):
        hint = (
            f"in-place methods such as x.{name}() do not exist: Variables are "
            f"immutable; use x.{name[:-1]}(...) (a new Variable), or for a param's "
            "values `with lampy.in_place([p]) as (a,): ...` or the initialisers of "
            "lampy.nn.init (normal_, zeros_...)"
        )
    if hint is None:
        raise AttributeError(f"'Variable' object has no attribute {name!r}")
    raise AttributeError(f"Variable.{name}: {hint}.")


NO_SUCH_METHOD = {
    "data": (
        "PyTorch's .data (the tensor without its graph, often written into in place) and "
        "numpy's .data (the raw buffer) have no lampy meaning; read the values with "
        "x.value (read-only numpy), detach with x.detach(), and write a param in place "
        "with lampy.nn.init.normal_(p, ...) or `with lampy.in_place([p]) as (a,): ...`"
    ),
    "imag": "Variables hold real numbers (complex values have no gradient in lampy)",
    "put": (
        "numpy's put writes in place and PyTorch's returns a new tensor; Variables are "
        "immutable: use lampy.where or x.masked_fill for a new Variable"
    ),
    "resize": (
        "numpy's resize changes the array in place (Variables are immutable) and "
        "PyTorch's is deprecated; use x.reshape(...), or lampy.pad / slicing for another size"
    ),
    "cuda": "lampy runs on numpy, on the CPU; drop the .cuda() call",
}


__all__ = [
    "IN_PLACE_NAMES",
    "NO_SUCH_METHOD",
    "Advice",
    "advise",
    "MinMax",
    "ambiguous",
    "axis_index",
    "axis_or_dim",
    "dtype_name",
    "is_dtype_like",
    "is_dtype_name",
    "is_int",
    "no_out",
    "no_such_attribute",
    "read_extreme",
    "read_moments",
    "read_repeat",
    "shape_arg",
    "shape_ints",
]
