"""SHOW DATA [FROM [db.]table] and SHOW TABLETS FROM [db.]table, with Doris's columns.

Sizes come from the published rowsets in the catalog (`TabletMeta.rowsets`: each rowset's
bytes and rows). A replica is a placement of the one copy on disk (see ARCHITECTURE.md), so,
as Doris reports the bytes of all replicas, a table's Size is its bytes times its replicas.
"""

from __future__ import annotations

from catalog.backend import byte_text
from catalog.errors import AnalysisError
from server.handlers.context import StatementContext
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


def show_tablets(words: list[str], ctx: StatementContext) -> RowsResult:
    """`words`: what follows SHOW TABLETS (FROM [db.]table)."""
    if len(words) != 2 or words[0].upper() != "FROM":
        raise AnalysisError(f"Syntax error in SHOW TABLETS near '{' '.join(words)}'")
    db, name = _qualified(words[1], ctx)
    cols = ["TabletId", "ReplicaId", "BackendId", "SchemaHash", "Version", "LstSuccessVersion",
            "LstFailedVersion", "LstFailedTime", "LocalDataSize", "RemoteDataSize", "RowCount",
            "State", "LstConsistencyCheckTime", "CheckVersion", "VisibleVersionCount",
            "VersionCount", "QueryHits", "PathHash", "Path", "MetaUrl", "CompactionStatus",
            "CooldownReplicaId", "CooldownMetaId"]
    rows = []
    http_port = ctx.session.services.config.http_port
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(db, name)
        for p in table.sorted_partitions():
            for index_id, tablet_ids in p.tablets_by_index.items():
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
    return text_columns(cols, rows)


def _qualified(text: str, ctx: StatementContext) -> tuple[str | None, str]:
    parts = [p.strip("`") for p in text.rstrip(";").split(".")]
    if len(parts) == 2:
        return parts[0], parts[1]
    return ctx.db, parts[0]


def _table_totals(table, index_id: int | None = None) -> tuple[int, int, int]:
    """(bytes of all replicas, replica count, rows of one replica) of a table or one index."""
    size = replicas = rows = 0
    for p in table.partitions.values():
        for iid, tablet_ids in p.tablets_by_index.items():
            if index_id is not None and iid != index_id:
                continue
            for tid in tablet_ids:
                meta = p.tablets[tid]
                size += meta.data_size() * len(meta.replicas)
                replicas += len(meta.replicas)
                rows += meta.row_count()
    return size, replicas, rows


def _database_data(ctx: StatementContext) -> RowsResult:
    rows, total_size, total_replicas = [], 0, 0
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(ctx.db)
        for name in sorted(db.tables):
            size, replicas, _ = _table_totals(db.tables[name])
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
            size, replicas, count = _table_totals(table, index_id)
            rows.append((table.name if i == 0 else "", index.name, byte_text(size), replicas,
                         count, byte_text(0)))
            total_size += size
            total_replicas += replicas
    rows.append(("", "Total", byte_text(total_size), total_replicas, "", byte_text(0)))
    return text_columns(["TableName", "IndexName", "Size", "ReplicaCount", "RowCount",
                         "RemoteSize"], rows)
