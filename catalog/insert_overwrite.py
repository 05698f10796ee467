"""INSERT OVERWRITE's partition swap, as Doris's InsertOverwriteUtil does it.

    INSERT OVERWRITE TABLE t [PARTITION (p1, ...) | PARTITION (*)] [(cols)] SELECT ... | VALUES ...

`begin` adds, for every target partition (the named ones, else every formal partition of the
table), a temporary partition with the same range or values, buckets and replicas (one
`add_partitions` journal entry, `"temporary": true`). The statement then loads its rows into
those temporary partitions only (a row that belongs to none fails the load as any strict
INSERT). `commit` replaces the targets by them in one `replace_partitions` entry (the
temporary ones take the old names), so a reader or a restart sees the old data or the new,
never a mix; `abort` drops them.

`PARTITION (*)` (Doris 2.1.3's auto-detect overwrite) targets every partition, and `commit`
replaces only those whose temporary copy received rows (its visible version moved); the other
copies are dropped and their partitions keep their data. As in Doris 2.1 (before 3.0.3's
`enable_auto_create_when_overwrite`), a row with no partition fails the statement, also on an
AUTO PARTITION table. Temporary partitions an interrupted overwrite left behind
(named `OVERWRITE_PREFIX...`) are dropped at start-up (`drop_leftovers`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.debug_points import debug_point
from catalog.errors import AnalysisError, DdlError, DorisError
from catalog.partition_ddl import db_of, locked_table
from catalog.rollup_job import check_normal

if TYPE_CHECKING:
    from catalog.catalog import Catalog

OVERWRITE_PREFIX = "iot_temp_"


@dataclass
class Overwrite:
    db: str
    table: str
    targets: list[int]      # formal partition ids replaced
    temps: list[int]        # their temporary partitions, in the same order
    auto_detect: bool = False  # PARTITION (*): replace only the partitions that got rows


def begin(cat: Catalog, db_name: str | None, table_name: str,
          partition_names: list[str] | None, auto_detect: bool = False) -> Overwrite:
    with locked_table(cat, db_name, table_name) as table:
        if partition_names is None:
            targets = table.sorted_partitions()
        else:
            targets = table.partitions_named(partition_names, lambda name: AnalysisError(
                f"partition {name} is not found in table {table.name}"))
        if not targets:
            raise DdlError(f"table {table.name} has no partition to overwrite")
        check_normal(cat, table)  # its temporary partitions: InternalCatalog.addPartition
        tag = uuid.uuid4().hex[:8]
        temps = [cat.new_partition(table, f"{OVERWRITE_PREFIX}{tag}_{i}", p.lower, p.upper,
                                   p.values, p.buckets, p.replication_num)
                 for i, p in enumerate(targets)]
        db = db_of(cat, table)
        cat._log("add_partitions", {"db": db, "table": table.name,
                                    "partitions": [p.to_dict() for p in temps],
                                    "next_id": cat.next_id, "temporary": True})
        return Overwrite(db, table.name, [p.partition_id for p in targets],
                         [p.partition_id for p in temps], auto_detect)


def commit(cat: Catalog, ow: Overwrite) -> None:
    debug_point("insert_overwrite.before_replace")
    with locked_table(cat, ow.db, ow.table) as table:
        missing = [pid for pid in ow.targets if pid not in table.partitions]
        if missing or any(pid not in table.temp_partitions for pid in ow.temps):
            raise DdlError(f"partitions of table {table.name} changed during INSERT OVERWRITE; "
                           f"nothing was overwritten")
        pairs = list(zip(ow.targets, ow.temps))
        if ow.auto_detect:
            untouched = [t for _, t in pairs if table.temp_partitions[t].visible_version <= 1]
            if untouched:
                cat._log("drop_partitions", {"db": ow.db, "table": table.name,
                                             "partition_ids": untouched, "temporary": True})
            pairs = [(o, t) for o, t in pairs if t not in untouched]
            if not pairs:
                return
        cat._log("replace_partitions", {
            "db": ow.db, "table": table.name, "drop": [o for o, _ in pairs],
            "promote": [t for _, t in pairs],
            "rename": {str(t): table.partitions[o].name for o, t in pairs}})


def abort(cat: Catalog, ow: Overwrite) -> None:
    try:
        with locked_table(cat, ow.db, ow.table) as table:
            left = [pid for pid in ow.temps if pid in table.temp_partitions]
            if left:
                cat._log("drop_partitions", {"db": ow.db, "table": table.name,
                                             "partition_ids": left, "temporary": True})
    except DorisError:
        pass  # the table went away: its temporary partitions with it


def drop_leftovers(cat: Catalog) -> int:
    """At start-up: the temporary partitions of overwrites a crash interrupted."""
    dropped = 0
    with cat.lock:
        tables = [(db.name, t.name, [pid for pid, p in t.temp_partitions.items()
                                     if p.name.startswith(OVERWRITE_PREFIX)])
                  for db in cat.dbs.values() for t in db.tables.values()
                  if getattr(t, "temp_partitions", None)]
    for db, name, pids in tables:
        if pids:
            abort(cat, Overwrite(db, name, [], pids))
            dropped += len(pids)
    return dropped
