"""The checks a statement passes against SQL block rules and workload groups before it runs
(catalog/sql_block_rules.py, catalog/workload_groups.py):

    check_block_rules(ctx)   every statement as the client sent it (server/dispatch.py): its
                             text against the `sql` / `sqlHash` rules (Doris's matchSql)
    check_query(plan, ctx)   every query once bound (server/handlers/query.py): its session's
                             workload group exists, and no OLAP scan passes a rule's
                             partition_num / tablet_num / cardinality (checkBlockRulesByScan)
"""

from __future__ import annotations

from catalog import sql_block_rules, workload_groups
from planner.logical import olap_scans
from planner.statistics import estimate_rows
from server.handlers.context import StatementContext


def _bound_rules(ctx: StatementContext) -> list[str]:
    """The rules the session account's user property `sql_block_rules` names."""
    access = getattr(ctx.session, "access", None)
    return [] if access is None else ctx.catalog.auth.sql_block_rules(access.user.name)


def check_block_rules(ctx: StatementContext) -> None:
    """The statement's text against the rules that apply to the session's account."""
    if not ctx.catalog.sql_block_rules:
        return
    sql_block_rules.match_sql(ctx.catalog, ctx.sql, _bound_rules(ctx))


def check_query(plan: object, ctx: StatementContext) -> None:
    """Before a query runs: its session's workload group must exist, and no OLAP scan may pass
    the partition / tablet / cardinality bounds of a rule that applies (checkBlockRulesByScan)."""
    workload_groups.check_exists(ctx.catalog, ctx.session.variables.get("workload_group"))
    if not sql_block_rules.has_limitations(ctx.catalog):
        return
    bound = _bound_rules(ctx)
    for scan in olap_scans(plan):
        partitions = len({t.partition_id for t in scan.tablets})
        rows = int(estimate_rows(scan, ctx.catalog, filtered=False))
        sql_block_rules.check_limitations(ctx.catalog, partitions, len(scan.tablets), rows,
                                          bound)


