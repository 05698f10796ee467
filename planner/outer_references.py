"""Which columns of a subquery read the query around it (its outer references).

A column belongs to the nearest SELECT, from the column outwards up to the subquery itself,
whose FROM resolves it (or, unqualified, whose select list names it); a column inside a
derived table's body is never resolved by that derived table's own SELECT (Doris has no
LATERAL). What no SELECT of the subquery resolves is an outer reference if the outer scope
knows it; planner/apply_subqueries.py reads those from D, the outer rows' distinct values.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError, UnknownColumn
from planner.scope import Scope, ScopeColumn


def _aliases(select: exp.Select) -> set[str]:
    return {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias)}


def outer_refs(query: exp.Select, outer: Scope, ctx) -> list[tuple[exp.Column, ScopeColumn]]:
    """The column nodes of `query` (nested subqueries included) that denote columns of the
    outer scope: not resolved by the FROM of any SELECT between them and `query`.

    A FROM whose derived table reads the outer scope cannot be bound as it stands: its SELECT's
    columns are decided once the derived table's outer references are known, over a copy with
    those references read as NULL (passes until nothing more is decided)."""
    refs: list[tuple[exp.Column, ScopeColumn]] = []
    pending = [c for c in query.find_all(exp.Column) if not isinstance(c.this, exp.Star)]
    while pending:
        scopes = _FromScopes(query, [c for c, _ in refs], ctx)
        deferred = []
        for col in pending:
            inner = _resolved_inside(col, query, scopes)
            if inner is None:
                deferred.append(col)
            elif not inner:
                try:
                    refs.append((col, outer.lookup(col.name, col.table or None)))
                except UnknownColumn:
                    pass  # unknown everywhere: the subquery's binding reports it
        if len(deferred) == len(pending):
            break  # nothing decided: the subquery's binding reports what it cannot resolve
        pending = deferred
    return refs


class _FromScopes:
    """The FROM scope of each SELECT of `query`, bound over a copy whose known outer
    references are NULL; None where even that cannot be bound (yet)."""

    def __init__(self, query: exp.Select, outer_columns: list[exp.Column], ctx):
        copy = query.copy()
        pairs = list(zip(query.walk(), copy.walk()))
        self._copy_of = {id(o): c for o, c in pairs if isinstance(o, exp.Select)}
        known = {id(c) for c in outer_columns}
        for orig, new in pairs:
            if id(orig) in known:
                new.replace(exp.Null())
        self._ctx = ctx
        self._scopes: dict[int, Scope | None] = {}

    def get(self, select: exp.Select) -> Scope | None:
        from planner.binder import from_scope
        if id(select) not in self._scopes:
            try:
                self._scopes[id(select)] = from_scope(self._copy_of[id(select)], self._ctx)
            except UnknownColumn:
                self._scopes[id(select)] = None
        return self._scopes[id(select)]


def _resolved_inside(col: exp.Column, query: exp.Select, scopes: _FromScopes) -> bool | None:
    """Whether a SELECT between `col` and `query` (both included) resolves it; None when a
    FROM on the way cannot be bound yet."""
    node, child = col.parent, col
    in_derived = False  # a derived table's body cannot read its SELECT's FROM (no LATERAL)
    while node is not None:
        if isinstance(node, (exp.From, exp.Join)) and child is node.this:
            in_derived = True
        elif isinstance(node, exp.Select) and in_derived:
            in_derived = False
        elif isinstance(node, exp.Select):
            scope = scopes.get(node)
            if scope is None:
                return None
            try:
                scope.lookup(col.name, col.table or None)
                return True
            except UnknownColumn:
                if not col.table and col.name.lower() in _aliases(node):
                    return True
            except AnalysisError:
                return True  # ambiguous there: its binding reports it
        if node is query:
            return False
        child, node = node, node.parent
    return False
