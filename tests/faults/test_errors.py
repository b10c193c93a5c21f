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
