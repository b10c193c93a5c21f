"""An operand that is not numbers is refused with an error naming the op that was called,
a name every op passes to ``value_of`` (issue 28, #5: the name was found by walking the
stack frames, ``calling_op``, which fell back to "a lampy op" outside ``lampy``,
``lampy.linalg`` and ``lampy.nn.functional``)."""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.linalg as LA
import lampy.nn.functional as F
from lampy.opkit import not_numbers, value_of, values_of

LAMPY = pathlib.Path(lampy.__file__).parent
HAS_SCIPY = importlib.util.find_spec("scipy") is not None
S = "abc"  # a string operand
S22 = np.array([["a", "b"], ["c", "d"]])  # an array of strings
M = np.eye(2)
V = np.ones(3)


def _special(name: str, *args: Any) -> Callable[[], Any]:
    def call() -> Any:
        import lampy.special

        return getattr(lampy.special, name)(*args)

    return call


# (the op's name in the message, the call); each gets one string operand
CASES: list[tuple[str, Callable[[], Any]]] = [
    # unary
    ("exp", lambda: lampy.exp(S)),
    ("tanh", lambda: lampy.tanh(S)),
    ("sin", lambda: lampy.sin(S22)),
    ("sqrt", lambda: lampy.sqrt(S)),
    ("log1p", lambda: lampy.log1p(S)),
    ("abs", lambda: lampy.abs(S)),
    ("negative", lambda: lampy.negative(S)),
    ("floor", lambda: lampy.floor(S)),
    ("square", lambda: lampy.square(S22)),
    ("isnan", lambda: lampy.isnan(S)),
    # binary
    ("add", lambda: lampy.add(V, S)),
    ("subtract", lambda: lampy.subtract(S, V)),
    ("multiply", lambda: lampy.multiply(V, S)),
    ("divide", lambda: lampy.divide(S, V)),
    ("power", lambda: lampy.power(V, S)),
    ("arctan2", lambda: lampy.arctan2(V, S)),
    ("maximum", lambda: lampy.maximum(S, V)),
    ("less", lambda: lampy.less(V, S)),
    ("matmul", lambda: lampy.matmul(M, S22)),
    ("outer", lambda: lampy.outer(V, S)),
    ("where", lambda: lampy.where(V > 0, S, V)),
    ("clip", lambda: lampy.clip(V, 0.0, S)),
    # reductions
    ("sum", lambda: lampy.sum(S)),
    ("mean", lambda: lampy.mean(S22)),
    ("prod", lambda: lampy.prod(S)),
    ("var", lambda: lampy.var(S)),
    ("max", lambda: lampy.max(S22)),
    ("argmax", lambda: lampy.argmax(S22)),
    ("cumsum", lambda: lampy.cumsum(S)),
    ("nansum", lambda: lampy.nansum(S)),
    ("median", lambda: lampy.median(S22)),
    ("quantile", lambda: lampy.quantile(S22, 0.5)),
    ("logsumexp", lambda: lampy.logsumexp(S)),
    ("average", lambda: lampy.average(V, weights=S)),
    # shapes, joins, indexing
    ("reshape", lambda: lampy.reshape(S22, (4,))),
    ("transpose", lambda: lampy.transpose(S22)),
    ("concatenate", lambda: lampy.concatenate([V, S22.ravel()])),
    ("stack", lambda: lampy.stack([S22, M])),
    ("flip", lambda: lampy.flip(S22)),
    ("pad", lambda: lampy.pad(S22, 1)),
    ("take", lambda: lampy.take(S22, [0])),
    ("einsum", lambda: lampy.einsum("ij->", S22)),
    ("diff", lambda: lampy.diff(S22)),
    ("interp", lambda: lampy.interp(V, V, S22.ravel()[:3])),
    # linalg
    ("inv", lambda: LA.inv(S22)),
    ("det", lambda: LA.det(S22)),
    ("solve", lambda: LA.solve(M, S22)),
    ("norm", lambda: LA.norm(S22)),
    ("cholesky", lambda: LA.cholesky(S22)),
    ("svd", lambda: LA.svd(S22)),
    ("eigh", lambda: LA.eigh(S22)),
    ("lstsq", lambda: LA.lstsq(M, S22)),
    ("multi_dot", lambda: LA.multi_dot([M, S22, M])),
    ("matrix_rank", lambda: LA.matrix_rank(S22)),
    # nn.functional
    ("relu", lambda: F.relu(S)),
    ("sigmoid", lambda: F.sigmoid(S22)),
    ("softmax", lambda: F.softmax(S22, dim=-1)),
    ("gelu", lambda: F.gelu(S22)),
    ("glu", lambda: F.glu(S22)),
    ("linear", lambda: F.linear(S22, M)),
    ("bilinear", lambda: F.bilinear(M, S22, np.ones((1, 2, 2)))),
    ("layer_norm", lambda: F.layer_norm(S22, (2,))),
    ("mse_loss", lambda: F.mse_loss(M, S22)),
    ("cross_entropy", lambda: F.cross_entropy(S22, np.array([0, 1]))),
    ("nll_loss", lambda: F.nll_loss(S22, np.array([0, 1]))),
    ("dropout", lambda: F.dropout(S22, 0.5)),
    ("cosine_similarity", lambda: F.cosine_similarity(M, S22)),
    ("embedding", lambda: F.embedding(np.array([0]), S22)),
    ("conv1d", lambda: F.conv1d(np.ones((1, 1, 4)), S22.reshape(1, 1, 4))),
    ("max_pool1d", lambda: F.max_pool1d(S22.reshape(1, 1, 4), 2)),
    ("scaled_dot_product_attention", lambda: F.scaled_dot_product_attention(M, M, S22)),
    # special (scipy)
    *[
        pytest.param(name, call, marks=pytest.mark.skipif(not HAS_SCIPY, reason="no scipy"))
        for name, call in [
            ("gammaln", _special("gammaln", S)),
            ("erf", _special("erf", S22)),
            ("expit", _special("expit", S)),
            ("xlogy", _special("xlogy", V, S)),
            ("polygamma", _special("polygamma", 1, S)),
            ("betainc", _special("betainc", 1.0, S, 0.5)),
            ("multigammaln", _special("multigammaln", S, 2)),
        ]
    ],
]


