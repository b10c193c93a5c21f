"""lampy.multinomial and lampy.arange, the PyTorch idioms of a GPT's sampling loop and
position indices (issue 25, item 3), against PyTorch's shapes, dtypes and rules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
import lampy.nn.functional as F


@given(
    weights=st.lists(st.floats(0, 10), min_size=1, max_size=6).filter(lambda w: sum(w) > 0),
    n=st.integers(1, 6),
    replacement=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_multinomial_draws_indices_of_positive_weights(
    weights: list[float], n: int, replacement: bool, seed: int
) -> None:
    """Draws are int64 indices of positive weights, distinct without replacement; asking
    for more distinct draws than positive weights is an error, as in PyTorch (a weight so
    small that it rounds to 0 next to its row's sum, such as 5e-324 next to 1, counts as
    0: numpy cannot draw it)."""
    p = np.array(weights)
    rng = np.random.default_rng(seed)
    if not replacement and n > int((p / p.sum() > 0).sum()):
        with pytest.raises(lampy.LampyValueError, match="without replacement"):
            lampy.multinomial(p, n, rng=rng)
        return
    out = lampy.multinomial(p, n, replacement, rng=rng)
    assert out.shape == (n,) and out.dtype == np.int64 and (p[out] > 0).all()
    if not replacement:
        assert len(set(out.tolist())) == n


def test_multinomial_rows_frequencies_and_errors() -> None:
    """2-d weights give one row of draws per row; frequencies follow the weights; a
    generator that is not one, negative weights and 3-d input are named errors."""
    rng = np.random.default_rng(0)
    with lampy.Scope():
        probs = F.softmax(lampy.param(np.log(np.array([[1.0, 3.0], [3.0, 1.0]]))), dim=-1)
        out = lampy.multinomial(probs, 4000, replacement=True, rng=rng)
    assert out.shape == (2, 4000)
    np.testing.assert_allclose(out.mean(axis=1), [0.75, 0.25], atol=0.03)
    with pytest.raises(lampy.LampyTypeError, match=r"multinomial: rng must be"):
        lampy.multinomial(np.ones(3), 1, generator=0)  # type: ignore[arg-type]
    with pytest.raises(lampy.LampyValueError):
        lampy.multinomial(np.array([1.0, -1.0]), 1, rng=rng)
    with pytest.raises(lampy.ShapeError):
        lampy.multinomial(np.ones((1, 1, 2)), 1, rng=rng)
    assert lampy.multinomial(np.ones(3), 1, generator=rng).shape == (1,)


def test_multinomial_shapes_match_torch() -> None:
    """Shapes and dtype are torch.multinomial's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for shape, n, rep in (((5,), 3, False), ((2, 5), 7, True), ((3, 4), 4, False)):
        w = np.ones(shape)
        mine = lampy.multinomial(w, n, rep, rng=rng)
        theirs = torch.multinomial(torch.tensor(w), n, rep)
        assert mine.shape == tuple(theirs.shape) and mine.dtype == np.int64


def test_arange_is_a_constant_with_torch_values() -> None:
    """lampy.arange is a constant Variable with numpy's (= PyTorch's) values; int64 for
    ints, as torch.long; device='cpu' accepted, others refused."""
    with lampy.Scope():
        pos = lampy.arange(0, 5, dtype=np.int64, device="cpu")
        assert not pos.needs_grad and pos.dtype == np.int64
        assert pos.unsqueeze(0).shape == (1, 5) and lampy.arange(3).value.tolist() == [0, 1, 2]
        assert lampy.arange(1.0, 2.0, 0.25).value.tolist() == [1.0, 1.25, 1.5, 1.75]
        with pytest.raises(lampy.LampyValueError, match="CPU"):
            lampy.arange(3, device="cuda")
        with pytest.raises(lampy.LampyValueError):
            lampy.arange(0, 3, 0)
        torch = pytest.importorskip("torch")
        for args in ((5,), (2, 9, 3), (0.5, 2.0, 0.5), (-3, 3)):
            np.testing.assert_array_equal(lampy.arange(*args).value, torch.arange(*args).numpy())


def test_tensor_from_numpy_and_dtype_names_are_pytorchs() -> None:
    """lampy.tensor copies into a constant (a param with requires_grad=True),
    lampy.from_numpy wraps an array without a copy, and lampy.long is int64, so a
    PyTorch driver's `torch.tensor(x)`, `torch.from_numpy(a)` and `dtype=torch.long`
    port with the import changed."""
    a = np.arange(6).reshape(2, 3)
    with lampy.Scope():
        t = lampy.tensor(a, dtype=lampy.long)
        assert t.dtype == np.int64 and not t.requires_grad and t.size() == (2, 3)
        w = lampy.tensor([1.0, 2.0], dtype=lampy.float32, requires_grad=True)
        assert w.requires_grad and w.dtype == np.float32
        f = lampy.from_numpy(a)
        assert np.shares_memory(f.value, a) and f.view(-1).tolist() == list(range(6))
        with pytest.raises(lampy.LampyTypeError, match=r"from_numpy: expected a numpy\.ndarray"):
            lampy.from_numpy([1, 2])  # type: ignore[arg-type]
        with pytest.raises(lampy.LampyValueError, match="no device 'cuda'"):
            lampy.tensor(a, device="cuda")
    assert lampy.long is np.int64 and lampy.float64 is np.float64


def test_rand_randn_randint_randperm_follow_pytorchs_signatures() -> None:
    """PyTorch's draws, as numpy arrays: ``*size`` as ints or a tuple, float32 and int64
    by default, ``randint(high, size)`` and ``randint(low, high, size)``, drawn from
    the default generator (``manual_seed``) unless ``rng=``/``generator=`` is given."""
    lampy.manual_seed(0)
    a = lampy.rand(2, 3)
    lampy.manual_seed(0)
    np.testing.assert_array_equal(lampy.rand((2, 3)), a)
    assert a.dtype == np.float32 and lampy.randn(4, dtype=np.float64).dtype == np.float64
    g = np.random.default_rng(1)
    np.testing.assert_array_equal(
        lampy.randn(5, generator=g), np.random.default_rng(1).standard_normal(5, np.float32)
    )
    ix = lampy.randint(10, (100,))
    assert ix.dtype == np.int64 and ix.min() >= 0 and ix.max() < 10
    jx = lampy.randint(5, 8, (100,))
    assert jx.min() >= 5 and jx.max() < 8 and lampy.randint(3, size=(2,)).shape == (2,)
    assert sorted(lampy.randperm(6).tolist()) == list(range(6))
    with pytest.raises(lampy.LampyTypeError, match="pass a size"):
        lampy.randint(10)
    with pytest.raises(lampy.LampyValueError, match="greater than low"):
        lampy.randint(5, 5, (1,))
    with pytest.raises(lampy.LampyTypeError, match="float32 or float64"):
        lampy.rand(2, dtype=np.int64)
    with pytest.raises(lampy.LampyTypeError, match="size must be ints"):
        lampy.randn(2.5)
