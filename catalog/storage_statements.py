"""Statement objects for indexes, DELETE and query profiles (parsed by server/parser/storage.py).

    ALTER TABLE t ADD INDEX ... / CREATE INDEX ... ON t   -> CreateIndexStmt
    ALTER TABLE t DROP INDEX i / DROP INDEX i ON t        -> DropIndexStmt
    SHOW INDEX[ES] | KEYS FROM t [FROM db]                 -> ShowIndexStmt
    DELETE FROM t [PARTITION p | PARTITION (p1, p2)] WHERE -> DeleteStmt (conditions as plain data)
    SHOW QUERY PROFILE "/path"                             -> ShowQueryProfileStmt
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.errors import AnalysisError
from catalog.statements import IndexDef


@dataclass
class CreateIndexStmt:
    db: str | None
    table: str
    index: IndexDef
    if_not_exists: bool = False


@dataclass
class DropIndexStmt:
    db: str | None
    table: str
    name: str
    if_exists: bool = False


@dataclass
class BuildIndexStmt:
    """BUILD INDEX name ON [db.]t [PARTITION (p, ...)]: index the data loaded before an
    INVERTED index was added (Doris 2.1's light index change)."""

    db: str | None
    table: str
    name: str
    partitions: list[str] | None = None


@dataclass
class ShowIndexStmt:
    db: str | None
    table: str


@dataclass
class DeleteCondition:
    """`column op values`: op is =, !=, <, <=, >, >=, in, not_in, is_null, is_not_null; values
    are literal texts (None for NULL)."""

    column: str
    op: str
    values: list[str | None] = field(default_factory=list)


@dataclass
class DeleteStmt:
    db: str | None
    table: str
    partitions: list[str] | None  # None: every partition
    conditions: list[DeleteCondition]
    alias: str | None = None
    using: str | None = None  # DELETE ... USING <relations>: their SQL text
    where: str | None = None  # the WHERE's SQL text
    # why the WHERE is not a list of delete conditions (a subquery, OR, ...): a Unique table
    # deletes the rows it selects instead (Doris's fallback to DeleteFromUsingCommand)
    condition_error: AnalysisError | None = None


@dataclass
class ShowQueryProfileStmt:
    path: str  # "/" or "/<query_id>[/...]"
