"""Rollup selection: each OlapScan reads the materialized index that serves it best (seed 004).

Runs once a query is bound and its scans pruned to the columns it uses (`bind_query`). For each
scan, `_usage` reads what the plan does with the scan's columns: when the scan sits under an
Aggregate through Filter / Project / inner-join nodes only (Doris: "if there is Join ... the
type of Join needs to be Inner join"), which columns feed which aggregate function, which are
grouping keys and which appear in predicates and join keys. SELECT DISTINCT is such an
aggregate grouping by its select list (Doris plans it as one). Without an aggregate (Doris's
SelectMaterializedIndexWithoutAggregate), a chain of Filter / Project nodes right above the
scan says which columns leave it and which conjuncts filter it (a Filter on top: every column
leaves); a scan with nothing of the kind above uses every column as is. Under joins an
aggregate must read only this scan's columns (MIN / MAX / COUNT DISTINCT of another relation
excepted: they ignore repeated rows), else pre-aggregating it would change the joined row
counts.

    pre-aggregation   DUPLICATE tables: ON. AGGREGATE / UNIQUE tables: ON when every value
                      column is read only through its own aggregation (SUM over a SUM column,
                      MAX over MAX, MIN over MIN) and no key column is summed; else OFF with
                      Doris Nereids' reason ("No aggregate on scan.", "Aggregate operator don't
                      match, ...", "Predicate ... contains value column ...").
    candidates        indexes (NORMAL state only) holding every column the scan reads; with
                      pre-aggregation OFF on an AGGREGATE/UNIQUE table, only the base index
                      and, without any aggregate above, rollups with all the base's keys (their
                      rows are the base's rows); a materialized view that aggregates a
                      DUPLICATE table serves only aggregates it can answer (SUM/MIN/MAX of its
                      columns, COUNT(x) as the SUM of its `mv_count_x`, SUM(a * b) as the SUM
                      of its computed column of the same text), never COUNT(*).
    choice            the longest prefix-index match: the index's short key columns (at most
                      3, 36 bytes, cut after the first VARCHAR) in order, counting those with
                      an `=`/`IN` predicate and stopping after the first with a range predicate;
                      then the fewest rows in the scanned tablets, then the fewest columns,
                      then the earliest created index (the base first).

    WHERE views       a materialized view with a WHERE serves a query only when each of its
                      conjuncts is one of the query's WHERE conjuncts over this scan (same
                      text over storage names; Doris's rule), with or without an aggregate;
                      those conjuncts are then dropped from the plan (the view's rows satisfy
                      them) and with them the columns only they read. Doris (since PR 33305)
                      also prefers any WHERE view over other candidates before the prefix
                      match; here the prefix match and row counts decide.

The scan then reads the chosen index's tablets for the same partitions and buckets; EXPLAIN
shows `TABLE: db.t(index)`, `PREAGGREGATION` and `rollup: index`. A COUNT(x) answered by a
materialized view becomes SUM(mv_count_x), wrapped in IFNULL(.., 0) for an aggregate without
GROUP BY (an empty input counts 0); SUM(a * b) reads the view's computed column.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import sqlglot
from sqlglot import exp

from catalog.catalog import Catalog
from catalog.model import AGG_KEYS, DUP_KEYS, OlapTable
from catalog.unique_model import is_merge_on_write
from planner import logical as L
from planner.scope import conjuncts
from storage.types import DataType

_STORAGE_AGG = {"sum": "SUM", "min": "MIN", "max": "MAX"}
_EQ_OPS = ("=", "in")
_RANGE_OPS = ("<", "<=", ">", ">=")


@dataclass
class _Call:
    call: L.AggCall
    text: str           # e.g. sum(lo_revenue), over storage column names
    used: set[str]      # this scan's columns in its arguments
    one: bool           # its argument is one plain column of this scan
    foreign: bool       # it reads other relations' columns, or none (count(*))
    arg_text: str | None  # its single argument's text over this scan's storage names


@dataclass
class _Usage:
    """What the plan does with one scan's columns (storage names)."""

    aggregate: L.Aggregate | None = None
    project: L.Project | None = None     # the projection right under the aggregate
    joined: bool = False                 # other relations are joined under the aggregate
    groups: list[tuple[str, set[str]]] = field(default_factory=list)       # (text, columns)
    predicates: list[tuple[str, set[str]]] = field(default_factory=list)   # (text, columns)
    calls: list[_Call] = field(default_factory=list)
    rewritable: bool = False             # no projection but `project` between it and the scan
    # each WHERE conjunct over this scan: (text, columns, its Filter node, the conjunct)
    filter_conjuncts: list[tuple[str, set[str], L.Filter, exp.Expression]] = \
        field(default_factory=list)
    projected: set[str] = field(default_factory=set)  # columns Project nodes below read


