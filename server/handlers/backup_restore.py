"""Backup and restore (server/parser/backup_restore.py) as a cluster without repositories
answers them: SHOW REPOSITORIES / BACKUP / RESTORE list nothing, with Doris's columns
(Show*Stmt.TITLE_NAMES); a statement naming a repository finds none (BackupHandler's
`Repository r does not exist`, ERR_COMMON_ERROR 5064); CREATE REPOSITORY is refused, since a
repository needs a broker or remote storage minidoris does not have."""

from __future__ import annotations

from catalog.errors import CodedDdlError, NoDatabaseSelected, NotSupported
from server.handlers.context import StatementContext
from server.parser.backup_restore import RepositoryStmt, ShowBackupJobsStmt
from server.results import OkResult, RowsResult, text_columns

COLUMNS = {
    "REPOSITORIES": ["RepoId", "RepoName", "CreateTime", "IsReadOnly", "Location", "Broker",
                     "Type", "ErrMsg"],
    "BACKUP": ["JobId", "SnapshotName", "DbName", "State", "BackupObjs", "CreateTime",
               "SnapshotFinishedTime", "UploadFinishedTime", "FinishedTime", "UnfinishedTasks",
               "Progress", "TaskErrMsg", "Status", "Timeout"],
    "RESTORE": ["JobId", "Label", "Timestamp", "DbName", "State", "AllowLoad", "ReplicationNum",
                "ReplicaAllocation", "ReserveReplica", "ReserveDynamicPartitionEnable",
                "RestoreObjs", "CreateTime", "MetaPreparedTime", "SnapshotFinishedTime",
                "DownloadFinishedTime", "FinishedTime", "UnfinishedTasks", "Progress",
                "TaskErrMsg", "Status", "Timeout"],
}


def show_jobs(stmt: ShowBackupJobsStmt, ctx: StatementContext) -> RowsResult:
    if stmt.kind != "REPOSITORIES":
        db = stmt.db or ctx.db
        if not db:
            raise NoDatabaseSelected()
        with ctx.catalog.lock:
            ctx.catalog.get_db(db)  # Unknown database, as Doris's analysis reports it
    return text_columns(COLUMNS[stmt.kind], [])


def repository(stmt: RepositoryStmt, ctx: StatementContext) -> OkResult:
    if stmt.action == "CREATE":
        raise NotSupported("CREATE REPOSITORY is not supported: minidoris has no broker or "
                           "remote storage to keep snapshots in")
    if stmt.action in ("BACKUP", "RESTORE"):
        db = stmt.db or ctx.db
        if not db:
            raise NoDatabaseSelected()
        with ctx.catalog.lock:
            ctx.catalog.get_db(db)
    raise CodedDdlError(f"Repository {stmt.repository} does not exist", 5064)


HANDLERS = {ShowBackupJobsStmt: show_jobs, RepositoryStmt: repository}
