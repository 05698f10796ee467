"""Statement objects for the Doris DDL and utility statements that sqlglot leaves raw.

The project's own parser (`server/parser/`) produces these; the catalog consumes them. Queries and
the DML that sqlglot models stay sqlglot ASTs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from storage.types import DataType


@dataclass
class ColumnDef:
    name: str
    type: DataType
    aggregation: str | None = None
    nullable: bool | None = None  # None = not said (Doris: keys NOT NULL? no: NULL by default)
    default: str | None = None
    has_default: bool = False
    comment: str = ""
    auto_increment: bool = False
    auto_increment_start: int = 1  # AUTO_INCREMENT(n): the first id
    key: bool = False  # `KEY` written after the type (ALTER TABLE ADD / MODIFY COLUMN)


@dataclass
class IndexDef:
    name: str
    columns: list[str]
    using: str  # BITMAP, INVERTED, NGRAM_BF
    comment: str = ""
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class PartitionDesc:
    """One partition clause: LESS THAN (upper), fixed [lower, upper), or IN (values)."""

    name: str
    kind: str  # "LESS_THAN", "FIXED", "IN"
    upper: list[str | None] | None = None  # None entries = MAXVALUE
    lower: list[str | None] | None = None
    values: list[list[str | None]] | None = None
    properties: dict[str, str] = field(default_factory=dict)
    if_not_exists: bool = False


@dataclass
class RollupDesc:
    name: str
    columns: list[str]
    dup_keys: list[str] | None = None
    properties: dict[str, str] = field(default_factory=dict)
    from_index: str | None = None  # ALTER TABLE ... ADD ROLLUP r (...) FROM idx


@dataclass
class CreateTableStmt:
    db: str | None
    name: str
    columns: list[ColumnDef]
    indexes: list[IndexDef] = field(default_factory=list)
    if_not_exists: bool = False
    engine: str = "olap"
    keys_type: str | None = None  # AGG_KEYS / UNIQUE_KEYS / DUP_KEYS; None = not given
    key_columns: list[str] = field(default_factory=list)
    comment: str = ""
    partition_kind: str | None = None  # RANGE / LIST
    partition_columns: list[str] = field(default_factory=list)
    partitions: list[PartitionDesc] = field(default_factory=list)
    auto_partition: bool = False      # AUTO PARTITION BY ...: partitions made by loads
    auto_unit: str | None = None      # AUTO RANGE: date_trunc's unit (day, month, ...)
    distribution_kind: str | None = None  # HASH / RANDOM
    distribution_columns: list[str] = field(default_factory=list)
    buckets: int | None = None  # None = AUTO / not given
    rollups: list[RollupDesc] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    query: str | None = None  # CREATE TABLE ... AS <query>: its text (columns come from it)
    like: tuple[str | None, str] | None = None  # CREATE TABLE t2 LIKE [db.]t1: (db, table)
    like_rollups: list[str] | None = None       # ... WITH ROLLUP [(r1, ...)]: [] = all
    mtmv: dict | None = None  # an asynchronous materialized view's record (catalog/mtmv.py)


@dataclass
class ShowPartitionsStmt:
    db: str | None
    table: str
    temporary: bool = False
    tail: str = ""  # [WHERE ...] [ORDER BY ...] [LIMIT ...] (server/handlers/show_filter.py)


@dataclass
class ShowCreateTableStmt:
    db: str | None
    table: str


@dataclass
class DescStmt:
    db: str | None
    table: str
    all: bool = False


@dataclass
class DescFunctionStmt:
    """DESC FUNCTION tvf(...): the columns a table-valued function gives."""
    query: object  # SELECT * FROM tvf(...)


@dataclass
class AdminStmt:
    """ADMIN ... and other raw utility statements, kept as words for their handlers."""

    words: list[str]
    properties: dict[str, str] = field(default_factory=dict)
    sql: str = ""


@dataclass
class ExplainStmt:
    """EXPLAIN [VERBOSE | GRAPH] <query> and DESC <query>; `query` is a sqlglot AST."""

    query: object
    level: str = "NORMAL"


# -- partitions and dynamic partitions (server/parser/alter_table.py, admin.py) -------------------
@dataclass
class AddPartitionStmt:
    """ALTER TABLE t ADD PARTITION ... [DISTRIBUTED BY HASH (cols) | RANDOM [BUCKETS n]]"""

    db: str | None
    table: str
    partition: PartitionDesc
    distribution_kind: str | None = None  # None: the table's distribution
    distribution_columns: list[str] = field(default_factory=list)
    buckets: int | None = None


@dataclass
class DropPartitionStmt:
    """ALTER TABLE t DROP PARTITION [IF EXISTS] p [FORCE]"""

    db: str | None
    table: str
    name: str
    if_exists: bool = False
    force: bool = False


@dataclass
class AlterTablePropertiesStmt:
    """ALTER TABLE t SET ("k" = "v", ...)"""

    db: str | None
    table: str
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class ModifyPartitionStmt:
    """ALTER TABLE t MODIFY PARTITION p | (p1, ...) | (*) SET ("k" = "v", ...)"""

    db: str | None
    table: str
    partitions: list[str] | None    # None: (*), every partition
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class ModifyDistributionStmt:
    """ALTER TABLE t MODIFY DISTRIBUTION DISTRIBUTED BY HASH (cols) | RANDOM BUCKETS n | AUTO"""

    db: str | None
    table: str
    kind: str                       # HASH | RANDOM
    columns: list[str] = field(default_factory=list)
    buckets: int | None = None      # None: BUCKETS AUTO (or none given)


@dataclass
class ShowDynamicPartitionStmt:
    """SHOW DYNAMIC PARTITION TABLES [FROM db]"""

    db: str | None = None


@dataclass
class AdminSetConfigStmt:
    """ADMIN SET [ALL] FRONTEND[S] CONFIG ("k" = "v")"""

    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class AdminShowConfigStmt:
    """ADMIN SHOW FRONTEND CONFIG [LIKE 'pattern']"""

    like: str | None = None


@dataclass
class AdminRunDynamicPartitionStmt:
    """minidoris: ADMIN RUN DYNAMIC PARTITION [FROM db | FOR [db.]table] -- one scheduler
    pass now, over every table, a database's, or one table."""

    db: str | None = None
    table: str | None = None