def select_rollups(plan: object, catalog: Catalog) -> object:
    """Choose an index for every scan of `plan` (in place); returns the (maybe wrapped) plan."""
    return _visit(plan, catalog)


def _visit(node: object, catalog: Catalog) -> object:
    if isinstance(node, L.Aggregate) and node.grouping_sets is None:
        tree = _inner_tree(node.input)
        if tree is not None:
            nodes, scans = tree
            out = node
            for scan in scans:
                if _base_only(scan, catalog):
                    continue
                usage = _usage(node, nodes, scan, len(scans) > 1)
                # one rewrite of the aggregate's calls at most (it renames their outputs)
                wrapped = _select(scan, usage, catalog, rewrite=out is node)
                out = wrapped or out
            _splice_true_filters(node)
            return out
    if isinstance(node, L.Distinct) and isinstance(node.input, L.Project):
        # Doris plans SELECT DISTINCT as an aggregate grouping by the select list
        # (SelectMaterializedIndexWithAggregate): an aggregating view may serve it
        grouping = L.Aggregate(node.input, list(node.input.names), [])
        tree = _inner_tree(node.input)
        if tree is not None:
            nodes, scans = tree
            for scan in scans:
                if not _base_only(scan, catalog):
                    _select(scan, _usage(grouping, nodes, scan, len(scans) > 1), catalog,
                            rewrite=False)
            _splice_true_filters(node)
            return node
    if isinstance(node, (L.Filter, L.Project)):
        chain = _scan_chain(node)
        if chain is not None:  # Doris's SelectMaterializedIndexWithoutAggregate
            nodes, scan = chain
            if not _base_only(scan, catalog):
                usage = _usage(None, nodes, scan, False)
                if isinstance(node, L.Filter):  # every column of the scan leaves the chain
                    usage.projected |= set(scan.columns)
                _select(scan, usage, catalog, rewrite=False)
                while isinstance(node, L.Filter) and node.condition == exp.true():
                    node = node.input
                _splice_true_filters(node)
            return node
    if isinstance(node, L.OlapScan):
        if not _base_only(node, catalog):
            _select(node, _Usage(), catalog, rewrite=False)
        return node
    for attr in ("input", "left", "right"):
        child = getattr(node, attr, None)
        if child is not None:
            setattr(node, attr, _visit(child, catalog))
    return node


def _splice_true_filters(node: object) -> None:
    """Filters left without a condition (a view's WHERE answered all of it) leave the plan."""
    for attr in ("input", "left", "right"):
        child = getattr(node, attr, None)
        while isinstance(child, L.Filter) and child.condition == exp.true():
            child = child.input
            setattr(node, attr, child)
        if child is not None and not isinstance(child, L.OlapScan):
            _splice_true_filters(child)


def _base_only(scan: L.OlapScan, catalog: Catalog) -> bool:
    """A Duplicate-key table without rollups: its base index is the only choice (applied here,
    without working out how the query uses the scan, a per-query cost on every SELECT)."""
    with catalog.lock:
        table = catalog.get_table(scan.db or None, scan.table)
        if table.keys_type != DUP_KEYS or table.rollups():
            return False
        _apply(scan, table, table.base_index_id, None)
    return True


def _scan_chain(node: object) -> tuple[list, L.OlapScan] | None:
    """The Filter / Project nodes of a chain ending in a scan, with the scan (no aggregate
    above: the scan is read as it is)."""
    nodes = []
    while isinstance(node, (L.Filter, L.Project)):
        nodes.append(node)
        node = node.input
    return (nodes, node) if isinstance(node, L.OlapScan) else None


