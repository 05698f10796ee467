"""Statement dispatch: a table from statement type to handler. Nothing else decides routing."""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from catalog.errors import NotSupported
from catalog.statements import AlterSystemStmt, ShowBackendsStmt, ShowProcStmt
from catalog.statements import (CreateTableStmt, DescFunctionStmt, DescStmt, ExplainStmt,
                                ShowCreateTableStmt, ShowPartitionsStmt)
from server.handlers import ddl, explain, insert, kill, query, set_var, show, system
from catalog.statements import AdminCompactTableStmt
from catalog.statements import (AddPartitionStmt, AdminRunDynamicPartitionStmt,
                                AdminSetConfigStmt, AdminSetDynamicPartitionTimeStmt,
                                AdminShowConfigStmt, AlterTablePropertiesStmt, DropPartitionStmt,
                                ModifyDistributionStmt, ModifyPartitionStmt,
                                ShowDynamicPartitionStmt)
from server.handlers import admin, partition
from server.handlers.context import StatementContext
from server.handlers.storage_dispatch import STORAGE_HANDLERS
from server.handlers.auth import AUTH_HANDLERS
from server.privileges import check_statement
from server.handlers.load import LOAD_HANDLERS
from server.handlers.temp_partitions import HANDLERS as TEMP_PARTITION_HANDLERS
from server.handlers.enable_feature import HANDLERS as ENABLE_FEATURE_HANDLERS
from server.handlers.clients import CLIENT_HANDLERS
from server.handlers.async_mv import ASYNC_MV_HANDLERS
from server.handlers.rollup import ROLLUP_HANDLERS
from server.handlers.schema_change import SCHEMA_CHANGE_HANDLERS
from server.handlers import outfile, update
from server.handlers.analyze import ANALYZE_HANDLERS
from server.handlers.recycle_bin import HANDLERS as RECYCLE_BIN_HANDLERS
from server.handlers.show_misc import HANDLERS as SHOW_MISC_HANDLERS
from server.handlers.alter_database import HANDLERS as ALTER_DATABASE_HANDLERS
from server.handlers.show_replicas import HANDLERS as REPLICA_HANDLERS
from server.handlers.export import HANDLERS as EXPORT_HANDLERS
from server.handlers.functions import HANDLERS as FUNCTION_HANDLERS
from server.handlers.row_policy import HANDLERS as ROW_POLICY_HANDLERS
from server.handlers.admin_objects import HANDLERS as ADMIN_OBJECT_HANDLERS
from server.handlers.statement_checks import check_block_rules
from server.handlers.backup_restore import HANDLERS as BACKUP_RESTORE_HANDLERS
from server.parser.outfile import OutfileStmt
from server.parser.fast_values import FastInsert
from server.results import OkResult, RowsResult


def _ok(stmt, ctx: StatementContext) -> OkResult:
    return OkResult()


def _command(stmt: exp.Command, ctx: StatementContext):
    rest = stmt.args.get("expression") or ""
    rest = rest.sql() if isinstance(rest, exp.Expression) else str(rest)
    if str(stmt.this).upper() == "SHOW":
        result = show.show_command(rest, ctx)
        if result is not None:
            return result
    text = f"{stmt.this} {rest.strip()}".strip()
    raise NotSupported(f"Unsupported statement: {text[:200]}")


