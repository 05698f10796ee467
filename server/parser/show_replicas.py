"""Parsers of the statements that show where a table's tablets and bytes are:

    SHOW TABLET <tablet_id>
    ADMIN SHOW REPLICA STATUS FROM [db.]t [PARTITION (p, ...)] [WHERE STATUS [!]= 'OK' | ...]
    ADMIN SHOW REPLICA DISTRIBUTION FROM [db.]t [PARTITION (p, ...)]
    (SHOW REPLICA STATUS | DISTRIBUTION ...: the same, without ADMIN)
    SHOW DATA SKEW FROM [db.]t [PARTITION (p, ...)]
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from catalog.errors import AnalysisError
from server.parser.tokens import TokenCursor

STATUSES = ("OK", "DEAD", "VERSION_ERROR", "SCHEMA_ERROR", "MISSING")


@dataclass
class ShowTabletStmt:
    tablet_id: int


@dataclass
class ReplicaStmt:
    kind: str  # STATUS, DISTRIBUTION or SKEW
    db: str | None
    table: str
    partitions: list[str] | None
    status: str | None = None  # STATUS: the WHERE filter
    negated: bool = False


def _show_tablet(cur: TokenCursor) -> object:
    cur.expect("SHOW", "TABLET")
    tablet_id = cur.number("tablet id")
    cur.expect_end()
    return ShowTabletStmt(tablet_id)


def _admin_show_replica(cur: TokenCursor) -> object:
    """ADMIN SHOW REPLICA ..., or SHOW REPLICA ... (the same statements under Doris 2.x's
    newer spelling)."""
    cur.accept("ADMIN")
    cur.expect("SHOW", "REPLICA")
    kind = "STATUS" if cur.accept("STATUS") else None
    if kind is None:
        cur.expect("DISTRIBUTION")
        kind = "DISTRIBUTION"
    cur.expect("FROM")
    db, table = cur.qualified_name()
    partitions = cur.partition_names()
    stmt = ReplicaStmt(kind, db, table, partitions)
    if kind == "STATUS" and cur.accept("WHERE"):
        cur.expect("STATUS")
        if cur.accept_type(TokenType.NEQ):
            stmt.negated = True
        else:
            cur.expect_type(TokenType.EQ, "'=' or '!='")
        status = cur.string("status").upper()
        if status not in STATUSES:
            raise AnalysisError("Where clause should looks like: status =|!= 'OK'|'DEAD'|"
                                "'VERSION_ERROR'|'SCHEMA_ERROR'|'MISSING'")
        stmt.status = status
    cur.expect_end()
    return stmt


def _show_data_skew(cur: TokenCursor) -> object:
    cur.expect("SHOW", "DATA", "SKEW", "FROM")
    db, table = cur.qualified_name()
    partitions = cur.partition_names()
    cur.expect_end()
    return ReplicaStmt("SKEW", db, table, partitions)


OWN_PARSERS = (
    (("SHOW", "TABLET"), _show_tablet),
    (("ADMIN", "SHOW", "REPLICA"), _admin_show_replica),
    (("SHOW", "REPLICA", "STATUS"), _admin_show_replica),
    (("SHOW", "REPLICA", "DISTRIBUTION"), _admin_show_replica),
    (("SHOW", "DATA", "SKEW"), _show_data_skew),
)
