"""The C allocator's tuning for a server that allocates and frees arrays of megabytes per query.

A read of an Aggregate table under a stream of small loads folds each tablet's new rows into its
kept merge (storage/merge_into.py) and aggregates the result: per query, a few fresh numpy arrays
of ~1.4 MB per tablet at 1.4M rows, freed again when the query ends. With glibc's defaults the
heap's top is given back to the kernel and taken again, query after query, and every page taken
again is a page fault (a zero-filled page): measured in one process (a session running 100-row
INSERTs and `SELECT g, count(*), sum(v) ... GROUP BY g` on 1.4M rows in 8 tablets), ~7,800 minor
faults and 28.7 ms of CPU per INSERT + query. Keeping TOP_PAD bytes at the heap's top (glibc's
M_TOP_PAD: the slack added when the heap grows and kept when it shrinks): ~1,300 faults and
16.9 ms (after the later changes of the same session: ~4,900 -> ~220-300 faults, 20.5 -> 10.8
ms per pair in a worker thread). In the server under 32 mixed clients for 60 s
(scripts/bench/mixed_clients.py) the gain is smaller, since other allocations fault too:
1.18-1.21M -> 0.84-0.89M minor faults, 54.9-57.1 -> 58.9-60.5 queries a second
(docs/performance.md, "Allocator, runs and copies"). Raising the trim or mmap thresholds
instead did not help (~7,600 faults); Arrow's own pool (mimalloc) was not where they were.

    apply()   once at start-up, before the catalog is loaded: mallopt(M_TOP_PAD) where the C
              library is glibc; elsewhere (musl, macOS) nothing. The resident memory may stay up
              to TOP_PAD higher than what is in use.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

M_TOP_PAD = -2  # glibc's malloc.h
TOP_PAD = 64 << 20


def apply() -> bool:
    """Set glibc's top pad; True when it was set."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = mallopt(M_TOP_PAD, TOP_PAD) == 1
    if not ok:
        log.info("mallopt(M_TOP_PAD) refused: the allocator keeps its defaults")
    return ok
