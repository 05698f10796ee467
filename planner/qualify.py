"""QUALIFY: the filter on window functions' results (Doris 3.x, DuckDB, Snowflake), as the
derived table it stands for.

    SELECT items FROM ... [WHERE] [GROUP BY] [HAVING] QUALIFY cond [ORDER BY] [LIMIT]
    =>  SELECT __q0 AS <item 0's name>, ... FROM (
            SELECT <item 0> AS __q0, ..., <cond> AS __qualify FROM ... [WHERE ...] ...
        ) __qualified WHERE __qualify [ORDER BY ...] [LIMIT ...]

`cond` may name select aliases (their expressions are put in their place, as HAVING allows) and
window functions of its own. DISTINCT, ORDER BY and LIMIT apply to the qualified rows; ORDER BY
may name select items by alias, ordinal or the same expression. The select list must name its
columns (no `*`).
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import NotSupported
from planner.naming import output_name

QUALIFY_COLUMN = "__qualify"
DERIVED = "__qualified"


def without_qualify(select: exp.Select) -> exp.Select:
    """`select` rewritten without its QUALIFY (the module docstring); unchanged without one."""
    qualify = select.args.get("qualify")
    if qualify is None:
        return select
    items = select.expressions
    if any(isinstance(i, exp.Star) or (isinstance(i, exp.Column) and isinstance(i.this, exp.Star))
           for i in items):
        raise NotSupported("QUALIFY with * in the select list is not supported; name the columns")
    inner = select.copy()
    for key in ("qualify", "order", "limit", "offset", "distinct"):
        inner.set(key, None)
    names = [f"__q{i}" for i in range(len(items))]
    bodies = [i.this if isinstance(i, exp.Alias) else i for i in items]
    aliases = {i.alias.lower(): b for i, b in zip(items, bodies) if isinstance(i, exp.Alias)}
    cond = _expand_aliases(qualify.this.copy(), aliases)
    inner.set("expressions", [exp.alias_(b.copy(), n, quoted=True) for b, n in zip(bodies, names)]
              + [exp.alias_(cond, QUALIFY_COLUMN, quoted=True)])
    outer = exp.Select(expressions=[
        exp.alias_(exp.column(n, table=DERIVED, quoted=True), output_name(i), quoted=True)
        for n, i in zip(names, items)])
    outer = outer.from_(exp.Subquery(this=inner, alias=exp.TableAlias(
        this=exp.to_identifier(DERIVED))))
    outer = outer.where(exp.column(QUALIFY_COLUMN, table=DERIVED, quoted=True))
    if select.args.get("distinct"):
        outer.set("distinct", select.args["distinct"].copy())
    order = select.args.get("order")
    if order is not None:
        outer.set("order", exp.Order(expressions=[
            _order_item(o, items, bodies, names) for o in order.expressions]))
    for key in ("limit", "offset"):
        if select.args.get(key) is not None:
            outer.set(key, select.args[key].copy())
    return outer


def _expand_aliases(cond: exp.Expression, aliases: dict[str, exp.Expression]) -> exp.Expression:
    def repl(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in aliases:
            return aliases[node.name.lower()].copy()
        return node
    return cond.transform(repl)


def _order_item(o: exp.Ordered, items: list, bodies: list, names: list[str]) -> exp.Ordered:
    """An ORDER BY item of the qualified rows: a select item by ordinal, alias or expression."""
    e = o.this
    out = o.copy()
    if isinstance(e, exp.Literal) and not e.is_string:
        return out  # an ordinal: the outer select has the same items in the same order
    for item, body, name in zip(items, bodies, names):
        named = isinstance(e, exp.Column) and not e.table and \
            e.name.lower() == output_name(item).lower()
        if named or e == body:
            out.set("this", exp.column(name, table=DERIVED, quoted=True))
            return out
    raise NotSupported("ORDER BY with QUALIFY must name a select item")
