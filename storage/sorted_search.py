"""np.searchsorted for many needles: searched in sorted order.

NumPy's binary search starts each needle from the previous one's place when the needles
ascend, and then walks the haystack in order; unsorted needles cost a cache miss per step once
the haystack outgrows the caches. Measured here: 1.3M needles in 800k sorted keys 228 -> 48 ms
(TPC-H Q9's partsupp lookup join), 1M in 262k 142 -> 39 ms (a runtime filter's key set),
argsort included.
"""

from __future__ import annotations

import numpy as np

MIN_NEEDLES = 1 << 15  # fewer needles: searched as they come
MIN_HAYSTACK = 1 << 14  # a smaller haystack stays in the caches


def search(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """np.searchsorted(haystack, needles) (side left), as int64 positions."""
    if len(needles) < MIN_NEEDLES or len(haystack) < MIN_HAYSTACK or \
            bool((needles[1:] >= needles[:-1]).all()):
        return np.searchsorted(haystack, needles)
    order = np.argsort(needles)
    idx = np.empty(len(needles), dtype=np.int64)
    idx[order] = np.searchsorted(haystack, needles[order])
    return idx
