"""Subqueries that must be evaluated per row of one table become a column of that table.

Two places of a SELECT take subqueries that the planner cannot place as joins by itself:

- the ON condition of an outer join (`a LEFT JOIN b ON a.id = b.k AND b.w > (SELECT avg(w)
  FROM b)`): moving the conjunct to WHERE, as for an inner join, would drop rows the outer join
  keeps;
- GROUP BY, directly or through a select item named by position or alias (`SELECT (SELECT
  max(w) FROM b WHERE b.k = a.id) m, count(*) FROM a GROUP BY m`).

Each subquery *unit* (a scalar subquery, `EXISTS (...)`, `x [NOT] IN (...)`, `x op ANY|ALL
(...)`) whose outer references all name one table T of the FROM clause (or none) is computed
in a derived table that replaces T under T's own name, `(SELECT T.*, <unit> AS __sqcol_N FROM
T) T`, and the unit becomes the column `T.__sqcol_N`. The value is the same for every pair of
rows the ON condition or the grouping sees, because it depends on T's row only. T must not be
null-extended where the unit is evaluated (an earlier outer join's null-supplying side, or any
outer join's for GROUP BY): there the subquery would see NULLs, the column a NULL row. Units
that read two tables, unqualified outer columns, or an unsafe T are left as they are, and the
statement is refused as before (planner/join_syntax.py).
"""

from __future__ import annotations

from sqlglot import exp

from planner.naming import output_name

_UNIT = (exp.Subquery, exp.Exists, exp.In, exp.Any, exp.All)


def subqueries_as_columns(select: exp.Select) -> exp.Select:
    """`select` with the subqueries of outer-join ON conditions and of GROUP BY as columns of
    the one table each reads (unchanged when there is none, or none that can move)."""
    joins = select.args.get("joins") or []
    outer_on = [j for j in joins if j.side and j.args.get("on") is not None
                and _units(j.args["on"])]
    group = select.args.get("group")
    grouped = _grouped_items(select) or (group is not None and any(
        _units(g) for g in group.expressions))
    if not outer_on and not grouped:
        return select
    select = select.copy()
    joins = select.args.get("joins") or []
    relations = _relations(select)
    if relations is None:
        return select
    names = [output_name(i) for i in select.expressions]  # a moved item keeps its name
    texts = [i.sql("doris") for i in select.expressions]
    wrappers: dict[str, list[tuple[str, exp.Expression]]] = {}
    counter = [0]

    def move(unit: exp.Expression, allowed: set[str], default: str | None) -> None:
        refs = _outer_refs(unit, set(relations))
        if refs is None or len(refs) > 1:
            return
        target = next(iter(refs)) if refs else default
        if target is None or target not in allowed:
            return
        counter[0] += 1
        name = f"__sqcol_{counter[0]}"
        wrappers.setdefault(target, []).append((name, unit.copy()))
        unit.replace(exp.column(name, table=target, quoted=True))

    for i, j in enumerate(joins):
        if not j.side or j.args.get("on") is None:
            continue
        allowed = _preserved_before(select, i)
        own = _alias(j.this)
        for unit in _units(j.args["on"]):
            move(unit, allowed, own)
    if grouped:
        safe = _never_null_extended(select)
        first = next(iter(safe), None)
        for item in _grouped_items(select):
            for unit in _units(item):
                move(unit, safe, first)
        group = select.args.get("group")
        for e in group.expressions if group is not None else []:
            for unit in _units(e):
                move(unit, safe, first)
    for alias, columns in wrappers.items():
        _wrap(relations[alias], alias, columns)
    for i, (item, name, text) in enumerate(zip(select.expressions, names, texts)):
        if not isinstance(item, exp.Alias) and item.sql("doris") != text:
            select.expressions[i].replace(_named(item.copy(), name))
    return select


def _units(e: exp.Expression) -> list[exp.Expression]:
    """The outermost subquery units of `e`: scalar subqueries, EXISTS, IN (subquery), and the
    comparison around ANY / ALL."""
    found = []
    for node in e.walk(bfs=False):
        if isinstance(node, (exp.Any, exp.All)) and node.parent is not None:
            found.append(node.parent)
        elif isinstance(node, exp.In) and node.args.get("query") is not None:
            found.append(node)
        elif isinstance(node, exp.Exists):
            found.append(node)
        elif isinstance(node, exp.Subquery) and not isinstance(
                node.parent, (exp.In, exp.Exists, exp.Any, exp.All)) and node.parent is not None \
                and not isinstance(node.parent, (exp.From, exp.Join)):
            found.append(node)
    return [u for u in found if not any(o is not u and _inside(u, o) for o in found)]


