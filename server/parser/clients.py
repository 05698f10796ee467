"""Parsers for statements clients send that sqlglot cannot read (entries of
statement.py:_OWN_PARSERS):

    SET [GLOBAL | SESSION | LOCAL] TRANSACTION {ISOLATION LEVEL ... | READ ONLY | READ WRITE}
        (Spark's JDBC writer, JDBC setTransactionIsolation; a no-op in Doris)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SetTransactionStmt:
    """SET TRANSACTION ...: accepted and ignored, as Doris's SetTransactionCommand does."""


def _set_transaction(cur) -> object | None:
    cur.expect("SET")
    cur.accept("GLOBAL") or cur.accept("SESSION") or cur.accept("LOCAL")
    if not cur.accept("TRANSACTION"):
        return None
    while not cur.at_end():  # ISOLATION LEVEL READ UNCOMMITTED, READ ONLY, ...
        cur.next()
    return SetTransactionStmt()


CLIENT_PARSERS = (
    (("SET", "TRANSACTION"), _set_transaction),
    (("SET", "SESSION", "TRANSACTION"), _set_transaction),
    (("SET", "GLOBAL", "TRANSACTION"), _set_transaction),
    (("SET", "LOCAL", "TRANSACTION"), _set_transaction),
)
