"""The load gate of a table: loads in flight, and DDL that changes the table's storage shape
(ADD ROLLUP, CREATE MATERIALIZED VIEW, schema change, index changes) waiting for them.

A load writes the indexes the table had when it began (catalog/load_sink.py) and is refused at
its publish if the shape changed meanwhile ("Table t changed during the load"). Doris lets such
loads finish: its ALTER job waits for the transactions begun before it (WAITING_TXN). ADD ROLLUP
and CREATE MATERIALIZED VIEW jobs and heavy schema change jobs do so here too, in their own
thread while SHOW ALTER shows them WAITING_TXN (catalog/rollup_job.py); light schema changes
and index changes wait in the ALTER statement. Either way `exclusive()` stops new loads of
the table at the gate and waits for those in flight to publish or abort (at most `timeout`
seconds; a load still running then, e.g. a two-phase Stream Load never committed, is refused at
its publish as before), then the DDL runs and the gate opens. Shortcut: Doris lets new loads
begin during WAITING_TXN (they write the shadow index it created up front); here they wait. A load enters when its sink opens and leaves when its
PreparedLoad is published or aborted (`PreparedLoad.leave_gate`).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import contextmanager

from storage import cpu_slots

DDL_WAIT_SECONDS = 30.0
GIVE_UP_POLL_SECONDS = 0.1


class LoadGate:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._loads = 0
        self._ddl = 0

    def enter(self) -> None:
        """A load begins (waits while a shape-changing DDL of the table runs or waits)."""
        with cpu_slots.blocking(), self._cond:  # waiting frees the CPU slot: cpu_slots.py
            while self._ddl:
                self._cond.wait()
            self._loads += 1

    def leave(self) -> None:
        with self._cond:
            self._loads -= 1
            self._cond.notify_all()

    @contextmanager
    def exclusive(self, timeout: float = DDL_WAIT_SECONDS,
                  give_up: Callable[[], bool] | None = None):
        """No new load of the table begins; those in flight finish first (or `timeout`, or
        as soon as `give_up()` says the DDL no longer needs to wait: a cancelled job)."""
        deadline = time.monotonic() + timeout
        # the loads in flight need CPU slots to finish (storage/cpu_slots.py)
        with cpu_slots.blocking(), self._cond:
            self._ddl += 1
            while self._loads and time.monotonic() < deadline:
                if give_up is not None and give_up():
                    break
                wait = deadline - time.monotonic()
                self._cond.wait(max(min(wait, GIVE_UP_POLL_SECONDS) if give_up else wait, 0.0))
        try:
            yield
        finally:
            with self._cond:
                self._ddl -= 1
                self._cond.notify_all()


_gates: defaultdict[int, LoadGate] = defaultdict(LoadGate)
_gates_lock = threading.Lock()


def load_gate(table_id: int) -> LoadGate:
    with _gates_lock:
        return _gates[table_id]
