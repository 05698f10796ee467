"""EXPORT TABLE, SHOW EXPORT, CANCEL EXPORT (server/parser/export.py, catalog/export_jobs.py).

Doris 2.1's EXPORT is a job that runs `SELECT <columns> FROM t [PARTITION (...)] [WHERE ...]
INTO OUTFILE "<path>"` with the job's format and separators. Here the job is recorded PENDING,
runs that SELECT ... INTO OUTFILE through server/handlers/outfile.py (same file names, formats,
`max_file_size` and the `enable_outfile_to_local` rule for local paths), and ends FINISHED
with OutfileInfo, or CANCELLED with ErrorMsg; the statement returns when the job has ended
(Doris returns at once and runs it in the background: SHOW EXPORT shows the same record
either way). Remote storage (WITH BROKER | S3 | HDFS) is not available here.
"""

from __future__ import annotations

import fnmatch
import json
import uuid
from datetime import datetime

from catalog.errors import AnalysisError, DdlError, DorisError, NotSupported
from catalog.export_jobs import COLUMNS, check_label, save_export_job
from catalog.names import quote_identifier
from server.handlers import outfile, show_filter
from server.handlers.context import StatementContext
from server.parser.export import CancelExportStmt, ExportStmt, ShowExportStmt
from server.parser.outfile import FORMATS, OutfileStmt
from server.results import OkResult, RowsResult, text_columns

_PROPERTIES = {"label", "column_separator", "line_delimiter", "columns", "format",
               "max_file_size", "parallelism", "delete_existing_files", "with_bom",
               "data_consistency", "timeout", "compress_type"}


def _now() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def export(stmt: ExportStmt, ctx: StatementContext) -> OkResult:
    if stmt.target is not None:
        raise NotSupported(f"EXPORT WITH {stmt.target} is not supported here: no remote "
                           "storage is available; export to a local path (file:///...)")
    props = {k.lower(): v for k, v in stmt.properties.items()}
    unknown = sorted(set(props) - _PROPERTIES)
    if unknown:
        raise AnalysisError(f"Unknown property: {unknown[0]}")
    fmt = props.get("format", "csv").upper()
    if fmt not in FORMATS:
        raise AnalysisError(f"format:{fmt.lower()} is not supported.")
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(stmt.db or ctx.db).name
        table = ctx.catalog.get_table(db, stmt.table)
        for name in stmt.partitions or []:
            if table.partition_by_name(name) is None:
                raise AnalysisError(f"Partition {name} does not exist in table {table.name}")
        columns = [c.strip() for c in props["columns"].split(",")] if props.get("columns") \
            else [c.name for c in table.columns]
        for c in columns:
            if table.column(c) is None:
                raise AnalysisError(f"unknown column [{c}] in table [{table.name}]")
    outfile_props = {k: props[k] for k in ("column_separator", "line_delimiter",
                                           "max_file_size", "delete_existing_files",
                                           "with_bom") if k in props}
    outfile.check_target(stmt.path, outfile_props, ctx)  # refused before any job is recorded
    label = props.get("label") or f"export_{uuid.uuid4()}"
    check_label(ctx.catalog, db, label)
    timeout = int(props.get("timeout", "7200"))
    q = quote_identifier
    query = (f"SELECT {', '.join(q(c) for c in columns)} FROM {q(db)}.{q(table.name)}"
             + (f" PARTITION ({', '.join(q(p) for p in stmt.partitions)})"
                if stmt.partitions else "")
             + (f" WHERE {stmt.where}" if stmt.where else ""))
    task_info = {"partitions": stmt.partitions or [], "parallelism": int(props.get("parallelism", "1")),
                 "data_consistency": props.get("data_consistency", "partition"),
                 "format": fmt.lower(), "broker": "",
                 "column_separator": props.get("column_separator", "\t"),
                 "line_delimiter": props.get("line_delimiter", "\n"),
                 "max_file_size": props.get("max_file_size", ""),
                 "delete_existing_file": props.get("delete_existing_files", ""),
                 "with_bom": props.get("with_bom", "false"), "db": db, "tbl": table.name}
    with ctx.catalog.lock:
        job_id = ctx.catalog._alloc_id()  # noqa: SLF001
    record = {"job_id": job_id, "db": db, "JobId": job_id, "Label": label, "State": "PENDING",
              "Progress": "0%", "TaskInfo": json.dumps(task_info, separators=(",", ":")),
              "Path": stmt.path, "CreateTime": _now(), "StartTime": None, "FinishTime": None,
              "Timeout": timeout, "ErrorMsg": None, "OutfileInfo": None}
    save_export_job(ctx.catalog, record)
    record = {**record, "State": "EXPORTING", "StartTime": _now()}
    save_export_job(ctx.catalog, record)
    try:
        result = outfile.outfile(OutfileStmt(query, stmt.path, fmt, outfile_props), ctx)
    except DorisError as e:
        save_export_job(ctx.catalog, {**record, "State": "CANCELLED", "FinishTime": _now(),
                                      "ErrorMsg": f"type:RUN_FAIL; msg:{e.client_message()}"})
        raise
    files, rows, size, url = [list(r.values()) for b in result.batches
                              for r in b.to_pylist()][0]
    info = [[{"fileNumber": str(files), "totalRows": str(rows), "fileSize": f"{size}bytes",
              "url": url}]]
    save_export_job(ctx.catalog, {**record, "State": "FINISHED", "Progress": "100%",
                                  "FinishTime": _now(),
                                  "OutfileInfo": json.dumps(info, separators=(",", ":"))})
    return OkResult()


def _jobs(ctx: StatementContext, db_name: str | None) -> tuple[str, list[dict]]:
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(db_name or ctx.db).name
        jobs = sorted((j for j in ctx.catalog.export_jobs.values() if j["db"] == db),
                      key=lambda j: j["job_id"])
    return db, jobs


def show_export(stmt: ShowExportStmt, ctx: StatementContext) -> RowsResult:
    _, jobs = _jobs(ctx, stmt.db)
    result = text_columns(COLUMNS, [tuple(j.get(c) for c in COLUMNS) for j in jobs])
    return show_filter.apply(result, show_filter.parse_tail(stmt.tail),
                             {"ID": [j["JobId"] for j in jobs]})


def cancel_export(stmt: CancelExportStmt, ctx: StatementContext) -> OkResult:
    """Doris's ExportMgr.cancelExportJob: the matching jobs not yet ended are cancelled (a job
    here runs within its EXPORT statement, so only a PENDING or EXPORTING record left by a
    crash can be)."""
    _, jobs = _jobs(ctx, stmt.db)
    matching = [j for j in jobs
                if (stmt.label is None or j["Label"] == stmt.label)
                and (stmt.label_like is None or fnmatch.fnmatchcase(
                    j["Label"], stmt.label_like.replace("%", "*").replace("_", "?")))
                and (stmt.state is None or j["State"] == stmt.state)]
    if not matching:
        raise DdlError("Export job not exist")
    running = [j for j in matching if j["State"] in ("PENDING", "IN_QUEUE", "EXPORTING")]
    if not running:
        raise DdlError("Export job has finished or been cancelled")
    for job in running:
        save_export_job(ctx.catalog, {**job, "State": "CANCELLED", "FinishTime": _now(),
                                      "ErrorMsg": "type:USER_CANCEL; msg:user cancel"})
    return OkResult()


HANDLERS = {ExportStmt: export, ShowExportStmt: show_export, CancelExportStmt: cancel_export}
