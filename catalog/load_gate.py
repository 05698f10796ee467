"""The load gate of a table: loads in flight, the ALTER jobs' watersheds, and DDL that changes
the table's storage shape waiting for them.

A load holds a `GatePass` from when its sink opens (catalog/load_sink.py) until its
PreparedLoad is published or aborted (`PreparedLoad.leave_gate`). It writes the indexes the
table had when it entered (taken again after `enter` if a DDL ran meanwhile).

- **ALTER jobs** (ADD ROLLUP, CREATE MATERIALIZED VIEW, heavy schema change:
  catalog/rollup_job.py) wait as Doris's jobs wait for the transactions begun before their
  watershed transaction, without stopping new loads: the job's shadow index exists from the
  ALTER statement on, so a load entering after it writes the shadow index too. The job's thread
  then opens a new *epoch* (`watershed`) and waits (`wait_before`) until every load that
  entered in an earlier epoch has published or aborted; those may lack the shadow index, and
  their publish is accepted while the job is WAITING_TXN (catalog/load.py). Loads of later
  epochs are not waited for.
- **Other shape changes** (light schema change, index changes, DROP ROLLUP, a schema change's
  final swap) wait in `exclusive()`: no new load of the table enters, those in flight finish
  first (at most `timeout` seconds; a load still running then, e.g. a two-phase Stream Load
  never committed, is refused at its publish), then the DDL runs and the gate opens.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import contextmanager

from storage import cpu_slots

DDL_WAIT_SECONDS = 30.0
GIVE_UP_POLL_SECONDS = 0.1


class GatePass:
    """A load's place in the gate, taken in one epoch; `leave` gives it back (once)."""

    def __init__(self, gate: LoadGate, epoch: int):
        self._gate, self.epoch = gate, epoch

    def leave(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            gate._leave(self.epoch)


class LoadGate:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._loads: Counter[int] = Counter()  # epoch -> loads in flight that entered in it
        self._epoch = 0
        self._ddl = 0

    def enter(self) -> GatePass:
        """A load begins (waits while a shape-changing DDL of the table runs or waits)."""
        with self._cond:
            if not self._ddl:  # the usual case: no wait, the CPU slot kept (no hand-off)
                return self._admit()
        with cpu_slots.blocking(), self._cond:  # waiting frees the CPU slot: cpu_slots.py
            while self._ddl:
                self._cond.wait()
            return self._admit()

    def _admit(self) -> GatePass:
        """A pass in the current epoch (call holding the condition's lock)."""
        self._loads[self._epoch] += 1
        return GatePass(self, self._epoch)

    def _leave(self, epoch: int) -> None:
        with self._cond:
            self._loads[epoch] -= 1
            if not self._loads[epoch]:
                del self._loads[epoch]
            self._cond.notify_all()

    def watershed(self) -> int:
        """Open a new epoch and return it: loads entering from now on come after it. Call once
        the job's shadow index is in the table, so that every later load writes it."""
        with self._cond:
            self._epoch += 1
            return self._epoch

    def wait_before(self, epoch: int, timeout: float = DDL_WAIT_SECONDS,
                    give_up: Callable[[], bool] | None = None) -> bool:
        """Wait until no load that entered before `epoch` is in flight; new loads go on. False
        when `timeout` passed or `give_up()` said the job no longer waits (cancelled)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while any(e < epoch for e in self._loads):
                if give_up is not None and give_up():
                    return False
                wait = deadline - time.monotonic()
                if wait <= 0:
                    return False
                self._cond.wait(min(wait, GIVE_UP_POLL_SECONDS) if give_up else wait)
        return True

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
