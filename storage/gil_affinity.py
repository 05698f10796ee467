"""Where the process's Python threads run: on one core when that makes statements faster.

CPython runs one thread's Python at a time. When a thread gives up the GIL (for an Arrow or
numpy kernel, an fsync, a socket write) and a thread on another core waits for it, that thread
wakes at once and takes the GIL, and the first one must wait for it in turn on its return:
every short kernel call of every statement becomes two cross-core wake-ups (on a VM, each an
IPI and an exit to the hypervisor). Under the mixed-clients load (32 clients, 100-row INSERTs
and GROUP BYs on one Aggregate table, scripts/bench/mixed_clients.py) the server made
30,000-38,000 context switches a second, spent a third of its CPU in the kernel's scheduler
(perf: finish_task_switch, _raw_spin_unlock_irqrestore) and ran 118-145 INSERTs and 56-70
queries a second. With every Python thread on one core, a thread that releases the GIL usually
takes it back before the woken one is scheduled: 4,000-5,000 switches a second and 1.3-1.5x the
statements (docs/performance.md, "GIL affinity").

Statements whose kernels are long lose by it: their GIL-free kernels no longer overlap (four
clients running TPC-H SF 1 queries: 12.7 queries a second with the threads free, 7.2 on one
core; a lone query loses the executor pool's parallelism). Which kind of load the server has is
not known in advance, and counting statements does not tell (one core shifts the mix towards
the short statements), so while statements queue for CPU slots (storage/cpu_slots.py: more
statements than slots, the only case where the choice matters) the server measures the hand-offs
themselves: TRIAL_S with the threads free, the process's context switches per CPU-second
(getrusage). The mixed load makes ~33,000 (a hand-off every 30 us of CPU), the TPC-H clients
~2,000; above SWITCHES_PER_CPU_S the threads go to one core. The mode is kept HOLD_S, then
measured again (free), each time twice as long while the trials agree (a trial costs the pinned
load TRIAL_S at the free rate); once no statement has queued for QUIET_S, the threads are free.
While pinned, the QUERY lane has half again as many slots (storage/cpu_slots.py): on one core
slots no longer stand for cores but set how the GIL is shared between the lanes, and INSERTs
of ~1 ms in two LOAD slots beside queries of several ms in two QUERY slots ran 233-284 INSERTs
and 43-45 queries a second; with three QUERY slots 214-246 and 52-59 (one LOAD slot and three
QUERY slots: 185-214 and 74-81).

    started(queued)   a statement (QUERY / LOAD / GROUP_COMMIT lane) takes its slot, after
                      queueing or not: moves the trial on when its time is up (a comparison
                      otherwise)
    follow()          a thread taking a slot: its own mask as the mode says (once per change)

A change of mode sets every thread of the process at once (Linux: sched_setaffinity on each
thread id): Python threads (threading.enumerate()) to the Python core or back to every allowed
core; threads Python did not start (Arrow's CPU and I/O pools, the allocator's) always to every
allowed core, since a thread inherits its creator's mask and Arrow starts its workers from
whichever thread first needs them (a Python thread starting during the change may be taken for
one: `follow` corrects it at its next slot). The Python core is the last core the process may
use. Without sched_setaffinity, with one allowed core, or with `python_cpu_affinity = none`,
nothing is ever pinned.
"""

from __future__ import annotations

import logging
import os
import resource
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)

TRIAL_S = 1.0  # the measuring window, threads free
HOLD_S = 20.0  # the chosen mode is kept this long before the next trial, twice as long
HOLD_MAX_S = 160.0  # after each trial that chose the same again, up to this
SWITCHES_PER_CPU_S = 10_000  # more (a hand-off every 100 us of CPU or less): one core
QUIET_S = 1.0  # no statement queued for this long: threads free, trials start afresh

IDLE, TRIAL_FREE, HOLD = "idle", "trial_free", "hold"