@dataclass
class AdminSetDynamicPartitionTimeStmt:
    """minidoris: ADMIN SET DYNAMIC PARTITION TIME = 'yyyy-MM-dd HH:mm:ss' | DEFAULT -- fix the
    dynamic partition scheduler's clock (a wall time in each table's zone), or free it."""

    value: str | None = None


# -- backends and colocation (server/parser/system.py) ---------------------------------------------
@dataclass
class AlterSystemStmt:
    """ALTER SYSTEM ADD | DECOMMISSION | DROP | DROPP BACKEND "host:port"[, ...] and
    CANCEL DECOMMISSION BACKEND "host:port"[, ...]; `action` is ADD, DECOMMISSION, DROP, DROPP or
    CANCEL_DECOMMISSION."""

    action: str
    host_ports: list[str] = field(default_factory=list)


@dataclass
class ShowBackendsStmt:
    """SHOW BACKENDS"""


@dataclass
class ShowProcStmt:
    """SHOW PROC '/path' (minidoris has /backends, /colocation_group[/<GroupId>])"""

    path: str


@dataclass
class AdminCompactTableStmt:
    """ADMIN COMPACT TABLE [db.]t PARTITION p WHERE type = 'BASE' | 'CUMULATIVE'."""

    db: str | None
    table: str
    partitions: list[str] | None
    compaction_type: str  # "base" | "cumulative" (checked by the parser)


# -- rollups and synchronous materialized views (catalog/rollup.py, catalog/rollup_job.py) ----
@dataclass
class AddRollupStmt:
    db: str | None
    table: str
    rollups: list[RollupDesc]


@dataclass
class DropRollupStmt:
    db: str | None
    table: str
    names: list[str]
    if_exists: bool = False
    is_mv: bool = False  # DROP MATERIALIZED VIEW [IF EXISTS] mv ON t


@dataclass
class ShowAlterTableStmt:
    kind: str  # ROLLUP | MATERIALIZED VIEW
    db: str | None
    tail: str = ""  # [WHERE ...] [ORDER BY ...] [LIMIT ...] (server/handlers/show_filter.py)


@dataclass
class CancelAlterTableStmt:
    kind: str  # ROLLUP | MATERIALIZED VIEW
    db: str | None
    table: str
    job_ids: list[int] = field(default_factory=list)


@dataclass
class CreateMaterializedViewStmt:
    name: str
    query: object  # the sqlglot SELECT
    sql: str
    if_not_exists: bool = False
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class AdminWaitAlterStmt:
    """minidoris-only `ADMIN WAIT ALTER TABLE [FROM db]`: block until the database's ADD ROLLUP
    / CREATE MATERIALIZED VIEW jobs are done (what Doris's regression suites poll SHOW ALTER
    TABLE ROLLUP for); golden scripts use it."""

    db: str | None


# -- schema change (server/parser/schema_change.py -> catalog/schema_change.py) -----------------
@dataclass
class ColumnPosition:
    first: bool = False
    after: str | None = None


@dataclass
class AddColumnClause:
    columns: list[ColumnDef]
    position: ColumnPosition | None = None
    rollup: str | None = None


@dataclass
class DropColumnClause:
    name: str
    rollup: str | None = None


@dataclass
class ModifyColumnClause:
    column: ColumnDef
    position: ColumnPosition | None = None
    rollup: str | None = None


@dataclass
class ModifyColumnCommentClause:
    name: str
    comment: str


@dataclass
class RenameColumnClause:
    old: str
    new: str


@dataclass
class ReorderColumnsClause:
    columns: list[str]
    rollup: str | None = None


@dataclass
class ModifyTableCommentClause:
    comment: str


@dataclass
class SchemaChangeStmt:
    """ALTER TABLE t <column clause>[, ...] (Doris's SchemaChangeHandler clauses)."""

    db: str | None
    table: str
    clauses: list
    properties: dict[str, str] = field(default_factory=dict)