def _id(case: Any) -> str:
    return case.values[0] if hasattr(case, "values") else case[0]


@pytest.mark.parametrize(("name", "call"), CASES, ids=[_id(c) for c in CASES])
def test_a_string_operand_names_the_op_called(name: str, call: Callable[[], Any]) -> None:
    """The message starts with exactly the op's name, and says what the operand is."""
    with lampy.Scope(), pytest.raises(lampy.DTypeError) as info:
        call()
    assert re.match(rf"{re.escape(name)}: an operand is ", str(info.value)), str(info.value)


def test_modules_name_their_forward_or_the_op_it_runs() -> None:
    """A module whose forward reads the operand itself names ``Class.forward`` (as the
    frame walk did); ``Embedding.from_pretrained`` names itself (it gave "a lampy op")."""
    with lampy.Scope():
        emb = lampy.nn.Embedding.init(3, 2, rng=np.random.default_rng(0))
        with pytest.raises(lampy.DTypeError, match=r"^Embedding\.forward: an operand is 'abc'"):
            emb(S)
        with pytest.raises(lampy.DTypeError, match=r"^Embedding\.from_pretrained: an operand"):
            lampy.nn.Embedding.from_pretrained(S22)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("sum", lambda r: lampy.sum(r)),
        ("norm", lambda r: LA.norm(r)),
        ("relu", lambda r: F.relu(r)),
        ("matmul", lambda r: lampy.matmul(r, M)),
    ],
)
def test_a_ragged_list_names_the_op(name: str, call: Callable[[Any], Any]) -> None:
    with lampy.Scope(), pytest.raises(lampy.LampyValueError, match=rf"^{name}: an operand could"):
        call([[1.0], [1.0, 2.0]])


def test_an_op_written_outside_lampy_names_itself_or_falls_back() -> None:
    """The kit's helpers take the op's name; without one the message says "a lampy op"
    (the frame walk's fallback), and the success path does not read it."""
    with pytest.raises(lampy.DTypeError, match=r"^my_op: an operand is 'abc' \(str"):
        value_of(S, name="my_op")
    with pytest.raises(lampy.DTypeError, match=r"^my_op: an operand is None"):
        value_of(None, False, "my_op")
    with pytest.raises(lampy.DTypeError, match=r"^my_op: an operand is 'abc'"):
        values_of(V, S, name="my_op")
    with pytest.raises(lampy.DTypeError, match=r"^a lampy op: an operand is 'abc'"):
        value_of(S)
    error = not_numbers("my_op", S22, S22)
    assert str(error).startswith("my_op: an operand is array([['a', 'b'],")
    assert value_of(2.5, name="unused") == 2.5


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("value_of", "values_of", "not_numbers")
    ]


def _names_the_op(call: ast.Call) -> bool:
    assert isinstance(call.func, ast.Name)
    position = {"value_of": 2, "values_of": 4, "not_numbers": 0}[call.func.id]
    return len(call.args) > position or any(k.arg == "name" for k in call.keywords)


def test_every_call_in_lampy_passes_the_op_name() -> None:
    """No call of ``value_of``, ``values_of`` or ``not_numbers`` in lampy leaves the name
    to its default: a message always names the op."""
    missing = []
    count = 0
    for path in sorted(LAMPY.rglob("*.py")):
        for call in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            count += 1
            if not _names_the_op(call):
                missing.append(f"{path.relative_to(LAMPY.parent)}:{call.lineno}")
    assert count > 200  # the check sees the calls
    assert not missing, missing


def test_nothing_in_lampy_walks_stack_frames() -> None:
    """Messages are built from names passed in, never from the caller's frames."""
    pattern = re.compile(r"currentframe|_getframe|\bf_back\b|\bf_locals\b|inspect\.stack")
    hits = [
        f"{path.relative_to(LAMPY.parent)}:{i}"
        for path in sorted(LAMPY.rglob("*.py"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, hits
