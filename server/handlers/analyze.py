"""ANALYZE TABLE, SHOW COLUMN STATS, SHOW TABLE STATS, DROP STATS (catalog/column_stats.py).

ANALYZE reads the table's base index once (a `SELECT` of the analysed columns, so privileges,
snapshots and mem_limit apply as to any query) and journals the statistics. Without WITH SYNC
Doris runs it as a background job and returns the job's row; here the work is done before the
reply either way, and the row is returned as Doris returns it.
"""

from __future__ import annotations

import itertools
from datetime import datetime

from sqlglot import exp

from catalog import column_stats
from catalog.errors import AnalysisError
from server.handlers.context import StatementContext
from server.handlers.query import query_batches
from server.parser.analyze import (AnalyzeTableStmt, DropStatsStmt, ShowColumnStatsStmt,
                                   ShowTableStatsStmt)
from server.results import OkResult, RowsResult, text_columns

_job_ids = itertools.count(1)

COLUMN_STATS_COLUMNS = ["column_name", "index_name", "count", "ndv", "num_null", "data_size",
                        "avg_size_byte", "min", "max", "method", "type", "trigger",
                        "query_times", "updated_time", "update_rows", "last_analyze_row_count",
                        "last_analyze_version"]
TABLE_STATS_COLUMNS = ["updated_rows", "query_times", "row_count", "updated_time", "columns",
                       "trigger", "new_partition", "user_inject", "enable_auto_analyze",
                       "last_analyze_time"]


def _table(ctx: StatementContext, db: str | None, name: str, columns: list[str] | None):
    with ctx.catalog.lock:
        db_name = ctx.catalog.get_db(db or ctx.db).name
        table = ctx.catalog.get_table(db_name, name)
        # StatisticsUtil.isUnsupportedType: no statistics for ARRAY and JSON columns
        names = [c.name for c in table.columns if not c.type.is_nested and not c.type.is_json]
        if columns is not None:
            wanted = []
            for c in columns:
                col = table.column(c)
                if col is None:
                    raise AnalysisError(f"Column: {c} not exists")
                wanted.append(col.name)
            names = wanted
        kinds = {c.name: c.type.kind for c in table.columns}
        return db_name, table, names, kinds


def analyze(stmt: AnalyzeTableStmt, ctx: StatementContext) -> OkResult | RowsResult:
    db, table, names, kinds = _table(ctx, stmt.db, stmt.table, stmt.columns)
    select = exp.select(*[exp.column(n, quoted=True) for n in names]).from_(
        exp.table_(table.name, db=db, quoted=True))
    acc = {n: column_stats.ColumnAccumulator(kinds[n]) for n in names}
    rows = 0
    _, batches = query_batches(select, ctx)
    try:
        for batch in batches:
            rows += batch.num_rows
            for i, n in enumerate(names):
                acc[n].add(batch.column(i))
    finally:
        batches.close()
    column_stats.record(ctx.catalog, table.table_id, rows,
                        {n: a.result() for n, a in acc.items()})
    if stmt.sync:
        return OkResult()
    return text_columns(["Catalog_Name", "DB_Name", "Table_Name", "Columns", "Job_Id"],
                        [("internal", db, table.name, "[" + ",".join(names) + "]",
                          next(_job_ids))])


def _time(t: float | None) -> str:
    return "NULL" if t is None else datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


def show_column_stats(stmt: ShowColumnStatsStmt, ctx: StatementContext) -> RowsResult:
    _, table, names, _ = _table(ctx, stmt.db, stmt.table, stmt.columns)
    with ctx.catalog.lock:
        entry = ctx.catalog.column_stats.get(str(table.table_id), {"columns": {}})
        rows = []
        for n in names:
            s = entry["columns"].get(n)
            if s is None:
                continue
            rows.append((n, table.name, f"{float(s['count'])}", f"{float(s['ndv'])}",
                         f"{float(s['num_null'])}", f"{float(s['data_size'])}",
                         f"{float(s['avg_size_byte'])}", s["min"], s["max"], "FULL",
                         "FUNDAMENTALS", "MANUAL", 0, _time(s.get("time")), 0,
                         entry.get("row_count", 0), 0))
    return text_columns(COLUMN_STATS_COLUMNS, rows)


def show_table_stats(stmt: ShowTableStatsStmt, ctx: StatementContext) -> RowsResult:
    _, table, _, _ = _table(ctx, stmt.db, stmt.table, None)
    with ctx.catalog.lock:
        entry = ctx.catalog.column_stats.get(str(table.table_id))
        rows = sum(p.tablets[tid].row_count() for p in table.partitions.values()
                   for tid in p.tablets_by_index.get(table.base_index_id, []))
        if entry is None:
            row = (0, 0, rows, "", "[]", "", "false", "false", "true", "")
        else:
            row = (0, 0, entry["row_count"], _time(entry["time"]),
                   "[" + ", ".join(f"{table.name}:{c}" for c in entry["columns"]) + "]",
                   "MANUAL", "false", "false", "true", _time(entry["time"]))
    return text_columns(TABLE_STATS_COLUMNS, [row])


def drop_stats(stmt: DropStatsStmt, ctx: StatementContext) -> OkResult:
    _, table, names, _ = _table(ctx, stmt.db, stmt.table, stmt.columns)
    column_stats.drop(ctx.catalog, table.table_id, names if stmt.columns is not None else None)
    return OkResult()


ANALYZE_HANDLERS = {AnalyzeTableStmt: analyze, ShowColumnStatsStmt: show_column_stats,
                    ShowTableStatsStmt: show_table_stats, DropStatsStmt: drop_stats}
