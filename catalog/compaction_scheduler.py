"""The compaction producer and its consumer pool with permits (seed 002 §2).

    producer thread, one round every generate_compaction_tasks_min_interval_ms (and at least
    PRODUCER_DUTY_FACTOR x its last round's CPU time apart: a round is Python over every tablet):
      every (cumulative_compaction_rounds_for_each_base_compaction_round + 1)-th round makes
      base tasks, the others cumulative tasks; per disk (a simulated backend: a tablet's first
      replica) that runs fewer than compaction_task_num_per_disk tasks, among tablets not
      already submitted, not running, whose table does not set disable_auto_compaction, and
      whose last failure of that type is older than min_compaction_failure_interval_sec (the
      back-off), the tablet with the highest
          tablet_score = compaction_tablet_scan_frequency_factor x scan frequency
                       + compaction_tablet_compaction_score_factor x compaction score
      is prepared (catalog/compaction.py); its task asks `Permits` for its segments
      (total_permits_for_compaction_score; blocking, one submission at a time; a task asking
      more than the total runs once the pool is idle) and goes to the pool.
      A cumulative round begins, at most once a second, with the slice compactions
      (catalog/slice_compaction.py): every tablet whose inputs are small load slices, merged
      group by group in this thread, with their permits, marked submitted meanwhile.
      A round that finds every disk full sleeps up to 2 s or until a task ends. A round after
      one that produced nothing is skipped unless some tablet's rowsets changed or a second
      has passed (time alone makes rowsets leave the skip window): idle rounds cost nothing.
    disable_auto_compaction (BE config, read every round) stops producing.

`run_manual(ref, kind)` is the BE HTTP API's /api/compaction/run: prepared at once (an error
when the policy picks nothing), executed on its own thread, one at a time; `status()` is
/api/compaction/run_status. Tests drive `produce_round()` directly.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from catalog.compaction import (BASE, CUMULATIVE, CompactionError, CompactionTask, TabletRef,
                                execute_task, prepare_task, tablet_refs)
from catalog.slice_compaction import (SLICE_ROUND_SECONDS, run_slice_compaction, settle_task,
                                      slice_tasks)
from storage.compaction_policy import (CompactionConfig, base_score, calculate_cumulative_point,
                                       cumulative_score, promotion_size)
from storage import cpu_slots
from storage.errors import StorageError
from storage.tablet import Tablet

if TYPE_CHECKING:
    from catalog.catalog import Catalog

log = logging.getLogger(__name__)

IDLE_WAIT_SECONDS = 2.0  # seed 002: a round with every disk full sleeps until a task ends or 2 s
FULL_ROUND_SECONDS = 1.0  # with nothing changed, a round at least this often
SCORE_REFRESH_SECONDS = 0.5  # a tablet's cached score is kept this long while loads change it
# A round walks every tablet in Python (thousands with hundreds of daily partitions), so the
# producer waits at least this many times its last round's CPU time before the next: at most
# a tenth of the process's time goes to producing, whatever the tablet count. CPU time, not wall
# time: under 32 clients a round of a few milliseconds of Python took 100-300 ms waiting for the
# GIL, the producer then slept seconds, and a table loaded 200 times a second reached the
# version limit (-235) with compaction idle.
PRODUCER_DUTY_FACTOR = 9


@dataclass(frozen=True)
class SchedulerConfig:
    task_num_per_disk: int = 2             # compaction_task_num_per_disk
    min_failure_interval_sec: float = 600  # min_compaction_failure_interval_sec
    scan_frequency_factor: float = 0       # compaction_tablet_scan_frequency_factor
    score_factor: float = 1                # compaction_tablet_compaction_score_factor
    min_interval_ms: int = 10              # generate_compaction_tasks_min_interval_ms
    rounds_for_each_base: int = 9          # cumulative_compaction_rounds_for_each_base_compaction_round
    total_permits: int = 10000             # total_permits_for_compaction_score
    max_threads: int = 10                  # max_compaction_threads


class Permits:
    """Seed 002 §2.2: a task runs only with its permits; they come back when it ends."""

    def __init__(self, total: int):
        self.total, self.used = total, 0
        self._cond = threading.Condition()

    def acquire(self, n: int, stop: threading.Event | None = None) -> bool:
        with self._cond:
            while not (self.used + n <= self.total or (n > self.total and self.used == 0)):
                if stop is not None and stop.is_set():
                    return False
                self._cond.wait(0.1)
            self.used += n
            return True

    def release(self, n: int) -> None:
        with self._cond:
            self.used -= n
            self._cond.notify_all()


class CompactionScheduler:
    def __init__(self, cat: Catalog, policy: CompactionConfig, config: SchedulerConfig,
                 disabled: Callable[[], bool] = lambda: False):
        self.cat, self.policy, self.config, self.disabled = cat, policy, config, disabled
        self.permits = Permits(config.total_permits)
        self.pool = ThreadPoolExecutor(max_workers=max(1, config.max_threads),
                                       thread_name_prefix="compaction")
        self.rounds = 0
        self._lock = threading.Condition()
        self._submitted: dict[int, tuple[str, int]] = {}  # tablet id -> (kind, disk)
        self._manual: tuple[int, str] | None = None
        # tablet id -> (generation, cumulative point, when, (cumulative, base) scores)
        self._scores: dict[int, tuple[int, int, float, tuple[int, int]]] = {}
        self._last_slice_round = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the producer ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="compaction-producer",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.pool.shutdown(wait=True, cancel_futures=True)

    def _run(self) -> None:
        produced, seen, last_round = 1, -1, 0.0
        while not self._stop.is_set():
            if not produced and Tablet.changes == seen and \
                    time.monotonic() - last_round < FULL_ROUND_SECONDS:
                self._stop.wait(self.config.min_interval_ms / 1000)
                continue
            seen, last_round = Tablet.changes, time.monotonic()
            cpu_began = time.thread_time()
            produced, full = 0, False
            if not self.disabled():
                try:
                    produced, full = self.produce_round()
                except Exception:  # a daemon's boundary: log and keep producing (as Doris's)
                    log.exception("compaction producer round failed")
            spent = time.thread_time() - cpu_began  # its CPU, not its waits for the GIL
            if full and not produced:
                with self._lock:
                    self._lock.wait(IDLE_WAIT_SECONDS)
            else:
                self._stop.wait(max(self.config.min_interval_ms / 1000,
                                    spent * PRODUCER_DUTY_FACTOR))

    def produce_round(self, now: float | None = None) -> tuple[int, bool]:
        """One round: (tasks submitted, whether every disk was at its task limit)."""
        now = time.time() if now is None else now
        self.rounds += 1
        kind = BASE if self.rounds % (self.config.rounds_for_each_base + 1) == 0 else CUMULATIVE
        by_disk: dict[int, list[TabletRef]] = defaultdict(list)
        refs = tablet_refs(self.cat)
        for ref in refs:
            by_disk[ref.backend_id].append(ref)
        produced, full_disks = 0, 0
        if kind == CUMULATIVE and time.monotonic() - self._last_slice_round >= SLICE_ROUND_SECONDS:
            self._last_slice_round = time.monotonic()
            produced += self._slice_round(refs, now)
        for disk, refs in sorted(by_disk.items()):
            with self._lock:
                busy = sum(1 for _, d in self._submitted.values() if d == disk)
                submitted = set(self._submitted)
            if busy >= self.config.task_num_per_disk:
                full_disks += 1
                continue
            task = self._pick(refs, submitted, kind, now)
            if task is not None and self._submit(task, disk):
                produced += 1
        return produced, bool(by_disk) and full_disks == len(by_disk)

    def _pick(self, refs: list[TabletRef], submitted: set[int], kind: str,
              now: float) -> CompactionTask | None:
        scored = []
        disabled: dict[int, bool] = {}  # table id -> disable_auto_compaction, once per round
        for ref in refs:
            if ref.tablet_id in submitted:
                continue
            if ref.table_id not in disabled:
                disabled[ref.table_id] = self._table_disabled(ref)
            if disabled[ref.table_id]:
                continue
            try:
                tablet = self.cat.engine.get_tablet(ref.tablet_id)
            except StorageError:  # dropped since the round listed it (DROP, TRUNCATE)
                continue
            state = tablet.compaction
            failed = state.last_base_failure if kind == BASE else state.last_cumu_failure
            if state.running or now - failed < self.config.min_failure_interval_sec:
                continue
            cumu, base = self.scores(tablet)
            score = cumu if kind == CUMULATIVE else base
            if score > 0:
                scored.append((self.config.scan_frequency_factor * tablet.scans +
                               self.config.score_factor * score, ref.tablet_id, ref))
        for _, _, ref in sorted(scored, key=lambda s: (-s[0], s[1]))[:4]:
            task = prepare_task(self.cat, ref, kind, self.policy, now)
            if task is not None:
                return task
        if kind == CUMULATIVE:  # nothing by score: a quiet tablet's slices become a segment
            for ref in refs:
                if ref.tablet_id in submitted:
                    continue
                task = settle_task(self.cat, ref, self.policy, now)
                if task is not None and not disabled.get(ref.table_id, False):
                    return task
        return None

    def _slice_round(self, refs: list[TabletRef], now: float) -> int:
        """Slice compactions (catalog/slice_compaction.py), each group of tablets marked
        submitted while it runs in this thread; how many tablets were compacted."""
        with self._lock:
            busy = set(self._submitted)
            if self._manual is not None:
                busy.add(self._manual[0])
        disabled: dict[int, bool] = {}

        def skip(ref: TabletRef) -> bool:
            if ref.tablet_id in busy:
                return True
            if ref.table_id not in disabled:
                disabled[ref.table_id] = self._table_disabled(ref)
            return disabled[ref.table_id]

        done = 0
        for tasks in slice_tasks(self.cat, refs, self.policy, now, skip):
            with self._lock:
                taken = [t for t in tasks if t.ref.tablet_id not in self._submitted and
                         (self._manual is None or self._manual[0] != t.ref.tablet_id)]
                for t in taken:
                    self._submitted[t.ref.tablet_id] = (CUMULATIVE, t.ref.backend_id)
            permits = sum(t.permits for t in taken)  # seed 002 §2.2, as for any task
            try:
                if taken and self.permits.acquire(permits, self._stop):
                    try:
                        with cpu_slots.slot(cpu_slots.COMPACTION):
                            done += run_slice_compaction(self.cat, taken)
                    finally:
                        self.permits.release(permits)
            except (CompactionError, StorageError, OSError, ValueError, RuntimeError) as exc:
                log.warning("slice compaction of %d tablets of table %d failed: %s",
                            len(taken), taken[0].ref.table_id, exc)
            except Exception:  # the producer's boundary: logged, the tablets unchanged
                log.exception("slice compaction of %d tablets failed", len(taken))
            finally:
                with self._lock:
                    for t in taken:
                        self._submitted.pop(t.ref.tablet_id, None)
                    self._lock.notify_all()
        return done

    def _table_disabled(self, ref: TabletRef) -> bool:
        with self.cat.lock:
            db = self.cat.dbs.get(ref.db)
            table = db.tables.get(ref.table) if db else None
            props = getattr(table, "properties", {}) or {}
        return str(props.get("disable_auto_compaction", "false")).lower() == "true"

    def scores(self, tablet) -> tuple[int, int]:
        """(cumulative, base) compaction score of a tablet (seed 002 §3.6, §4.4), cached per
        published state and cumulative point; under a stream of loads (a new state every
        load) recomputed at most every SCORE_REFRESH_SECONDS: scores only rank the tablets,
        and the task's inputs are picked afresh (prepare_task)."""
        state = tablet.compaction
        cached = self._scores.get(tablet.tablet_id)
        now = time.monotonic()
        if cached is not None and cached[1] == state.cumulative_point and \
                (cached[0] == tablet.generation or now - cached[2] < SCORE_REFRESH_SECONDS):
            return cached[3]
        view = tablet.compaction_view()
        promotion = promotion_size(view, self.policy)
        point = calculate_cumulative_point(view, state.cumulative_point, promotion)
        scores = (cumulative_score(view, point, promotion, self.policy), base_score(view, point))
        if len(self._scores) > 100000:
            self._scores.clear()
        self._scores[tablet.tablet_id] = (tablet.generation, state.cumulative_point, now, scores)
        return scores

    # -- the consumers --------------------------------------------------------------------------
    def _submit(self, task: CompactionTask, disk: int) -> bool:
        permits = task.permits
        if not self.permits.acquire(permits, self._stop):
            return False
        with self._lock:
            if task.ref.tablet_id in self._submitted:  # ADMIN COMPACT took it meanwhile
                self.permits.release(permits)
                return False
            self._submitted[task.ref.tablet_id] = (task.kind, disk)
        try:
            self.pool.submit(self._execute, task, permits)
        except RuntimeError:  # the pool is shut down
            self._finish(task, permits)
            return False
        return True

    def _execute(self, task: CompactionTask, permits: int) -> None:
        try:
            with cpu_slots.slot(cpu_slots.COMPACTION):  # storage/cpu_slots.py
                execute_task(self.cat, task)
        except (CompactionError, OSError, ValueError, RuntimeError) as exc:
            log.warning("%s compaction of tablet %d failed: %s", task.kind, task.ref.tablet_id,
                        exc)
        except Exception as exc:  # a worker's boundary: the failure time is set, the tablet unchanged
            if not self.cat.engine.has_tablet(task.ref.tablet_id):
                # dropped meanwhile (DROP/TRUNCATE): its files went with it; nothing to do
                log.info("%s compaction of tablet %d stopped: the tablet was dropped (%s)",
                         task.kind, task.ref.tablet_id, exc)
            else:
                log.exception("%s compaction of tablet %d failed", task.kind,
                              task.ref.tablet_id)
        finally:
            self._finish(task, permits)

    def _finish(self, task: CompactionTask, permits: int) -> None:
        self.permits.release(permits)
        with self._lock:
            self._submitted.pop(task.ref.tablet_id, None)
            self._lock.notify_all()

    # -- ADMIN COMPACT TABLE --------------------------------------------------------------------
    def run_now(self, ref: TabletRef, kind: str, wait_s: float = 300.0) -> None:
        """Compact one tablet in the caller's thread (ADMIN COMPACT replies once its tablets
        are done): after the compaction of the tablet in flight, if any, finishes; the tablet
        is marked submitted meanwhile, so the producer leaves it alone (two compactions of one
        tablet would read inputs the other removes)."""
        tid = ref.tablet_id
        deadline = time.monotonic() + wait_s
        with cpu_slots.blocking(), self._lock:  # the compaction in flight needs a CPU slot
            while tid in self._submitted or (self._manual is not None and self._manual[0] == tid):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CompactionError("fail to execute compaction, error = -2000")
                self._lock.wait(min(left, 1.0))
            self._submitted[tid] = (kind, 0)  # counted on no disk's permits
        try:  # prepared outside the scheduler's lock (preparing takes the catalog lock)
            task = prepare_task(self.cat, ref, kind, self.policy)
            if task is not None:
                execute_task(self.cat, task)
        finally:
            with self._lock:
                self._submitted.pop(tid, None)
                self._lock.notify_all()

    # -- manual compaction (BE HTTP API) --------------------------------------------------------
    def run_manual(self, ref: TabletRef, kind: str) -> None:
        """Prepare now (CompactionError if nothing to do or one is running), execute in the
        background."""
        with self._lock:
            tablet = self.cat.engine.get_tablet(ref.tablet_id)
            if self._manual is not None or ref.tablet_id in self._submitted or \
                    tablet.compaction.running:
                raise CompactionError("fail to execute compaction, error = -2000")
            task = prepare_task(self.cat, ref, kind, self.policy)
            if task is None:
                raise CompactionError("fail to execute compaction, error = -2000")
            self._manual = (ref.tablet_id, kind)
        threading.Thread(target=self._run_manual, args=(task,), daemon=True,
                         name="compaction-manual").start()

    def _run_manual(self, task: CompactionTask) -> None:
        try:
            execute_task(self.cat, task)
        except Exception:  # a worker's boundary: logged, failure time set, tablet unchanged
            log.exception("manual %s compaction of tablet %d failed", task.kind,
                          task.ref.tablet_id)
        finally:
            with self._lock:
                self._manual = None

    def manual_status(self) -> tuple[int, str] | None:
        with self._lock:
            return self._manual

    def running(self) -> dict[str, dict[str, list[int]]]:
        """/api/compaction/run_status: tablets compacting, by type and disk."""
        out: dict[str, dict[str, list[int]]] = {"CumulativeCompaction": {}, "BaseCompaction": {}}
        with self._lock:
            items = list(self._submitted.items())
            if self._manual is not None:
                items.append((self._manual[0], (self._manual[1], 0)))
        for tid, (kind, disk) in sorted(items):
            group = out["BaseCompaction" if kind == BASE else "CumulativeCompaction"]
            group.setdefault(f"/backend/{disk}", []).append(tid)
        return out
