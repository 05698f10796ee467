"""The privilege check every statement passes before its handler runs (Doris's checks).

`check_statement(stmt, ctx)` is called once per statement by `server/dispatch.py:run_statement`;
`CHECKS` maps a statement type to what it needs:

    SELECT / EXPLAIN / subqueries       SELECT on every table the text names (CTEs excepted)
    INSERT, DELETE, TRUNCATE, loads     LOAD on the target (+ SELECT on INSERT ... SELECT sources)
    CREATE/DROP TABLE, ALTER (partitions,
      indexes, properties, rollups, MVs,
      temporary partitions, REPLACE)    CREATE / DROP / ALTER on the table
    LOAD LABEL                          LOAD on every target table
    CREATE/DROP RESOURCE / CATALOG,
      ADMIN COMPACT                     ADMIN_PRIV
    CREATE/DROP DATABASE, USE           CREATE / DROP / any privilege on the database (1044)
    DESC, SHOW CREATE TABLE/VIEW, SHOW
      PARTITIONS/INDEX/COLUMNS          any privilege on the table (1142)
    RENAME (ALTER TABLE t RENAME),
      ALTER VIEW                        ALTER on the table or view (+ SELECT on the view's query)
    SHOW LOAD / ALTER TABLE             any privilege on the database; CANCEL LOAD: LOAD
    RECOVER DATABASE / TABLE / PARTITION ALTER or CREATE on the database / table
    ADMIN ..., SET GLOBAL, SHOW PROC,
      SQL_BLOCK_RULE, WORKLOAD GROUP, ENCRYPTKEY DDL,
      SHOW / DROP CATALOG RECYCLE BIN,
      SHOW DATABASE | TABLE | PARTITION <id>  ADMIN_PRIV (1227)
    SHOW EXPORT / ROUTINE LOAD          any privilege on the database
    ALTER SYSTEM                        NODE_PRIV (1227)
    KILL of another user's connection   ADMIN_PRIV (1095)

Account statements check their own rights (server/handlers/auth.py). Views do not exist in
minidoris, so "every table the text names" is every table the query reads. information_schema
and mysql are readable by everyone; their rows, SHOW DATABASES and SHOW TABLES are filtered to
what the user may see (catalog/access.py:visible_*). A session without an `access` (tests calling handlers
directly) is not checked.
"""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from catalog.mtmv_statements import (AlterMTMVStmt, CancelMTMVTaskStmt, CreateMTMVStmt,
                                     DropMTMVStmt, MTMVJobStmt, RefreshMTMVStmt,
                                     ShowCreateMTMVStmt)
from catalog.system_dbs import system_db
from catalog.access import Access
from catalog.auth import AccessDenied
from catalog.statements import (AddPartitionStmt, AdminRunDynamicPartitionStmt,
                                AdminSetConfigStmt, AdminSetDynamicPartitionTimeStmt,
                                AdminShowConfigStmt, AlterSystemStmt, AlterTablePropertiesStmt,
                                CreateTableStmt, DescFunctionStmt, DescStmt, DropPartitionStmt,
                                ExplainStmt, ModifyDistributionStmt, ModifyPartitionStmt,
                                ShowBackendsStmt, ShowCreateTableStmt, ShowDynamicPartitionStmt,
                                ShowPartitionsStmt, ShowProcStmt)
from catalog.storage_statements import (BuildIndexStmt, CreateIndexStmt, DeleteStmt, DropIndexStmt,
                                        ShowIndexStmt)
from catalog.load_statements import (CancelLoadStmt, CreateResourceStmt, DropResourceStmt,
                                     LoadStmt, ShowLoadStmt, ShowStreamLoadStmt)
from catalog.statements import SchemaChangeStmt
from catalog.enable_feature import EnableFeatureStmt
from catalog.statements import (AddRollupStmt, AdminCompactTableStmt, AdminWaitAlterStmt,
                                CancelAlterTableStmt, CreateMaterializedViewStmt, DropRollupStmt,
                                ShowAlterTableStmt)
from catalog.temp_partitions import (AddTempPartitionStmt, DropTempPartitionStmt,
                                     ReplacePartitionStmt, ReplaceTableStmt)
from server.handlers.context import StatementContext
from server.handlers.delete_using import needs_query, query_of
from server.parser.clients import (CreateCatalogStmt, DropCatalogStmt, RenamePartitionStmt,
                                   RenameTableStmt,
                                   ShowCreateViewStmt)
