"""SHOW LAST INSERT, SHOW DELETE, SHOW TRANSACTION (the rows of SHOW PROC '/transactions/<db id>/...',
server/handlers/proc_jobs.py), SHOW DATABASE | TABLE | PARTITION <id>, SHOW ROUTINE LOAD
[TASK] (server/parser/show_misc.py), with Doris's columns (ShowExecutor and the Show*Stmt
metadata). Every column is VARCHAR, as Doris declares them."""

from __future__ import annotations

from server.handlers.context import StatementContext
from catalog.errors import AnalysisError
from server.handlers import proc_jobs
from catalog import delete_history
from catalog.backend import byte_text
from server.parser.show_misc import (HelpStmt, ShowDeleteStmt, ShowJobsStmt, ShowLastInsertStmt,
                                     ShowObjectByIdStmt, ShowTransactionStmt, ShowTrashStmt)
from server.results import RowsResult, text_columns

LAST_INSERT = ["TransactionId", "Label", "Database", "Table", "TransactionStatus", "LoadedRows",
               "FilteredRows"]
BY_ID = {"DATABASE": ["DbName"], "TABLE": ["DbName", "TableName", "DbId"],
         "PARTITION": ["DbName", "TableName", "PartitionName", "DbId", "TableId"]}
JOBS = {
    "EXPORT": ["JobId", "Label", "State", "Progress", "TaskInfo", "Path", "CreateTime",
               "StartTime", "FinishTime", "Timeout", "ErrorMsg", "OutfileInfo"],
    "ROUTINE LOAD": ["Id", "Name", "CreateTime", "PauseTime", "EndTime", "DbName", "TableName",
                     "IsMultiTable", "State", "DataSourceType", "CurrentTaskNum",
                     "JobProperties", "DataSourceProperties", "CustomProperties", "Statistic",
                     "Progress", "Lag", "ReasonOfStateChanged", "ErrorLogUrls", "OtherMsg",
                     "User", "Comment"],
    "ROUTINE LOAD TASK": ["TaskId", "TxnId", "TxnStatus", "JobId", "CreateTime",
                          "ExecuteStartTime", "Timeout", "BeId", "DataSourceProperties"],
}


def show_last_insert(stmt: ShowLastInsertStmt, ctx: StatementContext) -> RowsResult:
    """The session's last INSERT (none yet: no row, as Doris)."""
    last = getattr(ctx.session, "last_insert", None)
    return text_columns(LAST_INSERT, [last] if last is not None else [])


def show_by_id(stmt: ShowObjectByIdStmt, ctx: StatementContext) -> RowsResult:
    """The object's names (no row when no live object has the id, as ShowExecutor)."""
    rows = []
    with ctx.catalog.lock:
        for db in ctx.catalog.dbs.values():
            if stmt.kind == "DATABASE" and db.db_id == stmt.object_id:
                rows.append((db.name,))
            for t in db.tables.values():
                if stmt.kind == "TABLE" and t.table_id == stmt.object_id:
                    rows.append((db.name, t.name, db.db_id))
                if stmt.kind == "PARTITION" and stmt.object_id in t.partitions:
                    p = t.partitions[stmt.object_id]
                    rows.append((db.name, t.name, p.name, db.db_id, t.table_id))
    return text_columns(BY_ID[stmt.kind], rows)


def show_delete(stmt: ShowDeleteStmt, ctx: StatementContext) -> RowsResult:
    """The database's DELETEs (catalog/delete_history.py), tables the user may LOAD into."""
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(stmt.db or ctx.db).name
    return text_columns(delete_history.COLUMNS, delete_history.rows(ctx.catalog, db))


def show_jobs(stmt: ShowJobsStmt, ctx: StatementContext) -> RowsResult:
    """minidoris runs no Routine Load jobs: Doris's columns, no rows (the database must
    exist)."""
    if stmt.db is not None:
        with ctx.catalog.lock:
            ctx.catalog.get_db(stmt.db)
    return text_columns(JOBS[stmt.kind], [])


def show_transaction(stmt: ShowTransactionStmt, ctx: StatementContext) -> RowsResult:
    """One transaction by id or label, or a database's transactions in one status (ShowExecutor
    handleShowTransaction): running two-phase loads are PRECOMMITTED, published ones
    VISIBLE; minidoris keeps no others (an aborted load leaves no record)."""
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(stmt.db or ctx.db).name
        labels = dict(ctx.catalog.labels.get(db, {}))
        info = dict(ctx.catalog.txn_info)
    running = {p.txn_id: p for p in proc_jobs.running_txns(ctx, db)}
    finished = {txn: label for label, txn in labels.items() if txn > 0}

    def row(txn: int):
        if txn in running:
            p = running[txn]
            return proc_jobs.txn_row(txn, p.label, "PRECOMMITTED", None, p.source_type)
        at, source = info.get(txn, (None, None))
        return proc_jobs.txn_row(txn, finished[txn], "VISIBLE", at, source)

    if stmt.status is not None:
        txns = sorted(running) if stmt.status == "PRECOMMITTED" else \
            sorted(finished, reverse=True) if stmt.status == "VISIBLE" else []
        return text_columns(proc_jobs.TXN_COLUMNS, [row(t) for t in txns])
    txn = stmt.txn_id
    if stmt.label is not None:
        txn = next((t for t, p in running.items() if p.label == stmt.label),
                   labels.get(stmt.label))
        if txn is None or txn <= 0:
            raise AnalysisError(f"transaction with label {stmt.label} does not exist")
    if txn not in running and txn not in finished:
        raise AnalysisError(f"transaction with id {txn} does not exist")
    return text_columns(proc_jobs.TXN_COLUMNS, [row(txn)])


def show_trash(stmt: ShowTrashStmt, ctx: StatementContext) -> RowsResult:
    """Each backend's trash (ShowTrashStmt): dropped tablets' files are removed at once here
    (the recycle bin keeps what may come back), so every trash holds nothing."""
    with ctx.catalog.lock:
        backends = [ctx.catalog.backends[b] for b in sorted(ctx.catalog.backends)]
    return text_columns(["BackendId", "Backend", "TrashUsedCapacity"],
                        [(b.backend_id, b.host_port, byte_text(0)) for b in backends])


def help_topic(stmt: HelpStmt, ctx: StatementContext) -> RowsResult:
    """HELP 'topic' (HelpStmt, ShowExecutor.handleHelp): Doris answers from the help documents
    its FE loaded; minidoris loads none, so every topic is answered as an unknown one is: the
    topic columns and no row."""
    return text_columns(["name", "description", "example"], [])


HANDLERS = {
    ShowTrashStmt: show_trash, HelpStmt: help_topic,
    ShowLastInsertStmt: show_last_insert,
    ShowTransactionStmt: show_transaction,
    ShowObjectByIdStmt: show_by_id,
    ShowJobsStmt: show_jobs,
    ShowDeleteStmt: show_delete,
}
