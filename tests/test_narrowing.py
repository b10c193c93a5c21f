"""cast_checked: narrowing casts of loaded arrays either fit or raise, naming the entry."""

from __future__ import annotations

import numpy as np
import pytest

from lampy._errors import LampyValueError
from lampy._narrowing import cast_checked


def test_values_that_fit_are_cast_and_the_same_dtype_is_not_copied() -> None:
    """Fitting values cast exactly as numpy casts them; an array of the dtype is returned as is."""
    a = np.array([1.5, -3.0, 65504.0])
    np.testing.assert_array_equal(cast_checked("f", "'x'", a, np.float16), a.astype(np.float16))
    assert cast_checked("f", "'x'", a, np.float64) is a
    np.testing.assert_array_equal(
        cast_checked("f", "'n'", np.array([2**31 - 1, -(2**31)]), np.int32), [2**31 - 1, -(2**31)]
    )


def test_float_overflow_and_integer_wraparound_are_errors() -> None:
    """A finite value that would become inf, or an integer outside the range, raises."""
    with pytest.raises(LampyValueError, match=r"f: 'x' holds 1 value\(s\) .* float16.*infinite"):
        cast_checked("f", "'x'", np.array([1.0, 70000.0]), np.float16)
    with pytest.raises(LampyValueError, match=r"'n' holds 1 value\(s\) .* int32.*wrap around"):
        cast_checked("f", "'n'", np.array([0, 2**40]), np.int32)
    with pytest.raises(LampyValueError, match=r"'u' .* uint8"):
        cast_checked("f", "'u'", np.array([300, 3], np.uint16), np.uint8)
    with pytest.raises(LampyValueError, match=r"'i' .* float16"):
        cast_checked("f", "'i'", np.array([100000]), np.float16)