from server.parser.alter_database import RenameDatabaseStmt, SetDatabaseQuotaStmt
from server.parser.show_replicas import ReplicaStmt, ShowTabletStmt
from server.parser.export import CancelExportStmt, ExportStmt, ShowExportStmt
from server.parser.functions import (CreateAliasFunctionStmt, DropFunctionStmt,
                                     ShowFunctionsStmt)
from server.parser.analyze import (AnalyzeTableStmt, DropStatsStmt, ShowColumnStatsStmt,
                                   ShowAnalyzeStmt, ShowTableStatsStmt)
from server.parser.fast_values import FastInsert
from server.parser.row_policy import CreateRowPolicyStmt, DropRowPolicyStmt, ShowRowPolicyStmt
from server.parser.admin_objects import (EncryptKeyStmt, ShowEncryptKeysStmt,
                                         ShowSqlBlockRuleStmt, ShowWorkloadGroupsStmt,
                                         SqlBlockRuleStmt, WorkloadGroupStmt)
from server.parser.outfile import OutfileStmt
from server.parser.show_misc import (ShowDeleteStmt, ShowJobsStmt, ShowObjectByIdStmt,
                                     ShowTransactionStmt, ShowTrashStmt)
from server.parser.backup_restore import RepositoryStmt, ShowBackupJobsStmt
from server.parser.recycle_bin import (DropRecycleBinStmt, RecoverDatabaseStmt,
                                       RecoverPartitionStmt, RecoverTableStmt,
                                       ShowRecycleBinStmt)


PASSED_TEXTS = 4096  # query texts remembered as passed (then forgotten all at once)
_passed: dict[tuple, bool] = {}


def check_statement(stmt: object, ctx: StatementContext) -> None:
    access = getattr(ctx.session, "access", None)
    if access is None:
        return
    check = CHECKS.get(type(stmt))
    if check is None:
        return
    # A query as the client sent it that passed for this user and default database passes
    # again while no journal entry but data changes has been written (grants, roles, users,
    # tables and views all move Catalog.ddl_epoch): repeated queries skip walking the tree.
    key = (ctx.sql, ctx.db, access.user.identity, ctx.catalog.ddl_epoch) \
        if ctx.as_sent and isinstance(stmt, exp.Query) else None
    if key is not None and key in _passed:
        return
    check(stmt, ctx, access)
    if key is not None:
        if len(_passed) >= PASSED_TEXTS:
            _passed.clear()
        _passed[key] = True


def _db(db: str | None, ctx: StatementContext) -> str | None:
    return db or ctx.db


def _skip_db(db: str | None) -> bool:
    return not db or system_db(db) is not None


# -- queries -----------------------------------------------------------------------------------
def read_tables(node: exp.Expression, ctx: StatementContext,
                skip: set[int] = frozenset()) -> list[tuple[str, str]]:
    """(db, table) of every table `node` reads, CTE references and information_schema aside."""
    ctes = {c.alias for c in node.find_all(exp.CTE)}
    out = []
    for t in node.find_all(exp.Table):
        if id(t) in skip or not isinstance(t.this, exp.Identifier):
            continue
        if not t.db and (t.name in ctes or t.name.lower() == "dual"):
            continue
        db = _db(t.db, ctx)
        if not _skip_db(db):
            out.append((db, t.name))
    return out


def _select(node: exp.Expression, ctx: StatementContext, access: Access,
            skip: set[int] = frozenset()) -> None:
    for db, table in read_tables(node, ctx, skip):
        access.require_tbl(db, table, "SELECT")


def _query(stmt, ctx, access) -> None:
    _select(stmt, ctx, access)


def _create_table(stmt: CreateTableStmt, ctx, access) -> None:
    """CREATE on the new table; CREATE TABLE ... LIKE also reads the source's definition."""
    _table_priv("CREATE")(stmt, ctx, access)
    if stmt.like is not None:
        db = _db(stmt.like[0], ctx)
        if not _skip_db(db):
            access.require_tbl(db, stmt.like[1], "SELECT")


def _outfile(stmt: OutfileStmt, ctx, access) -> None:
    """SELECT ... INTO OUTFILE: SELECT on what the query reads."""
    from server.parser.statement import parse_sqlglot
    _select(parse_sqlglot(stmt.query), ctx, access)


def _explain(stmt: ExplainStmt, ctx, access) -> None:
    _select(stmt.query, ctx, access)