HANDLERS: dict[type, Callable[[object, StatementContext], OkResult | RowsResult]] = {
    AlterSystemStmt: system.alter_system,
    ShowBackendsStmt: system.show_backends,
    ShowProcStmt: system.show_proc,
    CreateTableStmt: ddl.create_table,
    ShowPartitionsStmt: show.show_partitions,
    ShowCreateTableStmt: show.show_create_table,
    DescStmt: show.desc,
    DescFunctionStmt: show.desc_function,
    ExplainStmt: explain.explain,
    exp.Select: query.select,
    exp.Subquery: query.select,
    exp.Union: query.select,
    exp.Intersect: query.select,
    exp.Except: query.select,
    exp.Insert: insert.insert,
    exp.Update: update.update,  # UPDATE on Unique tables, as an INSERT ... SELECT
    FastInsert: insert.fast_insert,
    exp.Create: ddl.create,
    exp.Drop: ddl.drop,
    exp.Use: ddl.use,
    exp.Show: show.show,
    exp.Set: set_var.set_statement,
    exp.Transaction: _ok,
    exp.Commit: _ok,
    exp.Rollback: _ok,
    exp.Command: _command,
    exp.Kill: kill.kill,
    # statistics (ANALYZE TABLE, SHOW COLUMN/TABLE STATS, DROP STATS)
    **ANALYZE_HANDLERS,
    **ROW_POLICY_HANDLERS,  # CREATE / DROP / SHOW ROW POLICY
    OutfileStmt: outfile.outfile,  # SELECT ... INTO OUTFILE
    # partitions and dynamic partitions
    AddPartitionStmt: partition.add_partition,
    DropPartitionStmt: partition.drop_partition,
    AlterTablePropertiesStmt: partition.alter_properties,
    ModifyPartitionStmt: partition.modify_partition,
    ModifyDistributionStmt: partition.modify_distribution,
    exp.TruncateTable: partition.truncate,
    ShowDynamicPartitionStmt: partition.show_dynamic,
    AdminSetConfigStmt: admin.set_config,
    AdminShowConfigStmt: admin.show_config,
    AdminRunDynamicPartitionStmt: admin.run_dynamic_partition,
    AdminSetDynamicPartitionTimeStmt: admin.set_dynamic_partition_time,
    AdminCompactTableStmt: admin.compact_table,
    **STORAGE_HANDLERS,  # indexes, DELETE, SHOW QUERY PROFILE
    **AUTH_HANDLERS,  # users, roles, GRANT/REVOKE, SHOW GRANTS/ROLES (server/handlers/auth.py)
    **LOAD_HANDLERS,  # resources, Spark Load (LOAD LABEL, SHOW LOAD, CANCEL LOAD)
    **TEMP_PARTITION_HANDLERS,  # temporary partitions, REPLACE PARTITION / WITH TABLE
    **CLIENT_HANDLERS,  # SET TRANSACTION, catalogs (server/handlers/clients.py)
    **ASYNC_MV_HANDLERS,  # async materialized views (MTMV): DDL, REFRESH, jobs, tasks
    **ROLLUP_HANDLERS,  # ADD/DROP ROLLUP, SHOW/CANCEL ALTER TABLE, materialized views
    **SCHEMA_CHANGE_HANDLERS,  # ALTER TABLE ADD/DROP/MODIFY/RENAME COLUMN, ORDER BY
    **ENABLE_FEATURE_HANDLERS,  # ALTER TABLE ENABLE FEATURE (hidden columns)
    **RECYCLE_BIN_HANDLERS,  # RECOVER ..., SHOW / DROP CATALOG RECYCLE BIN
    **SHOW_MISC_HANDLERS,  # SHOW LAST INSERT, SHOW TABLE <id>, ROUTINE LOAD, TRASH, HELP
    **ALTER_DATABASE_HANDLERS,  # ALTER DATABASE RENAME / SET DATA | REPLICA QUOTA
    **REPLICA_HANDLERS,  # SHOW TABLET <id>, ADMIN SHOW REPLICA ..., SHOW DATA SKEW
    **EXPORT_HANDLERS,  # EXPORT TABLE, SHOW EXPORT, CANCEL EXPORT
    **FUNCTION_HANDLERS,  # CREATE ALIAS FUNCTION, DROP FUNCTION, SHOW FUNCTIONS
    **ADMIN_OBJECT_HANDLERS,  # SQL_BLOCK_RULE, WORKLOAD GROUP(S), ENCRYPTKEY(S)
    **BACKUP_RESTORE_HANDLERS,  # SHOW REPOSITORIES / BACKUP / RESTORE / SNAPSHOT (none here)
}


def run_statement(stmt: object, ctx: StatementContext) -> OkResult | RowsResult:
    handler = HANDLERS.get(type(stmt))
    if handler is None:
        text = stmt.sql(dialect="doris") if isinstance(stmt, exp.Expression) \
            else type(stmt).__name__
        raise NotSupported(f"Unsupported statement: {text[:200]}")
    check_statement(stmt, ctx)  # privileges (server/privileges.py), before anything runs
    if ctx.as_sent:  # the statement's text as the client sent it against SQL block rules
        check_block_rules(ctx)
    return handler(stmt, ctx)