def _inner_tree(node: object) -> tuple[list, list[L.OlapScan]] | None:
    """The Filter / Project / inner-join nodes and the scans of a subtree made of nothing else
    (an aggregate over inner joins may pre-aggregate each scan: Doris's rule)."""
    nodes: list = []
    scans: list[L.OlapScan] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, L.OlapScan):
            scans.append(n)
        elif isinstance(n, (L.Filter, L.Project)):
            nodes.append(n)
            stack.append(n.input)
        elif isinstance(n, L.Join) and n.kind in ("inner", "cross"):
            nodes.append(n)
            stack += [n.left, n.right]
        else:
            return None
    return nodes, scans


def _usage(agg: L.Aggregate | None, nodes: list, scan: L.OlapScan, joined: bool) -> _Usage:
    """How `agg` (None: no aggregate, the rows are read as they are) and the `nodes` between
    it and the scan use the scan's columns."""
    to_col = dict(zip(scan.output, scan.columns))
    defs = {n: e for p in nodes if isinstance(p, L.Project) for e, n in zip(p.exprs, p.names)}
    project = agg.input if agg is not None and isinstance(agg.input, L.Project) else None
    u = _Usage(agg, project, joined)

    def resolve(e: exp.Expression, depth: int = 0) -> exp.Expression:
        if depth > 20:
            return e
        return e.transform(lambda n: resolve(defs[n.name].copy(), depth + 1)
                           if isinstance(n, exp.Column) and n.name in defs else n)

    def cols(e: exp.Expression) -> set[str]:
        return {to_col[c.name] for c in e.find_all(exp.Column) if c.name in to_col}

    def text(e: exp.Expression) -> str:
        return e.transform(lambda n: exp.column(to_col[n.name]) if isinstance(n, exp.Column)
                           and n.name in to_col else n).sql("doris")

    conditions = []
    for n in nodes:
        if isinstance(n, L.Filter):
            for c in conjuncts(n.condition):
                r = resolve(c)
                if cols(r):
                    u.filter_conjuncts.append((text(r), cols(r), n, c))
            conditions += conjuncts(n.condition)
        elif isinstance(n, L.Project) and n is not project:
            u.projected |= {c for e in n.exprs for c in cols(resolve(e))}
        elif isinstance(n, L.Join):
            conditions += [exp.EQ(this=exp.column(a, quoted=True), expression=exp.column(b, quoted=True))
                           for a, b in zip(n.left_keys, n.right_keys)]
            if n.residual is not None:
                conditions.append(n.residual)
    for c in conditions:
        c = resolve(c)
        if cols(c):
            u.predicates.append((text(c), cols(c)))
    for g in agg.group_names if agg is not None else []:
        e = resolve(exp.column(g, quoted=True))
        u.groups.append((text(e), cols(e)))
    for call in agg.calls if agg is not None else []:
        args = [a for a in ([call.arg] if call.arg else []) + list(call.args)]
        exprs = [resolve(exp.column(a, quoted=True)) for a in args]
        used = set().union(*(cols(e) for e in exprs)) if exprs else set()
        refs = {c.name for e in exprs for c in e.find_all(exp.Column)}
        foreign = not exprs or bool(refs - set(to_col))
        one = len(exprs) == 1 and isinstance(exprs[0], exp.Column) and exprs[0].name in to_col
        arg = text(exprs[0]) if len(exprs) == 1 and not foreign else None
        arg_text = ", ".join(text(e) for e in exprs) or "*"
        u.calls.append(_Call(call, f"{_func_name(call)}{arg_text})", used, one, foreign, arg))
    u.rewritable = all(n is project for n in nodes if isinstance(n, L.Project))
    return u


def _func_name(call: L.AggCall) -> str:
    name = {"count_all": "count", "count_distinct": "count", "mean": "avg",
            "sum_distinct": "sum", "mean_distinct": "avg"}.get(call.func, call.func)
    return f"{name}(DISTINCT " if "distinct" in call.func else f"{name}("


# -- pre-aggregation ---------------------------------------------------------------------------
def preaggregation(table: OlapTable, index_id: int, u: _Usage) -> str | None:
    """None when the index can pre-aggregate for the query, else Doris's reason."""
    cols = {c.name: c for c in table.index_columns(index_id)}
    if u.aggregate is None:
        return "No aggregate on scan."
    for text, used in u.predicates:
        value = next((c for c in sorted(used) if c in cols and not cols[c].is_key), None)
        if value:
            return f"Predicate {text} contains value column {value}"
    for text, used in u.groups:
        value = next((c for c in sorted(used) if c in cols and not cols[c].is_key), None)
        if value:
            return f"Grouping expression {text} contains value column {value}"
    for c in u.calls:
        reason = _check_call(c, cols)
        if reason:
            return reason
    return None


