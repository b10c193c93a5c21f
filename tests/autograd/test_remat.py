"""lampy.remat and lampy.nn.remat_sequential: same gradients, less memory, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy import nn
from lampy.autograd import current_or_none

LAYERS = {
    "linear": lambda rng, w: nn.Linear.init(w, w, rng=rng),
    "relu": lambda rng, w: nn.ReLU.init(),
    "tanh": lambda rng, w: nn.Tanh.init(),
    "dropout": lambda rng, w: nn.Dropout.init(
        0.3, rng=np.random.default_rng(int(rng.integers(99)))
    ),
}


def backprop(loss, how):
    """Backpropagate ``loss`` into the params' ``.grad`` the way ``how`` names."""
    if how == "atomic":
        loss.backward()
    elif how == "stream":
        loss.backward(atomic=False)
    elif how == "iter":
        yielded = [v.node for v, _ in lampy.backward_iter(loss)]
        assert len(yielded) == len(set(yielded)), "a param was yielded twice"
    else:
        loss.backward(workers=2)


def gradients(kinds, width, segments, seed, how="atomic"):
    """Param and input gradients of a stack, plain (segments None) or rematerialised."""
    with lampy.Scope():
        rng = np.random.default_rng(seed)
        layers = [LAYERS[k](rng, width) for k in kinds]
        params = [p for m in layers for p in m.parameters()]
        x = lampy.param(np.random.default_rng(seed + 1).normal(size=(3, width)).astype(np.float32))
        with lampy.Scope():
            if segments is None:
                y = x
                for m in layers:
                    y = m(y)
            else:
                y = nn.remat_sequential(layers, x, segments=segments)
            backprop((y * y).sum(), how)
        return [x.grad.copy()] + [p.grad.copy() for p in params if p.grad is not None]