def _insert(stmt: exp.Insert, ctx, access) -> None:
    target = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
    db = _db(target.db, ctx)
    if not _skip_db(db):
        access.require_tbl(db, target.name, "LOAD")
    _select(stmt, ctx, access, {id(target)})


def _fast_insert(stmt: FastInsert, ctx, access) -> None:
    db = _db(stmt.db, ctx)
    if not _skip_db(db):
        access.require_tbl(db, stmt.table, "LOAD")


def _update(stmt: exp.Update, ctx, access) -> None:
    """UPDATE: LOAD on the target (an INSERT of its rows) and SELECT on every table it reads,
    the target included (Doris runs it as INSERT INTO t SELECT ... FROM t ...)."""
    target = stmt.this
    if isinstance(target, exp.Table):
        db = _db(target.db, ctx)
        if not _skip_db(db):
            access.require_tbl(db, target.name, "LOAD")
    _select(stmt, ctx, access)


def _delete(stmt: DeleteStmt, ctx, access) -> None:
    """DELETE: LOAD on the target; one that deletes the rows a query selects (USING, or a
    WHERE with a subquery: an INSERT ... SELECT in Doris) also SELECT on what that query reads,
    the target included."""
    _table_priv("LOAD")(stmt, ctx, access)
    if needs_query(stmt):
        _select(query_of(stmt, _db(stmt.db, ctx), []), ctx, access)


def _table_priv(pred: str, command: str | None = None) -> Callable:
    def check(stmt, ctx, access: Access) -> None:
        db = _db(stmt.db, ctx)
        if not _skip_db(db):
            access.require_tbl(db, stmt.table if hasattr(stmt, "table") else stmt.name, pred,
                               command)
    return check


def _truncate(stmt: exp.TruncateTable, ctx, access) -> None:
    for t in stmt.expressions:
        db = _db(t.db, ctx)
        if not _skip_db(db):
            access.require_tbl(db, t.name, "LOAD")


