"""Row policies at binding: a table the current user reads through policies
(catalog/row_policy.py) is bound as `(SELECT * FROM db.t WHERE <filter>) t`, like a view, so
every later rule (pushdown, pruning, rollup choice) sees the filter as the query's own. The
inner table reference is marked so that it is bound as the table itself."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from catalog import row_policy
from catalog.access import CURRENT
from catalog.errors import AnalysisError

APPLIED = "row_policy_applied"


def policy_query(catalog, db: str, table) -> exp.Select | None:
    """The filtered query standing for `table` for the current user, None when no policy
    applies (or no user runs the statement: internal work)."""
    access = CURRENT.get()
    if access is None or not catalog.row_policies:
        return None
    where = row_policy.filters_for(catalog, table.table_id, access.user.name,
                                   list(access.user.roles))
    if where is None:
        return None
    try:
        condition = sqlglot.parse_one(where, read="doris")
    except sqlglot.errors.ParseError as e:
        raise AnalysisError(f"row policy of {table.name} cannot be parsed: {e}") from None
    inner = exp.table_(table.name, db=db, quoted=True)
    inner.meta[APPLIED] = True
    return exp.select("*").from_(inner).where(condition)


def node_applied(node: exp.Table | None) -> bool:
    return node is not None and bool(node.meta.get(APPLIED))
