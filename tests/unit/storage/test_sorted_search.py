"""storage/sorted_search.py gives np.searchsorted's positions, needles sorted first or not."""

import numpy as np
import pytest

from storage import sorted_search


@pytest.mark.parametrize("needles_sorted", [False, True])
def test_same_positions_as_searchsorted(needles_sorted):
    rng = np.random.default_rng(3)
    haystack = np.sort(rng.integers(-10**9, 10**9, 50_000))
    needles = rng.integers(-2 * 10**9, 2 * 10**9, 100_000)
    needles[::7] = haystack[rng.integers(0, len(haystack), len(needles[::7]))]  # some hits
    if needles_sorted:
        needles.sort()
    got = sorted_search.search(haystack, needles)
    assert np.array_equal(got, np.searchsorted(haystack, needles))
