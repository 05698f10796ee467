"""SHOW PROC's directory tree below `/`, as Doris's FE lays it out (common/proc/*ProcDir.java):

    /                                     the directories this server has (column `name`)
    /dbs                                  DbsProcDir: DbId, DbName, TableNum, Size, Quota, ...
    /dbs/<db id>                          TablesProcDir: TableId, TableName, IndexNum, ...
    /dbs/<db id>/<table id>               TableProcDir: partitions, temp_partitions, index_schema
    /dbs/<db id>/<table id>/partitions    SHOW PARTITIONS (temp_partitions: the temporary ones)
    .../partitions/<partition id>         IndicesProcDir: IndexId, IndexName, State, ...
    .../partitions/<partition id>/<index id>   TabletsProcDir: SHOW TABLETS of that index
    /dbs/<db id>/<table id>/index_schema  IndexInfoProcDir: IndexId, IndexName, SchemaVersion, ...
    .../index_schema/<index id>           the index's columns as DESC prints them
    /statistic                            StatisticProcDir: per database counts, then Total
    /current_queries                      the statements running now, longest first
    /frontends, /backends, /colocation_group[/<group id>]   as SHOW FRONTENDS / BACKENDS
    /jobs, /transactions                  server/handlers/proc_jobs.py

Ids are Doris's: numbers, an unknown one is Doris's "... does not exist" error.
"""

from __future__ import annotations

import hashlib
import time

from catalog.backend import byte_text
from catalog.errors import AnalysisError
from catalog.information_schema import table_totals
from catalog.model import OlapTable
from catalog.statements import ShowPartitionsStmt
from server.handlers.context import StatementContext
from server.results import RowsResult, text_columns

ROOT = ["backends", "colocation_group", "current_queries", "dbs", "frontends", "jobs",
        "statistic", "transactions"]
_STATISTIC = ["DbId", "DbName", "TableNum", "PartitionNum", "IndexNum", "TabletNum",
              "ReplicaNum", "UnhealthyTabletNum", "InconsistentTabletNum", "CloningTabletNum",
              "BadTabletNum", "CompactionTooSlowTabletNum", "OversizeTabletNum"]


def root() -> RowsResult:
    return text_columns(["name"], [(n,) for n in ROOT])


