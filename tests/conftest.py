"""Shared test setup: hypothesis profiles and the no-leak guard every test runs under."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

import lampy
from lampy.autograd import _saved, current_or_none
from lampy.autograd._grad_mode import is_grad_enabled

# Every op that declares what its closures keep (lampy.op(..., keeps=...)) is checked
# against the scan of its closures, on every call the tests make.
_saved.CHECK_DECLARED = True

# CI runs derandomized with a bounded number of examples; locally "dev" explores more.
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=60, deadline=None)
# Long random runs hunting for rare failures: HYPOTHESIS_PROFILE=hunt (HUNT_EXAMPLES sets
# the count), with its own example database so CI's and dev's stay untouched.
settings.register_profile(
    "hunt",
    max_examples=int(os.environ.get("HUNT_EXAMPLES", "1500")),
    deadline=None,
    derandomize=False,
    print_blob=True,
    database=DirectoryBasedExampleDatabase(".hypothesis/hunt"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def _no_scope_left_open() -> Iterator[None]:
    """Every test must close the scopes it opens and leave grad mode on."""
    assert current_or_none() is None, "a scope was already open before the test"
    yield
    leaked = current_or_none()
    assert leaked is None, f"the test left a lampy.Scope open: {leaked!r}"
    assert is_grad_enabled(), "the test left lampy.no_grad() active"


@pytest.fixture
def scope() -> Iterator[lampy.Scope]:
    """An open scope for the duration of one test."""
    with lampy.Scope() as s:
        yield s


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under the hunt profile, tests with their own ``@settings(max_examples=...)`` run
    the hunt's count too (their cap is for CI's time budget, not a property of theirs)."""
    if settings.get_current_profile_name() != "hunt":
        return
    count = settings.get_profile("hunt").max_examples
    for item in items:
        fn = getattr(item, "obj", None)
        own = getattr(fn, "_hypothesis_internal_use_settings", None)
        if own is not None:
            fn._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
                own, max_examples=count
            )