def _check_call(c: _Call, cols: dict) -> str | None:
    func, text, used = c.call.func, c.text, c.used
    if func == "count_all":
        return f"Count distinct is only valid for key columns, but meet {text}."
    if c.foreign:
        if not used and func in ("min", "max", "count_distinct"):
            return None  # over other relations, and blind to repeated rows
        return f"Aggregate function {text} reads columns of other relations."
    if func == "count":
        return f"Count distinct is only valid for key columns, but meet {text}."
    if func == "count_distinct":
        if all(n in cols and cols[n].is_key for n in used):
            return None
        return f"Count distinct is only valid for key columns, but meet {text}."
    want = _STORAGE_AGG.get(func)
    if want is None:
        return f"Aggregate {text.split('(')[0]} function is not supported in storage engine."
    if all(n in cols and cols[n].is_key for n in used):
        if want in ("MIN", "MAX"):
            return None
        return f"Aggregate function {text} contains key column {sorted(used)[0]}."
    if not c.one:
        return f"{text} is not aggregate function."
    col = cols.get(next(iter(used)))
    if col is None:
        return f"Slot({next(iter(used))}) in {text} is neither key column nor value column."
    if col.aggregation != want:
        return (f"Aggregate operator don't match, aggregate function: {text}, column aggregate "
                f"type: {col.aggregation}")
    return None


# -- candidates and choice ---------------------------------------------------------------------
def _select(scan: L.OlapScan, u: _Usage, catalog: Catalog, rewrite: bool) -> object | None:
    with catalog.lock:
        table = catalog.get_table(scan.db or None, scan.table)
        base = table.base_index_id
        base_keys = len(table.key_columns)
        needed = set(scan.columns)
        options = []  # (index id, preagg reason or None, call rewrites)
        fits = {}     # index id -> (the usage without the view's WHERE conjuncts, dropped columns)
        rollups = _captured_rollups(scan, table)
        for index in [table.indexes[base], *rollups]:
            fit = _where_fit(index, u)
            if fit is not None:
                fits[index.index_id] = fit
        if table.keys_type == DUP_KEYS:
            for index in [table.indexes[base], *rollups]:
                if index.index_id not in fits:
                    continue
                uu, dropped = fits[index.index_id]
                rewrites: dict = {}
                if index.keys_type != DUP_KEYS:
                    rewrites = _mv_rewrites(table, index.index_id, uu)
                    if rewrites is None or rewrites and not (rewrite and u.rewritable):
                        continue
                if _covers(needed - dropped, set(index.columns), uu, rewrites):
                    options.append((index.index_id, None, rewrites))
        else:
            reason = preaggregation(table, base, u)
            hidden = {c.name for c in table.hidden_columns}  # in every index of the table
            for index in [table.indexes[base], *rollups]:
                if index.index_id not in fits:
                    continue
                if index.index_id != base:
                    if not needed - fits[index.index_id][1] <= set(index.columns) | hidden:
                        continue
                    if reason is not None and (u.aggregate is not None or
                                               _key_count(table, index.index_id) != base_keys):
                        continue  # only a rollup with the base's keys has the base's rows
                options.append((index.index_id, reason, {}))
        best = options[0] if len(options) == 1 else min(options,
                                                         key=lambda o: _rank(table, o[0], scan))
        _apply(scan, table, best[0], best[1])
        index = table.indexes[best[0]]
        wrapped = _rewrite_calls(scan, u, best[2], index.columns) if best[2] else None
        if index.where_clause:
            _drop_where_conjuncts(scan, table, index, u)
    return wrapped