def _id(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise AnalysisError(f"Invalid {what} id format: {text}") from None


def dbs(ctx: StatementContext) -> RowsResult:
    rows = []
    with ctx.catalog.lock:
        for db in sorted(ctx.catalog.dbs.values(), key=lambda d: d.db_id):
            size = replicas = 0
            for t in db.tables.values():
                s, r, _ = table_totals(t)
                size, replicas = size + s, replicas + r
            rows.append((db.db_id, db.name, len(db.tables) + len(db.views), byte_text(size),
                         byte_text(db.data_quota), "NULL", replicas, db.replica_quota))
    return text_columns(["DbId", "DbName", "TableNum", "Size", "Quota",
                         "LastConsistencyCheckTime", "ReplicaCount", "ReplicaQuota"], rows)


def _db(ctx: StatementContext, db_id: str):
    wanted = _id(db_id, "db")
    db = next((d for d in ctx.catalog.dbs.values() if d.db_id == wanted), None)
    if db is None:
        raise AnalysisError(f"Database {wanted} does not exist")
    return db


def _table(db, table_id: str) -> OlapTable:
    wanted = _id(table_id, "table")
    table = next((t for t in db.tables.values() if t.table_id == wanted), None)
    if table is None:
        raise AnalysisError(f"Unknown table id: {wanted}")
    return table


def tables(ctx: StatementContext, db_id: str) -> RowsResult:
    rows = []
    with ctx.catalog.lock:
        db = _db(ctx, db_id)
        for t in sorted(db.tables.values(), key=lambda t: t.table_id):
            ranged = t.partition_info.kind != "UNPARTITIONED"
            rows.append((t.table_id, t.name, len(t.indexes),
                         ", ".join(t.partition_info.columns) if ranged else "NULL",
                         len(t.partitions), "NORMAL", "OLAP", "NULL", table_totals(t)[1]))
    return text_columns(["TableId", "TableName", "IndexNum", "PartitionColumnName",
                         "PartitionNum", "State", "Type", "LastConsistencyCheckTime",
                         "ReplicaCount"], rows)


def table_dir(ctx: StatementContext, names: list[str]) -> RowsResult:
    """/dbs/<db>/<table>[/...]: the table's directories and what is below them."""
    from server.handlers.show import show_partitions
    from server.handlers.show_data import show_tablets
    with ctx.catalog.lock:
        db = _db(ctx, names[1])
        table = _table(db, names[2])
    rest = names[3:]
    if not rest:
        return text_columns(["Nodes"], [("partitions",), ("temp_partitions",),
                                        ("index_schema",)])
    if rest[0] in ("partitions", "temp_partitions") and len(rest) == 1:
        return show_partitions(ShowPartitionsStmt(db.name, table.name,
                                                  temporary=rest[0] == "temp_partitions"), ctx)
    if rest[0] == "partitions" and len(rest) in (2, 3):
        with ctx.catalog.lock:
            wanted = _id(rest[1], "partition")
            part = table.partitions.get(wanted)
            if part is None:
                raise AnalysisError(f"Partition[{wanted}] does not exist")
            indexes = [(i, table.indexes[i]) for i in part.tablets_by_index if i in table.indexes]
        if len(rest) == 2:
            return text_columns(["IndexId", "IndexName", "State", "LastConsistencyCheckTime"],
                                [(i, ix.name, ix.state, "NULL") for i, ix in indexes])
        index = dict(indexes).get(_id(rest[2], "index"))
        if index is None:
            raise AnalysisError(f"Index[{rest[2]}] does not exist")
        return show_tablets(f"FROM `{_quote(db.name)}`.`{_quote(table.name)}` PARTITION "
                            f"(`{_quote(part.name)}`) WHERE IndexName = '"
                            f"{index.name.replace(chr(39), chr(39) * 2)}'", ctx)
    if rest[0] == "index_schema" and len(rest) == 1:
        return _index_schema(table)
    if rest[0] == "index_schema" and len(rest) == 2:
        return _index_columns(table, _id(rest[1], "index"))
    raise AnalysisError(f"Proc path '/{'/'.join(names)}' doesn't exist")


def _quote(name: str) -> str:
    return name.replace("`", "``")


def _index_schema(table: OlapTable) -> RowsResult:
    rows = []
    base_first = sorted(table.indexes.items(), key=lambda kv: kv[0] != table.base_index_id)
    for index_id, index in base_first:
        keys = index.columns[:index.key_count] if index.key_count is not None else \
            [c for c in index.columns if table.column(c) is not None and table.column(c).is_key]
        rows.append((index_id, index.name, 0, index_id, len(keys), "COLUMN",
                     f"{index.keys_type}({', '.join(keys)})"))
    return text_columns(["IndexId", "IndexName", "SchemaVersion", "SchemaHash",
                         "ShortKeyColumnCount", "StorageType", "Keys"], rows)


def _index_columns(table: OlapTable, index_id: int) -> RowsResult:
    index = table.indexes.get(index_id)
    if index is None:
        raise AnalysisError(f"Index[{index_id}] does not exist")
    rows = []
    for name in index.columns:
        col = table.column(name)
        if col is None:  # a materialized view's computed column
            rows.append((name, "BIGINT", "Yes", "false", "NULL",
                         index.aggregations.get(name, "")))
            continue
        is_key = col.is_key if index.key_count is None else name in index.columns[:index.key_count]
        rows.append((col.name, col.type.sql(), "Yes" if col.nullable else "No",
                     "true" if is_key else "false",
                     "NULL" if col.default is None else str(col.default),
                     index.aggregations.get(name, col.aggregation or "") if not is_key else ""))
    return text_columns(["Field", "Type", "Null", "Key", "Default", "Extra"], rows)


def statistic(ctx: StatementContext) -> RowsResult:
    rows, totals = [], [0] * 6
    with ctx.catalog.lock:
        for db in sorted(ctx.catalog.dbs.values(), key=lambda d: d.db_id):
            counts = [len(db.tables), 0, 0, 0, 0]
            for t in db.tables.values():
                counts[1] += len(t.partitions)
                counts[2] += len(t.indexes)
                for p in t.partitions.values():
                    for tablet_ids in p.tablets_by_index.values():
                        counts[3] += len(tablet_ids)
                        counts[4] += sum(len(p.tablets[i].replicas) for i in tablet_ids)
            rows.append((db.db_id, db.name, *counts, 0, 0, 0, 0, 0, 0))
            totals = [a + b for a, b in zip(totals, [1, *counts])]
    rows.append(("Total", totals[0], *totals[1:], 0, 0, 0, 0, 0, 0))
    return text_columns(_STATISTIC, rows)


def current_queries(ctx: StatementContext) -> RowsResult:
    """CurrentQueryStatisticsProcDir's columns: what every connection runs now."""
    now, rows = time.time(), []
    sessions = dict(getattr(ctx.session.services, "sessions", {}) or {})
    for cid, s in sessions.items():
        sql = ctx.sql if s is ctx.session else s.current_sql
        if not sql:
            continue
        elapsed_ms = int((now - s.statement_started) * 1000) if s.statement_started else 0
        rows.append((f"{cid:x}-{int(s.statement_started * 1000):x}", cid, "internal",
                     s.database or "", s.username or "root", elapsed_ms,
                     hashlib.md5(sql.encode()).hexdigest(), sql[:1000]))
    rows.sort(key=lambda r: -r[5])
    return text_columns(["QueryId", "ConnectionId", "Catalog", "Database", "User", "ExecTime",
                         "SqlHash", "Statement"], rows)