def _usage() -> tuple[float, int]:
    """The process's CPU seconds and context switches so far (every thread's)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_nvcsw + r.ru_nivcsw


class GilAffinity:
    """The process's pin mode and its trials; see the module docstring."""

    def __init__(self, enabled: bool = True):
        supported = hasattr(os, "sched_setaffinity") and os.path.isdir("/proc/self/task")
        self.all_cores: set[int] = set(os.sched_getaffinity(0)) if supported else set()
        self.enabled = enabled and supported and len(self.all_cores) > 1
        self.python_cores = {max(self.all_cores)} if self.all_cores else set()
        self.pinned = False
        self.phase = IDLE
        self.last_contended = 0.0
        self.changes = 0  # mode changes made
        self.density = 0.0  # the last trial's context switches per CPU-second
        self.pinned_by_trial = False
        self._hold = HOLD_S
        self._due = 0.0  # when the phase's time is up
        self._mark = (0.0, 0)  # the trial's start: (process CPU seconds, context switches)
        self._lock = threading.Lock()

    def started(self, queued: bool) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if queued:
            self.last_contended = now
            if self.phase == IDLE or now >= self._due:
                self._step(now)
        elif self.phase != IDLE and now - self.last_contended >= QUIET_S:
            self._step(now)

    def _step(self, now: float) -> None:
        with self._lock:
            if now - self.last_contended >= QUIET_S:
                self.phase, self.pinned_by_trial, self._hold = IDLE, False, HOLD_S
                self._set(False)
            elif self.phase in (IDLE, HOLD):
                self._set(False)
                self.phase, self._due, self._mark = TRIAL_FREE, now + TRIAL_S, _usage()
            elif self.phase == TRIAL_FREE and now >= self._due:
                cpu, switches = (b - a for a, b in zip(self._mark, _usage()))
                density = switches / max(cpu, 1e-3)
                pin = density > SWITCHES_PER_CPU_S
                if pin != self.pinned_by_trial:
                    log.info("%.0f context switches a CPU-second with the Python threads free: "
                             "%s", density, f"on core {min(self.python_cores)}" if pin
                             else "left free")
                    self._hold = HOLD_S
                else:  # the same again: measured less often
                    self._hold = min(self._hold * 2, HOLD_MAX_S)
                self.density, self.pinned_by_trial = density, pin
                self.phase, self._due = HOLD, now + self._hold
                self._set(pin)

    def follow(self) -> None:
        """The calling thread in the current mode (a statement's thread as it takes its slot:
        one started while the mode changed may have been counted as a foreign thread)."""
        seen = (id(self), self.changes)
        if self.changes and getattr(_LOCAL, "seen", None) != seen:
            _LOCAL.seen = seen
            try:
                os.sched_setaffinity(0, self.python_cores if self.pinned else self.all_cores)
            except OSError:
                pass

    def _set(self, pinned: bool) -> None:
        """Every thread in the mode (call holding the lock)."""
        if self.pinned == pinned:
            return
        self.pinned = pinned
        self.changes += 1
        python_threads = {t.native_id for t in threading.enumerate()}
        for name in os.listdir("/proc/self/task"):
            tid = int(name)
            cores = self.python_cores if pinned and tid in python_threads else self.all_cores
            try:
                os.sched_setaffinity(tid, cores)
            except OSError:  # the thread ended meanwhile
                pass
        if _on_change is not None:
            _on_change(pinned)


_AFFINITY = GilAffinity(enabled=False)
_LOCAL = threading.local()
_on_change: Callable[[bool], None] | None = None


def on_change(listener: Callable[[bool], None] | None) -> None:
    """`listener(pinned)` at every change of mode from now on (storage/cpu_slots.py resizes
    its QUERY lane; it sets None when it has no lanes)."""
    global _on_change
    _on_change = listener


def configure(enabled: bool) -> GilAffinity:
    """The process's affinity policy (the server at start-up; `python_cpu_affinity`)."""
    global _AFFINITY
    with _AFFINITY._lock:
        _AFFINITY._set(False)
    _AFFINITY = GilAffinity(enabled)
    return _AFFINITY


def current() -> GilAffinity:
    return _AFFINITY
