"""Partition statements: ALTER TABLE ADD/DROP PARTITION, ALTER TABLE SET (...), MODIFY PARTITION,
MODIFY DISTRIBUTION, TRUNCATE TABLE, SHOW DYNAMIC PARTITION TABLES. The rules live in
`catalog/partition_ddl.py`, `catalog/partition_properties.py` and the dynamic partition
scheduler (`catalog/dynamic_scheduler.py`); these handlers only route."""

from __future__ import annotations

from sqlglot import exp

from catalog import group_commit
from catalog import partition_ddl
from catalog import partition_properties
from catalog import table_flags
from catalog import table_property_rules
from catalog.compaction_properties import COMPACTION_KEYS
from catalog.dynamic_properties import PREFIX
from catalog.dynamic_scheduler import SHOW_COLUMNS
from catalog.errors import NotSupported
from catalog.index_rules import BF_COLUMNS, BF_FPP
from catalog.statements import (AddPartitionStmt, AlterTablePropertiesStmt, DropPartitionStmt,
                                ModifyDistributionStmt, ModifyPartitionStmt,
                                ShowDynamicPartitionStmt)
from catalog.table_index import set_bloom_filter_properties
from server.handlers.context import StatementContext
from server.results import OkResult, RowsResult, text_columns


def add_partition(stmt: AddPartitionStmt, ctx: StatementContext) -> OkResult:
    partition_ddl.add_partition(ctx.catalog, ctx.db, stmt)
    return OkResult()


def drop_partition(stmt: DropPartitionStmt, ctx: StatementContext) -> OkResult:
    partition_ddl.drop_partition(ctx.catalog, stmt.db or ctx.db, stmt.table, stmt.name,
                                 stmt.if_exists, stmt.force)
    return OkResult()


def alter_properties(stmt: AlterTablePropertiesStmt, ctx: StatementContext) -> OkResult:
    table_property_rules.check_alterable(ctx.catalog, stmt.db or ctx.db, stmt.table)
    table_property_rules.check_one(stmt.properties)
    if ctx.catalog.alter_colocation_properties(stmt.db or ctx.db, stmt.table, stmt.properties):
        return OkResult()  # colocate_with: catalog/cluster.py
    bloom = {k: v for k, v in stmt.properties.items() if k in (BF_COLUMNS, BF_FPP)}
    if bloom:
        if len(bloom) != len(stmt.properties):
            raise NotSupported("ALTER TABLE SET of bloom filter properties must be alone")
        set_bloom_filter_properties(ctx.catalog, stmt.db or ctx.db, stmt.table, bloom)
        return OkResult()
    flags = table_flags.switches(stmt.properties)
    if flags:
        group_commit.set_properties(ctx.catalog, stmt.db or ctx.db, stmt.table, flags)
        return OkResult()
    grouped = group_commit.check_properties(stmt.properties)
    if grouped:
        if len(grouped) != len(stmt.properties):
            raise NotSupported("ALTER TABLE SET of group commit properties must be alone")
        group_commit.set_properties(ctx.catalog, stmt.db or ctx.db, stmt.table, grouped)
        return OkResult()
    db = stmt.db or ctx.db
    if any(k in partition_properties.REPLICATION_KEYS for k in stmt.properties):
        partition_properties.set_replication(ctx.catalog, db, stmt.table, stmt.properties)
        return OkResult()
    [(key, value)] = list(stmt.properties.items())[:1] or [("", "")]
    if key in COMPACTION_KEYS:
        partition_properties.set_compaction(ctx.catalog, db, stmt.table, key, value)
        return OkResult()
    others = {k: v for k, v in stmt.properties.items() if not k.startswith(PREFIX)}
    if others:
        table_property_rules.settle(others)  # refuses, or accepts what changes nothing here
        return OkResult()
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(db).name
    ctx.dynamic.alter_properties(db, stmt.table, stmt.properties)
    return OkResult()


def modify_partition(stmt: ModifyPartitionStmt, ctx: StatementContext) -> OkResult:
    partition_properties.modify_partitions(ctx.catalog, stmt.db or ctx.db, stmt.table,
                                           stmt.partitions, stmt.properties)
    return OkResult()


def modify_distribution(stmt: ModifyDistributionStmt, ctx: StatementContext) -> OkResult:
    partition_properties.modify_distribution(ctx.catalog, stmt.db or ctx.db, stmt.table,
                                             stmt.kind, stmt.columns, stmt.buckets)
    return OkResult()


def truncate(stmt: exp.TruncateTable, ctx: StatementContext) -> OkResult:
    if stmt.args.get("is_database"):
        raise NotSupported("TRUNCATE DATABASE is not supported")
    for table in stmt.expressions:
        part = table.args.get("partition")
        names = [e.name for e in part.expressions] if part is not None else None
        partition_ddl.truncate(ctx.catalog, table.db or ctx.db, table.name, names)
    return OkResult()


def show_dynamic(stmt: ShowDynamicPartitionStmt, ctx: StatementContext) -> RowsResult:
    return text_columns(SHOW_COLUMNS, ctx.dynamic.show_rows(stmt.db or ctx.db))
