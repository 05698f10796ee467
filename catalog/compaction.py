"""Compaction of tablets: seed 002's tasks (prepare, then execute), journaled.

A task is one tablet and one type, in Doris's two phases:

    prepare_task(cat, ref, kind, cfg, now)   (preparation) the policy picks the inputs
        cumulative: cp = calculate_cumulative_point(...), pick_cumulative_inputs(...)
        base:       pick_base_inputs(...) over the rowsets before cp
        -> CompactionTask with its permits (the inputs' segments), or None
    execute_task(cat, task)                  (execution) the merge, then the swap
        Tablet.compact: the inputs' rows merged by the tablet's own schema and model
        (Aggregate/Unique keys folded; a base compaction applies its DELETE versions and
        purges them); the output is written and fsynced as a pending rowset; then, under the
        table's load lock (so no index change interleaves), one journal entry swaps it in:

    op        data
    compact   {db, table, partition, tablet, kind, inputs: [rowset ids], meta: RowsetMeta dict
               with its version range}

    and the tablet's CompactionState moves: cumulative point (update_cumulative_point), last
    success or failure time. A failure (any error while merging or writing) leaves the tablet
    as it was, readable, with the output's files removed; the producer skips the tablet for
    that type for min_compaction_failure_interval_sec (the back-off).

The merge runs without the table lock: loads and DELETEs only add rowsets of higher versions,
and queries hold snapshots (storage/snapshot.py), so neither waits for a compaction. The
inputs become stale rowsets whose files go when no snapshot holds them. On replay only the
catalog changes; a crash before the entry leaves a pending output, removed at the next start,
a crash after it leaves the inputs' files, removed the same way. Rollup tablets compact like
base tablets: each tablet merges with its own TabletSchema.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.debug_points import debug_point
from catalog.errors import DorisError
from catalog.rollup_job import running_job
from catalog.model import OlapTable
from storage.compaction_policy import (CompactionConfig, RowsetInfo, calculate_cumulative_point,
                                       pick_base_inputs, pick_cumulative_inputs, promotion_size,
                                       tablet_view, update_cumulative_point)
from storage.errors import StorageError
from storage.rowset import RowsetMeta
from storage.tablet import Tablet

if TYPE_CHECKING:
    from catalog.catalog import Catalog

log = logging.getLogger(__name__)

BASE, CUMULATIVE = "base", "cumulative"


@dataclass(frozen=True)
class TabletRef:
    """Where a tablet lives in the catalog (what the journal entry names) and its disk."""
    db: str
    table: str
    table_id: int
    partition_id: int
    tablet_id: int
    backend_id: int


@dataclass
class CompactionTask:
    ref: TabletRef
    tablet: Tablet
    kind: str
    inputs: list[RowsetInfo]
    last_delete_version: int
    promotion: int

    @property
    def permits(self) -> int:
        """Seed 002 §2.2: a task's permits are the segments it merges."""
        return sum(r.segments for r in self.inputs)


class CompactionError(Exception):
    """A compaction could not run (Doris's -2000 / -808 style failures)."""


def tablet_refs(cat: Catalog) -> list[TabletRef]:
    """Every tablet of every OLAP table (all indexes: rollup tablets compact by their own
    schema) not under an alter job, with its first replica's backend."""
    refs = []
    with cat.lock:
        # seed 002: tablets under an alter operation (a rollup job's table) are left alone
        altering = {j.table_id for j in getattr(cat, "alter_jobs", {}).values()
                    if j.state in ("WAITING_TXN", "RUNNING")}
        for db in cat.dbs.values():
            for t in db.tables.values():
                if not isinstance(t, OlapTable) or t.table_id in altering:
                    continue
                for p in t.partitions.values():
                    for tid, meta in p.tablets.items():
                        refs.append(TabletRef(db.name, t.name, t.table_id, p.partition_id, tid,
                                              meta.replicas[0] if meta.replicas else 0))
    return refs


def find_tablet(cat: Catalog, tablet_id: int) -> TabletRef | None:
    return next((r for r in tablet_refs(cat) if r.tablet_id == tablet_id), None)


def check_version_count(cat: Catalog, tablet_ids, action: str = "init delta writer") -> None:
    """Doris's max_tablet_version_num guard: a load (or DELETE: "push data") into a tablet that
    already has more versions than the limit fails with -235 (TOO_MANY_VERSION)."""
    limit = cat.max_tablet_version_num
    for tid in tablet_ids:
        count = cat.engine.get_tablet(tid).version_count()
        if count > limit:
            raise DorisError(f"[E-235]failed to {action}. version count: {count}, exceed "
                             f"limit: {limit}, tablet: {tid}")


def prepare_task(cat: Catalog, ref: TabletRef, kind: str, cfg: CompactionConfig,
                 now: float | None = None) -> CompactionTask | None:
    """The inputs the policy picks for a `kind` compaction of the tablet, or None."""
    if running_job(cat, ref.table_id) is not None:
        return None  # an ADD ROLLUP job reads the base tablets at its watershed version
    now = time.time() if now is None else now
    try:
        tablet = cat.engine.get_tablet(ref.tablet_id)
    except StorageError:  # dropped meanwhile (DROP, TRUNCATE)
        return None
    state = tablet.compaction
    view = tablet.compaction_view()
    promotion = promotion_size(view, cfg)
    state.cumulative_point = calculate_cumulative_point(view, state.cumulative_point, promotion)
    if kind == CUMULATIVE:
        inputs, last_delete = pick_cumulative_inputs(view, state.cumulative_point, promotion,
                                                     cfg, now)
        if not inputs and last_delete != -1:
            # Doris: nothing to merge before a delete version -> the point moves past it, so
            # base compaction takes the delete (and whatever precedes it) over
            state.cumulative_point = last_delete + 1
    else:
        inputs, _ = pick_base_inputs(view, state.cumulative_point, cfg, now,
                                     state.base_interval_start)
        last_delete = -1
    if not [r for r in inputs if r.meta is not None]:
        return None
    return CompactionTask(ref, tablet, kind, inputs, last_delete, promotion)


