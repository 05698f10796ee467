"""Doris 2.1's AUTO PARTITION: a load creates the partitions its rows need.

    AUTO PARTITION BY RANGE (date_trunc(dt, 'day')) ()    dt NOT NULL, DATE or DATETIME
    AUTO PARTITION BY LIST (city[, ...]) ()

Before a load routes its rows (catalog/load_sink.py, group commit), `ensure` finds the rows
that fit no partition and adds, in one `add_partitions` journal entry, one partition per
distinct value, named as Doris's PartitionExprUtil names them:

- RANGE: [date_trunc(v, unit), + 1 unit), named `p` + the start as yyyyMMddHHmmss
  (`p20240101000000`);
- LIST: the one value tuple, named `p` + each value followed by its length (`X` for NULL),
  with every character that is not an ASCII letter or digit written as its hex code point
  (`pBeijing7`, `pX`); a name over 50 characters of a string column is refused as in Doris.

The new partitions take the table's distribution and replication. Two loads needing the same
partition add it once (checked again under the table's lock); a failed load keeps the
partitions it created, as Doris does.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from catalog.errors import AnalysisError
from catalog.statements import PartitionDesc

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from catalog.model import OlapTable

_MAX_NAME = 50


def ensure(cat: Catalog, table: OlapTable, data: pa.Table) -> None:
    """Add the partitions the rows of `data` (the table's columns) need and do not have."""
    info = table.partition_info
    if not info.auto or data.num_rows == 0 or \
            any(c not in data.column_names for c in info.columns):
        return
    descs = _needed(table, data)
    if not descs:
        return
    from catalog.create_table import plan_partitions
    from catalog.partition_ddl import _replicas, db_of, locked_table

    with cat.lock:
        db = db_of(cat, table)
    with locked_table(cat, db, table.name) as t:
        existing = {p.name.lower() for p in t.partitions.values()}
        fresh = [d for d in descs if d.name.lower() not in existing]
        if not fresh:
            return
        planned = plan_partitions(t, fresh, list(t.partitions.values()))
        replicas = _replicas(cat, t, {})
        parts = [cat.new_partition(t, name, lower, upper, values, t.distribution.buckets,
                                   replicas) for name, lower, upper, values in planned]
        cat._log("add_partitions", {"db": db, "table": t.name,
                                    "partitions": [p.to_dict() for p in parts],
                                    "next_id": cat.next_id})


def _needed(table: OlapTable, data: pa.Table) -> list[PartitionDesc]:
    from catalog.partitions import partition_index

    info = table.partition_info
    if table.partitions:
        missing = pc.is_null(partition_index(table, data))
        if not pc.any(missing).as_py():
            return []
        data = data.filter(missing)
    rows = data.select(info.columns)
    if info.kind == "RANGE":
        return _range_descs(table, rows.column(0), info.auto_unit or "day")
    return _list_descs(table, rows)


def _range_descs(table: OlapTable, column: pa.ChunkedArray, unit: str) -> list[PartitionDesc]:
    is_date = table.column(table.partition_info.columns[0]).type.kind == "DATE"
    as_ts = pc.cast(column, pa.timestamp("us"))
    starts = pc.unique(pc.floor_temporal(as_ts, unit=unit, week_starts_monday=True))
    descs = []
    for start in sorted(v for v in starts.to_pylist() if v is not None):
        end = _add(start, unit)
        fmt = (lambda v: v.strftime("%Y-%m-%d")) if is_date else \
            (lambda v: v.strftime("%Y-%m-%d %H:%M:%S"))
        descs.append(PartitionDesc(f"p{start.strftime('%Y%m%d%H%M%S')}", "FIXED",
                                   upper=[fmt(end)], lower=[fmt(start)]))
    return descs


def _add(start: datetime, unit: str) -> datetime:
    if unit in ("year", "quarter", "month"):
        months = {"year": 12, "quarter": 3, "month": 1}[unit]
        total = start.year * 12 + start.month - 1 + months
        return start.replace(year=total // 12, month=total % 12 + 1)
    step = {"week": timedelta(weeks=1), "day": timedelta(days=1), "hour": timedelta(hours=1),
            "minute": timedelta(minutes=1), "second": timedelta(seconds=1)}[unit]
    return start + step


def _list_descs(table: OlapTable, rows: pa.Table) -> list[PartitionDesc]:
    distinct = rows.group_by(rows.column_names).aggregate([])
    strings = any(table.column(c).type.kind in ("VARCHAR", "CHAR", "STRING")
                  for c in rows.column_names)
    descs, seen = [], set()
    for row in distinct.to_pylist():
        values = [None if v is None else _text(v) for v in (row[c] for c in rows.column_names)]
        key = "".join("X" if v is None else f"{v}{len(v)}" for v in values)
        name = "p" + _format(key)
        if strings and len(name) > _MAX_NAME:
            raise AnalysisError("Partition name's length is over limit of 50. abort to create.")
        if name.lower() in seen:
            continue
        seen.add(name.lower())
        descs.append(PartitionDesc(name, "IN", values=[values]))
    return descs


def _text(v) -> str:
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, date):
        return v.strftime("%Y-%m-%d")
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def _format(value: str) -> str:
    """Doris's getFormatPartitionValue: ASCII letters and digits kept, others as hex code
    points, a leading '-' marked by '_'."""
    out = ["_"] if value.startswith("-") else []
    for ch in value:
        out.append(ch if ch.isascii() and ch.isalnum() else format(ord(ch), "x"))
    return "".join(out)
