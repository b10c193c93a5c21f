"""lampy's default generator (``lampy.manual_seed``, ``lampy.random``): what every
random draw uses when no ``rng=`` is given, seeded as PyTorch's, context-local in its
blocks, and replayed by remat."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy import nn
from lampy.data import Batches


def _weights(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in model.state_dict().items()}


# ----------------------------------------------------------------- seeding
def test_manual_seed_gives_numpys_stream_and_reseeds_in_place() -> None:
    """After manual_seed(s) the default generator draws what default_rng(s) draws; it is
    the same object before and after (a reference taken earlier sees the seed), and
    initial_seed reports s."""
    before = lampy.default_generator()
    g = lampy.manual_seed(7)
    assert g is before is lampy.default_generator()
    np.testing.assert_array_equal(g.random(5), np.random.default_rng(7).random(5))
    assert lampy.initial_seed() == 7


def test_seed_reseeds_from_entropy_and_reports_it() -> None:
    """lampy.seed() picks a fresh seed, applies it, and returns it (torch.seed)."""
    s = lampy.seed()
    assert lampy.initial_seed() == s
    np.testing.assert_array_equal(
        lampy.default_generator().random(3), np.random.default_rng(s).random(3)
    )


@pytest.mark.parametrize("bad", [-1, 1.5, "0"])
def test_manual_seed_rejects_what_numpy_cannot_seed(bad: Any) -> None:
    """A negative or non-int seed is a clear error, and the generator is unchanged."""
    lampy.manual_seed(3)
    with pytest.raises((lampy.LampyTypeError, lampy.LampyValueError), match="manual_seed"):
        lampy.manual_seed(bad)
    assert lampy.initial_seed() == 3


def test_rng_state_round_trips() -> None:
    """get_rng_state/set_rng_state replay the same draws; a foreign state is refused."""
    lampy.manual_seed(0)
    state = lampy.get_rng_state()
    a = lampy.default_generator().random(4)
    lampy.set_rng_state(state)
    np.testing.assert_array_equal(lampy.default_generator().random(4), a)
    with pytest.raises(lampy.LampyValueError, match="set_rng_state"):
        lampy.set_rng_state(np.random.MT19937(0).state)


# ----------------------------------------------------------------- blocks
def test_fork_rng_leaves_the_default_where_it_was() -> None:
    """Inside fork_rng the draws continue the default's stream; after it, the default
    gives those same numbers again (as torch.random.fork_rng), even after manual_seed
    inside the block."""
    lampy.manual_seed(0)
    with lampy.random.fork_rng() as g:
        assert lampy.default_generator() is g
        inside = g.random(3)
        lampy.manual_seed(5)
        assert lampy.initial_seed() == 5
    assert lampy.initial_seed() == 0
    np.testing.assert_array_equal(lampy.default_generator().random(3), inside)


def test_fork_rng_disabled_draws_from_the_default() -> None:
    """fork_rng(enabled=False) is a no-op block, as PyTorch's."""
    lampy.manual_seed(0)
    with lampy.random.fork_rng(enabled=False) as g:
        assert g is lampy.default_generator()
        g.random()
    assert lampy.default_generator().random() == np.random.default_rng(0).random(2)[1]


def test_using_generator_is_the_default_inside_the_block_only() -> None:
    """using_generator(rng): modules and draws without rng= use rng (advancing it);
    outside the block the previous default is back; a non-Generator is refused."""
    lampy.manual_seed(0)
    rng = np.random.default_rng(1)
    with lampy.Scope():
        with lampy.random.using_generator(rng):
            a = nn.Linear(3, 2)
            with pytest.raises(lampy.LampyValueError, match="seed lampy does not know"):
                lampy.initial_seed()
        b = nn.Linear.init(3, 2, rng=np.random.default_rng(1))
        np.testing.assert_array_equal(a.weight.value, b.weight.value)
        assert lampy.default_generator().random() == np.random.default_rng(0).random()
    with (
        pytest.raises(lampy.LampyTypeError, match=r"numpy\.random\.Generator"),
        lampy.random.using_generator(0),  # type: ignore[arg-type]
    ):
        pass


def test_blocks_are_local_to_their_thread() -> None:
    """A using_generator block in one thread does not change what another draws from."""
    lampy.manual_seed(0)
    process = lampy.default_generator()
    seen: list[np.random.Generator] = []
    inside = threading.Event()
    done = threading.Event()

    def other() -> None:
        inside.wait()
        seen.append(lampy.default_generator())
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with lampy.random.using_generator(np.random.default_rng(1)) as mine:
        inside.set()
        done.wait()
        assert lampy.default_generator() is mine
    t.join()
    assert seen == [process]