def _captured_rollups(scan: L.OlapScan, table: OlapTable) -> list:
    """The table's rollups the scan captured snapshots of for every tablet
    (planner/binder.py:capture_snapshots): one that finished building, or was dropped, after
    the capture is not read (the scan reads exactly what it captured)."""
    rollups = table.rollups()
    if not rollups:
        return rollups
    if any(t.partition_id not in table.partitions for t in scan.tablets):
        # a partition replaced since the capture (INSERT OVERWRITE, TRUNCATE): its rollup
        # tablets are not found by partition any more; the captured base serves the query
        return []
    if not scan.tablets or any(t.snapshot is None for t in scan.tablets):
        return rollups  # not captured (a plan only explained): the catalog's rollups
    held = None
    for t in scan.tablets:
        ids = set(t.rollup_snapshots or ())
        held = ids if held is None else held & ids
    return [i for i in rollups if i.index_id in held]


@functools.lru_cache(maxsize=256)
def _where_conjuncts(where_clause: str) -> frozenset[str]:
    """A view's WHERE conjuncts as text (parsed once per WHERE, not per query)."""
    return frozenset(c.sql("doris") for c in conjuncts(sqlglot.parse_one(where_clause,
                                                                          read="doris")))


def _where_fit(index, u: _Usage) -> tuple[_Usage, set[str]] | None:
    """For an index without WHERE: (u, no columns). For a view with one: None unless every
    conjunct of it is a WHERE conjunct of the query; else the usage without those conjuncts
    and the columns only they read (the view need not hold them)."""
    if not index.where_clause:
        return u, set()
    wanted = _where_conjuncts(index.where_clause)
    have = {t for t, _, _, _ in u.filter_conjuncts}
    if not wanted <= have:
        return None
    rest = [p for p in u.predicates if p[0] not in wanted]
    matched = {c for t, used, _, _ in u.filter_conjuncts if t in wanted for c in used}
    other = {c for _, used in [*rest, *u.groups] for c in used}
    other |= {c for call in u.calls for c in call.used} | u.projected
    return replace(u, predicates=rest), matched - other


def _drop_where_conjuncts(scan: L.OlapScan, table: OlapTable, index, u: _Usage) -> None:
    """The query's conjuncts a view's WHERE guarantees leave the plan, and so do the scan's
    columns and storage predicates the view does not hold (only those conjuncts read them)."""
    wanted = _where_conjuncts(index.where_clause)
    for t, _, node, conjunct in u.filter_conjuncts:
        if t in wanted:
            rest = [c for c in conjuncts(node.condition) if c is not conjunct]
            node.condition = exp.and_(*rest, copy=False) if rest else exp.true()
    have = set(index.columns)
    instance = scan.output[0].rsplit("#", 1)[-1]
    keep = [(c, o) for c, o in zip(scan.columns, scan.output) if c in have]
    if not keep:  # count(*): the view's first column still yields its rows
        first = index.columns[0]
        keep = [(first, f"{scan.alias}.{first}#{instance}")]
        scan.column_types[first] = table.column(first).type
    scan.columns, scan.output = [c for c, _ in keep], [o for _, o in keep]
    scan.predicates = [p for p in scan.predicates if p.column in have]


def _key_count(table: OlapTable, index_id: int) -> int:
    return sum(1 for c in table.index_columns(index_id) if c.is_key)


def _covers(needed: set[str], have: set[str], u: _Usage, rewrites: dict) -> bool:
    """Every column is in the index, except those read only through a rewritten call."""
    raw = {n for _, used in [*u.groups, *u.predicates] for n in used}
    raw |= {n for c in u.calls if id(c.call) not in rewrites for n in c.used}
    rewritten = {n for c in u.calls if id(c.call) in rewrites for n in c.used}
    return needed - (rewritten - raw) <= have


def _mv_rewrites(table: OlapTable, index_id: int, u: _Usage) -> dict | None:
    """A DUPLICATE table's aggregating materialized view: None if it cannot answer the query,
    else {id(call): (view column, "count" | "expr")} for the calls it answers through its
    computed columns (COUNT(x), SUM(a * b), ...)."""
    if u.aggregate is None:
        return None
    index = table.indexes[index_id]
    cols = {c.name: c for c in table.index_columns(index_id)}
    counted = {d[1]: name for name, d in index.define_exprs.items() if d[0] == "count"}
    computed = {(d[1], index.aggregations.get(name)): name
                for name, d in index.define_exprs.items() if d[0] == "expr"}
    for _, used in [*u.predicates, *u.groups]:
        if any(n not in cols or not cols[n].is_key for n in used):
            return None
    rewrites = {}
    for c in u.calls:
        if not c.foreign and c.call.func == "count" and c.one and next(iter(c.used)) in counted:
            rewrites[id(c.call)] = (counted[next(iter(c.used))], "count")
            continue
        want = _STORAGE_AGG.get(c.call.func)
        if not c.foreign and not c.one and (c.arg_text, want) in computed:
            rewrites[id(c.call)] = (computed[(c.arg_text, want)], "expr")
            continue
        if _check_call(c, cols) is not None:
            return None
    return rewrites


