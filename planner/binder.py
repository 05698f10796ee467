"""Binding: a sqlglot SELECT becomes a logical plan over internal column names.

The life of a SELECT in this module (`bind_query`):
 1. `_bind_from`: each FROM item becomes an OlapScan (a snapshot of the table's tablets at the
    partitions' visible versions), a derived table, or OneRow; joins are built left-deep;
 2. `_apply_where`: WHERE conjuncts that read one relation are pushed onto that relation (unless
    it is null-supplied by an outer join); equalities between the sides of a comma join become
    its hash keys; the rest filter above the joins;
 3. `planner.aggregation.plan_aggregation` for GROUP BY / aggregates / HAVING;
 4. the select list, DISTINCT, ORDER BY (aliases, ordinals or expressions), LIMIT/OFFSET;
then (`bind_query`) column pruning, rollup selection (planner/select_rollup.py) and the joins'
output columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.system_dbs import system_db
from planner.views import view_query
from catalog.errors import AnalysisError, NotSupported, UnknownColumn, UnknownTable
from planner import logical as L
from planner.aggregation import has_aggregates, plan_aggregation
from planner.doris_aggregates import lift as lift_doris_aggregates
from planner.factor_or import factor_or
from planner.or_to_in import or_to_in
from planner.join_syntax import nested_join, subqueries_out_of_on, using_columns, using_condition
from planner.naming import NameGen, output_name
from planner.prune_buckets import prune_buckets
from planner.place_semi_joins import is_relation, push_semi, relations_of, semi_join
from planner.prune_columns import prune_columns
from planner.qualify import without_qualify
from planner.prune_join_columns import prune_join_columns
from planner.prune_partitions import prune_partitions
from planner.select_rollup import select_rollups
from planner.match_columns import annotate_matches, annotate_plan
from planner.ngram_like import annotate_like
from planner.cast_types import declared_cast_type
from planner.pushdown import storage_predicates
from planner.partition_selection import selected_partitions
from planner.reorder_joins import Relation, base_rows, build_join_tree, filters_grouped_rows
from planner.statistics import scan_ndv, semi_selectivity
from planner.window import has_windows, plan_windows
from catalog.unique_model import is_merge_on_write
from storage.schema import DELETE_SIGN
from storage.types import DataType, from_arrow
from planner.scope import Scope, ScopeColumn, conjuncts, referenced
from planner.split_aggregation import split_aggregation
from planner.subquery_columns import subqueries_as_columns
from planner.lateral_view import bind_lateral_views
from planner.table_functions import table_function
from planner.row_policies import node_applied, policy_query
from planner.datetime_scale import datetime_scale
from planner.subqueries import (NeedsAggregateSplit, NeedsUnnest, SubqueryJoin, own_nodes, plan_scalar_subqueries,
                                where_subquery)


@dataclass
class BindContext:
    catalog: Catalog
    db: str | None
    names: NameGen
    # name -> (the CTE's query, the CTEs its query sees: those before it, its column list)
    ctes: dict[str, tuple[exp.Expression, dict, list[str] | None]] = field(default_factory=dict)
    # (name, session, global, default) of the system variables (information_schema
    # session_variables / global_variables), or a function listing them when first needed
    variables: list | Callable[[], list] = field(default_factory=list)
    snapshots: list = field(default_factory=list)  # TabletSnapshots taken; released by the caller
    view_columns: Callable | None = None  # (db, view) -> its result columns (information_schema)
    # session variables show_hidden_columns and skip_delete_sign (catalog/hidden_columns.py)
    show_hidden_columns: bool = False
    skip_delete_sign: bool = False
    match_without_index: bool = True  # enable_match_without_inverted_index
    runtime_partition_prune: bool = True  # enable_runtime_filter_partition_prune


def bind_query(node: exp.Expression, ctx: BindContext) -> tuple[object, list[L.ResultColumnInfo]]:
    """The logical plan of a query and its result columns; scans read only what it uses."""
    plan, cols = _bind_query(lift_doris_aggregates(node), ctx)
    annotate_plan(plan)
    prune_columns(plan, [c.internal for c in cols])
    plan = select_rollups(plan, ctx.catalog)  # needs the pruned columns and the aggregates
    prune_join_columns(plan, [c.internal for c in cols])
    return plan, cols


BIND_ATTEMPTS = 5


def bind_statement(node: exp.Expression, ctx: BindContext
                   ) -> tuple[object, list[L.ResultColumnInfo]]:
    """bind_query, bound again while a table the statement was bound to has a partition, an
    index or a column replaced before its snapshots are captured (`PlanStale`,
    `capture_snapshots`): such a change takes the catalog lock once, so the next binding
    sees it done."""
    for attempt in range(BIND_ATTEMPTS):
        try:
            return bind_query(node, ctx)
        except PlanStale:
            for snapshot in ctx.snapshots:
                snapshot.release()
            ctx.snapshots.clear()
            ctx.names = NameGen()
            if attempt == BIND_ATTEMPTS - 1:
                raise AnalysisError("The tables of the statement kept changing while it was "
                                    "planned; run it again") from None
    raise AssertionError("unreachable")


def _bind_query(node: exp.Expression, ctx: BindContext) -> tuple[object, list[L.ResultColumnInfo]]:
    with_ = node.args.get("with_") or node.args.get("with")
    if with_ is not None:
        if with_.args.get("recursive"):
            raise NotSupported("WITH RECURSIVE is not supported")
        ctes = dict(ctx.ctes)
        for cte in with_.expressions:  # a CTE sees the ones before it, not itself
            ctes[cte.alias] = (cte.this, dict(ctes), _alias_columns(cte))
        ctx = replace(ctx, ctes=ctes)
    if isinstance(node, exp.Subquery):
        return _bind_query(node.this, ctx)
    if isinstance(node, exp.Select) and node.args.get("qualify") is not None:
        return _bind_query(without_qualify(node), ctx)
    if isinstance(node, exp.Select):
        try:
            return _bind_select(node, ctx, force_unnest=False)
        except NeedsUnnest:
            pass
        except NeedsAggregateSplit:
            node = split_aggregation(node, ctx)
        try:
            return _bind_select(node, ctx, force_unnest=True)
        except NeedsAggregateSplit:
            return _bind_select(split_aggregation(node, ctx), ctx, force_unnest=True)
        except NeedsUnnest:
            raise NotSupported("This correlated subquery is not supported yet") from None
    if isinstance(node, (exp.Union, exp.Intersect, exp.Except)):
        from planner.set_operations import bind_set_operation
        return bind_set_operation(node, ctx)
    raise NotSupported(f"Unsupported query: {type(node).__name__}")


def _bind_select(select: exp.Select, ctx: BindContext,
                 force_unnest: bool) -> tuple[object, list[L.ResultColumnInfo]]:
    plan, cols = _bind_select_body(select, ctx, force_unnest)
    _finalize_scans(plan, ctx)
    return plan, cols


def _bind_select_body(select: exp.Select, ctx: BindContext,
                      force: bool = False) -> tuple[object, list[L.ResultColumnInfo]]:
    select = subqueries_out_of_on(subqueries_as_columns(select))
    plan, scope, null_supplied = _bind_from(select, ctx)
    if select.args.get("laterals"):  # LATERAL VIEW: over the joined FROM, before WHERE
        if isinstance(plan, _Flat):
            bare = select.copy()
            bare.set("where", None)
            plan = _reorder_where(bare, plan, scope, ctx)
        plan = bind_lateral_views(select, plan, scope, ctx.names)
    select, joins, after_aggregate = plan_scalar_subqueries(select, scope, ctx, force)
    plan = _join_subqueries(plan, joins)
    # A subquery's relation is never filtered below its join: a filter under a ScalarSubquery
    # or under the inner side of an outer join would change what the outer rows see.
    null_supplied |= {j.relation for j in joins}
    if isinstance(plan, _Flat):
        plan = _reorder_where(select, plan, scope, ctx)
    else:
        plan = _apply_where(select, plan, scope, null_supplied, ctx)
    items = _expand_select_list(select, scope)
    having = select.args.get("having")
    order = select.args.get("order")
    if select.args.get("group") or has_aggregates(items, having, order):
        plan, items, having_bound, order_bound, scope_out = plan_aggregation(
            select, plan, scope, items, ctx.names,
            constants={n for j in after_aggregate for n in j.names})
        for j in after_aggregate:
            plan = j.join(plan)
    else:
        scope_out = scope
        having_bound = _plain_having(having, items, scope) if having is not None else None
        items = [(name, scope.bind(e), t) for name, e, t in items]
        order_bound = None
    if having_bound is not None:
        plan = L.Filter(plan, having_bound)
    exprs = [e for _, e, _ in items] + [o for o in order_bound or [] if o is not None]
    if has_windows(exprs):
        plan, rewritten = plan_windows(plan, exprs, ctx.names)
        items = [(n, rewritten[i], t) for i, (n, _, t) in enumerate(items)]
        if order_bound is not None:
            rest = iter(rewritten[len(items):])
            order_bound = [next(rest) if o is not None else None for o in order_bound]
    return _finish(select, plan, items, order_bound, scope_out, ctx)


def _plain_having(having: exp.Having, items: list, scope: Scope) -> exp.Expression:
    """HAVING without GROUP BY or aggregates: a filter on the rows (Nereids' HavingToFilter;
    MySQL's, which JDBC's getTables sends), a select-list alias standing for its expression
    (ahead of a column of the same name, as MySQL prefers)."""
    aliases = {name.lower(): e for name, e, _ in items}

    def alias(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in aliases:
            return aliases[node.name.lower()].copy()
        return node
    return scope.bind(having.this.copy().transform(alias))


# -- FROM -------------------------------------------------------------------------------------
@dataclass
class _Flat:
    """Inner/comma-joined relations whose join tree `reorder_joins` builds from the WHERE."""

    relations: list[tuple[object, set[str]]]
    on: list[exp.Expression]
    conjuncts: list[exp.Expression] = field(default_factory=list)  # bound, beside WHERE and ON
    late: list[SubqueryJoin] = field(default_factory=list)  # outer joins above the join tree


def _reorderable(joins: list[exp.Join]) -> bool:
    return all(not j.side and (j.kind or "").upper() in ("", "INNER", "CROSS")
               and not j.args.get("using") and not j.args.get("method")
               and _join_hint(j) is None for j in joins)


def _bind_flat(from_: exp.From, joins: list[exp.Join], scope: Scope, ctx: BindContext) -> _Flat:
    flat = _Flat([], [])
    for item in [from_.this] + [j.this for j in joins]:
        item_scope = Scope()
        plan = _bind_relation(item, item_scope, ctx)
        for c in item_scope.columns:
            if any(c.relation == x.relation for x in scope.columns):
                raise AnalysisError(f"Not unique table/alias: '{c.relation}'")
        scope.columns.extend(item_scope.columns)
        flat.relations.append((plan, {c.internal for c in item_scope.columns}))
    flat.on = [j.args["on"] for j in joins if j.args.get("on") is not None]
    return flat


def _bind_from(select: exp.Select, ctx: BindContext) -> tuple[object, Scope, set[str]]:
    from_ = select.args.get("from_")
    scope = Scope()
    if from_ is None:
        return L.OneRow(), scope, set()
    joins = select.args.get("joins") or []
    nested = nested_join(from_.this)
    if nested is not None and not joins and _reorderable(nested[1]):
        from_, joins = exp.From(this=nested[0]), nested[1]  # `FROM (a CROSS JOIN b)`
    if joins and _reorderable(joins):
        return _bind_flat(from_, joins, scope, ctx), scope, set()
    null_supplied: set[str] = set()
    plan = _bind_join_tree(from_.this, joins, scope, null_supplied, ctx)
    return plan, scope, null_supplied


def _bind_join_tree(first: exp.Expression, joins: list[exp.Join], scope: Scope,
                    null_supplied: set[str], ctx: BindContext) -> object:
    """`first JOIN ... JOIN ...` left-deep, its columns added to `scope`."""
    plan = _bind_relation(first, scope, ctx, null_supplied)
    for join in joins:
        right_scope = Scope()
        right = _bind_relation(join.this, right_scope, ctx, null_supplied)
        for c in right_scope.columns:
            if any(c.relation == x.relation for x in scope.columns):
                raise AnalysisError(f"Not unique table/alias: '{c.relation}'")
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        left_scope = Scope(list(scope.columns))
        both = Scope(left_scope.columns + right_scope.columns)
        join_kind = _JOIN_KINDS.get((side, kind), "inner")
        on = join.args.get("on")
        using = using_columns(join, left_scope, right_scope)
        if using is not None:
            on = using_condition(using, left_scope, right_scope, join_kind)
        if on is None:
            if join_kind != "inner":
                raise AnalysisError(f"{side} {kind} JOIN requires an ON condition".replace("  ", " "))
            plan = L.Join(plan, right, "cross", [], [])
        else:
            plan = _equi_join(plan, right, join_kind, both.bind(on), left_scope, right_scope,
                              ctx.names)
        if isinstance(plan, L.Join):
            plan.hint = _join_hint(join)
        if join_kind in ("left semi", "left anti"):
            continue  # only the left side stays visible
        if join_kind in ("right semi", "right anti"):
            scope.columns[:] = right_scope.columns
            continue
        scope.columns.extend(right_scope.columns)
        if join_kind in ("left outer", "full outer"):
            null_supplied.update(right_scope.relations())
        if join_kind in ("right outer", "full outer"):
            null_supplied.update(left_scope.relations())
    return plan


def _join_hint(join: exp.Join) -> str | None:
    """`JOIN [broadcast]` arrives as a `join_hint:broadcast` comment (see server/parser)."""
    for c in join.comments or []:
        c = c.strip().lstrip("+").strip()
        if c.lower().startswith("join_hint:"):
            return c.split(":", 1)[1].strip().lower()
    return None


_JOIN_KINDS = {
    ("LEFT", ""): "left outer", ("LEFT", "OUTER"): "left outer",
    ("RIGHT", ""): "right outer", ("RIGHT", "OUTER"): "right outer",
    ("FULL", ""): "full outer", ("FULL", "OUTER"): "full outer",
    ("LEFT", "SEMI"): "left semi", ("LEFT", "ANTI"): "left anti",
    ("RIGHT", "SEMI"): "right semi", ("RIGHT", "ANTI"): "right anti",
    ("", "SEMI"): "left semi", ("", "ANTI"): "left anti",
    ("", "INNER"): "inner", ("", "CROSS"): "inner", ("", ""): "inner",
    ("", "STRAIGHT_JOIN"): "inner",
}


def _bind_relation(node: exp.Expression, scope: Scope, ctx: BindContext,
                   null_supplied: set[str] | None = None) -> object:
    nested = nested_join(node)
    if nested is not None:  # `(t1 JOIN t2 ON ...)`: a join tree, not a derived table
        first, joins = nested
        return _bind_join_tree(first, joins, scope,
                               null_supplied if null_supplied is not None else set(), ctx)
    if isinstance(node, exp.Table) and not node.db and node.name.lower() == "dual":
        return L.OneRow()
    if isinstance(node, exp.Table) and not node.db and node.name in ctx.ctes:
        body, visible, columns = ctx.ctes[node.name]
        return bind_derived(body, node.alias or node.name, scope, replace(ctx, ctes=visible),
                            _alias_columns(node) or columns)
    if isinstance(node, exp.Table):
        return _bind_table(node, scope, ctx)
    if isinstance(node, exp.Subquery):
        alias = node.alias
        if not alias:
            raise AnalysisError("Every derived table must have its own alias")
        return bind_derived(node.this, alias, scope, ctx, _alias_columns(node))
    raise NotSupported(f"Unsupported FROM item: {node.sql(dialect='doris')}")


def _alias_columns(node: exp.Expression) -> list[str] | None:
    """The column list of `WITH c (a, b) AS ...` or `(SELECT ...) t (a, b)`, if any."""
    alias = node.args.get("alias")
    columns = alias.args.get("columns") if isinstance(alias, exp.TableAlias) else None
    return [c.name for c in columns] if columns else None


def from_scope(select: exp.Select, ctx: BindContext) -> Scope:
    """The columns the FROM clause of `select` makes visible."""
    return _bind_from(select, ctx)[1]


def bind_derived(query: exp.Expression, alias: str, scope: Scope, ctx: BindContext,
                 column_names: list[str] | None = None) -> object:
    """A derived table or CTE reference: its columns exposed as `alias.name` (named by the
    alias's column list when it has one)."""
    plan, cols = bind_query(query, ctx)
    if column_names is not None and len(column_names) != len(cols):
        raise AnalysisError(f"The number of column aliases ({len(column_names)}) of '{alias}' "
                            f"does not match its number of columns ({len(cols)})")
    names = column_names or [c.name for c in cols]
    instance = ctx.names.new("")
    internals = []
    seen: set[str] = set()
    for c, name in zip(cols, names):
        if name.lower() in seen:
            raise AnalysisError(f"Duplicate column name '{name}'")
        seen.add(name.lower())
        internal = f"{alias}.{name}#{instance}"
        scope.columns.append(ScopeColumn(alias, name, internal, c.type))
        internals.append(internal)
    return L.Rename(plan, [c.internal for c in cols], internals, relation=alias)


def _bind_system_table(node: exp.Table, sysdb, scope: Scope, ctx: BindContext) -> L.InlineTable:
    """A table of information_schema or mysql (catalog/system_dbs.py): its rows now, its
    columns typed as Doris types them."""
    columns = sysdb.columns_of(node.name)
    if columns is None:
        raise UnknownTable(node.name, sysdb.NAME)
    variables = ctx.variables() if callable(ctx.variables) else ctx.variables
    table = sysdb.build(node.name, ctx.catalog, variables, ctx.view_columns)
    alias = node.alias or node.name
    instance = ctx.names.new("")
    internals = [f"{alias}.{c}#{instance}" for c in table.column_names]
    for (name, dtype), internal in zip(columns, internals):
        scope.columns.append(ScopeColumn(alias, name, internal, dtype))
    return L.InlineTable(table.rename_columns(internals), alias, sysdb.NAME)


def _bind_table_function(node: exp.Table, scope: Scope, ctx: BindContext) -> L.InlineTable:
    name, table, types = table_function(node.this)
    alias = node.alias or name
    instance = ctx.names.new("")
    internals = [f"{alias}.{c}#{instance}" for c in table.column_names]
    types = types or [from_arrow(f.type) for f in table.schema]
    for col, internal, dtype in zip(table.column_names, internals, types):
        scope.columns.append(ScopeColumn(alias, col, internal, dtype))
    return L.InlineTable(table.rename_columns(internals), alias)


def _bind_table(node: exp.Table, scope: Scope, ctx: BindContext) -> object:
    if isinstance(node.this, exp.Anonymous):  # numbers("number" = "10")
        return _bind_table_function(node, scope, ctx)
    db_name = node.db or ctx.db
    sysdb = system_db(db_name)
    if sysdb is not None:
        return _bind_system_table(node, sysdb, scope, ctx)
    with ctx.catalog.lock:
        view = ctx.catalog.get_db(db_name).views.get(node.name) if db_name else None
        if view is not None:  # a view: its query, bound in the view's database
            return bind_derived(view_query(view), node.alias or node.name, scope,
                                replace(ctx, db=db_name, ctes={}))
        table = ctx.catalog.get_table(db_name, node.name)
        alias = node.alias or node.name
        filtered = None if node_applied(node) else policy_query(ctx.catalog, db_name, table)
    if filtered is not None:  # the user reads the table through row policies
        return bind_derived(filtered, alias, scope, replace(ctx, db=db_name, ctes={}))
    with ctx.catalog.lock:
        tablets = []
        total = len(table.partitions)
        parts = selected_partitions(table, node, db_name or "")
        if parts is None:
            parts = table.sorted_partitions()
        for p in parts:  # snapshots are captured once pruning is done (capture_snapshots)
            for bucket, tid in enumerate(p.tablets_by_index[table.base_index_id]):
                tablets.append(L.ScanTablet(tid, p.visible_version, p.partition_id,
                                            p.tablets[tid].replicas[0], bucket))
    full = [*table.columns, *table.hidden_columns]  # hidden: catalog/hidden_columns.py
    columns = [c.name for c in full]
    instance = ctx.names.new("")  # the same table may be scanned twice (self join, subquery)
    output = [f"{alias}.{c}#{instance}" for c in columns]
    visible = len(table.columns)
    for i, (c, internal) in enumerate(zip(full, output)):
        scope.columns.append(ScopeColumn(alias, c.name, internal, c.type,
                                         hidden=i >= visible and not ctx.show_hidden_columns))
    bucket_counts = {p.buckets for p in parts}
    scan = L.OlapScan(db_name or "", table.name, alias, columns, output, tablets,
                      num_buckets=bucket_counts.pop() if len(bucket_counts) == 1 else 0,
                      partitions_total=total, partitions_selected=len(parts),
                      keys_type=table.keys_type,
                      merge_on_write=is_merge_on_write(table),
                      column_types={c.name: c.type for c in full},
                      dist_columns=list(table.distribution.columns)
                      if table.distribution.kind == "HASH" else [],
                      inverted_indexes={i.columns[0]: dict(i.properties)
                                        for i in table.table_indexes
                                        if i.index_type == "INVERTED"},
                      ngram_bf_indexes={i.columns[0]: int(i.properties["gram_size"])
                                        for i in table.table_indexes
                                        if i.index_type == "NGRAM_BF"},
                      match_without_index=ctx.match_without_index)
    if DELETE_SIGN in columns and not (ctx.show_hidden_columns or ctx.skip_delete_sign):
        # Doris's BindRelation adds `__DORIS_DELETE_SIGN__ = 0` over every scan of a table
        # with the sign; storage applies it after the key merge (a value predicate)
        sign = exp.column(output[columns.index(DELETE_SIGN)], quoted=True)
        return _filter_scan(scan, exp.EQ(this=sign, expression=exp.Literal.number(0)))
    return scan


def _equi_join(left: object, right: object, kind: str, on: exp.Expression,
               left_scope: Scope, right_scope: Scope, names: NameGen | None = None) -> L.Join:
    """The join of `left` and `right` on `on`: hash keys from its column = column equalities,
    and, for outer joins (whose ON cannot become a filter above), from expression equalities
    (`t1.g + 1 = t2.k`: each side's expression computed below the join), else one constant key
    on both sides (Doris's nested loop join: every pair tested by the residual)."""
    left_names = {c.internal for c in left_scope.columns}
    right_names = {c.internal for c in right_scope.columns}
    lkeys, rkeys, rest, null_safe = [], [], [], []
    left_keys: list[tuple[exp.Expression, str]] = []  # computed keys (outer joins)
    right_keys: list[tuple[exp.Expression, str]] = []
    outer = kind in ("left outer", "right outer", "full outer")
    for conj in _conjuncts(on):
        pair = _key_pair(conj, left_names, right_names)
        if pair:
            lkeys.append(pair[0])
            rkeys.append(pair[1])
            continue
        sides = _expression_pair(conj, left_names, right_names) if outer and names else None
        if sides:
            lname, rname = names.new("__jk"), names.new("__jk")
            left_keys.append((sides[0], lname))
            right_keys.append((sides[1], rname))
            lkeys.append(lname)
            rkeys.append(rname)
            continue
        pair = _key_pair(conj, left_names, right_names, exp.NullSafeEQ)
        if pair:
            null_safe.append((pair, conj))
            continue
        refs = referenced(conj)
        # A condition on the inner (non-preserved) side alone filters that side before joining.
        if refs and refs <= right_names and kind in ("inner", "left outer", "left semi", "left anti"):
            right = L.Filter(right, conj)
        elif refs and refs <= left_names and kind in ("inner", "right outer", "right semi", "right anti"):
            left = L.Filter(left, conj)
        else:
            rest.append(conj)
    if null_safe and not lkeys:  # `a <=> b` keys only: a join whose NULL keys match
        residual = exp.and_(*rest) if rest else None
        return L.Join(left, right, kind, [p[0] for p, _ in null_safe], [p[1] for p, _ in null_safe],
                      residual, null_safe=True)
    rest += [conj for _, conj in null_safe]
    residual = exp.and_(*rest) if rest else None
    nested_loop = False
    if not lkeys and outer and names is not None:
        lname, rname = names.new("__jk"), names.new("__jk")
        left_keys.append((exp.Literal.number(1), lname))
        right_keys.append((exp.Literal.number(1), rname))
        lkeys, rkeys, nested_loop = [lname], [rname], True
    if left_keys:
        left = L.Extend(left, [e for e, _ in left_keys], [n for _, n in left_keys])
        right = L.Extend(right, [e for e, _ in right_keys], [n for _, n in right_keys])
    if not lkeys:
        if kind != "inner":
            raise NotSupported(f"{kind.upper()} JOIN without an equality condition is not supported yet")
        return L.Join(left, right, "cross", [], [], residual)
    return L.Join(left, right, kind, lkeys, rkeys, residual, nested_loop=nested_loop)


def _expression_pair(conj: exp.Expression, left: set[str], right: set[str]
                     ) -> tuple[exp.Expression, exp.Expression] | None:
    """(left side's expression, right side's) of `a = b` where each reads one side only."""
    if type(conj) is not exp.EQ or conj.find(exp.Subquery) is not None:
        return None
    a, b = conj.this, conj.expression
    ra, rb = referenced(a), referenced(b)
    if not ra or not rb:
        return None
    if ra <= left and rb <= right:
        return a, b
    if rb <= left and ra <= right:
        return b, a
    return None


def _key_pair(conj: exp.Expression, left: set[str], right: set[str],
              eq: type = exp.EQ) -> tuple[str, str] | None:
    if type(conj) is not eq:
        return None
    a, b = conj.this, conj.expression
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return None
    if a.name in left and b.name in right:
        return a.name, b.name
    if b.name in left and a.name in right:
        return b.name, a.name
    return None


def _conjuncts(e: exp.Expression | None) -> list[exp.Expression]:
    """The AND-ed conditions of `e`, with conditions common to all OR branches factored out."""
    out: list[exp.Expression] = []
    for c in conjuncts(e):
        factored = factor_or(c) if isinstance(c, exp.Or) else [c]
        out += [x for f in factored for x in _conjuncts(f)] if len(factored) > 1 else \
            [or_to_in(c) if isinstance(c, exp.Or) else c]
    return out


# -- WHERE ------------------------------------------------------------------------------------
def _apply_where(select: exp.Select, plan: object, scope: Scope, null_supplied: set[str],
                 ctx: BindContext) -> object:
    where = select.args.get("where")
    if where is None:
        return plan
    bound = scope.bind(where.this)
    if next(own_nodes(bound, exp.AggFunc), None) is not None:
        raise AnalysisError("WHERE clause cannot contain aggregate functions")
    owner = {c.internal: c.relation for c in scope.columns}
    remaining, semis = [], []
    for conj in _conjuncts(bound):
        semi = where_subquery(conj, scope, ctx)
        if semi is not None:
            semis.append(semi)
            continue
        rels = {owner[n] for n in referenced(conj) if n in owner}
        if len(rels) == 1 and not (rels & null_supplied) and not conj.find(exp.Subquery):
            relation = next(iter(rels))
            if is_relation(plan, relation):
                plan = _filter_scan(plan, conj)
                continue
            if _push_into(plan, relation, conj):
                continue
        if len(rels) == 2 and _join_cross(plan, conj, owner):
            continue
        remaining.append(conj)
    if remaining:
        plan = L.Filter(plan, exp.and_(*remaining))
    # Semi / anti joins after the filters (they commute), so that their estimate and the
    # runtime filters of a swapped one see the filtered rows; one on the keys of one relation
    # (not null-supplied) filters that relation below the inner joins, as in a flat FROM.
    for semi in semis:
        rels = {owner.get(n) for n in semi.left_keys}
        pushed = None
        if semi.residual is None and len(rels) == 1 and None not in rels \
                and not rels & null_supplied:
            pushed = push_semi(plan, semi, rels.pop(), ctx.catalog)
        plan = pushed or semi_join(semi, plan, base_rows(plan, ctx.catalog), ctx.catalog)
    return plan


def _reorder_where(select: exp.Select, flat: _Flat, scope: Scope, ctx: BindContext) -> object:
    """WHERE and ON conjuncts over inner-joined relations: `reorder_joins` builds the tree."""
    where = select.args.get("where")
    conjuncts = [c for on in flat.on for c in _conjuncts(scope.bind(on))]
    if where is not None:
        conjuncts += _conjuncts(scope.bind(where.this))
    if any(next(own_nodes(c, exp.AggFunc), None) is not None for c in conjuncts):
        raise AnalysisError("WHERE clause cannot contain aggregate functions")
    late_names = {n for j in flat.late for n in j.names}
    semis, kept, late = [], [], []
    for conj in conjuncts + flat.conjuncts:
        semi = where_subquery(conj, scope, ctx)
        if semi is not None:
            semis.append(semi)
        else:
            (late if referenced(conj) & late_names else kept).append(conj)
    relations = [Relation(p, names, base_rows(p, ctx.catalog), base_rows(p, ctx.catalog),
                          scan_ndv(p, ctx.catalog))
                 for p, names in flat.relations]
    # A semi / anti join on one relation's keys filters that relation (after its own filters)
    # before the inner joins (TPC-H Q18: orders shrinks before lineitem joins it, whose scan
    # then gets the runtime filter). One with a residual costs per key-matched pair: it stays
    # above the joins, which usually leave fewer rows (TPC-H Q21).
    owned: dict[int, list] = {}
    on_top = []
    for semi in semis:
        owners = [i for i, r in enumerate(relations) if set(semi.left_keys) <= r.names]
        if semi.residual is None and owners:
            owned.setdefault(owners[0], []).append(semi)
        else:
            on_top.append(semi)

    def attach_semis(i: int, relation: Relation) -> None:
        for semi in owned.get(i, []):
            relation.plan = semi_join(semi, relation.plan, relation.rows, ctx.catalog)
            relation.rows *= semi_selectivity(semi.plan, ctx.catalog) \
                if semi.kind == "left semi" else 0.5

    plan, rows = build_join_tree(relations, kept, _filter_scan, attach_semis)
    for j in flat.late:
        plan = j.join(plan)
    if late:
        plan = L.Filter(plan, exp.and_(*late))
    for semi in on_top:
        plan = semi_join(semi, plan, rows, ctx.catalog)
        rows *= semi_selectivity(semi.plan, ctx.catalog) if semi.kind == "left semi" else 0.5
    return plan


def _join_subqueries(plan: object, joins: list[SubqueryJoin]) -> object:
    """Join the relations made from scalar subqueries to the FROM: inner and cross joins of
    a flat FROM join its reordering (with their keys as equalities), outer joins go on top."""
    for j in joins:
        if not isinstance(plan, _Flat):
            plan = j.join(plan)
            if j.kind == "inner" and filters_grouped_rows(j.plan, j.right_keys):
                # The subquery is grouped by its correlation keys: it probes, so that the
                # outer rows' keys filter what it aggregates (TPC-H Q20).
                plan = L.Join(j.plan, plan.left, "inner", list(j.right_keys), list(j.left_keys))
        elif j.kind == "left outer":
            plan.late.append(j)
        else:
            plan.relations.append((j.plan, j.names))
            plan.conjuncts += [exp.EQ(this=exp.column(a, quoted=True),
                                      expression=exp.column(b, quoted=True))
                               for a, b in zip(j.left_keys, j.right_keys)]
    return plan


def _finalize_scans(plan: object, ctx: BindContext) -> None:
    """Per-scan rules that need the pushed-down predicates: partition, then bucket pruning."""
    if isinstance(plan, L.OlapScan):
        if plan.tablets_total == 0:
            with ctx.catalog.lock:
                table = ctx.catalog.get_table(plan.db or None, plan.table)
                _check_bound(plan, table)
                prune_partitions(plan, table)
                if not ctx.runtime_partition_prune:
                    plan.range_column, plan.range_bounds = "", ()
                plan.tablets_total = len(plan.tablets)
                dist = table.distribution.columns if table.distribution.kind == "HASH" else []
                buckets = {t.partition_id: table.any_partition(t.partition_id).buckets
                           for t in plan.tablets}
            prune_buckets(plan, dist, buckets)
            capture_snapshots(plan, ctx)
        return
    for attr in ("input", "left", "right"):
        child = getattr(plan, attr, None)
        if child is not None:
            _finalize_scans(child, ctx)


class PlanStale(Exception):
    """The catalog changed under a statement between binding and capturing its snapshots (a
    partition, an index or a column replaced or dropped): bind the statement again."""


def _bound_partition(table, t: L.ScanTablet):
    """The partition of a tablet the scan was bound to; PlanStale if either went since."""
    p = table.find_partition(t.partition_id)
    if p is None or t.tablet_id not in p.tablets:
        raise PlanStale(f"tablet {t.tablet_id} of {table.name} went while bound")
    return p


def _check_bound(scan: L.OlapScan, table) -> None:
    """PlanStale if a partition the scan was bound to went, or its index (one tablet of each
    partition tells: an index is replaced whole)."""
    first = {}
    for t in scan.tablets:
        first.setdefault(t.partition_id, t)
    for t in first.values():
        _bound_partition(table, t)


def capture_snapshots(scan: L.OlapScan, ctx: BindContext) -> None:
    """MVCC: each tablet the scan still reads after pruning, at its partition's visible version,
    captured while the catalog lock keeps publish and compaction swaps out
    (storage/snapshot.py), with the rollups' tablets of the same bucket (the scan may read one
    of them instead). Done after pruning so that a query over one day of a table with hundreds
    of partitions does not capture (and release) every tablet.

    A bound partition, tablet or column that is gone by then was dropped or replaced since
    the statement was bound: INSERT OVERWRITE's and REPLACE PARTITION's swap
    (catalog/insert_overwrite.py), a schema change's index swap (catalog/schema_change_job.py),
    TRUNCATE, DROP PARTITION, a light DROP COLUMN. Reading the tablet as empty would be a
    wrong answer, reading the column an error, so the statement is bound again (`PlanStale`,
    caught by `bind_statement`) and reads the table as it is now."""
    engine = ctx.catalog.engine
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(scan.db or None, scan.table)
        rollup_ids = [i.index_id for i in table.rollups()]
        captured = []
        checked = None  # the last tablet schema the scan's columns were found in
        for t in scan.tablets:
            p = _bound_partition(table, t)
            version = p.visible_version
            snapshot = engine.get_tablet(t.tablet_id).capture(version)
            ctx.snapshots.append(snapshot)
            if snapshot.schema is not checked:  # a column dropped since binding (light
                checked = snapshot.schema          # schema change): bind again
                if not all(checked.has_column(c) for c in scan.columns):
                    raise PlanStale(f"columns of {scan.table} changed while bound")
            rollups = None
            if rollup_ids:
                rollups = {i: engine.get_tablet(p.tablets_by_index[i][t.bucket]).capture(version)
                           for i in rollup_ids if i in p.tablets_by_index} or None
                ctx.snapshots += (rollups or {}).values()
            captured.append(L.ScanTablet(t.tablet_id, version, t.partition_id, t.backend_id,
                                         t.bucket, snapshot, rollups))
        scan.tablets = captured


def _push_into(plan: object, relation: str, conj: exp.Expression) -> bool:
    """Put `conj` directly above the scan/derived table of `relation`; True when done."""
    for attr in ("left", "right", "input"):
        child = getattr(plan, attr, None)
        if child is None:
            continue
        if is_relation(child, relation):
            setattr(plan, attr, _filter_scan(child, conj))
            return True
        if _push_into(child, relation, conj):
            return True
    return False


def _filter_scan(node: object, conj: exp.Expression) -> object:
    scan = node
    while isinstance(scan, L.Filter):
        scan = scan.input
    if isinstance(scan, L.OlapScan):
        annotate_matches(conj, scan)
        annotate_like(conj, scan)
        predicates, exact = storage_predicates(conj, scan)
        scan.predicates.extend(predicates)
        return L.Filter(node, conj, pushed=exact)
    return L.Filter(node, conj)


def _join_cross(plan: object, conj: exp.Expression, owner: dict[str, str]) -> bool:
    """Turn a cross join into a hash join on `conj` (an equality across its two sides)."""
    if not isinstance(plan, L.Join):
        return False
    if plan.kind == "cross":
        left = relations_of(plan.left)
        right = relations_of(plan.right)
        left_names = {n for n, r in owner.items() if r in left}
        right_names = {n for n, r in owner.items() if r in right}
        pair = _key_pair(conj, left_names, right_names)
        if pair:
            plan.kind = "inner"
            plan.left_keys.append(pair[0])
            plan.right_keys.append(pair[1])
            return True
    if plan.kind == "inner" and plan.left_keys:
        left = relations_of(plan.left)
        right = relations_of(plan.right)
        pair = _key_pair(conj, {n for n, r in owner.items() if r in left},
                         {n for n, r in owner.items() if r in right})
        if pair:
            plan.left_keys.append(pair[0])
            plan.right_keys.append(pair[1])
            return True
    return _join_cross(plan.left, conj, owner)


# -- select list, ORDER BY, LIMIT -------------------------------------------------------------
def _expand_select_list(select: exp.Select, scope: Scope) -> list[tuple[str, exp.Expression, object]]:
    """(output name, unbound expression, declared type or None) per select item, * expanded."""
    items = []
    for e in select.expressions:
        target = e.this if isinstance(e, exp.Alias) else e
        if isinstance(target, exp.Star) or (isinstance(target, exp.Column) and isinstance(target.this, exp.Star)):
            rel = target.table if isinstance(target, exp.Column) else None
            if not scope.columns:
                raise AnalysisError("No tables used")
            for c in scope.star(rel or None):
                items.append((c.name, exp.column(c.name, c.relation, quoted=True), c.type))
            continue
        declared = None
        if isinstance(target, exp.Column):
            declared = scope.lookup(target.name, target.table or None).type if scope.columns else None
        elif isinstance(target, exp.Cast):  # CAST(x AS DATETIME(3)): reported as that type
            declared = declared_cast_type(target.to)
        else:  # date_add(t, ...), MAX(t), COALESCE(t, u), NOW(3), from_millisecond(n)
            scale = datetime_scale(target, lambda c: _column_type(scope, c))
            declared = DataType("DATETIME", scale=scale) if scale is not None else None
        items.append((output_name(e), target, declared))
    return items


def _column_type(scope: Scope, column: exp.Column):
    """A column's declared type in the scope; None when it does not name one (an alias)."""
    try:
        return scope.lookup(column.name, column.table or None).type
    except (AnalysisError, UnknownColumn):
        return None


def _finish(select: exp.Select, plan: object, items: list, order_bound: list | None,
            scope: Scope, ctx: BindContext) -> tuple[object, list[L.ResultColumnInfo]]:
    names = [ctx.names.new("__o") for _ in items]
    exprs = [e for _, e, _ in items]
    hidden: list[exp.Expression] = []
    keys: list[L.SortKey] = []
    order = select.args.get("order")
    if order is not None:
        for i, o in enumerate(order.expressions):
            target = _order_target(o.this, items, names)
            if target is None:
                bound = order_bound[i] if order_bound is not None else scope.bind(o.this)
                target = next((n for (_, e, _), n in zip(items, names) if e == bound), None)
                if target is None:
                    if select.args.get("distinct"):
                        raise AnalysisError(
                            "ORDER BY expression must appear in the select list with DISTINCT")
                    target = ctx.names.new("__s")
                    hidden.append(bound)
            keys.append(L.SortKey.of(target, o))
    hidden_names = [k.name for k in keys if k.name not in names]
    plan = L.Project(plan, exprs + hidden, names + hidden_names)
    if select.args.get("distinct"):
        plan = L.Distinct(plan)
    limit, offset = _limit(select)
    if keys:
        plan = L.Sort(plan, keys, None if limit is None else limit + offset)
    if limit is not None or offset:
        plan = L.Limit(plan, limit, offset)
    if hidden_names:
        plan = L.Rename(plan, names, names)
    cols = [L.ResultColumnInfo(n, internal, t) for (n, _, t), internal in zip(items, names)]
    return plan, cols


def order_and_limit(node: exp.Expression, plan: object, cols: list[L.ResultColumnInfo],
                    ctx: BindContext) -> object:
    """ORDER BY (ordinals or output names) and LIMIT/OFFSET over a finished relation."""
    items = [(c.name, exp.column(c.name), c.type) for c in cols]
    names = [c.internal for c in cols]
    order = node.args.get("order")
    keys = []
    for o in order.expressions if order is not None else []:
        target = _order_target(o.this, items, names)
        if target is None:
            raise AnalysisError(f"ORDER BY term '{o.this.sql(dialect='doris')}' must be an output "
                                f"column of the set operation")
        keys.append(L.SortKey.of(target, o))
    limit, offset = _limit(node)
    if keys:
        plan = L.Sort(plan, keys, None if limit is None else limit + offset)
    if limit is not None or offset:
        plan = L.Limit(plan, limit, offset)
    return plan


def _order_target(e: exp.Expression, items: list, names: list[str]) -> str | None:
    """An ORDER BY item naming a select item by ordinal or alias."""
    if isinstance(e, exp.Literal) and not e.is_string:
        pos = int(e.this)
        if not 1 <= pos <= len(items):
            raise AnalysisError(f"Unknown column '{pos}' in 'order clause'")
        return names[pos - 1]
    if isinstance(e, exp.Column) and not e.table:
        for (name, expr, _), internal in zip(items, names):
            if name.lower() == e.name.lower():
                return internal
    return None


def _limit(select: exp.Select) -> tuple[int | None, int]:
    def value(node: exp.Expression | None) -> int | None:
        if node is None:
            return None
        v = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else node
        if not (isinstance(v, exp.Literal) and not v.is_string):
            raise AnalysisError("LIMIT/OFFSET must be integer constants")
        return int(v.this)
    return value(select.args.get("limit")), value(select.args.get("offset")) or 0
