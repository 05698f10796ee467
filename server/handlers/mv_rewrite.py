"""Whether a query is answered from an async materialized view (the session's
enable_materialized_view_rewrite, Doris 2.1's default true); the matching is
planner/rewrite_mtmv.py's."""

from __future__ import annotations

from planner.rewrite_mtmv import Outcome, rewrite
from server.handlers.context import StatementContext


def mv_rewrite(stmt, ctx: StatementContext) -> Outcome:
    """The rewritten query (`tree`, None when no view fits) and EXPLAIN's summary."""
    if not ctx.session.variables.get("enable_materialized_view_rewrite"):
        return Outcome()
    return rewrite(stmt, ctx.catalog, ctx.db)
