"""The process's cyclic garbage collector, tuned for a server whose catalog is large and long-lived.

CPython collects its youngest generation every 700 net allocations and, now and then, walks every
tracked object. minidoris keeps the metadata of every published rowset (storage RowsetMeta and the
catalog's journal-shaped dicts) for as long as it is published: with a few hundred tablets fed
by many small loads that is hundreds of thousands of long-lived objects, walked again and again.
Measured on a stream of 1,000-row INSERTs into Doris's 336-tablet lineorder: 32 s of collection
in 120 s of server time (gen0 passes of ~3 ms, gen2 passes of ~0.5 s). Almost nothing the server
allocates forms reference cycles (reference counting frees it), so collections are made rarer:

    apply()   after start-up: thresholds (50,000, 20, 100) instead of (700, 10, 10), and the
              objects that exist once the catalog is loaded (modules, the replayed catalog) moved
              to the permanent generation (gc.freeze), never walked again; a later cycle among
              them is not collected, so this runs once, before any statement.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 100)


def apply() -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
