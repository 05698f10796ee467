"""CPU slots: how many statements run their Python at once (Doris's `pipeline_executor_size`).

CPython runs one thread's Python at a time. A thread that gives up the GIL for a kernel (an
Arrow or numpy call, an fsync, a socket write) queues behind every other runnable thread to get
it back, and every hand-off is a context switch: with 32 clients' statements in 32 threads, a
GROUP BY that calls a few hundred kernels waited milliseconds after each, the server made
~70,000 context switches a second (half its CPU time in the scheduler) and aggregate queries ran
at 9 a second; with two statements running at a time, 45-50 a second (scripts/bench/
mixed_clients.py, docs/performance.md "Mixed clients"). Doris's BE likewise runs every query's
pipeline tasks on `pipeline_executor_size` worker threads (default: the number of cores).

Four lanes: QUERY slots (`pipeline_executor_size`: statements, result streams), as many LOAD
slots for INSERT statements, as Doris's loads run in the BE's load channels and flush
threads, not among the queries' pipeline tasks: in one queue, an INSERT of a few milliseconds
waited behind every query queued before it, and 16 writers inserted no faster than 16 readers
queried; with half as many LOAD slots (until 2026-11-29) 16 writers
beside 16 readers inserted 69-73 rows a second against 101-106 queries, with as many 107-115
against 53-62 (scripts/bench/mixed_clients.py, docs/performance.md). INSERTs under group
commit (GROUP_COMMIT, as many slots as QUERY) only parse their rows and append them to the
group's WAL and memtable (segments are written by the group's flush, a compaction-like task):
with half the slots they waited for each other while the queries had CPU to spare (32
clients, async_mode: 148 inserts/s and 309 queries/s with one slot, 281 and 180 with two).
COMPACTION (one slot): compaction tasks, as Doris's BE runs them on their own threads, not
among the queries' pipeline tasks. In the QUERY lane a compaction queued behind every waiting
statement; once statements ran faster (storage/gil_affinity.py) a table loaded 200 times a
second outgrew its compactions (500-2,000 rowsets a tablet, each merged by every read).

Each statement taking its slot is counted by storage/gil_affinity.py, which, while statements
queue, measures whether they run faster with the Python threads on one core; while they are,
the QUERY lane has half again as many slots (`configure`).

    with slot(lane):     a statement (DorisSession.execute, a result stream's next chunk, a
                         compaction) runs holding one of the lane's slots; nested uses are
                         no-ops
    with blocking():     a wait that needs no CPU (an fsync, the table's load lock, a publish
                         batch, a group commit) gives the caller's slot to the next statement
                         and takes one again afterwards, ahead of statements not yet started
    SlotPool             the executor's pool: its tasks run holding query slots, and the
                         statement waiting for their results hands its own on meanwhile; while
                         statements wait for slots, a statement runs its tasks itself
    time_slice()         a long statement (a query's checkpoints between operators and
                         batches) lets waiting statements run every SLICE_S, as Doris's
                         pipeline tasks yield after their time slice

A thread waits for a slot at most START_WAIT_S (a new statement) or RESUME_WAIT_S (one coming
back from a wait, which may hold a lock that slot holders wait for) and then runs without one:
slots only throttle, so a lock cycle through them costs a delay, never a deadlock. Until the
server calls `configure` (and with `configure(0)`) there are no slots: every call is a no-op.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from storage import gil_affinity

QUERY, LOAD, GROUP_COMMIT, COMPACTION = "query", "load", "group_commit", "compaction"
START_WAIT_S = 1.0
RESUME_WAIT_S = 0.1
SLICE_S = 0.1  # Doris's pipeline task time slice (100 ms)


class CpuSlots:
    """One lane's `slots` tokens, handed from a releasing thread straight to the first waiter
    (first come, first served; waiters coming back from a blocking wait before new
    statements): one wake-up per hand-off, and nobody takes a slot ahead of those waiting.
    A waiter waits on its thread's eventfd: the wake-up is a write made without the GIL
    (a lock's release, made holding it, cost 14% of the server's GIL time under the mix:
    the woken thread preempted the waker on a busy machine)."""

    def __init__(self, slots: int, statements: bool = True):
        self.slots = slots
        self.statements = statements  # a lane of statements (queueing here is contention)
        self._lock = threading.Lock()
        self._free = slots
        self._starts: deque[int] = deque()  # each waiter's eventfd, written when granted
        self._resumes: deque[int] = deque()
        self.overflows = 0  # acquisitions that gave up waiting and ran without a slot

    def _acquire(self, resuming: bool) -> bool:
        """Take a slot; False when the wait bound passed first (the caller runs without)."""
        with self._lock:
            if self._free > 0 and not self._resumes and (resuming or not self._starts):
                self._free -= 1
                immediate = True
            else:
                immediate = False
                fd = _wakeup_fd()
                queue = self._resumes if resuming else self._starts
                queue.append(fd)
        if self.statements and not resuming:  # a statement starts (queued: more than slots)
            gil_affinity.current().started(queued=not immediate)
        if immediate:
            return True
        ready, _, _ = select.select([fd], [], [], RESUME_WAIT_S if resuming else START_WAIT_S)
        if not ready:
            with self._lock:
                if fd in queue:  # not granted: give up waiting
                    queue.remove(fd)
                    self.overflows += 1
                    return False
        os.read(fd, 8)  # granted (perhaps just as the wait ended)
        return True

    def _release(self) -> None:
        with self._lock:
            if not self.waiting() or self._free < 0:  # (< 0: the lane shrank, this slot goes)
                self._free += 1
                return
            fd = self._next_waiter()
        # the slot passes to that waiter; os.write wakes it without the GIL held, so the
        # woken thread never finds the GIL taken by a waker it preempted
        os.write(fd, _ONE)

    def resize(self, slots: int) -> None:
        """`slots` from now on: new slots go to waiters at once, slots above the new count
        are taken back as their holders release them."""
        granted = []
        with self._lock:
            self._free += slots - self.slots
            self.slots = slots
            while self._free > 0 and self.waiting():
                granted.append(self._next_waiter())
                self._free -= 1
        for fd in granted:
            os.write(fd, _ONE)

    def _next_waiter(self) -> int:
        """The eventfd of the waiter served next (call holding the lock, with waiters):
        statements coming back from a wait before new ones."""
        return (self._resumes or self._starts).popleft()

    def waiting(self) -> bool:
        return bool(self._starts or self._resumes)

    def busy(self) -> bool:
        return bool(self._starts)


_ONE = (1).to_bytes(8, "little")


class _Wakeup:
    """A thread's eventfd, closed when the thread (its thread-local) goes."""

    def __init__(self) -> None:
        self.fd = os.eventfd(0)

    def __del__(self) -> None:
        os.close(self.fd)


