"""Parsers for statements clients send that sqlglot cannot read (entries of
statement.py:_OWN_PARSERS):

    SET [GLOBAL | SESSION | LOCAL] TRANSACTION {ISOLATION LEVEL ... | READ ONLY | READ WRITE}
        (Spark's JDBC writer, JDBC setTransactionIsolation; a no-op in Doris)
    SWITCH catalog
    SHOW CATALOGS [LIKE 'p']
    CREATE CATALOG [IF NOT EXISTS] c [WITH RESOURCE r] [COMMENT 'c'] [PROPERTIES (...)]
    DROP CATALOG [IF EXISTS] c
    SHOW CREATE VIEW [catalog.][db.]v
    ALTER TABLE t RENAME n
    SHOW [FULL] TABLES FROM | IN catalog.db [LIKE 'p' | WHERE ...]   (sqlglot reads `db` only)

`resolve_catalogs(tree)` checks and drops the catalog of every three-part table name
(`internal.db.tbl`) in a sqlglot tree, so the rest of the server sees `db.tbl`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import TokenType

from catalog.multi_catalog import check_catalog


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


@dataclass
class SwitchCatalogStmt:
    catalog: str


@dataclass
class ShowCatalogsStmt:
    like: str | None = None


@dataclass
class CreateCatalogStmt:
    name: str
    if_not_exists: bool = False
    properties: dict = field(default_factory=dict)


@dataclass
class ShowCreateViewStmt:
    db: str | None
    name: str


def _show_create_view(cur) -> object:
    cur.expect("SHOW", "CREATE", "VIEW")
    db, name = cur.qualified_name()
    cur.expect_end()
    return ShowCreateViewStmt(db, name)


@dataclass
class RenameTableStmt:
    db: str | None
    name: str
    new_name: str


@dataclass
class RenamePartitionStmt:
    db: str | None
    table: str
    name: str
    new_name: str


def _alter_table(cur) -> object | None:
    """ALTER TABLE t RENAME n, ALTER TABLE t RENAME PARTITION p n; None for the other ALTER
    TABLE forms (the next parser takes them: REPLACE WITH TABLE is
    server/parser/temp_partitions.py's)."""
    cur.expect("ALTER", "TABLE")
    db, name = cur.qualified_name()
    if cur.accept("RENAME"):
        if cur.accept("PARTITION"):
            old = cur.identifier("partition name")
            new = cur.identifier("partition name")
            cur.expect_end()
            return RenamePartitionStmt(db, name, old, new)
        if cur.is_word("COLUMN") or cur.is_word("ROLLUP"):
            return None
        new_name = cur.identifier("table name")
        cur.expect_end()
        return RenameTableStmt(db, name, new_name)
    return None


@dataclass
class DropCatalogStmt:
    name: str
    if_exists: bool = False


def _switch(cur) -> object:
    cur.expect("SWITCH")
    name = cur.identifier("catalog name")
    cur.expect_end()
    return SwitchCatalogStmt(name)


def _show_catalogs(cur) -> object:
    cur.expect("SHOW", "CATALOGS")
    like = cur.string("pattern") if cur.accept("LIKE") else None
    cur.expect_end()
    return ShowCatalogsStmt(like)


def _create_catalog(cur) -> object:
    cur.expect("CREATE", "CATALOG")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = cur.identifier("catalog name")
    if cur.accept("WITH", "RESOURCE"):
        cur.identifier("resource name")
    if cur.accept("COMMENT"):
        cur.string("comment")
    properties = cur.properties() if cur.accept("PROPERTIES") else {}
    cur.expect_end()
    return CreateCatalogStmt(name, bool(if_not_exists), properties)


def _drop_catalog(cur) -> object:
    cur.expect("DROP", "CATALOG")
    if_exists = cur.accept("IF", "EXISTS")
    name = cur.identifier("catalog name")
    cur.expect_end()
    return DropCatalogStmt(name, bool(if_exists))


def _show_tables(cur) -> object | None:
    """SHOW [FULL] TABLES FROM catalog.db ...: the same statement without `catalog.`."""
    from server.parser.statement import parse_sqlglot  # the one sqlglot entry point
    while not cur.at_end() and not cur.is_word("FROM") and not cur.is_word("IN"):
        cur.next()
    if cur.at_end():
        return None
    cur.next()
    first = cur.next()
    if not cur.is_type(TokenType.DOT):
        return None
    check_catalog(first.text.strip("`"))
    dot = cur.next()
    return parse_sqlglot(cur.sql[:first.start] + cur.sql[dot.end + 1:])


def resolve_catalogs(tree):
    """Check and drop `internal.` in three-part table names, `USE internal.db` and
    `SHOW DATABASES FROM internal` (UnknownCatalog for another catalog)."""
    if not isinstance(tree, exp.Expression):
        return tree
    if isinstance(tree, exp.Use) and isinstance(tree.this, exp.Table) and tree.this.args.get("db"):
        check_catalog(tree.this.args["db"].name)
        tree.this.set("db", None)
    if isinstance(tree, exp.Show) and str(tree.this).upper() == "DATABASES" and tree.args.get("db"):
        check_catalog(tree.args["db"].name)
        tree.set("db", None)
    for table in tree.find_all(exp.Table):
        if table.args.get("catalog"):
            check_catalog(table.args["catalog"].name)
            table.set("catalog", None)
    return tree


CLIENT_PARSERS = (
    (("SWITCH",), _switch),
    (("SHOW", "CATALOGS"), _show_catalogs),
    (("CREATE", "CATALOG"), _create_catalog),
    (("DROP", "CATALOG"), _drop_catalog),
    (("SHOW", "CREATE", "VIEW"), _show_create_view),
    (("ALTER", "TABLE"), _alter_table),
    (("SHOW", "TABLES"), _show_tables),
    (("SHOW", "FULL", "TABLES"), _show_tables),
    (("SET", "TRANSACTION"), _set_transaction),
    (("SET", "SESSION", "TRANSACTION"), _set_transaction),
    (("SET", "GLOBAL", "TRANSACTION"), _set_transaction),
    (("SET", "LOCAL", "TRANSACTION"), _set_transaction),
)
