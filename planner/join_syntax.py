"""Table references and join conditions as MySQL parses them, before binding.

- `nested_join`: a parenthesized join `(a JOIN b ON ..)` - sqlglot gives an unaliased Subquery
  over a Table carrying joins - is a join tree, not a derived table (which needs an alias);
- `using_condition`: `JOIN .. USING (c)` and `NATURAL JOIN` are equalities; the joined column
  then appears once, for `*` and for an unqualified name;
- `subqueries_out_of_on`: a subquery in an inner join's ON is a WHERE conjunct (the same rows),
  where subqueries are planned.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError, NotSupported
from planner.scope import Scope, ScopeColumn, conjuncts


def subqueries_out_of_on(select: exp.Select) -> exp.Select:
    """ON conjuncts of inner joins that hold a subquery move to WHERE (the same rows), where
    subqueries are planned; one in an outer join's ON or in GROUP BY is refused."""
    subquery = (exp.Subquery, exp.Exists, exp.Any, exp.All)
    group = select.args.get("group")
    if group is not None and any(e.find(*subquery) for e in group.expressions):
        raise NotSupported("A subquery in GROUP BY is not supported yet")
    joins = select.args.get("joins") or []
    if not any(j.args.get("on") is not None and j.args["on"].find(*subquery) for j in joins):
        return select
    select = select.copy()
    moved = []
    for j in select.args.get("joins") or []:
        on = j.args.get("on")
        if on is None or not on.find(*subquery):
            continue
        if j.side or (j.kind or "").upper() in ("SEMI", "ANTI"):
            raise NotSupported("A subquery in the ON condition of an outer join is not "
                               "supported yet")
        keep = [c for c in conjuncts(on) if not c.find(*subquery)]
        moved += [c for c in conjuncts(on) if c.find(*subquery)]
        j.set("on", exp.and_(*keep) if keep else None)
        if not keep:
            j.set("kind", "CROSS")
    where = select.args.get("where")
    select.set("where", exp.Where(this=exp.and_(*([where.this] if where else []), *moved)))
    return select


def using_columns(join: exp.Join, left: Scope, right: Scope) -> list[str] | None:
    """The column names of `USING (...)`, or those both sides share for NATURAL JOIN."""
    if join.args.get("using"):
        return [u.name for u in join.args["using"]]
    if (join.args.get("method") or "").upper() == "NATURAL":
        right_names = {c.name.lower() for c in right.star()}
        return [c.name for c in left.star() if c.name.lower() in right_names]
    return None


def using_condition(names: list[str], left: Scope, right: Scope, kind: str) -> exp.Expression | None:
    """USING / NATURAL as equalities; the joined column then appears once, in `*` and for an
    unqualified name: the left side's (the right side's for a RIGHT JOIN)."""
    conds = []
    for name in names:
        lcol, rcol = _using_column(left, name), _using_column(right, name)
        (lcol if kind == "right outer" else rcol).hidden = True
        conds.append(exp.EQ(this=exp.column(lcol.name, lcol.relation),
                            expression=exp.column(rcol.name, rcol.relation)))
    return exp.and_(*conds) if conds else None


def _using_column(scope: Scope, name: str) -> ScopeColumn:
    hits = [c for c in scope.columns if c.name.lower() == name.lower() and not c.hidden]
    if len(hits) != 1:
        raise AnalysisError(f"Unknown column '{name}' in 'from clause'" if not hits
                            else f"Column '{name}' in from clause is ambiguous")
    return hits[0]


def nested_join(node: exp.Expression) -> tuple[exp.Expression, list[exp.Join]] | None:
    """A parenthesized join `(a JOIN b ...)` (sqlglot: an unaliased Subquery over a Table
    carrying joins) as its first relation and joins; None for anything else."""
    inner = node
    while isinstance(inner, exp.Subquery) and not inner.alias:
        inner = inner.this
        if isinstance(inner, (exp.Table, exp.Subquery)) and inner.args.get("joins"):
            first = inner.copy()
            first.set("joins", None)
            return first, list(inner.args["joins"])
        if isinstance(inner, exp.Table):
            return inner, []
    return None
