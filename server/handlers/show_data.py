"""SHOW DATA [FROM [db.]table] [ORDER BY] [LIMIT] and SHOW TABLETS FROM [db.]table
[PARTITION (p, ...)] [WHERE] [ORDER BY] [LIMIT], with Doris's columns.

Sizes come from the published rowsets in the catalog (`TabletMeta.rowsets`: each rowset's
bytes and rows). A replica is a placement of the one copy on disk (see ARCHITECTURE.md), so,
as Doris reports the bytes of all replicas, a table's Size is its bytes times its replicas.
"""

from __future__ import annotations

from catalog.backend import byte_text
from catalog.information_schema import table_totals
from catalog.errors import AnalysisError
from server.handlers import show_filter
from server.handlers.context import StatementContext
from server.parser.tokens import TokenCursor
from server.results import RowsResult, rows_from_python, text_columns
from storage.types import DataType

_NAME, _NUMBER = DataType("VARCHAR", 64), DataType("BIGINT")


def show_data(text: str, ctx: StatementContext) -> RowsResult:
    """`text`: what follows SHOW DATA: [FROM [db.]table] [ORDER BY ...] [LIMIT ...]; the order
    and limit apply to the table (index) rows, by their numbers, before the summary rows."""
    cur = TokenCursor(text)
    name = cur.qualified_name() if cur.accept("FROM") else None
    tail = show_filter.parse_tail(cur.rest_sql())
    if name is None:
        return _database_data(ctx, tail)
    return _table_data(name[0] or ctx.db, name[1], ctx, tail)


def _ordered(names: list[str], rows: list[tuple], tail) -> list[tuple]:
    """`rows` (text, then numbers) as `tail` filters, orders and limits them."""
    types = [_NAME] * (len(names) - 3) + [_NUMBER] * 3
    result = show_filter.apply(rows_from_python(names, types, rows), tail)
    return [tuple(r.values()) for batch in result.batches for r in batch.to_pylist()]


def show_tablets(text: str, ctx: StatementContext) -> RowsResult:
    """`text`: what follows SHOW TABLETS: FROM [db.]table [PARTITION[S] (p, ...)] [WHERE ...]
    [ORDER BY ...] [LIMIT [offset,] n] (the filter may name IndexName, which is not shown)."""
    cur = TokenCursor(text)
    if not cur.accept("FROM"):
        raise AnalysisError(f"Syntax error in SHOW TABLETS near '{text.strip()[:80]}'")
    db, name = cur.qualified_name()
    db = db or ctx.db
    partitions = None
    if cur.accept("PARTITION") or cur.accept("PARTITIONS"):
        partitions = cur.paren_list(lambda: cur.identifier("partition name"))
    tail = show_filter.parse_tail(cur.rest_sql())
    cols = ["TabletId", "ReplicaId", "BackendId", "SchemaHash", "Version", "LstSuccessVersion",
            "LstFailedVersion", "LstFailedTime", "LocalDataSize", "RemoteDataSize", "RowCount",
            "State", "LstConsistencyCheckTime", "CheckVersion", "VisibleVersionCount",
            "VersionCount", "QueryHits", "PathHash", "Path", "MetaUrl", "CompactionStatus",
            "CooldownReplicaId", "CooldownMetaId"]
    rows, index_names = [], []
    http_port = ctx.session.services.config.http_port
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(db, name)
        for part in partitions or []:
            if table.partition_by_name(part) is None:
                raise AnalysisError(f"Unknown partition: {part}")
        for p in table.sorted_partitions():
            if partitions is not None and p.name.lower() not in {x.lower() for x in partitions}:
                continue
            for index_id, tablet_ids in p.tablets_by_index.items():
                index_name = table.indexes[index_id].name
                for tid in tablet_ids:
                    meta = p.tablets[tid]
                    size, count = meta.data_size(), meta.row_count()
                    meta_url = f"http://127.0.0.1:8040/api/meta/header/{tid}"
                    compaction = f"http://127.0.0.1:{http_port}/api/compaction/show?" \
                                 f"tablet_id={tid}"  # server/http/compaction_api.py
                    versions = len(meta.rowsets)
                    for i, backend in enumerate(meta.replicas):
                        rows.append((tid, tid * 10 + i + 1, backend, index_id, p.visible_version,
                                     p.visible_version, -1, "NULL", size, 0, count, "NORMAL",
                                     "NULL", -1, versions, versions, 0, -1, "", meta_url,
                                     compaction, -1, "TUniqueId(hi:-1, lo:-1)"))
                        index_names.append(index_name)
    return show_filter.apply(text_columns(cols, rows), tail, {"IndexName": index_names})


def _database_data(ctx: StatementContext, tail) -> RowsResult:
    rows = []
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(ctx.db)
        for name in sorted(db.tables):
            size, replicas, _ = table_totals(db.tables[name])
            rows.append((name, size, replicas, 0))
    total_size, total_replicas = sum(r[1] for r in rows), sum(r[2] for r in rows)
    out = [(n, byte_text(size), replicas, byte_text(0))
           for n, size, replicas, _ in _ordered(["TableName", "Size", "ReplicaCount",
                                                 "RemoteSize"], rows, tail)]
    out.append(("Total", byte_text(total_size), total_replicas, byte_text(0)))
    out.append(("Quota", byte_text(db.data_quota), db.replica_quota, ""))
    out.append(("Left", byte_text(max(db.data_quota - total_size, 0)),
                max(db.replica_quota - total_replicas, 0), ""))
    return text_columns(["TableName", "Size", "ReplicaCount", "RemoteSize"], out)


def _table_data(db: str | None, name: str, ctx: StatementContext, tail) -> RowsResult:
    rows = []
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(db, name)
        for index_id, index in table.indexes.items():
            size, replicas, count = table_totals(table, index_id)
            rows.append((index.name, size, replicas, count))
        table_name = table.name
    total_size, total_replicas = sum(r[1] for r in rows), sum(r[2] for r in rows)
    ordered = _ordered(["IndexName", "Size", "ReplicaCount", "RowCount"], rows, tail)
    out = [(table_name if i == 0 else "", index_name, byte_text(size), replicas, count,
            byte_text(0)) for i, (index_name, size, replicas, count) in enumerate(ordered)]
    out.append(("", "Total", byte_text(total_size), total_replicas, "", byte_text(0)))
    return text_columns(["TableName", "IndexName", "Size", "ReplicaCount", "RowCount",
                         "RemoteSize"], out)