# ----------------------------------------------------------------- who draws from it
def test_building_a_model_twice_after_the_same_seed_gives_the_same_weights() -> None:
    """manual_seed(0) then a model, twice: identical weights, in both construction forms
    (class call and init); another seed gives others."""

    def build() -> nn.Module:
        return nn.Sequential(
            nn.Linear(4, 8), nn.LayerNorm(8), nn.Embedding(5, 8), nn.Conv1d(2, 3, 3),
            nn.LSTM.init(3, 4), nn.MultiheadAttention(8, 2), nn.TransformerEncoderLayer(8, 2, 16),
        )  # fmt: skip

    with lampy.Scope():
        lampy.manual_seed(0)
        first = _weights(build())
        lampy.manual_seed(0)
        second = _weights(build())
        lampy.manual_seed(1)
        third = _weights(build())
    assert list(first) == list(second)
    for k in first:
        np.testing.assert_array_equal(first[k], second[k])
    assert not np.array_equal(first["0.weight"], third["0.weight"])


def test_explicit_rng_wins_over_the_default() -> None:
    """rng= draws from the generator given and leaves the default untouched."""
    lampy.manual_seed(0)
    state = lampy.get_rng_state()
    with lampy.Scope():
        a = nn.Linear.init(3, 2, rng=np.random.default_rng(5))
        b = nn.Linear.init(3, 2, rng=np.random.default_rng(5))
        np.testing.assert_array_equal(a.weight.value, b.weight.value)
        y = F.dropout(np.ones(10), 0.5, rng=np.random.default_rng(0))
        z = F.dropout(np.ones(10), 0.5, rng=np.random.default_rng(0))
        np.testing.assert_array_equal(y.value, z.value)
    assert lampy.get_rng_state() == state


def test_dropout_draws_from_the_default_at_each_call() -> None:
    """nn.Dropout(p) holds no generator: each training call draws from the default as
    it is then (so manual_seed and fork_rng reach a module built before); F.dropout
    and attention dropout too."""
    with lampy.Scope():
        drop = nn.Dropout(0.5)
        assert drop.rng is None
        x = np.ones(64, np.float32)
        lampy.manual_seed(0)
        a = drop(x).value
        lampy.manual_seed(0)
        np.testing.assert_array_equal(F.dropout(x, 0.5).value, a)
        with lampy.random.fork_rng():
            b = drop(x).value
        np.testing.assert_array_equal(drop(x).value, b)
        q = np.ones((1, 4, 8), np.float32)
        lampy.manual_seed(0)
        s1 = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).value
        lampy.manual_seed(0)
        s2 = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).value
        np.testing.assert_array_equal(s1, s2)
        with nn.eval_mode(drop):
            np.testing.assert_array_equal(drop(x).value, x)


def test_init_functions_multinomial_and_batches_draw_from_the_default() -> None:
    """nn.init's functions and in-place initialisers, lampy.multinomial and a shuffled
    Batches without rng= draw from the default generator."""
    lampy.manual_seed(0)
    a = nn.init.normal((3, 4))
    lampy.manual_seed(0)
    np.testing.assert_array_equal(
        a, np.random.default_rng(0).normal(0, 1, (3, 4)).astype(np.float32)
    )
    lampy.manual_seed(0)
    m = lampy.multinomial(np.ones(10), 4)
    lampy.manual_seed(0)
    np.testing.assert_array_equal(lampy.multinomial(np.ones(10), 4), m)
    batches = Batches(np.arange(10), batch_size=10, shuffle=True)
    lampy.manual_seed(0)
    (first,) = next(iter(batches))
    np.testing.assert_array_equal(first, np.random.default_rng(0).permutation(10))


def test_dropout_inside_remat_replays_the_default_generators_masks() -> None:
    """Dropout drawing from the default generator inside lampy.remat and
    nn.remat_sequential: the recomputation draws the same masks, so the gradients equal
    the plain run's from the same seed, and the default advances once."""
    with lampy.Scope():
        lampy.manual_seed(0)
        layers = [nn.Linear(6, 6), nn.Dropout(0.5), nn.Tanh(), nn.Linear(6, 6), nn.Dropout(0.3)]
        model = nn.Sequential(*layers)
        x = np.random.default_rng(1).normal(size=(4, 6)).astype(np.float32)

        def grads(run: Any) -> tuple[list[np.ndarray], dict[str, Any]]:
            lampy.manual_seed(3)
            model.zero_grad()
            with lampy.Scope():
                run().sum().backward()
            return [p.grad.copy() for p in model.parameters()], lampy.get_rng_state()

        plain, after_plain = grads(lambda: model(x))
        remat, after_remat = grads(lambda: lampy.remat(model)(x))
        segments, after_segments = grads(lambda: nn.remat_sequential(layers, x, segments=2))
        for a, b, c in zip(plain, remat, segments, strict=True):
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)
        assert after_plain == after_remat == after_segments
