"""Slice compaction: the cumulative compactions of many tablets' small load slices as one task.

The producer (catalog/compaction_scheduler.py) runs it at the start of a cumulative round, at
most every SLICE_ROUND_SECONDS:

    prepare_task(...) per tablet        seed 002's policy picks each tablet's inputs, as for a
                                        per-tablet task (skip window, min deltas, levels, the
                                        cumulative point)
    storage.slice_compaction.eligible   inputs that are all small load-file slices
    grouped by table and index schema   one task per group:
        compact_slices(...)             one merge and one new load file for all its tablets
        under the table's load lock     one journal entry swaps every tablet whose inputs are
                                        still published:

    op              data
    compact_slices  {txn_id, items: [the per-tablet `compact` entry: db, table, partition,
                     tablet, kind, inputs, meta], ...}

and each tablet's CompactionState moves as after a per-tablet cumulative compaction.

Slices are the transient form of a tablet under a stream of small loads: `settle_task` gives the
producer, for a tablet that has had no new rowset for SLICE_SETTLE_SECONDS, its trailing
slices as one per-tablet cumulative task (even a single slice), which writes them as a segment
with every index; reads after a burst of loads then find segments, as after one large load. A tablet
whose inputs changed meanwhile (a DROP, an ADMIN COMPACT) is left out of the entry and its output
slice dropped; a failure leaves every tablet as it was (the output file goes with its last
reference) and sets the tablets' cumulative failure time (the back-off), unless a tablet of the
group was dropped meanwhile (its files may be gone; the next round groups the others again). Replay applies each item
as a `compact` entry; the entry's txn_id keeps transaction ids (and so load file names) unique
across restarts.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Callable

from catalog.compaction import CUMULATIVE, CompactionTask, TabletRef, prepare_task
from storage.compaction_policy import CompactionConfig, promotion_size, update_cumulative_point
from storage.schema import UNIQUE_KEYS
from storage.errors import StorageError
from storage.slice_compaction import SliceInputs, compact_slices, eligible, group_key

if TYPE_CHECKING:
    from catalog.catalog import Catalog

log = logging.getLogger(__name__)

SLICE_ROUND_SECONDS = 1.0  # the producer looks for slice compactions at most this often
SLICE_SETTLE_SECONDS = 10.0  # a tablet this long without a new rowset has its slices settled


def slice_tasks(cat: Catalog, refs: list[TabletRef], cfg: CompactionConfig, now: float,
                skip: Callable[[TabletRef], bool]) -> list[list[CompactionTask]]:
    """The cumulative tasks whose inputs are small slices, grouped by table and index schema
    (tablets for which `skip` is true are left alone)."""
    groups: dict[tuple, list[CompactionTask]] = defaultdict(list)
    for ref in refs:
        if skip(ref):
            continue
        try:
            tablet = cat.engine.get_tablet(ref.tablet_id)
        except StorageError:  # dropped since the round listed it
            continue
        if tablet.compaction.running or not _has_slices(tablet):
            continue
        task = prepare_task(cat, ref, CUMULATIVE, cfg, now)
        if task is None:
            continue
        metas = [r.meta for r in task.inputs if r.meta is not None]
        if len(metas) == len(task.inputs) and eligible(tablet, metas):
            groups[(ref.table_id, group_key(tablet))].append(task)
    return list(groups.values())


def _has_slices(tablet) -> bool:
    """At least two of the newest rowsets are slices (a cheap test before the policy)."""
    view = tablet.compaction_view()
    return len(view) >= 3 and view[-1].meta is not None and view[-2].meta is not None and \
        view[-1].meta.load_file is not None and view[-2].meta.load_file is not None


def run_slice_compaction(cat: Catalog, tasks: list[CompactionTask]) -> int:
    """One group's merge and swap; how many tablets it compacted."""
    from catalog.load import table_lock  # catalog.load imports the catalog, which imports us

    for task in tasks:
        task.tablet.compaction.running = CUMULATIVE
    outputs = []
    schemas = [t.tablet.schema for t in tasks]
    try:
        txn_id = cat.begin_txn()
        work = [SliceInputs(t.tablet, [r.meta for r in t.inputs]) for t in tasks]
        schema = tasks[0].tablet.schema
        name = f"compact_{txn_id}_{tasks[0].ref.table_id}.arrow"
        outputs = compact_slices(cat.engine.load_files, schema, work, name, txn_id)
        with table_lock(tasks[0].ref.table_id):
            done = _swap(cat, tasks, schemas, outputs, txn_id)
    except BaseException:
        now = time.time()
        for task, out in zip(tasks, outputs):
            task.tablet.abort_rowset(out)
        if all(cat.engine.has_tablet(t.ref.tablet_id) for t in tasks):
            for task in tasks:  # the back-off; not for a group that lost a tablet to a DROP
                task.tablet.compaction.last_cumu_failure = now  # or TRUNCATE meanwhile
        raise
    finally:
        for task in tasks:
            task.tablet.compaction.running = ""
    now = time.time()
    for task, out in done:
        state = task.tablet.compaction
        state.last_cumu_success = now
        state.cumulative_point = update_cumulative_point(
            state.cumulative_point, out.end_version, out.data_size, task.last_delete_version,
            task.promotion)
    return len(done)


