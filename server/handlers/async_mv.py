"""Statements of asynchronous materialized views (catalog/mtmv.py keeps their record,
server/mtmv_tasks.py runs their refresh tasks) and the table functions mv_infos(), jobs(),
tasks() over them.

CREATE: the view's columns are its query's result columns as CTAS derives them
(create_table_as.result_columns, from the query run with LIMIT 0), renamed by the column list;
without KEY the Duplicate table's keys follow the short key rule, without DISTRIBUTED BY it is
RANDOM BUCKETS AUTO (Doris's MTMV default); the view's own properties (grace_period, ...) go
to its record, the others to the table. BUILD IMMEDIATE refreshes it at once.
"""

from __future__ import annotations

import time

import pyarrow as pa
import sqlglot

from catalog import mtmv
from catalog.errors import AnalysisError, DdlError, NotSupported, TableExists, UnknownTableToDrop
from catalog.model import DUP_KEYS
from catalog.mtmv_statements import (AlterMTMVStmt, CancelMTMVTaskStmt, CreateMTMVStmt,
                                     DropMTMVStmt, MTMVJobStmt, RefreshMTMVStmt,
                                     ShowCreateMTMVStmt)
from catalog.rename import rename_table
from catalog.statements import CreateTableStmt
from planner import table_functions
from server.handlers.context import StatementContext
from server.handlers.create_table_as import result_columns
from server.handlers.query import run_query
from server.handlers.show_create import show_create_table_sql
from server.parser.statement import is_query, parse_sqlglot
from server.results import OkResult, RowsResult, text_columns
from storage.types import DataType


def _tasks(ctx: StatementContext):
    return ctx.session.services.mtmv


def create_mtmv(stmt: CreateMTMVStmt, ctx: StatementContext) -> OkResult:
    cat = ctx.catalog
    db = stmt.db or ctx.db
    with cat.lock:
        db = cat.get_db(db).name
        if stmt.name in cat.dbs[db].tables or stmt.name in cat.dbs[db].views:
            if stmt.if_not_exists:
                return OkResult()
            raise TableExists(stmt.name)
    if stmt.partition_column is not None:
        raise NotSupported("PARTITION BY of an async materialized view is not supported yet")
    query = parse_sqlglot(stmt.query)
    if not is_query(query):
        raise AnalysisError("The materialized view only support select statement")
    _check_properties(stmt.properties)
    probe = sqlglot.select("*").from_(query.subquery("__mv_probe")).limit(0)
    data, infos = run_query(probe, ctx)
    columns = result_columns(infos, data.schema)
    if stmt.columns:
        if len(stmt.columns) != len(columns):
            raise AnalysisError("simpleColumnDefinitions size is not equal to the query's")
        for col, spec in zip(columns, stmt.columns):
            col.name, col.comment = spec.name, spec.comment or ""
    query_db = ctx.db or db
    with cat.lock:
        base = mtmv.base_tables_of(cat, query_db, query)
        job_id = cat._alloc_id()  # noqa: SLF001
    rec = {"query": stmt.query, "db": query_db, "build_mode": stmt.build_mode,
           "refresh_method": stmt.refresh_method, "trigger": stmt.trigger.to_dict(),
           "keys": stmt.keys,
           "properties": {k: v for k, v in stmt.properties.items() if k in mtmv.MV_PROPERTIES},
           "job_id": job_id, "job_status": "RUNNING", "job_create_time": time.time(),
           "refresh_state": "INIT", "base_tables": base, "snapshot": None,
           "last_refresh_time": 0, "tasks": []}
    table_stmt = CreateTableStmt(
        db, stmt.name, columns, keys_type=DUP_KEYS if stmt.keys else None,
        key_columns=stmt.keys, comment=stmt.comment,
        distribution_kind=stmt.distribution_kind,
        distribution_columns=stmt.distribution_columns, buckets=stmt.buckets,
        properties={k: v for k, v in stmt.properties.items() if k not in mtmv.MV_PROPERTIES},
        mtmv=rec)
    cat.create_table(db, table_stmt)
    with cat.lock:  # Doris's job name: inner_mtmv_<view id>
        table = cat.get_table(db, stmt.name)
        mtmv.set_fields(cat, db, stmt.name, {"job_name": f"inner_mtmv_{table.table_id}"})
    if stmt.build_mode == "IMMEDIATE":
        _tasks(ctx).refresh(db, stmt.name, complete=True, trigger_mode="SYSTEM")
    _tasks(ctx).reschedule(db, stmt.name)
    return OkResult()


def _check_properties(props: dict[str, str]) -> None:
    grace = props.get("grace_period")
    if grace is not None and not grace.strip().lstrip("-").isdigit():
        raise AnalysisError(f"valid grace_period: {grace}")


def drop_mtmv(stmt: DropMTMVStmt, ctx: StatementContext) -> OkResult:
    cat = ctx.catalog
    with cat.lock:
        db = cat.get_db(stmt.db or ctx.db)
        table = db.tables.get(stmt.name)
        if table is None:
            if stmt.if_exists:
                return OkResult()
            raise UnknownTableToDrop(stmt.name, db.name)
        if not mtmv.is_mtmv(table):
            raise DdlError(f"table type is not MATERIALIZED_VIEW, tableName={stmt.name}, "
                           f"type=OLAP")
        job_id = table.mtmv["job_id"]
        cat.drop_table(db.name, stmt.name)
    _tasks(ctx).unschedule(job_id)
    return OkResult()


