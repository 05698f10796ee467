"""The stale-rowset sweeper: releases snapshots dropped without `release()`.

A TabletSnapshot that is garbage-collected releases its rowsets from its `__del__`, and a
finalizer runs wherever the collector happens to run: inside any allocation, on any thread,
possibly while that very thread holds the tablet's lock (a `capture` allocating under the lock
once deadlocked the server this way). So the finalizer does nothing that waits: it queues the
snapshot's key on its tablet (a deque append) and the tablet on this module's SimpleQueue (whose
`put` is safe in finalizers), and one daemon thread takes the tablet's lock and sweeps.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storage.tablet import Tablet

log = logging.getLogger(__name__)
_QUEUE: queue.SimpleQueue = queue.SimpleQueue()


def schedule(tablet: Tablet) -> None:
    """Sweep `tablet` soon, on the sweeper thread (safe to call from a finalizer)."""
    _QUEUE.put(tablet)


def _run() -> None:
    while True:
        tablet = _QUEUE.get()
        try:
            tablet.sweep_stale()
        except Exception:  # noqa: BLE001 - a tablet dropped meanwhile; the next sweep retries
            log.warning("sweeping stale rowsets of tablet %s failed", tablet.tablet_id,
                        exc_info=True)


# Started with the module: starting a thread from a finalizer could itself wait on a lock.
threading.Thread(target=_run, name="stale-rowset-sweeper", daemon=True).start()
