"""CREATE TABLE ... AS <query> (CTAS, what dbt's table and incremental models send).

As Doris (CreateTableInfo.validateCreateTableAsSelect): the table's columns are the query's
result columns with their types (text of computed columns as VARCHAR(65533)), all nullable;
without a DISTRIBUTED BY clause it is HASH(first column) BUCKETS 10; keys, partitions and
PROPERTIES as the statement gives them. The table is created, then the query's rows are loaded
in one transaction; if the load fails, the new table is dropped again.
"""

from __future__ import annotations

import pyarrow as pa
import sqlglot

from catalog.errors import DorisError
from catalog.statements import ColumnDef, CreateTableStmt
from server.handlers.context import StatementContext
from server.handlers.insert import _load
from server.handlers.query import run_query
from storage.types import DataType, from_arrow

CTAS_BUCKETS = 10


def create_table_as(stmt: CreateTableStmt, ctx: StatementContext, create) -> object:
    query = sqlglot.parse_one(stmt.query, read="doris")
    data, infos = run_query(query, ctx)
    columns = result_columns(infos, data.schema)
    stmt.columns = columns
    if stmt.distribution_kind is None:
        stmt.distribution_kind, stmt.distribution_columns = "HASH", [columns[0].name]
        stmt.buckets = stmt.buckets or CTAS_BUCKETS
    db = stmt.db or ctx.db
    with ctx.catalog.lock:
        exists = stmt.name in ctx.catalog.get_db(db).tables
    result = create(stmt, ctx)
    if exists:  # IF NOT EXISTS over an existing table: nothing is loaded
        return result
    try:
        return _load(ctx, db, stmt.name, data.rename_columns([c.name for c in columns]), None)
    except DorisError:
        ctx.catalog.drop_table(db, stmt.name, if_exists=True, force=True)  # as Doris: FORCE
        raise


def result_columns(infos: list, schema: pa.Schema) -> list[ColumnDef]:
    """A query's result columns as a table's (CTAS and async materialized views): their
    types, text as VARCHAR(65533), all nullable."""
    columns = []
    for info, field in zip(infos, schema):
        dtype = info.type if info.type is not None and info.type.arrow() == field.type \
            else from_arrow(field.type)
        if dtype.kind == "STRING":
            dtype = DataType("VARCHAR", length=65533)
        columns.append(ColumnDef(info.name, dtype, nullable=True))
    return columns