def _swap(cat: Catalog, tasks: list[CompactionTask], schemas: list, outputs: list,
          txn_id: int) -> list:
    """Journal the swap of every tablet whose inputs are all still published (call with the
    table's load lock); the others' outputs are dropped. Returns [(task, output)] swapped."""
    done, items = [], []
    with cat.lock:
        for task, schema, out in zip(tasks, schemas, outputs):
            ref = task.ref
            live = {r.rowset_id for r in task.tablet.rowsets()}
            db = cat.dbs.get(ref.db)
            table = db.tables.get(ref.table) if db else None
            partition = table.partitions.get(ref.partition_id) if table else None
            inputs = [r.meta.rowset_id for r in task.inputs]
            if partition is None or ref.tablet_id not in partition.tablets or \
                    task.tablet.schema is not schema or \
                    any(i not in live for i in inputs) or \
                    not cat.engine.has_tablet(ref.tablet_id):
                task.tablet.abort_rowset(out)
                continue
            items.append({"db": ref.db, "table": ref.table, "partition": ref.partition_id,
                          "tablet": ref.tablet_id, "kind": CUMULATIVE, "inputs": inputs,
                          "meta": out.to_dict()})
            done.append((task, out))
        if items:
            cat.log_compaction({"txn_id": txn_id, "items": items}, op="compact_slices")
    return done


def settle_task(cat: Catalog, ref: TabletRef, cfg: CompactionConfig,
                now: float) -> CompactionTask | None:
    """A quiet tablet's trailing slices (after the cumulative point, no DELETE among them) as
    one cumulative task, even a single slice: the per-tablet compaction writes them as a
    segment with every index. Slices are the form of a table under a stream of small loads;
    once the loads stop, reads deserve segments (scan units, short key, zone maps)."""
    try:
        tablet = cat.engine.get_tablet(ref.tablet_id)
    except StorageError:
        return None
    if tablet.schema.keys_type == UNIQUE_KEYS or tablet.compaction.running:
        return None
    view = tablet.compaction_view()
    if not view or view[-1].meta is None or view[-1].meta.load_file is None or \
            now - view[-1].created < SLICE_SETTLE_SECONDS:
        return None
    point = tablet.compaction.cumulative_point
    inputs = []
    for info in reversed(view):
        meta = info.meta
        if meta is None or meta.load_file is None or meta.is_delete or info.start < point:
            break
        inputs.append(info)
    if not inputs:
        return None
    inputs.reverse()
    return CompactionTask(ref, tablet, CUMULATIVE, inputs, -1, promotion_size(view, cfg))
