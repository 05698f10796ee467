"""Parsers of Doris's backup and restore statements (sqlglot leaves them raw). minidoris keeps no
repositories, so there are never jobs or snapshots to show:

    SHOW REPOSITORIES
    SHOW BACKUP [FROM | IN db] [WHERE ...]
    SHOW RESTORE [FROM | IN db] [WHERE ...]
    SHOW SNAPSHOT ON repo [WHERE ...]
    CREATE [READ ONLY] REPOSITORY r WITH BROKER | S3 | HDFS ...   (refused: nowhere to write)
    DROP REPOSITORY r
    BACKUP SNAPSHOT [db.]label TO repo ...
    RESTORE SNAPSHOT [db.]label FROM repo ...
"""

from __future__ import annotations

from dataclasses import dataclass

from server.parser.tokens import TokenCursor


@dataclass
class ShowBackupJobsStmt:
    kind: str                      # REPOSITORIES | BACKUP | RESTORE
    db: str | None = None


@dataclass
class RepositoryStmt:
    """A statement naming a repository: SHOW SNAPSHOT ON r, DROP REPOSITORY r, BACKUP ... TO
    r, RESTORE ... FROM r, CREATE REPOSITORY r."""
    action: str                    # SNAPSHOT | DROP | BACKUP | RESTORE | CREATE
    repository: str
    db: str | None = None


def _show(cur: TokenCursor) -> ShowBackupJobsStmt:
    cur.expect("SHOW")
    kind = cur.next().text.upper()
    db = None
    if kind != "REPOSITORIES" and (cur.accept("FROM") or cur.accept("IN")):
        db = cur.identifier("database name")
    if kind == "REPOSITORIES":
        cur.expect_end()
    # a WHERE (LABEL = / SNAPSHOTNAME = ...) can only filter the jobs there are: none
    return ShowBackupJobsStmt(kind, db)


def _show_snapshot(cur: TokenCursor) -> RepositoryStmt:
    cur.expect("SHOW", "SNAPSHOT", "ON")
    return RepositoryStmt("SNAPSHOT", cur.identifier("repository name"))


def _create_repository(cur: TokenCursor) -> RepositoryStmt:
    cur.expect("CREATE")
    cur.accept("READ", "ONLY")
    cur.expect("REPOSITORY")
    return RepositoryStmt("CREATE", cur.identifier("repository name"))


def _drop_repository(cur: TokenCursor) -> RepositoryStmt:
    cur.expect("DROP", "REPOSITORY")
    name = cur.identifier("repository name")
    cur.expect_end()
    return RepositoryStmt("DROP", name)


def _snapshot_job(cur: TokenCursor) -> RepositoryStmt:
    action = cur.next().text.upper()
    cur.expect("SNAPSHOT")
    db, _ = cur.qualified_name()
    cur.expect("TO" if action == "BACKUP" else "FROM")
    return RepositoryStmt(action, cur.identifier("repository name"), db)


OWN_PARSERS = (
    (("SHOW", "REPOSITORIES"), _show),
    (("SHOW", "BACKUP"), _show),
    (("SHOW", "RESTORE"), _show),
    (("SHOW", "SNAPSHOT", "ON"), _show_snapshot),
    (("CREATE", "REPOSITORY"), _create_repository),
    (("CREATE", "READ", "ONLY", "REPOSITORY"), _create_repository),
    (("DROP", "REPOSITORY"), _drop_repository),
    (("BACKUP", "SNAPSHOT"), _snapshot_job),
    (("RESTORE", "SNAPSHOT"), _snapshot_job),
)