def _inside(node: exp.Expression, outer: exp.Expression) -> bool:
    p = node.parent
    while p is not None:
        if p is outer:
            return True
        p = p.parent
    return False


def _grouped_items(select: exp.Select) -> list[exp.Expression]:
    """Select items holding a subquery that GROUP BY names by position or alias."""
    group = select.args.get("group")
    if group is None:
        return []
    items = select.expressions
    out = []
    for g in group.expressions:
        if isinstance(g, exp.Literal) and g.is_int and 1 <= int(g.this) <= len(items):
            out.append(items[int(g.this) - 1])
        elif isinstance(g, exp.Column) and not g.table:
            out += [i for i in items if isinstance(i, exp.Alias) and i.alias == g.name]
    return [i for i in out if _units(i)]


def _alias(rel: exp.Expression) -> str | None:
    if isinstance(rel, exp.Table) and not rel.args.get("joins"):
        return rel.alias_or_name
    if isinstance(rel, exp.Subquery) and rel.alias:
        return rel.alias
    return None


def _relations(select: exp.Select) -> dict[str, exp.Expression] | None:
    """alias -> table reference, for FROM and every join; None when one has no name."""
    from_ = select.args.get("from_") or select.args.get("from")
    rels = [from_.this] if from_ is not None else []
    rels += [j.this for j in select.args.get("joins") or []]
    out = {}
    for r in rels:
        alias = _alias(r)
        if alias is None or alias in out:
            return None
        out[alias] = r
    return out


def _preserved_before(select: exp.Select, index: int) -> set[str]:
    """The tables whose rows are not null-extended before join `index`'s ON is evaluated."""
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args.get("joins") or []
    order = [(_alias(from_.this), None)] + [(_alias(j.this), j) for j in joins]
    safe = set()
    for k, (alias, j) in enumerate(order[:index + 2]):
        if j is not None and k < index + 1 and (j.side or "").upper() in ("LEFT", "FULL"):
            continue  # the null-supplying side of an earlier outer join
        later = [jj for _, jj in order[k + 1:index + 1]]
        if any((jj.side or "").upper() in ("RIGHT", "FULL") for jj in later):
            continue  # null-extended by a later (but earlier than this) right or full join
        safe.add(alias)
    return safe


def _never_null_extended(select: exp.Select) -> set[str]:
    joins = select.args.get("joins") or []
    return _preserved_before(select, len(joins)) if joins else set(_relations(select) or {})


def _outer_refs(unit: exp.Expression, outer: set[str]) -> set[str] | None:
    """The outer tables `unit` reads (by qualifier); None when it reads an unqualified column
    outside its subqueries (its table is not known before binding) or an unknown qualifier."""
    refs: set[str] = set()
    for col in unit.find_all(exp.Column):
        inner, p = False, col.parent
        while p is not None and p is not unit.parent:
            if isinstance(p, exp.Select):
                inner = True
                if col.table and col.table in _own_aliases(p):
                    break
            p = p.parent
        else:
            if not col.table:
                if inner:
                    continue  # a column of the subquery's own tables
                return None
            refs.add(col.table)
    return refs if refs <= outer else None


def _own_aliases(select: exp.Select) -> set[str]:
    from_ = select.args.get("from_") or select.args.get("from")
    rels = ([from_.this] if from_ is not None else []) + [j.this for j in
                                                          select.args.get("joins") or []]
    names = set()
    for r in rels:
        if isinstance(r, exp.Table):
            names.add(r.alias_or_name)
            for j in r.args.get("joins") or []:
                names.add(j.this.alias_or_name)
        elif r.alias:
            names.add(r.alias)
    return names


def _wrap(rel: exp.Expression, alias: str, columns: list[tuple[str, exp.Expression]]) -> None:
    star = exp.Column(this=exp.Star(), table=exp.to_identifier(alias))
    inner = exp.select(star, *[_named(e, n) for n, e in columns])
    inner = inner.from_(rel.copy())
    rel.replace(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias))))


def _named(e: exp.Expression, name: str) -> exp.Alias:
    """`e AS name` (sqlglot's alias_ would name a Subquery itself, not its value)."""
    return exp.Alias(this=e, alias=exp.to_identifier(name, quoted=True))