def _wakeup_fd() -> int:
    """The calling thread's eventfd, on which a slot is granted to it (made once)."""
    wakeup = getattr(_LOCAL, "wakeup", None)
    if wakeup is None:
        wakeup = _LOCAL.wakeup = _Wakeup()
    return wakeup.fd


_LANES: dict[str, CpuSlots | None] = {QUERY: None, LOAD: None, GROUP_COMMIT: None,
                                      COMPACTION: None}
_LOCAL = threading.local()  # depth, the CpuSlots held (or None), when it was taken


def configure(queries: int, loads: int = 0, compactions: int = 0) -> None:
    """The process's slots (the server at start-up): `queries` for statements, `loads` for
    INSERTs (0: they share the query slots), `queries` again for group commit INSERTs,
    `compactions` for compaction tasks (0: they share the query slots); `queries` 0 turns them
    all off."""
    _LANES[QUERY] = CpuSlots(queries) if queries > 0 else None
    _LANES[LOAD] = (CpuSlots(loads) if loads > 0 else _LANES[QUERY]) if queries > 0 else None
    _LANES[GROUP_COMMIT] = (CpuSlots(queries) if loads > 0 else _LANES[QUERY]) \
        if queries > 0 else None
    _LANES[COMPACTION] = (CpuSlots(compactions, statements=False) if compactions > 0
                          else _LANES[QUERY]) if queries > 0 else None
    lane, more = _LANES[QUERY], max(1, queries // 2)
    gil_affinity.on_change(None if lane is None else
                           lambda pinned: lane.resize(queries + more if pinned else queries))


@contextlib.contextmanager
def slot(lane: str = QUERY, resuming: bool = False) -> Iterator[None]:
    """A statement's slot of `lane` for the `with` block (see the module docstring); nested
    uses are no-ops. `resuming`: work of a statement already running (a task in the
    executor's pool), served first."""
    local = _LOCAL
    if getattr(local, "depth", 0) or _LANES[lane] is None:
        local.depth = getattr(local, "depth", 0) + 1
        try:
            yield
        finally:
            local.depth -= 1
        return
    owner = _LANES[lane]
    local.depth, local.since = 1, time.monotonic()
    local.held = owner if owner._acquire(resuming) else None
    gil_affinity.current().follow()
    try:
        yield
    finally:
        if local.held is not None:
            local.held._release()
        local.depth, local.held = 0, None


@contextlib.contextmanager
def blocking() -> Iterator[None]:
    """The caller's slot handed on for a wait that needs no CPU, taken back after it."""
    local = _LOCAL
    owner = getattr(local, "held", None)
    if owner is None:
        yield
        return
    local.held = None
    owner._release()
    try:
        yield
    finally:
        local.held = owner if owner._acquire(resuming=True) else None
        local.since = time.monotonic()


def time_slice() -> None:
    """At a checkpoint: after SLICE_S holding a slot that others wait for, queue again."""
    local = _LOCAL
    owner = getattr(local, "held", None)
    if owner is not None and owner.waiting() and time.monotonic() - local.since >= SLICE_S:
        local.held = None
        owner._release()
        local.held = owner if owner._acquire(resuming=False) else None  # behind the waiting
        local.since = time.monotonic()


def _run_in_slot(fn, args, kwargs):
    with slot(QUERY, resuming=True):
        return fn(*args, **kwargs)


def busy() -> bool:
    """Statements are waiting for a query slot: the CPU has work enough without a statement
    spreading its own over the pool's threads."""
    lane = _LANES[QUERY]
    return lane is not None and lane.busy()


def idle() -> bool:
    """No statement holds a slot of any lane (nothing runs Python in a worker thread, as far
    as the slots know; without slots, True)."""
    return all(lane is None or lane._free >= lane.slots for lane in _LANES.values())


class SlotPool(ThreadPoolExecutor):
    """The executor's pool (scan units, join sides). While statements wait for slots, a task
    runs in the submitting thread (`busy`): the statements already use every slot, and
    spreading one statement's tasks over more threads would only add GIL hand-offs (each
    task's start and end, each wait for a result, is a context switch). Otherwise each task
    runs holding a slot, served as work of a running statement, and the statement waits for
    their results with its own slot handed on, so that its tasks can take it."""

    def submit(self, fn, /, *args, **kwargs):
        if busy():
            future: Future = Future()
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - delivered by result(), as the pool's
                future.set_exception(exc)
            return future
        return super().submit(_run_in_slot, fn, args, kwargs)

    def map(self, fn, *iterables, timeout=None, chunksize=1):
        if busy():
            return map(fn, *iterables)
        return _waited(super().map(fn, *iterables, timeout=timeout, chunksize=chunksize))


def _waited(results: Iterator) -> Iterator:
    while True:
        with blocking():
            try:
                item = next(results)
            except StopIteration:
                return
        yield item