def _check_process_memory(cat: Catalog) -> None:
    """mem_limit: a compaction does not start while the process is over it (after the page
    cache is dropped); it fails like any other (back-off) and runs again later."""
    from storage.process_memory import over_limit

    message = over_limit(cat.engine)
    if message is not None:
        raise CompactionError(f"[MEM_LIMIT_EXCEEDED]{message}")


def execute_task(cat: Catalog, task: CompactionTask) -> RowsetMeta:
    """Merge and swap in (see the module docstring); raises on failure, tablet unchanged."""
    from catalog.load import table_lock  # catalog.load imports the catalog, which imports us
    tablet, state = task.tablet, task.tablet.compaction
    metas = [r.meta for r in task.inputs if r.meta is not None]
    schema = tablet.schema
    state.running = task.kind
    try:
        debug_point("compaction.before_merge")
        _check_process_memory(cat)
        output = tablet.compact(metas, cat.begin_txn(), start_version=task.inputs[0].start)
        debug_point("compaction.after_merge")
        try:
            with table_lock(task.ref.table_id):
                if tablet.schema is not schema:
                    raise CompactionError(f"tablet {tablet.tablet_id}: schema changed while "
                                          f"compacting")
                _swap(cat, task, metas, output)
            debug_point("compaction.after_swap")
        except BaseException:
            if output.rowset_id not in {r.rowset_id for r in tablet.rowsets()}:
                tablet.discard_pending(output)
            raise
    except BaseException:
        if task.kind == BASE:
            state.last_base_failure = time.time()
        else:
            state.last_cumu_failure = time.time()
        raise
    finally:
        state.running = ""
    if task.kind == BASE:
        state.last_base_success = time.time()
    else:
        state.last_cumu_success = time.time()
        state.cumulative_point = update_cumulative_point(
            state.cumulative_point, output.end_version, output.data_size,
            task.last_delete_version, task.promotion)
    return output


def _swap(cat: Catalog, task: CompactionTask, metas: list[RowsetMeta],
          output: RowsetMeta) -> None:
    live = {r.rowset_id for r in task.tablet.rowsets()}
    if any(m.rowset_id not in live for m in metas):
        raise CompactionError(f"tablet {task.ref.tablet_id}: input rowsets changed")
    with cat.lock:
        db = cat.dbs.get(task.ref.db)
        table = db.tables.get(task.ref.table) if db else None
        partition = table.partitions.get(task.ref.partition_id) if table else None
        if partition is None or task.ref.tablet_id not in partition.tablets:
            raise CompactionError(f"tablet {task.ref.tablet_id} was dropped")
        # merge-on-write: rows deleted after the output's versions (loads published while it
        # merged included) move onto the output's rows, in the same journal entry
        task.tablet.carry_delete_bitmap(output, metas)
        cat.log_compaction({"db": task.ref.db, "table": task.ref.table,
                            "partition": task.ref.partition_id, "tablet": task.ref.tablet_id,
                            "kind": task.kind, "inputs": [m.rowset_id for m in metas],
                            "meta": output.to_dict()})


def compact_tablet(cat: Catalog, ref: TabletRef, kind: str, cfg: CompactionConfig) -> bool:
    """Prepare and execute one compaction now; False when the policy picks nothing."""
    task = prepare_task(cat, ref, kind, cfg)
    if task is None:
        return False
    execute_task(cat, task)
    return True


def compact_all(cat: Catalog, cfg: CompactionConfig = CompactionConfig(),
                kinds: tuple[str, ...] = (CUMULATIVE, BASE)) -> int:
    """Every tablet, each kind once, synchronously (tests, ADMIN); how many compactions ran."""
    return sum(compact_tablet(cat, ref, kind, cfg) for ref in tablet_refs(cat) for kind in kinds)


def apply_compact(cat: Catalog, data: dict) -> None:
    db = cat.dbs.get(data["db"])
    table = db.tables.get(data["table"]) if db else None
    partition = table.partitions.get(data["partition"]) if table else None
    tablet = partition.tablets.get(data["tablet"]) if partition else None
    if tablet is None:
        return  # dropped meanwhile
    inputs = set(data["inputs"])
    present = [i for i, r in enumerate(tablet.rowsets) if r["meta"]["rowset_id"] in inputs]
    if len(present) != len(inputs):
        return  # already applied (replay) or an input is gone
    meta = data["meta"]
    kept = [r for r in tablet.rowsets if r["meta"]["rowset_id"] not in inputs]
    kept.insert(present[0], {"meta": meta, "version": meta["end_version"]})
    tablet.rowsets = kept
    if not cat.replaying:
        cat.engine.get_tablet(data["tablet"]).replace_rowsets(data["inputs"],
                                                              RowsetMeta.from_dict(meta))


def apply_compact_slices(cat: Catalog, data: dict) -> None:
    """Many tablets' compactions in one entry (catalog/slice_compaction.py)."""
    cat.last_txn_id = max(cat.last_txn_id, int(data["txn_id"]))
    for item in data["items"]:
        apply_compact(cat, item)


APPLY = {"compact": apply_compact, "compact_slices": apply_compact_slices}
