"""Name resolution: which relation column a (possibly qualified) column reference denotes.

A Scope lists the visible columns of the FROM clause as (relation alias, column name, internal
name, declared type). Column names are case-insensitive, as in Doris; relation aliases are
case-sensitive like table names. `bind` rewrites an expression so that every column reference
names an internal column, which is what the executor evaluates against.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from catalog.errors import AnalysisError, UnknownColumn
from storage.types import DataType


@dataclass
class ScopeColumn:
    relation: str
    name: str
    internal: str
    type: DataType | None = None
    hidden: bool = False  # a subquery's column, or the right one of a USING pair: not in `*`


@dataclass
class Scope:
    columns: list[ScopeColumn] = field(default_factory=list)

    def relations(self) -> list[str]:
        seen: list[str] = []
        for c in self.columns:
            if c.relation not in seen:
                seen.append(c.relation)
        return seen

    def lookup(self, name: str, relation: str | None = None) -> ScopeColumn:
        low = name.lower()
        hits = [c for c in self.columns
                if c.name.lower() == low and (relation is None or c.relation == relation)]
        if not hits:
            if relation is not None and relation not in self.relations():
                raise UnknownColumn(f"Unknown column '{name}' in '{relation}'")
            raise UnknownColumn(f"Unknown column '{name}' in 'table list'")
        if len(hits) > 1:
            visible = [c for c in hits if not c.hidden]
            if relation is None and len(visible) == 1:
                return visible[0]  # the column of JOIN ... USING / NATURAL JOIN
            raise AnalysisError(f"Column '{name}' is ambiguous")
        return hits[0]

    def star(self, relation: str | None = None) -> list[ScopeColumn]:
        cols = [c for c in self.columns
                if not c.hidden and (relation is None or c.relation == relation)]
        if relation is not None and not cols:
            raise AnalysisError(f"Unknown table '{relation}'")
        return cols

    def bind(self, e: exp.Expression) -> exp.Expression:
        """A copy of `e` with column references replaced by internal names.

        Subqueries are left alone: they have scopes of their own (bound when planned)."""
        return self._bind(e.copy())

    def _bind(self, node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            col = self.lookup(node.name, node.table or None)
            return exp.column(col.internal, quoted=True)
        if isinstance(node, (exp.Subquery, exp.Select)):
            return node
        for key, value in list(node.args.items()):
            if key == "query":
                continue
            if isinstance(value, exp.Expression):
                node.set(key, self._bind(value))
            elif isinstance(value, list):
                node.set(key, [self._bind(v) if isinstance(v, exp.Expression) else v for v in value])
        return node

    def type_of(self, internal: str) -> DataType | None:
        return next((c.type for c in self.columns if c.internal == internal), None)


def referenced(e: exp.Expression) -> set[str]:
    """Internal column names a bound expression reads."""
    return {c.name for c in e.find_all(exp.Column)}


def disjuncts(e: exp.Expression) -> list[exp.Expression]:
    """The OR-ed conditions of `e` (parentheses looked through)."""
    if isinstance(e, exp.Or):
        return disjuncts(e.this) + disjuncts(e.expression)
    if isinstance(e, exp.Paren):
        return disjuncts(e.this)
    return [e]


def conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    """The AND-ed conditions of `e` (parentheses looked through); [] for no condition."""
    if e is None:
        return []
    if isinstance(e, exp.And):
        return conjuncts(e.this) + conjuncts(e.expression)
    if isinstance(e, exp.Paren):
        return conjuncts(e.this)
    return [e]
