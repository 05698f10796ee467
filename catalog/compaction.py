"""Cumulative compaction of tablets, journaled, and the daemon that runs it.

Each load adds a rowset to every tablet it touches; a tablet with many small rowsets makes
every scan pay per-segment work many times over. Doris's BE compacts them in the background;
here `compact_table` does one table and `CompactionDaemon` walks all tables every
`generate_compaction_tasks_interval_ms` (BE config `disable_auto_compaction` turns it off;
`cumulative_compaction_min_deltas` rowsets in a row trigger a tablet, as in Doris).

Per tablet, under the table's load lock (so no load, DELETE, index or partition change runs
meanwhile): storage writes the merged rowset (`Tablet.compact`, storage/compaction.py), then
one journal entry swaps it in for its inputs, in the catalog and in storage:

    op        data
    compact   {db, table, partition, tablet, inputs: [rowset ids], meta: RowsetMeta dict with
               its version range}

On replay only the catalog changes (the restored tablet publishes the compacted rowset with its
range; the inputs' files are deleted as unpublished). A failure before the entry leaves a
pending rowset, removed at the next start.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from catalog.model import OlapTable
from storage.compaction import pick_inputs
from storage.rowset import RowsetMeta

if TYPE_CHECKING:
    from catalog.catalog import Catalog

log = logging.getLogger(__name__)

DEFAULT_MIN_DELTAS = 5


def compact_table(cat: Catalog, db_name: str, table: OlapTable,
                  min_deltas: int = DEFAULT_MIN_DELTAS) -> int:
    """Compact every tablet of `table` with a run of >= min_deltas rowsets; how many were."""
    from catalog.load import table_lock  # catalog.load imports the catalog, which imports us
    done = 0
    for pid, tid in [(p.partition_id, tid) for p in list(table.partitions.values())
                     for tid in list(p.tablets)]:
        if _compact_tablet(cat, db_name, table, pid, tid, min_deltas,
                           table_lock(table.table_id)):
            done += 1
    return done


def _compact_tablet(cat: Catalog, db_name: str, table: OlapTable, pid: int, tid: int,
                    min_deltas: int, lock) -> bool:
    """The merge runs without the table's load lock (loads keep publishing); only the swap's
    journal entry takes it. A swap whose inputs are gone by then changes nothing."""
    partition = table.partitions.get(pid)
    if partition is None or tid not in partition.tablets or not cat.engine.has_tablet(tid):
        return False
    tablet = cat.engine.get_tablet(tid)
    inputs = pick_inputs(tablet.rowsets(), min_deltas)
    if inputs is None:
        return False
    output = tablet.compact(inputs, cat.begin_txn())
    with lock:
        cat.log_compaction({"db": db_name, "table": table.name, "partition": pid, "tablet": tid,
                            "inputs": [r.rowset_id for r in inputs],
                            "meta": output.to_dict()})
    return True


def compact_all(cat: Catalog, min_deltas: int = DEFAULT_MIN_DELTAS) -> int:
    """One pass over every OLAP table; the number of tablets compacted."""
    with cat.lock:
        tables = [(db.name, t) for db in cat.dbs.values() for t in db.tables.values()
                  if isinstance(t, OlapTable)]
    return sum(compact_table(cat, db, t, min_deltas) for db, t in tables)


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


APPLY = {"compact": apply_compact}


class CompactionDaemon:
    """Runs `compact_all` every interval on a daemon thread until `stop()`."""

    def __init__(self, cat: Catalog, interval_s: float, min_deltas: int = DEFAULT_MIN_DELTAS):
        self.cat, self.interval_s, self.min_deltas = cat, interval_s, min_deltas
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="compaction", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                done = compact_all(self.cat, self.min_deltas)
            except Exception:  # a daemon's boundary: log and keep compacting (as Doris's daemons)
                log.exception("compaction pass failed")
                continue
            if done:
                log.info("compacted %d tablets", done)