def refresh_mtmv(stmt: RefreshMTMVStmt, ctx: StatementContext) -> OkResult:
    with ctx.catalog.lock:
        db, _ = mtmv.get_mtmv(ctx.catalog, stmt.db or ctx.db, stmt.name)
    if stmt.mode == "PARTITIONS":
        raise NotSupported("REFRESH MATERIALIZED VIEW ... PARTITIONS is not supported yet: "
                           "the view is not partitioned")
    _tasks(ctx).refresh(db, stmt.name, complete=stmt.mode == "COMPLETE", trigger_mode="MANUAL")
    return OkResult()


def alter_mtmv(stmt: AlterMTMVStmt, ctx: StatementContext) -> OkResult:
    cat = ctx.catalog
    with cat.lock:
        db, table = mtmv.get_mtmv(cat, stmt.db or ctx.db, stmt.name)
        rec = table.mtmv
        if stmt.new_name is not None:
            rename_table(cat, db, stmt.name, stmt.new_name)
            return OkResult()
        fields: dict = {}
        if stmt.refresh_method is not None:
            fields["refresh_method"] = stmt.refresh_method
        if stmt.trigger is not None:
            fields["trigger"] = stmt.trigger.to_dict()
        if stmt.properties is not None:
            for k in stmt.properties:
                if k not in mtmv.MV_PROPERTIES:
                    raise AnalysisError(f"illegal key:{k}")
            _check_properties(stmt.properties)
            fields["properties"] = {**rec.get("properties", {}), **stmt.properties}
        mtmv.set_fields(cat, db, stmt.name, fields)
    _tasks(ctx).reschedule(db, stmt.name)
    return OkResult()


def job_mtmv(stmt: MTMVJobStmt, ctx: StatementContext) -> OkResult:
    with ctx.catalog.lock:
        db, _ = mtmv.get_mtmv(ctx.catalog, stmt.db or ctx.db, stmt.name)
        mtmv.set_fields(ctx.catalog, db, stmt.name,
                        {"job_status": "PAUSED" if stmt.pause else "RUNNING"})
    _tasks(ctx).reschedule(db, stmt.name)
    return OkResult()


def cancel_task(stmt: CancelMTMVTaskStmt, ctx: StatementContext) -> OkResult:
    with ctx.catalog.lock:
        _, table = mtmv.get_mtmv(ctx.catalog, stmt.db or ctx.db, stmt.name)
    _tasks(ctx).cancel(table.table_id, stmt.task_id)
    return OkResult()


def show_create_mtmv(stmt: ShowCreateMTMVStmt, ctx: StatementContext) -> RowsResult:
    """Doris's Env.getMTMVDdl: the view's columns, refresh rules, keys, comment,
    distribution, properties and query."""
    with ctx.catalog.lock:
        _, table = mtmv.get_mtmv(ctx.catalog, stmt.db or ctx.db, stmt.name)
        rec = table.mtmv
        text = show_create_table_sql(table).rstrip(";")
        text += f"\n{mtmv.refresh_info(rec)}"
        text += f"\nAS {rec['query']};"
    return text_columns(["Materialized View", "Create Materialized View"], [(table.name, text)])


# -- table functions -----------------------------------------------------------------------
_TEXT = DataType("STRING")


def _text_table(columns: list[str], rows: list[tuple]) -> pa.Table:
    return pa.table({c: pa.array([r[i] for r in rows], pa.string())
                     for i, c in enumerate(columns)})


def _mv_infos(catalog):
    def rows(args: dict[str, str]):
        for k in args:
            if k != "database":
                raise AnalysisError(f"'{k}' is invalid property")
        if "database" not in args:
            raise AnalysisError("Invalid async materialized view metadata query")
        found = mtmv.mv_infos_rows(catalog, args["database"])
        cols = mtmv.MV_INFOS_COLUMNS
        arrow = [pa.int64(), *[pa.string()] * (len(cols) - 2), pa.bool_()]
        data = {c: pa.array([r[i] for r in found], arrow[i]) for i, c in enumerate(cols)}
        types = [DataType("BIGINT"), *[_TEXT] * (len(cols) - 2), DataType("BOOLEAN")]
        return pa.table(data), types
    return rows


def _jobs_or_tasks(catalog, what: str):
    def rows(args: dict[str, str]):
        for k in args:
            if k != "type":
                raise AnalysisError(f"'{k}' is invalid property")
        kind = args.get("type", "").lower()
        if kind not in ("mv", "insert"):
            raise AnalysisError(f"Invalid {what} metadata query")
        if kind == "insert":
            raise NotSupported(f"{what}(\"type\"=\"insert\") is not supported yet")
        cols, found = (mtmv.JOBS_COLUMNS, mtmv.jobs_rows(catalog)) if what == "jobs" else \
            (mtmv.TASKS_COLUMNS, mtmv.tasks_rows(catalog))
        return _text_table(cols, found), [_TEXT] * len(cols)
    return rows


def register(catalog) -> None:
    table_functions.register("mv_infos", _mv_infos(catalog))
    table_functions.register("jobs", _jobs_or_tasks(catalog, "jobs"))
    table_functions.register("tasks", _jobs_or_tasks(catalog, "tasks"))


ASYNC_MV_HANDLERS = {
    CreateMTMVStmt: create_mtmv,
    DropMTMVStmt: drop_mtmv,
    RefreshMTMVStmt: refresh_mtmv,
    AlterMTMVStmt: alter_mtmv,
    MTMVJobStmt: job_mtmv,
    CancelMTMVTaskStmt: cancel_task,
    ShowCreateMTMVStmt: show_create_mtmv,
}
