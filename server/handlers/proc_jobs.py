"""SHOW PROC's `/jobs` and `/transactions` directories, as Doris's FE lays them out
(common/proc/JobsDbProcDir, JobsProcDir, TransDbProcDir, TransStateProcDir, TransProcDir):

    /jobs                            DbId, DbName
    /jobs/<db id>                    JobType, Pending, Running, Finished, Cancelled, Total for
                                     load (Spark Load jobs), delete (always 0, as Doris),
                                     rollup, schema_change, export (none here)
    /transactions                    DbId, DbName
    /transactions/<db id>            State, Number: running, finished
    /transactions/<db id>/running    TransactionId, Label, ... of the pre-committed (two-phase)
                                     Stream Loads, status PRECOMMITTED
    /transactions/<db id>/finished   the published loads that took a label, status VISIBLE,
                                     newest first, at most 2000 (Doris's MAX_SHOW_ENTRIES)

A finished transaction's CommitTime, PublishTime and FinishTime are its publish entry's time
and its LoadJobSourceType the load's (BACKEND_STREAMING for Stream Load, INSERT_STREAMING for
INSERT, BATCH_LOAD_JOB for Spark Load), kept with the label (`Catalog.txn_info`, journaled
in the publish entry and kept in the image; loads published before this existed have NULL).
What the server does not keep is NULL (a transaction's coordinator, its prepare time, a group
commit's source), as Doris shows unset values.
"""

from __future__ import annotations

from datetime import datetime

from catalog.errors import AnalysisError
from server.handlers.context import StatementContext
from server.results import RowsResult, text_columns

_JOB_COLUMNS = ["JobType", "Pending", "Running", "Finished", "Cancelled", "Total"]
TXN_COLUMNS = ["TransactionId", "Label", "Coordinator", "TransactionStatus",
                "LoadJobSourceType", "PrepareTime", "PreCommitTime", "CommitTime",
                "PublishTime", "FinishTime", "Reason", "ErrorReplicasCount", "ListenerId",
                "TimeoutMs", "ErrMsg"]
_MAX_SHOW_ENTRIES = 2000
_LOAD_STATES = {"PENDING": 0, "ETL": 1, "LOADING": 1, "FINISHED": 2, "CANCELLED": 3}
_ALTER_STATES = {"PENDING": 0, "WAITING_TXN": 1, "RUNNING": 1, "FINISHED": 2, "CANCELLED": 3}


def dbs(ctx: StatementContext) -> RowsResult:
    """/jobs and /transactions: the databases, by id."""
    with ctx.catalog.lock:
        rows = sorted((db.db_id, name) for name, db in ctx.catalog.dbs.items())
    return text_columns(["DbId", "DbName"], rows)


def _db_name(ctx: StatementContext, db_id: str) -> str:
    try:
        wanted = int(db_id)
    except ValueError:
        raise AnalysisError(f"Invalid db id format: {db_id}") from None
    with ctx.catalog.lock:
        for name, db in ctx.catalog.dbs.items():
            if db.db_id == wanted:
                return name
    raise AnalysisError(f"Database [{db_id}] does not exist")


def jobs(ctx: StatementContext, db_id: str) -> RowsResult:
    """/jobs/<db id>: job counts per type and state."""
    db = _db_name(ctx, db_id)
    counts = {kind: [0, 0, 0, 0] for kind in ("load", "delete", "rollup", "schema_change",
                                              "export")}
    with ctx.catalog.lock:
        loads = [j["State"] for j in ctx.catalog.load_jobs.values() if j["db"] == db]
        alters = [(j.kind, j.state) for j in ctx.catalog.alter_jobs.values() if j.db == db]
    for state in loads:
        if state in _LOAD_STATES:
            counts["load"][_LOAD_STATES[state]] += 1
    for kind, state in alters:
        if state in _ALTER_STATES:
            counts["schema_change" if kind == "SCHEMA_CHANGE" else "rollup"][
                _ALTER_STATES[state]] += 1
    return text_columns(_JOB_COLUMNS, [(kind, *c, sum(c)) for kind, c in counts.items()])


def transactions(ctx: StatementContext, names: list[str]) -> RowsResult:
    """/transactions/<db id>[/running | /finished]."""
    db = _db_name(ctx, names[1])
    running = running_txns(ctx, db)
    with ctx.catalog.lock:
        finished = sorted(((txn, label) for label, txn in ctx.catalog.labels.get(db, {}).items()
                           if txn > 0), reverse=True)
        info = ctx.catalog.txn_info
        finished = [(txn, label, *info.get(txn, (None, None))) for txn, label in finished]
    if len(names) == 2:
        return text_columns(["State", "Number"], [("running", len(running)),
                                                  ("finished", len(finished))])
    if len(names) == 3 and names[2] in ("running", "finished"):
        if names[2] == "running":
            rows = [txn_row(p.txn_id, p.label, "PRECOMMITTED", None, p.source_type)
                    for p in running]
        else:
            rows = [txn_row(txn, label, "VISIBLE", at, source)
                    for txn, label, at, source in finished]
        return text_columns(TXN_COLUMNS, rows[:_MAX_SHOW_ENTRIES])
    raise AnalysisError(f"Proc path '/{'/'.join(names)}' doesn't exist")


def running_txns(ctx: StatementContext, db: str) -> list:
    txns = ctx.session.services.prepared_txns
    return sorted((p for p in txns.prepared() if p.db == db), key=lambda p: p.txn_id) \
        if txns is not None else []


def txn_row(txn_id: int, label: str | None, status: str, published: float | None,
             source: str | None) -> tuple:
    at = datetime.fromtimestamp(published).strftime("%Y-%m-%d %H:%M:%S") if published \
        else "NULL"
    return (txn_id, label or "", "NULL", status, source or "NULL", "NULL", "NULL", at, at, at,
            "", 0, -1, "NULL", "")
