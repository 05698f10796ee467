"""Parsers for SHOW statements a Doris user meets early that name objects by id or report jobs
minidoris does not run:

    SHOW LAST INSERT
    SHOW TRANSACTION [FROM | IN db] WHERE id = n | label = '...' | status = '...'
    SHOW DATABASE <id> | SHOW TABLE <id> | SHOW PARTITION <id>
    SHOW [ALL] ROUTINE LOAD [FOR [db.]job] [LIKE '...']
    SHOW ROUTINE LOAD TASK [FROM db] WHERE JobName = '...'
    SHOW DELETE [FROM | IN db]
    CREATE ROUTINE LOAD ...            (refused: no Kafka here)
    SHOW TRASH                         (each backend's trash: always empty here)
    HELP 'topic'                       (Doris's help topics: none are loaded here)
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from catalog.errors import AnalysisError, DdlError, NotSupported
from server.parser.tokens import TokenCursor


@dataclass
class ShowLastInsertStmt:
    pass


@dataclass
class ShowObjectByIdStmt:
    kind: str  # DATABASE, TABLE or PARTITION
    object_id: int


@dataclass
class ShowJobsStmt:
    kind: str  # EXPORT, ROUTINE LOAD or ROUTINE LOAD TASK: none exist, Doris's columns
    db: str | None = None


@dataclass
class ShowDeleteStmt:
    db: str | None = None


@dataclass
class ShowTransactionStmt:
    db: str | None
    txn_id: int | None = None
    label: str | None = None
    status: str | None = None


_TXN_WHERE = ("Where clause should looks like one of them: id = 123 or label = 'label' or "
              "status = 'prepare/precommitted/committed/visible/aborted'")
TXN_STATUSES = ("PREPARE", "PRECOMMITTED", "COMMITTED", "VISIBLE", "ABORTED")


def parse_show_transaction(cur: TokenCursor) -> ShowTransactionStmt:
    """Doris's ShowTransactionStmt: one `key = literal` condition is required."""
    cur.expect("SHOW", "TRANSACTION")
    db = cur.identifier("database name") if cur.accept("FROM") or cur.accept("IN") else None
    stmt = ShowTransactionStmt(db)
    if not cur.accept("WHERE"):
        cur.expect_end()
        raise AnalysisError("Missing transaction id")
    key = cur.identifier("column name").lower()
    if not cur.accept_type(TokenType.EQ):
        raise AnalysisError(_TXN_WHERE)
    token = cur.next()
    if key == "id" and token.token_type == TokenType.NUMBER:
        stmt.txn_id = int(token.text)
    elif key == "label" and token.token_type == TokenType.STRING:
        stmt.label = token.text
    elif key == "status" and token.token_type == TokenType.STRING:
        if token.text.upper() not in TXN_STATUSES:
            raise AnalysisError("status should be prepare/precommitted/committed/visible/aborted")
        stmt.status = token.text.upper()
    else:
        raise AnalysisError(_TXN_WHERE)
    cur.expect_end()
    return stmt


@dataclass
class ShowTrashStmt:
    pass


@dataclass
class HelpStmt:
    mask: str


def parse_show_trash(cur: TokenCursor) -> ShowTrashStmt:
    cur.expect("SHOW", "TRASH")
    if cur.accept("ON"):
        raise NotSupported("SHOW TRASH ON <backend> is not supported: backends share one "
                           "storage root here")
    cur.expect_end()
    return ShowTrashStmt()


def parse_help(cur: TokenCursor) -> HelpStmt:
    cur.expect("HELP")
    mask = cur.ident_or_text("help topic") if not cur.at_end() else ""
    cur.expect_end()
    if not mask:
        raise AnalysisError("Help empty info.")
    return HelpStmt(mask)


def parse_show_last_insert(cur: TokenCursor) -> ShowLastInsertStmt:
    cur.expect("SHOW", "LAST", "INSERT")
    cur.expect_end()
    return ShowLastInsertStmt()


def parse_show_by_id(cur: TokenCursor) -> ShowObjectByIdStmt | None:
    """`SHOW TABLE 10005`; other SHOW TABLE / DATABASE / PARTITION forms are not this one."""
    if not cur.is_type(TokenType.NUMBER, ahead=2):
        return None
    cur.next()
    kind = cur.next().text.upper()
    object_id = cur.number("id")
    cur.expect_end()
    return ShowObjectByIdStmt(kind, object_id)


def _jobs(kind: str, words: tuple[str, ...]):
    def parse(cur: TokenCursor) -> ShowJobsStmt:
        cur.expect(*words)
        db = None
        if cur.accept("FROM") or cur.accept("IN"):
            db = cur.identifier("database name")
        return ShowJobsStmt(kind, db)  # filters and names select among no jobs: not read
    return parse


def parse_show_delete(cur: TokenCursor) -> ShowDeleteStmt:
    cur.expect("SHOW", "DELETE")
    db = cur.identifier("database name") if cur.accept("FROM") or cur.accept("IN") else None
    cur.expect_end()
    return ShowDeleteStmt(db)


def parse_create_routine_load(cur: TokenCursor) -> None:
    raise DdlError("Routine Load is not supported in minidoris: it reads Kafka, and no "
                       "Kafka cluster is available here. Load with Stream Load, INSERT or "
                       "Spark Load instead")


OWN_PARSERS = (
    (("SHOW", "LAST", "INSERT"), parse_show_last_insert),
    (("SHOW", "TRANSACTION"), parse_show_transaction),
    (("SHOW", "DELETE"), parse_show_delete),
    (("SHOW", "DATABASE"), parse_show_by_id),
    (("SHOW", "TABLE"), parse_show_by_id),
    (("SHOW", "PARTITION"), parse_show_by_id),
    (("SHOW", "ROUTINE", "LOAD", "TASK"), _jobs("ROUTINE LOAD TASK",
                                                ("SHOW", "ROUTINE", "LOAD", "TASK"))),
    (("SHOW", "ROUTINE", "LOAD"), _jobs("ROUTINE LOAD", ("SHOW", "ROUTINE", "LOAD"))),
    (("SHOW", "ALL", "ROUTINE", "LOAD"), _jobs("ROUTINE LOAD", ("SHOW", "ALL", "ROUTINE", "LOAD"))),
    (("CREATE", "ROUTINE", "LOAD"), parse_create_routine_load),
    (("SHOW", "TRASH"), parse_show_trash),
    (("HELP",), parse_help),
)
