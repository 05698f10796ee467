"""SELECT: bind against the catalog, run the plan, return typed rows."""

from __future__ import annotations

import pyarrow as pa

from executor.env import ExecEnv
from executor.expressions import EvalContext
from executor.run import execute
from planner.binder import BindContext, bind_query
from planner.naming import NameGen
from server.handlers.context import StatementContext
from server.handlers.session_values import inline_session_values
from server.results import ResultColumn, RowsResult
from storage.types import from_arrow


def run_query(stmt, ctx: StatementContext) -> tuple[pa.Table, list]:
    """The result table (columns in select order) and the planner's result column infos."""
    stmt = inline_session_values(stmt, ctx)
    plan, columns = bind_query(stmt, BindContext(ctx.catalog, ctx.db, NameGen(),
                                                 variables=ctx.session.variables.list()))
    env = ExecEnv(ctx.engine, eval_context(ctx), ctx.pool)
    table = execute(plan, env)
    table = pa.Table.from_arrays([table.column(c.internal) for c in columns],
                                 names=[c.name for c in columns])
    return table, columns


def eval_context(ctx: StatementContext) -> EvalContext:
    return EvalContext(now=ctx.now.replace(tzinfo=None),
                       time_zone=str(ctx.session.variables.get("time_zone")))


def query(stmt, ctx: StatementContext) -> RowsResult:
    table, columns = run_query(stmt, ctx)
    result_cols = []
    for info, field in zip(columns, table.schema):
        dtype = info.type if info.type is not None and info.type.arrow() == field.type \
            else from_arrow(field.type)
        result_cols.append(ResultColumn(info.name, dtype))
    return RowsResult(result_cols, [table])
