"""Subquery decorrelation with sqlglot's optimizer rules: the fallback for the shapes that
planner/subqueries.py does not turn into joins itself.

Those shapes (e.g. a correlated scalar subquery without aggregates, correlation only by
non-equalities, IN under OR) are rewritten into joins by sqlglot's `unnest_subqueries` (grouped
LEFT JOINs plus filters), after `qualify` has given every column its table. Both rules run only
for a SELECT that needs them (a few milliseconds), never the full 40-65 ms `optimize()`: when
`needs_unnesting` says so, or when the binder raised `NeedsUnnest` (force).

`qualify` aliases every select item; the original output names are kept and restored so that
`SELECT count(*) ...` is still called `count(*)`.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.unnest_subqueries import unnest_subqueries

from catalog.errors import AnalysisError, DorisError
from planner.naming import output_name
from planner.scope import conjuncts


def _in_subquery_conjunct(node: exp.Expression) -> bool:
    target = node.this if isinstance(node, exp.Not) else node
    return isinstance(target, exp.In) and target.args.get("query") is not None


def needs_unnesting(select: exp.Select) -> bool:
    """True if the SELECT (not counting nested SELECTs) has a subquery the binder cannot plan."""
    where = select.args.get("where")
    direct = {id(c) for c in conjuncts(where.this if where else None) if _in_subquery_conjunct(c)}
    for node in select.find_all(exp.Subquery, exp.In):
        if node.parent_select is not select:
            continue
        if isinstance(node, exp.In):
            if node.args.get("query") is None:
                continue
            conj = node.parent if isinstance(node.parent, exp.Not) else node
            if id(conj) not in direct:
                return True
            continue
        if isinstance(node.parent, (exp.From, exp.Join)):
            continue  # a derived table: bound (and unnested) on its own
        if isinstance(node.parent, exp.In):
            continue  # handled with its IN above
        # A scalar subquery or EXISTS: planned by planner/subqueries.py, which asks for
        # unnesting (force) for the shapes it does not plan.
    return False


def _in_to_exists(select: exp.Select) -> exp.Select:
    """Correlated `x [NOT] IN (SELECT c FROM ... WHERE ...)` -> `[NOT] EXISTS (... AND c = x)`.

    Shortcut: NOT IN becomes NOT EXISTS, which differs from MySQL only when the subquery's
    column or x is NULL."""
    where = select.args.get("where")
    if where is None:
        return select
    for node in list(where.find_all(exp.In)):
        query = node.args.get("query")
        if query is None or node.parent_select is not select:
            continue
        inner = query.this if isinstance(query, exp.Subquery) else query
        if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
            continue
        item = inner.expressions[0]
        column = item.this if isinstance(item, exp.Alias) else item
        inner = inner.copy()
        inner.set("expressions", [exp.Literal.number(1)])
        inner = inner.where(exp.EQ(this=column.copy(), expression=node.this.copy()), copy=False)
        node.replace(exp.Exists(this=inner))
    return select


def _schema(select: exp.Select, catalog, db: str | None, ctes: set[str]) -> dict:
    schema: dict = {}
    with catalog.lock:
        for table in select.find_all(exp.Table):
            name = table.name
            if not table.db and name in ctes:
                continue
            t = catalog.get_table(table.db or db, name)
            schema.setdefault(table.db or db, {})[name] = {c.name: c.type.sql() for c in t.columns}
    return schema


def unnest(select: exp.Select, catalog, db: str | None, ctes: set[str],
           force: bool = False) -> tuple[exp.Select, list[str] | None]:
    """The SELECT with its subqueries unnested, and the original output names (or None)."""
    if not force and not needs_unnesting(select):
        return select, None
    if ctes:
        raise AnalysisError("Correlated subqueries over CTEs are not supported yet")
    has_star = any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                   for e in select.expressions)
    names = None if has_star else [output_name(e) for e in select.expressions]
    try:
        qualified = qualify(select.copy(), schema=_schema(select, catalog, db, ctes), db=db,
                            dialect="doris", quote_identifiers=False,
                            validate_qualify_columns=False, identify=False)
        if force:
            qualified = _in_to_exists(qualified)  # after qualify: outer columns are unambiguous
        rewritten = unnest_subqueries(qualified)
    except OptimizeError as e:
        raise AnalysisError(f"Unsupported subquery: {e}") from None
    except DorisError:
        raise
    return rewritten, names