@given(
    kinds=st.lists(st.sampled_from(sorted(LAYERS)), min_size=1, max_size=9),
    width=st.integers(1, 6),
    segments=st.integers(1, 10),
    seed=st.integers(0, 1000),
    how=st.sampled_from(["atomic", "stream", "iter"]),
)
def test_remat_sequential_gradients_are_bitwise_equal(kinds, width, segments, seed, how):
    """Gradients with remat equal the plain ones bitwise, dropout included (same draws),
    whether the pass keeps them to the end, adds them at once or yields them."""
    plain = gradients(kinds, width, None, seed)
    remat = gradients(kinds, width, segments, seed, how)
    assert len(plain) == len(remat)
    for a, b in zip(plain, remat, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("how", ["atomic", "stream", "iter"])
def test_concurrent_backward_through_remat_equals_serial(monkeypatch, how):
    """With workers=2 (the concurrent engine, which takes no hand-over) the gradients are
    bitwise those of the serial pass, whichever way the serial pass backpropagates."""
    from lampy.autograd import _pass

    monkeypatch.setattr(_pass, "BIG_NODE_BYTES", 0)
    monkeypatch.setattr(_pass, "CONCURRENT_MIN_BYTES", 0)
    kinds = ["linear", "tanh", "dropout", "linear", "relu", "linear", "tanh", "linear"]
    serial = gradients(kinds, 5, 3, 7, how)
    concurrent = gradients(kinds, 5, 3, 7, "workers")
    for a, b in zip(serial, concurrent, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("how", ["atomic", "stream", "iter"])
def test_a_layer_shared_by_several_segments_gets_all_its_gradient(how):
    """A module used in several segments (its param has several edges in the enclosing
    pass, so it is not handed over early) gets the plain gradient, bitwise."""
    with lampy.Scope():
        rng = np.random.default_rng(3)
        shared = nn.Linear.init(4, 4, rng=rng)
        layers = [shared, nn.Tanh.init(), nn.Linear.init(4, 4, rng=rng), shared, nn.Tanh.init()]
        layers += [shared]
        x = lampy.param(rng.normal(size=(2, 4)).astype(np.float32))
        want = []
        for segments in (1, 2, 3, 6):
            for v in [x, *shared.parameters()]:
                v.zero_grad()
            with lampy.Scope():
                y = nn.remat_sequential(layers, x, segments=segments)
                backprop((y * y).sum(), "atomic" if segments == 1 else how)
            got = [v.grad.copy() for v in [x, *shared.parameters()]]
            want = want or got
            for a, b in zip(want, got, strict=True):
                assert np.array_equal(a, b)


def test_remat_of_a_function_with_several_outputs_and_captured_params():
    with lampy.Scope():
        w = lampy.param(np.array([0.5, -1.0, 2.0]))

        def f(x, y):
            return lampy.tanh(x * w), lampy.exp(y) * w

        x, y = lampy.param(np.array([1.0, 2.0, 3.0])), lampy.param(np.array([0.1, 0.2, 0.3]))
        a, b = f(x, y)
        (a.sum() + (b * b).sum()).backward()
        want = [v.grad.copy() for v in (w, x, y)]
        for v in (w, x, y):
            v.zero_grad()
        a, b = lampy.remat(f)(x, y)
        (a.sum() + (b * b).sum()).backward()
        for v, g in zip((w, x, y), want, strict=True):
            np.testing.assert_allclose(v.grad, g, rtol=1e-12)


def test_remat_keeps_only_inputs_and_outputs():
    """The inner values are released when fn returns: the scope holds the output only."""
    with lampy.Scope() as s:
        x = lampy.param(np.ones(1000))
        base = s.memory.live_bytes
        y = lampy.remat(lambda v: lampy.exp(lampy.exp(lampy.exp(v))))(x)
        assert s.memory.live_bytes == base + y.value.nbytes
        y.sum().backward()
        np.testing.assert_allclose(x.grad, np.exp(np.exp(np.exp(1.0)) + np.exp(1.0) + 1.0))


def test_remat_errors_name_the_problem():
    with lampy.Scope():
        x = lampy.param(np.ones(3))
        with pytest.raises(lampy.LampyTypeError, match="must return a Variable"):
            lampy.remat(lambda v: v.value)(x)
        with pytest.raises(lampy.LampyTypeError, match="callable"):
            lampy.remat(3)
        h = lampy.exp(x)
        with pytest.raises(lampy.LampyError, match="without receiving it as an argument"):
            lampy.remat(lambda v: v * h)(x)
        with lampy.Scope():
            gone = lampy.param(np.ones(3))
        with pytest.raises(lampy.ReleasedError, match="remat"):
            lampy.remat(lambda v: v * 2.0)(gone)
        with pytest.raises(lampy.ReleasedError, match="remat"):
            lampy.remat(lambda v: v * gone)(x)
    assert current_or_none() is None


def test_an_exception_inside_remat_leaves_scopes_consistent():
    def boom(v):
        lampy.exp(v)
        raise KeyError("inside fn")

    with lampy.Scope() as s:
        x = lampy.param(np.ones(3))
        before = (len(s), s.memory.live_bytes)
        with pytest.raises(KeyError):
            lampy.remat(boom)(x)
        assert current_or_none() is s
        assert (len(s), s.memory.live_bytes) == before


def test_remat_under_a_budget_fits_where_plain_does_not():
    rng = np.random.default_rng(0)
    with lampy.Scope():
        layers = [m for _ in range(16) for m in (nn.Linear.init(64, 64, rng=rng), nn.Tanh.init())]
        x = np.ones((128, 64), np.float32)

        def plain(x):
            for m in layers:
                x = m(x)
            return x

        # plain needs about 544 KiB (the 16 tanh outputs its closures keep), remat about
        # 352 KiB (float32, batch 128, width 64)
        with lampy.Scope(budget="448 KiB"), pytest.raises(lampy.MemoryBudgetError):
            plain(x).sum().backward()
        with lampy.Scope(budget="448 KiB") as s:
            nn.remat_sequential(layers, x).sum().backward()
            assert s.memory.peak_bytes <= 448 * 2**10


def test_nested_remat_equals_plain():
    """A remat inside a remat: the inner recomputation hands its params' gradients to the
    outer one's pass, which hands them on; the gradients are the plain ones, bitwise."""
    with lampy.Scope():
        rng = np.random.default_rng(5)
        a, b, c = (nn.Linear.init(3, 3, rng=rng) for _ in range(3))

        def inner(v):
            return lampy.tanh(b(v))

        def outer(v, rematerialise):
            h = lampy.tanh(a(v))
            h = lampy.remat(inner)(h) if rematerialise else inner(h)
            return c(h) * 2.0

        x = lampy.param(rng.normal(size=(2, 3)).astype(np.float32))
        params = [x, *a.parameters(), *b.parameters(), *c.parameters()]
        results = []
        for how, nested in (("atomic", False), ("atomic", True), ("stream", True), ("iter", True)):
            for p in params:
                p.zero_grad()
            with lampy.Scope():
                y = lampy.remat(lambda v: outer(v, nested))(x) if nested else outer(x, False)
                backprop((y * y).sum(), how)
            results.append([p.grad.copy() for p in params])
        for got in results[1:]:
            for want, g in zip(results[0], got, strict=True):
                assert np.array_equal(want, g)


def test_backward_twice_through_one_remat_graph_recomputes():
    """Each pass runs its own recomputation: two passes add the same gradient twice."""
    with lampy.Scope():
        rng = np.random.default_rng(1)
        layers = [nn.Linear.init(4, 4, rng=rng), nn.Tanh.init(), nn.Linear.init(4, 4, rng=rng)]
        x = lampy.param(rng.normal(size=(2, 4)).astype(np.float32))
        y = nn.remat_sequential(layers, x, segments=3)
        loss = (y * y).sum()
        loss.backward(atomic=False, retain=True)
        once = [p.grad.copy() for p in (x, *layers[0].parameters())]
        loss.backward()
        twice = [p.grad for p in (x, *layers[0].parameters())]
        for a, b in zip(once, twice, strict=True):
            assert np.array_equal(2 * a, b)


def test_a_param_passed_to_fn_and_also_captured_gets_both_gradients():
    """fn may receive a param and use it directly as well: both uses count."""
    with lampy.Scope():
        w = lampy.param(np.array([0.5, -1.0, 2.0]))
        lampy.tanh(w * w).sum().backward()
        want = w.grad.copy()
        w.zero_grad()
        lampy.remat(lambda v: lampy.tanh(v * w))(w).sum().backward()
        np.testing.assert_array_equal(w.grad, want)


def test_lampy_grad_through_remat_leaves_other_params_alone():
    """lampy.grad differentiates only its arguments: the recomputation computes no
    gradient for the layers' params and their .grad stays None."""
    with lampy.Scope():
        rng = np.random.default_rng(2)
        layers = [nn.Linear.init(4, 4, rng=rng), nn.Tanh.init(), nn.Linear.init(4, 1, rng=rng)]
        x = rng.normal(size=(3, 4)).astype(np.float32)

        def loss(v, segments):
            return nn.remat_sequential(layers, v, segments=segments).sum()

        with lampy.no_grad():  # the layers' params are constants here (issue 26)
            want = lampy.grad(lambda v: loss(v, 1))(x)
            got = lampy.grad(lambda v: loss(v, 3))(x)
        np.testing.assert_array_equal(got, want)
        assert all(p.grad is None for m in layers for p in m.parameters())


@pytest.mark.parametrize("segments", [2, 4, 8])
def test_remat_sequential_peak_memory_is_segments_plus_one_segment(segments):
    """The peak of a remat_sequential step (lampy.memory_profile: values and gradient
    buffers, exact bytes) is the segment boundaries, one recomputed segment, and the
    gradients one layer's backward needs: no segment's param gradients held together,
    no segment's values kept through the backward."""
    hidden, width, batch = 16, 64, 32
    act = batch * width * 4  # one activation (float32)
    weight = width * width * 4  # one weight gradient
    rng = np.random.default_rng(0)
    with lampy.Scope():
        layers = []
        for _ in range(hidden):
            layers += [nn.Linear.init(width, width, rng=rng), nn.ReLU.init()]
        x = rng.normal(size=(batch, width)).astype(np.float32)
        peaks = {}
        for k in (1, segments):
            for _ in range(2):  # the second step adds into the .grad the first one made
                with lampy.memory_profile() as prof, lampy.Scope() as step:
                    y = nn.remat_sequential(layers, x, segments=k)
                    (y * y).sum().backward(atomic=False)
            peaks[k] = (prof.peak_bytes, step.memory.peak_bytes)
    # k boundaries (the inputs of segments 2..k and the output), one segment's
    # hidden / k ReLU outputs, and a layer's backward: the gradients of the segment's
    # output, of the layer's output and of its input, and its weight's gradient (its
    # bias's gradient and the loss's scalars are the rest).
    bound = act * (segments + hidden // segments + 3) + weight + 2 * width * 4 + 64
    assert peaks[segments][0] <= bound
    assert peaks[segments][0] < peaks[1][0]
    # The step scope's own count (values, and the gradient buffers of its backward
    # pass) sees the same peak as the profile, within 10%.
    for k in (1, segments):
        assert abs(peaks[k][1] - peaks[k][0]) <= 0.1 * peaks[k][0]
