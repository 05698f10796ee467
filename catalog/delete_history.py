"""SHOW DELETE's history: each finished DELETE's table, partitions, time and conditions, per
database (Doris's DeleteHandler.dbToDeleteInfos), journaled with the DELETE's publish entry and
kept in the image.

    info(stmt, table)             the record a DELETE's publish entry carries: its conditions
                                  as Doris writes them (`k1 EQ "3"`, `k2 IN (1, 2)`,
                                  `k3 IS NULL`), its partitions ("*" without a PARTITION clause)
    apply(cat, db, table, data)   adds the record (the publish entry's apply); a database keeps
                                  its newest KEEP_MAX (Doris's label_keep_max_num)
    rows(cat, db, now)            SHOW DELETE's rows, oldest first, records older than
                                  KEEP_SECONDS (label_keep_max_second) left out, only tables
                                  the user may LOAD into

Delete-sign DELETEs of merge-on-write tables and DELETE ... USING are loads in Doris as here
(no record), as are the rows removed by a DELETE that selects them with a query.
"""

from __future__ import annotations

import time as _time
from typing import TYPE_CHECKING

from catalog import access
from catalog.storage_statements import DeleteCondition, DeleteStmt

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from catalog.model import OlapTable

KEEP_MAX = 2000  # Config.label_keep_max_num
KEEP_SECONDS = 3 * 24 * 3600  # Config.label_keep_max_second
COLUMNS = ["TableName", "PartitionName", "CreateTime", "DeleteCondition", "State"]
# BinaryPredicate.Operator names, as DeleteHandler prints them
_OP_NAMES = {"=": "EQ", "!=": "NE", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}


def info(stmt: DeleteStmt, table: OlapTable) -> dict:
    return {"partitions": stmt.partitions,
            "conditions": [_condition(c, table) for c in stmt.conditions]}


def _condition(cond: DeleteCondition, table: OlapTable) -> str:
    col = table.column(cond.column)
    name = col.name if col is not None else cond.column
    if cond.op == "is_null":
        return f"{name} IS NULL"
    if cond.op == "is_not_null":
        return f"{name} IS NOT NULL"
    if cond.op in ("in", "not_in"):
        numeric = col is not None and (col.type.is_integer or col.type.kind == "DECIMAL")
        items = ", ".join("NULL" if v is None else v if numeric else "'" + v.replace("'", "\\'") + "'"
                          for v in cond.values)
        return f"{name} {'NOT ' if cond.op == 'not_in' else ''}IN ({items})"
    value = cond.values[0] if cond.values else None
    return f'{name} {_OP_NAMES[cond.op]} "{"NULL" if value is None else value}"'


def apply(cat: Catalog, db: str, table: str, time: float, data: dict) -> None:
    records = cat.delete_infos.setdefault(db, [])
    records.append({"table": table, "time": time, **data})
    if len(records) > KEEP_MAX:
        del records[:len(records) - KEEP_MAX]


def rows(cat: Catalog, db: str, now: float | None = None) -> list[tuple]:
    now = _time.time() if now is None else now
    out = []
    with cat.lock:
        records = list(cat.delete_infos.get(db, ()))
    current = access.CURRENT.get()
    for r in records:
        if now - r["time"] > KEEP_SECONDS:
            continue
        if current is not None and not current.check_tbl(db, r["table"], "LOAD"):
            continue
        parts = "*" if r.get("partitions") is None else ", ".join(r["partitions"])
        created = _time.strftime("%Y-%m-%d %H:%M:%S", _time.localtime(r["time"]))
        out.append((r["table"], parts, created, ", ".join(r["conditions"]), "FINISHED"))
    out.sort(key=lambda row: row[2])
    return out
