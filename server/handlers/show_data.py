"""SHOW DATA [FROM [db.]table] and SHOW TABLETS FROM [db.]table, with Doris's columns.

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
from server.results import RowsResult, text_columns

_DATA_QUOTA = 1 << 50          # Doris's default database data quota: 1024 TB
_REPLICA_QUOTA = 1073741824    # and replica quota


def show_data(words: list[str], ctx: StatementContext) -> RowsResult:
    """`words`: what follows SHOW DATA (nothing, or FROM [db.]table)."""
    if not words:
        return _database_data(ctx)
    if len(words) != 2 or words[0].upper() != "FROM":
        raise AnalysisError(f"Syntax error in SHOW DATA near '{' '.join(words)}'")
    db, table = _qualified(words[1], ctx)
    return _table_data(db, table, ctx)


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


def _qualified(text: str, ctx: StatementContext) -> tuple[str | None, str]:
    parts = [p.strip("`") for p in text.rstrip(";").split(".")]
    if len(parts) == 2:
        return parts[0], parts[1]
    return ctx.db, parts[0]


def _database_data(ctx: StatementContext) -> RowsResult:
    rows, total_size, total_replicas = [], 0, 0
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(ctx.db)
        for name in sorted(db.tables):
            size, replicas, _ = table_totals(db.tables[name])
            rows.append((name, byte_text(size), replicas, byte_text(0)))
            total_size += size
            total_replicas += replicas
    rows.append(("Total", byte_text(total_size), total_replicas, byte_text(0)))
    rows.append(("Quota", byte_text(_DATA_QUOTA), _REPLICA_QUOTA, ""))
    rows.append(("Left", byte_text(_DATA_QUOTA - total_size), _REPLICA_QUOTA - total_replicas, ""))
    return text_columns(["TableName", "Size", "ReplicaCount", "RemoteSize"], rows)


def _table_data(db: str | None, name: str, ctx: StatementContext) -> RowsResult:
    rows, total_size, total_replicas = [], 0, 0
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(db, name)
        for i, (index_id, index) in enumerate(table.indexes.items()):
            size, replicas, count = table_totals(table, index_id)
            rows.append((table.name if i == 0 else "", index.name, byte_text(size), replicas,
                         count, byte_text(0)))
            total_size += size
            total_replicas += replicas
    rows.append(("", "Total", byte_text(total_size), total_replicas, "", byte_text(0)))
    return text_columns(["TableName", "IndexName", "Size", "ReplicaCount", "RowCount",
                         "RemoteSize"], rows)
