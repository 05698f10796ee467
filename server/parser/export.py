"""Parsers of EXPORT, SHOW EXPORT and CANCEL EXPORT (Doris 2.1's syntax):

    EXPORT TABLE [db.]t [PARTITION (p, ...)] [WHERE <condition>] TO "<path>"
        [PROPERTIES ("label" = ..., "format" = ..., "column_separator" = ..., ...)]
        [WITH BROKER "name" (...) | WITH S3 (...) | WITH HDFS (...)]
    SHOW EXPORT [FROM db] [WHERE ID = n | LABEL = '...' | LABEL LIKE '...' | STATE = '...']
        [ORDER BY ...] [LIMIT ...]
    CANCEL EXPORT [FROM db] WHERE LABEL = '...' | LABEL LIKE '...' | STATE = '...'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot.tokens import TokenType

from catalog.errors import AnalysisError
from server.parser.tokens import TokenCursor


@dataclass
class ExportStmt:
    db: str | None
    table: str
    partitions: list[str] | None
    where: str | None          # the condition's SQL text
    path: str
    properties: dict[str, str] = field(default_factory=dict)
    target: str | None = None  # BROKER, S3 or HDFS: remote storage, not available here


@dataclass
class ShowExportStmt:
    db: str | None
    tail: str  # WHERE / ORDER BY / LIMIT text (server/handlers/show_filter.py)


@dataclass
class CancelExportStmt:
    db: str | None
    label: str | None = None
    label_like: str | None = None
    state: str | None = None


_TO_PATH = re.compile(r"""^(?P<where>.*?)\s*\bTO\s+(?P<path>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
                      r"""(?P<rest>.*)$""", re.IGNORECASE | re.DOTALL)


def _export(cur: TokenCursor) -> ExportStmt:
    cur.expect("EXPORT", "TABLE")
    db, table = cur.qualified_name()
    partitions = cur.partition_names()
    rest = cur.rest_sql().strip().rstrip(";")
    m = _TO_PATH.match(rest)
    if m is None:
        raise AnalysisError("Syntax error in EXPORT: expected TO \"<path>\"")
    where = m.group("where").strip()
    if where:
        if not where.upper().startswith("WHERE"):
            raise AnalysisError(f"Syntax error in EXPORT near '{where[:40]}'")
        where = where[5:].strip()
    tail = TokenCursor(m.group("rest"))
    properties = tail.properties() if tail.accept("PROPERTIES") else {}
    target = None
    if tail.accept("WITH"):
        target = tail.next().text.upper()
        tail.i = len(tail.tokens)  # the storage's properties: not read (refused)
    tail.expect_end()
    return ExportStmt(db, table, partitions, where or None, m.group("path")[1:-1], properties,
                      target)


def _show_export(cur: TokenCursor) -> ShowExportStmt:
    cur.expect("SHOW", "EXPORT")
    db = cur.identifier("database name") if cur.accept("FROM") or cur.accept("IN") else None
    return ShowExportStmt(db, cur.rest_sql())


def _cancel_export(cur: TokenCursor) -> CancelExportStmt:
    cur.expect("CANCEL", "EXPORT")
    db = cur.identifier("database name") if cur.accept("FROM") or cur.accept("IN") else None
    stmt = CancelExportStmt(db)
    if not cur.accept("WHERE"):
        raise AnalysisError("Where clause can not be null")
    if cur.accept("LABEL"):
        if cur.accept("LIKE"):
            stmt.label_like = cur.string("label pattern")
        else:
            cur.expect_type(TokenType.EQ, "'='")
            stmt.label = cur.string("label")
    elif cur.accept("STATE"):
        cur.expect_type(TokenType.EQ, "'='")
        stmt.state = cur.string("state").upper()
        if stmt.state not in ("PENDING", "IN_QUEUE", "EXPORTING"):
            raise AnalysisError(f"Only support PENDING/IN_QUEUE/EXPORTING, invalid state: "
                                f"{stmt.state}")
    else:
        raise AnalysisError("Where clause should looks like: LABEL = \"your_load_label\", or "
                            "LABEL LIKE \"matcher\", or STATE = \"PENDING/IN_QUEUE/EXPORTING\"")
    cur.expect_end()
    return stmt


OWN_PARSERS = (
    (("EXPORT", "TABLE"), _export),
    (("SHOW", "EXPORT"), _show_export),
    (("CANCEL", "EXPORT"), _cancel_export),
)
