"""Temporary partitions and table swaps: the statements ETL jobs use to replace data atomically.

    ALTER TABLE t ADD TEMPORARY PARTITION tp VALUES ... [DISTRIBUTED BY ... BUCKETS n]
    ALTER TABLE t DROP TEMPORARY PARTITION [IF EXISTS] tp
    ALTER TABLE t REPLACE PARTITION (p1, ...) WITH TEMPORARY PARTITION (tp1, ...)
        [PROPERTIES ("strict_range" = "true", "use_temp_partition_name" = "false")]
    ALTER TABLE t REPLACE WITH TABLE t2 [PROPERTIES ("swap" = "true")]

A temporary partition (`OlapTable.temp_partitions`) has tablets like a formal one but plain
reads and loads never see it; `SELECT ... FROM t TEMPORARY PARTITION (tp)` and `INSERT INTO t
TEMPORARY PARTITION (tp)` name it. Its range may overlap formal partitions, not other
temporary ones. REPLACE PARTITION drops the named formal partitions and makes the temporary
ones formal in one journal entry (Doris's OlapTable.replaceTempPartitions): with
`strict_range` (default) the two sets must cover exactly the same ranges ("2 range lists are
not stricly matched"); otherwise the new ones may not overlap the remaining formal ones; with
`use_temp_partition_name` false (default) and as many of each, the replacements take the old
names. REPLACE WITH TABLE swaps two tables' names (`swap` true, the default) or replaces t by
t2 (t is dropped). Each is one journal entry, so it survives a restart whole or not at all.

Not done: temporary partitions of tables with rollups are given the rollups' tablets as any new
partition is, but the tablet scheduler and compaction look at formal partitions only.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from catalog.create_table import plan_partitions
from catalog.errors import CodedDdlError, DdlError
from catalog.load import table_lock
from catalog.model import Partition
from catalog.partition_ddl import _buckets, _replicas, db_of, locked_table
from catalog.partitions import _key, format_range, partition_types
from catalog.rollup_job import check_normal
from catalog.statements import AddPartitionStmt

if TYPE_CHECKING:
    from catalog.catalog import Catalog


@dataclass
class AddTempPartitionStmt:
    add: AddPartitionStmt


@dataclass
class DropTempPartitionStmt:
    db: str | None
    table: str
    name: str
    if_exists: bool = False


@dataclass
class ReplacePartitionStmt:
    db: str | None
    table: str
    partitions: list[str]
    temp_partitions: list[str]
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class ReplaceTableStmt:
    db: str | None
    table: str
    other: str
    properties: dict[str, str] = field(default_factory=dict)


def _temp_by_name(table, name: str) -> Partition | None:
    low = name.lower()
    return next((p for p in table.temp_partitions.values() if p.name.lower() == low), None)


def add_temp_partition(cat: Catalog, db_name: str | None, stmt: AddTempPartitionStmt) -> None:
    add = stmt.add
    with locked_table(cat, add.db or db_name, add.table) as table:
        check_normal(cat, table)
        if table.partition_info.kind not in ("RANGE", "LIST"):
            raise DdlError("Only support adding partition to range and list partitioned table")
        desc = add.partition
        if table.partition_by_name(desc.name) or _temp_by_name(table, desc.name):
            raise CodedDdlError(f"Duplicate partition name {desc.name}", 1517, "HY000")
        buckets = _buckets(table, add)
        replicas = _replicas(cat, table, desc.properties)
        # Checked against the other temporary partitions only: it may overlap formal ones.
        [(name, lower, upper, values)] = plan_partitions(table, [desc],
                                                         list(table.temp_partitions.values()))
        p = cat.new_partition(table, name, lower, upper, values, buckets, replicas)
        cat._log("add_partitions", {"db": db_of(cat, table), "table": table.name,
                                    "partitions": [p.to_dict()], "next_id": cat.next_id,
                                    "temporary": True})


def drop_temp_partition(cat: Catalog, db_name: str | None, stmt: DropTempPartitionStmt) -> None:
    with locked_table(cat, stmt.db or db_name, stmt.table) as table:
        check_normal(cat, table)
        p = _temp_by_name(table, stmt.name)
        if p is None:
            if stmt.if_exists:
                return
            raise CodedDdlError(f"Error in list of partitions to {stmt.name}", 1507, "HY000")
        cat._log("drop_partitions", {"db": db_of(cat, table), "table": table.name,
                                     "partition_ids": [p.partition_id], "temporary": True})


def _flag(properties: dict[str, str], name: str, default: bool) -> bool:
    raw = properties.get(name)
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise DdlError(f"Invalid {name} property value: {raw}")
    return raw.strip().lower() == "true"


def replace_partitions(cat: Catalog, db_name: str | None, stmt: ReplacePartitionStmt) -> None:
    strict = _flag(stmt.properties, "strict_range", True)
    use_temp_name = _flag(stmt.properties, "use_temp_partition_name", False)
    with locked_table(cat, stmt.db or db_name, stmt.table) as table:
        check_normal(cat, table)
        olds, temps = [], []
        for name in stmt.partitions:   # Alter.replaceTempPartition's checks, in its order
            p = table.partition_by_name(name)
            if p is None:
                raise DdlError(f"Partition[{name}] does not exist")
            olds.append(p)
        for name in stmt.temp_partitions:
            p = _temp_by_name(table, name)
            if p is None:
                raise DdlError(f"Temp partition[{name}] does not exist")
            temps.append(p)
        if table.partition_info.kind == "RANGE":
            _check_ranges(table, olds, temps, strict)
        names = {}
        if not use_temp_name and len(olds) == len(temps):
            names = {t.partition_id: o.name for o, t in zip(olds, temps)}
        cat._log("replace_partitions", {
            "db": db_of(cat, table), "table": table.name,
            "drop": [p.partition_id for p in olds],
            "promote": [p.partition_id for p in temps],
            "rename": {str(k): v for k, v in names.items()}})


def _check_ranges(table, olds: list[Partition], temps: list[Partition], strict: bool) -> None:
    types = partition_types(table)

    def merged(parts: list[Partition]) -> list[tuple[list, list]]:
        out: list[tuple[list, list]] = []
        for p in sorted(parts, key=lambda p: _key(types, p.lower or [])):
            if out and _key(types, out[-1][1]) == _key(types, p.lower or []):
                out[-1] = (out[-1][0], p.upper)
            else:
                out.append((p.lower or [], p.upper))
        return out
    if strict:
        a, b = merged(olds), merged(temps)
        for (la, ua), (lb, ub) in zip(a, b):
            if _key(types, la) != _key(types, lb) or _key(types, ua) != _key(types, ub):
                break
        else:
            if len(a) == len(b):
                return
            la, lb = (a[len(b)] if len(a) > len(b) else a[-1])[0], \
                (b[len(a)] if len(b) > len(a) else b[-1])[0]
        raise DdlError("2 range lists are not stricly matched. "
                       f"{_key_text(types, la)}vs. {_key_text(types, lb)}")
    dropped = {p.partition_id for p in olds}
    rest = [p for p in table.partitions.values() if p.partition_id not in dropped]
    for t in temps:
        for p in rest:
            if _key(types, t.lower or []) < _key(types, p.upper) and \
                    _key(types, p.lower or []) < _key(types, t.upper):
                raise DdlError(f"Range {format_range(types, t.lower or [], t.upper)} is "
                               f"intersected with range: "
                               f"{format_range(types, p.lower or [], p.upper)}")


def _key_text(types, bound: list) -> str:
    """Doris's PartitionKey text: `types: [INT]; keys: [10]; `."""
    text = format_range(types, bound, bound)
    return text[1:text.index("..")]


def replace_table(cat: Catalog, db_name: str | None, stmt: ReplaceTableStmt) -> None:
    swap = _flag(stmt.properties, "swap", True)
    with cat.lock:
        db = cat.get_db(stmt.db or db_name)
        ids = sorted(cat.get_table(db.name, n).table_id for n in (stmt.table, stmt.other))
    # Both tables' load locks (in id order): a load publishes by table name.
    with table_lock(ids[0]), table_lock(ids[-1]) if ids[0] != ids[-1] else nullcontext():
        with cat.lock:
            for name in (stmt.table, stmt.other):
                cat.get_table(db.name, name)  # still there
            check_normal(cat, cat.get_table(db.name, stmt.table))  # the ALTER's own table
            cat._log("replace_table", {"db": db.name, "table": stmt.table,
                                       "other": stmt.other, "swap": swap})