def _rank(table: OlapTable, index_id: int, scan: L.OlapScan) -> tuple:
    order = list(table.indexes).index(index_id)
    schema = table.tablet_schema(index_id)
    eq = {p.column for p in scan.predicates if p.op in _EQ_OPS}
    rng = {p.column for p in scan.predicates if p.op in _RANGE_OPS}
    matched = 0
    for col in schema.short_key_columns:
        if col.name in eq:
            matched += 1
        elif col.name in rng:
            matched += 1
            break
        else:
            break
    rows = 0
    for t in scan.tablets:
        p = table.partitions.get(t.partition_id)
        if p is not None and index_id in p.tablets_by_index:
            rows += p.tablets[p.tablets_by_index[index_id][t.bucket]].row_count()
    return (-matched, rows, len(schema.columns), order)


def _apply(scan: L.OlapScan, table: OlapTable, index_id: int, reason: str | None) -> None:
    index = table.indexes[index_id]
    scan.index_id = index_id
    scan.index_name = index.name
    # Doris: OlapTable.isDupKeysOrMergeOnWrite -> PreAggStatus.on(), whichever index serves
    scan.preaggregation = "ON" if reason is None or table.keys_type == DUP_KEYS \
        or is_merge_on_write(table) \
        else f"OFF. Reason: {reason}"
    scan.preaggregate = reason is None and table.keys_type == AGG_KEYS
    if index_id == table.base_index_id:
        return
    scan.keys_type = index.keys_type
    tablets = []
    for t in scan.tablets:
        p = table.partitions[t.partition_id]
        tid = p.tablets_by_index[index_id][t.bucket]
        tablets.append(L.ScanTablet(tid, t.version, t.partition_id, p.tablets[tid].replicas[0],
                                    t.bucket, (t.rollup_snapshots or {}).get(index_id)))
    scan.tablets = tablets


def _rewrite_calls(scan: L.OlapScan, u: _Usage, rewrites: dict,
                   index_columns: list[str]) -> object | None:
    """Calls answered by a view's computed column read it (the scan reads the column):
    COUNT(x) -> SUM(mv_count_x) under IFNULL(.., 0) without GROUP BY, SUM(a * b) -> SUM(mv_..)."""
    agg, project = u.aggregate, u.project
    instance = scan.output[0].rsplit("#", 1)[-1]
    for mv_col, _ in dict.fromkeys(rewrites.values()):
        scan.columns.append(mv_col)
        scan.output.append(f"{scan.alias}.{mv_col}#{instance}")
        scan.column_types[mv_col] = DataType("BIGINT")
    to_internal = dict(zip(scan.columns, scan.output))
    renamed = {}
    for c in u.calls:
        if id(c.call) not in rewrites:
            continue
        mv_col, kind = rewrites[id(c.call)]
        call = c.call
        if project is not None and call.arg in project.names:
            project.exprs[project.names.index(call.arg)] = exp.column(to_internal[mv_col],
                                                                       quoted=True)
        else:
            call.arg = to_internal[mv_col]
        if kind == "count":
            call.func = "sum"
            renamed[f"{call.output}__mv"] = call.output
            call.output = f"{call.output}__mv"
    keep = [(c, o) for c, o in zip(scan.columns, scan.output) if c in index_columns]
    scan.columns, scan.output = [c for c, _ in keep], [o for _, o in keep]
    if not renamed:
        return None
    exprs = [exp.column(n, quoted=True) for n in agg.group_names]
    names = list(agg.group_names)
    for call in agg.calls:
        col = exp.column(call.output, quoted=True)
        empty_is_zero = call.output in renamed and not agg.group_names
        exprs.append(exp.func("IFNULL", col, exp.Literal.number(0)) if empty_is_zero else col)
        names.append(renamed.get(call.output, call.output))
    return L.Project(agg, exprs, names)
