"""ANALYZE TABLE, SHOW COLUMN STATS, SHOW TABLE STATS, DROP STATS, SHOW [AUTO] ANALYZE
(catalog/column_stats.py).

ANALYZE reads the table's base index once (a `SELECT` of the analysed columns, so privileges,
snapshots and mem_limit apply as to any query) and journals the statistics. Without WITH SYNC
Doris runs it as a background job and returns the job's row; here the work is done before the
reply either way, and the row is returned as Doris returns it. Each ANALYZE is journaled with
its job (an id from the catalog's ids, its columns and times), which SHOW ANALYZE lists with
Doris's columns (FINISHED, its one task done); no automatic analysis runs here, so SHOW AUTO
ANALYZE is empty.
"""

from __future__ import annotations

import time
from datetime import datetime

from sqlglot import exp

from catalog import column_stats
from catalog.access import visible_tbl
from catalog.errors import AnalysisError
from server.handlers import show_filter
from server.handlers.context import StatementContext
from server.handlers.query import query_batches
from server.parser.analyze import (AnalyzeTableStmt, DropStatsStmt, ShowAnalyzeStmt,
                                   ShowColumnStatsStmt, ShowTableStatsStmt)
from server.results import OkResult, RowsResult, text_columns

COLUMN_STATS_COLUMNS = ["column_name", "index_name", "count", "ndv", "num_null", "data_size",
                        "avg_size_byte", "min", "max", "method", "type", "trigger",
                        "query_times", "updated_time", "update_rows", "last_analyze_row_count",
                        "last_analyze_version"]
ANALYZE_JOB_COLUMNS = ["job_id", "catalog_name", "db_name", "tbl_name", "col_name", "job_type",
                       "analysis_type", "message", "last_exec_time_in_ms", "state", "progress",
                       "schedule_type", "start_time", "end_time"]
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
    started = time.time()
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
    job_id = column_stats.record(
        ctx.catalog, table.table_id, rows, {n: a.result() for n, a in acc.items()},
        {"db": db, "table": table.name, "columns": names, "sync": stmt.sync,
         "start_time": started})
    if stmt.sync:
        return OkResult()
    return text_columns(["Catalog_Name", "DB_Name", "Table_Name", "Columns", "Job_Id"],
                        [("internal", db, table.name, "[" + ",".join(names) + "]", job_id)])


def show_analyze(stmt: ShowAnalyzeStmt, ctx: StatementContext) -> RowsResult:
    """The ANALYZE jobs run (AnalysisManager's records), newest first; of one table or job."""
    db = table = None
    if stmt.table is not None:
        db, tbl, _, _ = _table(ctx, stmt.db, stmt.table, [])
        table = tbl.name
    with ctx.catalog.lock:
        jobs = [] if stmt.auto else list(ctx.catalog.analyze_jobs)
    rows = []
    for job in reversed(jobs):
        if table is not None and (job["db"], job["table"]) != (db, table):
            continue
        if stmt.job_id is not None and job["job_id"] != stmt.job_id:
            continue
        if not visible_tbl(job["db"], job["table"]):
            continue
        rows.append((str(job["job_id"]), "internal", job["db"], job["table"],
                     "[" + ",".join(job["columns"]) + "]", "MANUAL", "FUNDAMENTALS", "",
                     _time(job["end_time"]), "FINISHED",
                     "1 Finished  |  0 Failed  |  0 In Progress  |  1 Total",
                     "ONCE", _time(job["start_time"]), _time(job["end_time"])))
    return show_filter.apply(text_columns(ANALYZE_JOB_COLUMNS, rows),
                             show_filter.parse_tail(stmt.tail))


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
                    ShowTableStatsStmt: show_table_stats, DropStatsStmt: drop_stats,
                    ShowAnalyzeStmt: show_analyze}
