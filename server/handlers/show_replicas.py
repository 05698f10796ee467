"""SHOW TABLET <id>, ADMIN SHOW REPLICA STATUS | DISTRIBUTION, SHOW DATA SKEW, with Doris's
columns and formats (MetadataViewer, ShowTabletStmt). A replica is a placement of the one copy
on disk (docs/ARCHITECTURE.md), so every replica of a tablet shows the tablet's version and
bytes; a replica on a dead or dropped backend is DEAD, as Doris reports it.
"""

from __future__ import annotations

from catalog.delete import partitions_of
from catalog.errors import AnalysisError, DdlError
from catalog.model import OlapTable, Partition
from server.handlers.context import StatementContext
from server.parser.show_replicas import ReplicaStmt, ShowTabletStmt
from server.results import RowsResult, text_columns

STATUS_COLUMNS = ["TabletId", "ReplicaId", "BackendId", "Version", "LastFailedVersion",
                  "LastSuccessVersion", "CommittedVersion", "SchemaHash", "VersionNum", "IsBad",
                  "IsUserDrop", "State", "Status"]
DISTRIBUTION_COLUMNS = ["BackendId", "ReplicaNum", "ReplicaSize", "NumGraph", "NumPercent",
                        "SizeGraph", "SizePercent"]
SKEW_COLUMNS = ["PartitionName", "BucketIdx", "AvgRowCount", "AvgDataSize", "Graph", "Percent"]
TABLET_COLUMNS = ["DbName", "TableName", "PartitionName", "IndexName", "DbId", "TableId",
                  "PartitionId", "IndexId", "IsSync", "Order", "QueryHits", "DetailCmd"]


def show_tablet(stmt: ShowTabletStmt, ctx: StatementContext) -> RowsResult:
    with ctx.catalog.lock:
        for db in ctx.catalog.dbs.values():
            for table in db.tables.values():
                if not isinstance(table, OlapTable):
                    continue
                for p in table.all_partitions():
                    if stmt.tablet_id not in p.tablets:
                        continue
                    for index_id, ids in p.tablets_by_index.items():
                        if stmt.tablet_id in ids:
                            cmd = (f"SHOW PROC '/dbs/{db.db_id}/{table.table_id}/partitions/"
                                   f"{p.partition_id}/{index_id}/{stmt.tablet_id}';")
                            return text_columns(TABLET_COLUMNS, [(
                                db.name, table.name, p.name, table.indexes[index_id].name,
                                db.db_id, table.table_id, p.partition_id, index_id, "true",
                                ids.index(stmt.tablet_id), 0, cmd)])
    return text_columns(TABLET_COLUMNS, [("NULL", "NULL", "NULL", "NULL", -1, -1, -1, -1,
                                          "true", -1, 0, "NULL")])


def show_replicas(stmt: ReplicaStmt, ctx: StatementContext) -> RowsResult:
    db_name = stmt.db or ctx.db
    if not db_name:
        raise AnalysisError("No database selected")
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(db_name)
        table = ctx.catalog.get_table(db.name, stmt.table)
        if not isinstance(table, OlapTable):
            raise DdlError(f"Table[{stmt.table}] is not OLAP table")
        parts = partitions_of(table, stmt.partitions, "Partition does not exist: {}")
        backends = dict(ctx.catalog.backends)
        if stmt.kind == "STATUS":
            return text_columns(STATUS_COLUMNS, _status_rows(table, parts, backends, stmt))
        if stmt.kind == "DISTRIBUTION":
            return text_columns(DISTRIBUTION_COLUMNS, _distribution_rows(parts, backends))
        return text_columns(SKEW_COLUMNS, _skew_rows(parts))


def _status_rows(table: OlapTable, parts: list[Partition], backends: dict,
                 stmt: ReplicaStmt) -> list[tuple]:
    replication = int(table.properties.get("replication_num", "1") or 1)
    rows = []
    for p in parts:
        for index_id, ids in p.tablets_by_index.items():
            for tid in ids:
                meta = p.tablets[tid]
                for i, backend_id in enumerate(meta.replicas):
                    be = backends.get(backend_id)
                    status = "DEAD" if be is None or not be.alive else "OK"
                    if _filtered(status, stmt):
                        continue
                    rows.append((tid, tid * 10 + i + 1, backend_id, p.visible_version, -1,
                                 p.visible_version, p.visible_version, index_id,
                                 len(meta.rowsets), "false", "false", "NORMAL", status))
                if not _filtered("MISSING", stmt):
                    for _ in range(max(replication - len(meta.replicas), 0)):
                        rows.append((tid, -1, -1, -1, -1, -1, -1, -1, "NULL", "NULL", "NULL",
                                     "NULL", "MISSING"))
    return rows


def _filtered(status: str, stmt: ReplicaStmt) -> bool:
    if stmt.status is None:
        return False
    return status == stmt.status if stmt.negated else status != stmt.status


def _distribution_rows(parts: list[Partition], backends: dict) -> list[tuple]:
    counts = {b: 0 for b in sorted(backends)}
    sizes = {b: 0 for b in sorted(backends)}
    for p in parts:
        for ids in p.tablets_by_index.values():
            for tid in ids:
                meta = p.tablets[tid]
                for backend_id in meta.replicas:
                    if backend_id in counts:
                        counts[backend_id] += 1
                        sizes[backend_id] += meta.data_size()
    total_num, total_size = sum(counts.values()), sum(sizes.values())
    return [(b, counts[b], sizes[b], graph(counts[b], total_num), percent(counts[b], total_num),
             graph(sizes[b], total_size), percent(sizes[b], total_size)) for b in counts]


def _skew_rows(parts: list[Partition]) -> list[tuple]:
    rows = []
    for p in parts:
        buckets = len(next(iter(p.tablets_by_index.values()), []))
        row_counts, data_sizes = [0] * buckets, [0] * buckets
        for ids in p.tablets_by_index.values():
            for i, tid in enumerate(ids):
                meta = p.tablets[tid]
                row_counts[i] += meta.row_count()
                data_sizes[i] += meta.data_size()
        total = sum(data_sizes)
        for i in range(buckets):
            rows.append((p.name, i, row_counts[i], data_sizes[i], graph(data_sizes[i], total),
                         percent(data_sizes[i], total)))
    return rows


def graph(num: int, total: int) -> str:
    """Doris's MetadataViewer.graph: one '>' per percent (integer division), 100 for all
    (also 0 of 0)."""
    return ">" * (100 if num == total else num * 100 // total)


def percent(num: int, total: int) -> str:
    """DecimalFormat("00.00 %"), and "100.00%" for all (Doris's two spellings)."""
    if num == total:
        return "100.00%"
    return f"{num / total * 100:05.2f} %"


HANDLERS = {ShowTabletStmt: show_tablet, ReplicaStmt: show_replicas}