# -- DDL ---------------------------------------------------------------------------------------
def _create(stmt: exp.Create, ctx, access: Access) -> None:
    kind = (stmt.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA"):
        access.require_db(stmt.this.name, "CREATE")
        return
    target = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
    if isinstance(target, exp.Table):
        db = _db(target.db, ctx)
        if not _skip_db(db):
            access.require_tbl(db, target.name, "CREATE")
        _select(stmt, ctx, access, {id(target)})


def _drop(stmt: exp.Drop, ctx, access: Access) -> None:
    kind = (stmt.args.get("kind") or "").upper()
    targets = stmt.args.get("tables") or ([stmt.this] if stmt.this is not None else [])
    for t in targets:
        if kind in ("DATABASE", "SCHEMA"):
            access.require_db(t.name, "DROP")
        elif kind == "TABLE":
            db = _db(t.db, ctx)
            if not _skip_db(db):
                access.require_tbl(db, t.name, "DROP")


def _use(stmt: exp.Use, ctx, access: Access) -> None:
    name = stmt.this.name if stmt.this is not None else ""
    if not _skip_db(name):
        access.require_visible_db(name)


def _show(stmt: exp.Show, ctx, access: Access) -> None:
    kind = stmt.name.upper()
    if kind == "COLUMNS":
        db = _db(stmt.text("db"), ctx)
        if not _skip_db(db):
            access.require_tbl(db, stmt.text("target"), "SHOW", "SHOW COLUMNS")
    elif kind == "TABLES":
        db = _db(stmt.text("db"), ctx)
        if not _skip_db(db):
            access.require_visible_db(db)


def _load_db(stmt, ctx, access: Access) -> None:
    db = _db(stmt.db, ctx)
    if not _skip_db(db):
        access.require_db(db, "LOAD")


def _alter_view(stmt: exp.Alter, ctx, access: Access) -> None:
    db = _db(stmt.this.db or None, ctx)
    if not _skip_db(db):
        access.require_tbl(db, stmt.this.name, "ALTER", "ALTER")
    for action in stmt.args.get("actions") or []:
        if isinstance(action, exp.Query):
            _select(action, ctx, access)


def _show_db(stmt, ctx, access: Access) -> None:
    db = _db(stmt.db, ctx)
    if not _skip_db(db):
        access.require_visible_db(db)


def _command(stmt: exp.Command, ctx, access: Access) -> None:
    """Raw SHOW commands (SHOW DATA, SHOW TABLETS, ...): tablets and procs need ADMIN, the
    rest any privilege on the current database."""
    rest = stmt.args.get("expression") or ""
    rest = rest.sql() if isinstance(rest, exp.Expression) else str(rest)
    if str(stmt.this).upper() != "SHOW":
        return
    first = (rest.split() or [""])[0].upper()
    if first in ("TABLET", "TABLETS", "PROC", "FRONTENDS", "BROKER", "TRASH"):
        access.require_global("ADMIN")
    elif ctx.db and not _skip_db(ctx.db):
        access.require_visible_db(ctx.db)


def _recover_db(stmt: RecoverDatabaseStmt, ctx, access: Access) -> None:
    """RecoverDbStmt: ALTER or CREATE (or ADMIN) on the database (1044)."""
    access.require_db(stmt.name, "ALTER_CREATE")


def _recover_table(stmt, ctx, access: Access) -> None:
    """RecoverTableStmt / RecoverPartitionStmt: ALTER or CREATE on the table (1142,
    "RECOVERY command denied ...")."""
    db = _db(stmt.db, ctx)
    if not _skip_db(db):
        access.require_tbl(db, stmt.table, "ALTER_CREATE", "RECOVERY")


# -- administration ----------------------------------------------------------------------------
def _function_priv(stmt, ctx, access: Access, pred: str) -> None:
    if stmt.is_global:
        access.require_global("ADMIN")
        return
    db = _db(stmt.db, ctx)
    if not _skip_db(db):
        access.require_db(db, pred)


def _replicas(stmt, ctx, access: Access) -> None:
    """ADMIN SHOW REPLICA STATUS | DISTRIBUTION need ADMIN; SHOW DATA SKEW, SHOW on the table."""
    if stmt.kind != "SKEW":
        access.require_global("ADMIN")
        return
    db = _db(stmt.db, ctx)
    if not _skip_db(db):
        access.require_tbl(db, stmt.table, "SHOW", "SHOW")


def _admin(stmt, ctx, access: Access) -> None:
    access.require_global("ADMIN")


def _repository(stmt, ctx, access: Access) -> None:
    """CREATE / DROP REPOSITORY: ADMIN; BACKUP / RESTORE: LOAD on the database; SHOW SNAPSHOT:
    open (ShowSnapshotStmt checks nothing)."""
    if stmt.action in ("CREATE", "DROP"):
        access.require_global("ADMIN")
    elif stmt.action in ("BACKUP", "RESTORE"):
        _load_db(stmt, ctx, access)


def _encrypt_keys_db(stmt, ctx, access: Access) -> None:
    db = _db(stmt.db, ctx)
    if not _skip_db(db):
        access.require_db(db, "ADMIN")


def _node(stmt, ctx, access: Access) -> None:
    access.require_global("OPERATOR", "NODE")


def _admin_or_node(stmt, ctx, access: Access) -> None:
    access.require_global("ADMIN_OR_NODE", "ADMIN")


def _set(stmt: exp.Set, ctx, access: Access) -> None:
    if any((item.args.get("kind") or "").upper() == "GLOBAL" for item in stmt.expressions):
        access.require_global("ADMIN")


def _kill(stmt: exp.Kill, ctx, access: Access) -> None:
    target = stmt.this
    try:
        thread_id = int(target.name if isinstance(target, exp.Expression) else target)
    except (TypeError, ValueError):
        return  # the handler reports the bad id
    other = ctx.session.services.sessions.get(thread_id)
    other_access = getattr(other, "access", None)
    if other is None or other is ctx.session or other_access is None:
        return
    if other_access.user.name != access.user.name and not access.check_global("ADMIN"):
        raise AccessDenied(f"You are not owner of thread or query: {thread_id}", 1095)


def _add_temp_partition(stmt, ctx, access: Access) -> None:
    _table_priv("ALTER")(stmt.add, ctx, access)


def _create_mv(stmt, ctx, access: Access) -> None:
    """CREATE MATERIALIZED VIEW: ALTER on its base table."""
    base = stmt.query.find(exp.Table)
    db = _db(base.db if base is not None else None, ctx)
    if base is not None and not _skip_db(db):
        access.require_tbl(db, base.name, "ALTER")


def _create_mtmv(stmt, ctx, access: Access) -> None:
    """CREATE MATERIALIZED VIEW (async): CREATE on the view, SELECT on what its query reads."""
    from server.parser.statement import parse_sqlglot
    _table_priv("CREATE")(stmt, ctx, access)
    _select(parse_sqlglot(stmt.query), ctx, access)


def _load(stmt, ctx, access: Access) -> None:
    """LOAD LABEL (Spark / Broker Load): LOAD on every target table."""
    db = _db(stmt.db, ctx)
    for desc in stmt.data:
        access.require_tbl(db, desc.table, "LOAD")


CHECKS: dict[type, Callable[[object, StatementContext, Access], None]] = {
    exp.Select: _query, exp.Subquery: _query, exp.Union: _query, exp.Intersect: _query,
    exp.Except: _query, ExplainStmt: _explain, OutfileStmt: _outfile,
    exp.Insert: _insert, FastInsert: _fast_insert, exp.Update: _update,
    DeleteStmt: _delete,
    exp.TruncateTable: _truncate,
    CreateTableStmt: _create_table, exp.Create: _create, exp.Drop: _drop,
    AddPartitionStmt: _table_priv("ALTER"), DropPartitionStmt: _table_priv("ALTER"),
    AlterTablePropertiesStmt: _table_priv("ALTER"), CreateIndexStmt: _table_priv("ALTER"),
    ModifyPartitionStmt: _table_priv("ALTER"), ModifyDistributionStmt: _table_priv("ALTER"),
    BuildIndexStmt: _table_priv("ALTER"),
    DropIndexStmt: _table_priv("ALTER"),
    DescStmt: _table_priv("SHOW", "DESCRIBE"),
    DescFunctionStmt: lambda stmt, ctx, access: _select(stmt.query, ctx, access),
    ShowCreateTableStmt: _table_priv("SHOW", "SHOW CREATE TABLE"),
    AnalyzeTableStmt: _table_priv("SELECT", "ANALYZE"),
    ShowColumnStatsStmt: _table_priv("SELECT", "SHOW COLUMN STATS"),
    ShowTableStatsStmt: _table_priv("SELECT", "SHOW TABLE STATS"),
    ShowAnalyzeStmt: lambda stmt, ctx, access: None,  # rows: the tables the user may see
    CreateRowPolicyStmt: _admin, DropRowPolicyStmt: _admin, ShowRowPolicyStmt: _admin,
    DropStatsStmt: _table_priv("DROP", "DROP STATS"),
    ShowPartitionsStmt: _table_priv("SHOW", "SHOW PARTITIONS"),
    ShowIndexStmt: _table_priv("SHOW", "SHOW INDEX"),
    RenameTableStmt: _table_priv("ALTER", "ALTER"), exp.Alter: _alter_view,
    RenamePartitionStmt: _table_priv("ALTER", "ALTER"),
    # Doris: RENAME needs ALTER (or ADMIN) on the database, the quotas the global ADMIN
    RenameDatabaseStmt: lambda stmt, ctx, access: access.require_db(stmt.name, "ALTER"),
    SetDatabaseQuotaStmt: lambda stmt, ctx, access: access.require_global("ADMIN"),
    ShowTabletStmt: _admin, ReplicaStmt: _replicas,
    # EXPORT reads the table (ExportCommand: SELECT on it, denied as "EXPORT"); its records
    # are the database's, as SHOW LOAD's
    ExportStmt: lambda stmt, ctx, access: None if _skip_db(_db(stmt.db, ctx)) else
    access.require_tbl(_db(stmt.db, ctx), stmt.table, "SELECT", "EXPORT"),
    ShowExportStmt: _show_db, CancelExportStmt: _show_db,
    # functions: GLOBAL ones need ADMIN, a database's CREATE / DROP on it (CreateFunctionStmt)
    CreateAliasFunctionStmt: lambda stmt, ctx, access: _function_priv(stmt, ctx, access, "CREATE"),
    DropFunctionStmt: lambda stmt, ctx, access: _function_priv(stmt, ctx, access, "DROP"),
    ShowFunctionsStmt: lambda stmt, ctx, access: None if stmt.is_global else
    _show_db(stmt, ctx, access),
    ShowCreateViewStmt: _table_priv("SHOW", "SHOW CREATE VIEW"),
    ShowLoadStmt: _show_db, ShowStreamLoadStmt: _show_db, CancelLoadStmt: _load_db,
    ShowAlterTableStmt: _show_db,
    AdminWaitAlterStmt: _show_db,
    ShowDynamicPartitionStmt: _show_db, exp.Use: _use, exp.Show: _show, exp.Command: _command,
    AdminSetConfigStmt: _admin, AdminShowConfigStmt: _admin, AdminRunDynamicPartitionStmt: _admin,
    AdminSetDynamicPartitionTimeStmt: _admin, ShowProcStmt: _admin,
    ShowBackendsStmt: _admin_or_node, AlterSystemStmt: _node,
    exp.Set: _set, exp.Kill: _kill,
    # statements of the rollup, temporary partition, Spark Load and catalog work
    AddRollupStmt: _table_priv("ALTER"), DropRollupStmt: _table_priv("ALTER"),
    CancelAlterTableStmt: _table_priv("ALTER"), CreateMaterializedViewStmt: _create_mv,
    # async materialized views (server/handlers/async_mv.py)
    CreateMTMVStmt: _create_mtmv, DropMTMVStmt: _table_priv("DROP"),
    RefreshMTMVStmt: _table_priv("ALTER"), AlterMTMVStmt: _table_priv("ALTER"),
    MTMVJobStmt: _table_priv("ALTER"), CancelMTMVTaskStmt: _table_priv("ALTER"),
    ShowCreateMTMVStmt: _table_priv("SHOW", "SHOW CREATE MATERIALIZED VIEW"),
    SchemaChangeStmt: _table_priv("ALTER"), EnableFeatureStmt: _table_priv("ALTER"),
    AddTempPartitionStmt: _add_temp_partition, DropTempPartitionStmt: _table_priv("ALTER"),
    ReplacePartitionStmt: _table_priv("ALTER"), ReplaceTableStmt: _table_priv("ALTER"),
    LoadStmt: _load, CreateResourceStmt: _admin, DropResourceStmt: _admin,
    AdminCompactTableStmt: _admin, CreateCatalogStmt: _admin, DropCatalogStmt: _admin,
    # the recycle bin
    RecoverDatabaseStmt: _recover_db, RecoverTableStmt: _recover_table,
    RecoverPartitionStmt: _recover_table, ShowRecycleBinStmt: _admin, DropRecycleBinStmt: _admin,
    ShowObjectByIdStmt: _admin, ShowJobsStmt: _show_db, ShowTransactionStmt: _show_db,  # SHOW TABLE <id>; SHOW EXPORT, ...
    ShowDeleteStmt: _show_db,  # and each row's table: LOAD (catalog/delete_history.py)
    # SQL block rules, workload groups, encrypt keys: ADMIN (Create*Stmt.analyze); SHOW
    # ENCRYPTKEYS ADMIN on the database; SHOW WORKLOAD GROUPS lists what the account may use
    SqlBlockRuleStmt: _admin, ShowSqlBlockRuleStmt: _admin, WorkloadGroupStmt: _admin,
    EncryptKeyStmt: _admin, ShowEncryptKeysStmt: _encrypt_keys_db,
    # backup and restore: LOAD on the database (ShowBackupStmt, AbstractBackupStmt), ADMIN for
    # repositories' DDL; SHOW TRASH ADMIN (ShowTrashStmt)
    ShowBackupJobsStmt: lambda stmt, ctx, access: None if stmt.kind == "REPOSITORIES" else
    _load_db(stmt, ctx, access),
    RepositoryStmt: _repository, ShowTrashStmt: _admin,
}

# Statements with no check above, and why: each is either open to every account in Doris or
# checks its privileges in its handler (accounts and grants need GRANT_PRIV there; SHOW
# RESOURCES lists the resources the account may use). A statement type in neither table is a
# privilege hole: tests/unit/server/test_privilege_coverage.py fails on it.
OPEN_OR_CHECKED_IN_HANDLER = frozenset({
    "Transaction", "Commit", "Rollback", "SetTransactionStmt",   # no data touched
    "SwitchCatalogStmt", "ShowCatalogsStmt",                      # the one internal catalog
    "ShowQueryProfileStmt",                                       # profiles of recent queries
    "CreateUserStmt", "AlterUserStmt", "DropUserStmt", "SetPasswordStmt", "CreateRoleStmt",
    "DropRoleStmt", "GrantStmt", "ShowGrantsStmt", "ShowRolesStmt", "SetPropertyStmt",
    "ShowPropertyStmt",                                           # catalog/auth.py checks
    "ShowResourcesStmt",                                          # filtered by USAGE
    "ShowLastInsertStmt",                                         # the session's own INSERT
    "ShowWorkloadGroupsStmt",                                     # filtered by USAGE
    "HelpStmt",                                                   # no data
})
