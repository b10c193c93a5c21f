"""Fault cases whose error must name the call the user made (issue 23, #4)."""

from __future__ import annotations

import pytest

import lampy


@pytest.mark.parametrize(("workers", "error"), [(0, lampy.LampyValueError), ("x", TypeError)])
def test_parallel_map_with_bad_workers_names_parallel_map(workers: object, error: type) -> None:
    """parallel_map(workers=0) was reported as coming from "backward:"; it names
    parallel_map now, with the value given and the fix."""
    with lampy.Scope(), pytest.raises(error) as info:
        lampy.parallel_map(lambda i: i, [1, 2], workers=workers)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith("parallel_map: workers must be")
    assert "backward" not in message


@pytest.mark.parametrize("bad", ["a", (2, "a"), 2.5])
def test_reshape_of_a_non_int_names_the_op(bad: object) -> None:
    """Variable.reshape('a') raised numpy's bare TypeError; it is a lampy error naming
    reshape and the shapes it accepts, and the Variable is unchanged."""
    import numpy as np

    with lampy.Scope():
        x = lampy.param(np.arange(6.0))
        with pytest.raises(lampy.LampyTypeError, match=r"reshape: .*x\.reshape\(2, 3\)"):
            x.reshape(bad)  # type: ignore[arg-type]
        assert x.shape == (6,) and x.version == 0
