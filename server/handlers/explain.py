"""EXPLAIN / DESC <query>: the distributed plan in Doris's text, one line per row."""

from __future__ import annotations

from catalog.statements import ExplainStmt
from planner.binder import BindContext, bind_query
from planner.explain import render
from planner.fragments import FragmentContext, build_fragments
from planner.naming import NameGen
from server.handlers.context import StatementContext
from server.handlers.session_values import inline_session_values
from server.results import RowsResult, text_columns

_SESSION_KEYS = ("enable_bucket_shuffle_join", "disable_colocate_plan")


def fragment_context(ctx: StatementContext) -> FragmentContext:
    variables = ctx.session.variables
    session = {k: variables.get(k) for k in _SESSION_KEYS}
    fe_config = getattr(ctx.catalog, "fe_config_values", lambda: {})()
    colocation = getattr(ctx.catalog, "colocation_of", None)
    return FragmentContext(ctx.catalog, session, fe_config, colocation)


def explain(stmt: ExplainStmt, ctx: StatementContext) -> RowsResult:
    query = inline_session_values(stmt.query, ctx)
    plan, columns = bind_query(query, BindContext(ctx.catalog, ctx.db, NameGen(),
                                                  variables=ctx.session.variables.list()))
    lines = render(build_fragments(plan, columns, fragment_context(ctx)))
    return text_columns(["Explain String"], [(line,) for line in lines])
