"""The distributed plan: plan nodes grouped into fragments connected by exchanges.

`build_fragments(plan, columns, ctx)` walks the logical plan bottom-up, as Doris's distributed
planner does: a scan opens a fragment (PARTITION: RANDOM) on the backends holding its tablets;
a join either stays inside the probe fragment (COLOCATE; BUCKET_SHUFFLE and BROADCAST receive
the build side through an EXCHANGE) or gets a fragment of its own fed by two hash-partitioned
exchanges (PARTITIONED); aggregation runs in two phases (update serialize, then merge finalize
after a hash exchange on the grouping keys); sorts end in a MERGING-EXCHANGE; the root fragment
(UNPARTITIONED) holds the RESULT SINK. Each node lists its parameters as lines;
`planner/explain.py` writes Doris's text from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from planner import logical as L
from planner.choose_join_distribution import (BROADCAST, BUCKET_SHUFFLE, COLOCATE, SideInfo,
                                              _covers, choose)
from planner.runtime_filters import FILTERABLE_JOINS, trace_scan_column
from planner.statistics import scan_statistics

UNPARTITIONED, RANDOM = "UNPARTITIONED", "RANDOM"
# Bytes of a slot, as Doris sizes tuples (avgRowSize); strings count as 16.
_SLOT_BYTES = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "LARGEINT": 16,
               "FLOAT": 4, "DOUBLE": 8, "DECIMAL": 16, "DATE": 4, "DATETIME": 8}


@dataclass
class PNode:
    node_id: int
    name: str
    details: list[str]
    children: list[PNode] = field(default_factory=list)  # joins: [probe, build]
    tuple_ids: list[int] = field(default_factory=list)
    source: int | tuple | None = None  # id() of the logical node whose output this node
    # shows, or (part, id()) for a step of its execution (planner/logical.py: FIRST_PHASE, ...)


@dataclass
class TupleDesc:
    """One tuple of the descriptor table EXPLAIN VERBOSE prints: its table and slots."""

    tuple_id: int
    table: str | None
    slots: list[tuple[str, str, bool, int | None]]  # (column, type text, nullable, unique id)


@dataclass
class Fragment:
    partition: str
    root: PNode
    sink: list[str] = field(default_factory=list)
    output_exprs: list[str] = field(default_factory=list)
    fragment_id: int = -1
    tuples: list[TupleDesc] = field(default_factory=list)  # the root fragment: every tuple


@dataclass
class _Open:
    """A fragment being built: its top node, partitioning, instances and join-side facts."""

    node: PNode
    partition: str
    instances: int
    side: SideInfo


@dataclass
class FragmentContext:
    catalog: object
    session: dict
    fe_config: dict
    colocation: object = None     # callable(table) -> (group, stable) or None


class _Builder:
    def __init__(self, ctx: FragmentContext):
        self.ctx = ctx
        self.next_node = 0
        self.next_tuple = 0
        self.fragments: list[Fragment] = []
        self.display: dict[str, str] = {}
        self.exchange_sources: dict[int, Fragment] = {}
        self.pnode_of: dict[int, PNode] = {}
        self.next_rf = 0
        self.tuples: list[TupleDesc] = []

    # -- helpers -------------------------------------------------------------------------------
    def node(self, name: str, details: list[str], children=(), tuples=None) -> PNode:
        n = PNode(self.next_node, name, details, list(children))
        self.next_node += 1
        if tuples is None:
            tuples = [t for c in children for t in c.tuple_ids]
        n.tuple_ids = tuples
        return n

    def new_tuple(self, table: str | None = None,
                  slots: list[tuple[str, str, bool, int | None]] | None = None) -> int:
        self.next_tuple += 1
        self.tuples.append(TupleDesc(self.next_tuple - 1, table, list(slots or [])))
        return self.next_tuple - 1

    def text(self, e: exp.Expression) -> str:
        def repl(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Column):
                return exp.Var(this=self.display.get(node.name, f"`{node.name}`"))
            return node
        return e.copy().transform(repl, copy=False).sql(dialect="doris")

    def name(self, internal: str) -> str:
        return self.display.get(internal, f"`{internal}`")

    def exchange(self, child: _Open, sink_partition: str, merging: bool = False,
                 details: list[str] | None = None) -> PNode:
        ex = self.node("MERGING-EXCHANGE" if merging else "EXCHANGE", list(details or []),
                       tuples=child.node.tuple_ids)
        frag = Fragment(child.partition, child.node,
                        ["STREAM DATA SINK", f"  EXCHANGE ID: {ex.node_id:02d}", f"  {sink_partition}"])
        self.fragments.append(frag)
        self.exchange_sources[ex.node_id] = frag
        return ex

    # -- visiting ------------------------------------------------------------------------------
    def visit(self, n: object) -> _Open:
        opened = getattr(self, f"_{type(n).__name__}")(n)
        if opened.node.source is None:
            opened.node.source = id(n)
        self.pnode_of[id(n)] = opened.node
        return opened

    def _OlapScan(self, n: L.OlapScan) -> _Open:
        cat = self.ctx.catalog
        with cat.lock:
            table = cat.get_table(n.db or None, n.table)
            part_ids = sorted({t.partition_id for t in n.tablets})
            index_id = n.index_id or table.base_index_id
            stats = scan_statistics(table, part_ids, index_id)
            dist = [n.output[n.columns.index(c)] for c in table.distribution.columns
                    if c in n.columns] if table.distribution.kind == "HASH" else []
        for c, internal in zip(n.columns, n.output):
            self.display[internal] = f"`{n.alias}`.`{c}`"
        tuple_id = self.new_tuple(n.table, [
            (c, n.column_types[c].sql(), *_nullable_and_id(table, c)) for c in n.columns])
        row_size = sum(_SLOT_BYTES.get(n.column_types[c].kind, 16) for c in n.columns)
        preagg = n.preaggregation or ("ON" if n.keys_type == "DUP_KEYS" or n.merge_on_write
                                      else "OFF. Reason: No aggregate on scan.")
        index_name = n.index_name or n.table
        details = [f"TABLE: {n.db}.{n.table}({index_name}), PREAGGREGATION: {preagg}"]
        with cat.lock:
            data_parts = {pid for pid in part_ids
                          if scan_statistics(table, [pid], index_id).rows}
            # a partition replaced since the capture (INSERT OVERWRITE) has no buckets to count
            found = [table.find_partition(pid) for pid in data_parts]
            total = sum(p.buckets for p in found if p is not None)
        selected = sum(1 for t in n.tablets if t.partition_id in data_parts)
        details += [f"partitions={len(data_parts)}/{n.partitions_total}",
                    f"rollup: {index_name}", f"buckets={selected}/{total}",
                    f"cardinality={stats.rows}", f"avgRowSize={float(row_size):.1f}",
                    f"numNodes={stats.backends}", f"tuple ids: {tuple_id}"]
        node = self.node("OlapScanNode", details, tuples=[tuple_id])
        group, stable = (None, True)
        if self.ctx.colocation is not None:
            group, stable = self.ctx.colocation(table) or (None, True)
        side = SideInfo(table, dist, stats.rows, stats.rows * row_size,
                        max(stats.backends, 1), group, stable)
        return _Open(node, RANDOM, max(stats.backends, 1), side)

    def _InlineTable(self, n: L.InlineTable) -> _Open:
        for c in n.table.column_names:
            self.display[c] = f"`{n.alias}`.`{c.split('.', 1)[-1].split('#')[0]}`"
        node = self.node("SCAN SCHEMA", [f"TABLE: {n.db}.{n.alias}"], tuples=[self.new_tuple()])
        return _Open(node, UNPARTITIONED, 1, SideInfo(None, [], n.table.num_rows, n.table.nbytes, 1))

    def _OneRow(self, n: L.OneRow) -> _Open:
        node = self.node("UNION", ["constant exprs: "], tuples=[self.new_tuple()])
        return _Open(node, UNPARTITIONED, 1, SideInfo(None, [], 1, 1, 1))

    def _Filter(self, n: L.Filter) -> _Open:
        child = self.visit(n.input)
        label = "PREDICATES" if child.node.name == "OlapScanNode" else "predicates"
        line = f"{label}: {self.text(n.condition)}"
        if child.node.name == "OlapScanNode":
            child.node.details.insert(1, line)
            child.node.source = id(n)  # the scan's rows are the filtered rows
        else:
            child.node.details.insert(0, line)
        return child

    def _Project(self, n: L.Project, extend: bool = False) -> _Open:
        child = self.visit(n.input)
        for e, name in zip(n.exprs, n.names):
            if not (isinstance(e, exp.Column) and e.name == name):
                self.display[name] = self.text(e)
        if not extend:
            # Distribution columns survive under the name the projection gives them.
            renamed: dict[str, str] = {}
            for e, name in zip(n.exprs, n.names):
                if isinstance(e, exp.Column):
                    renamed.setdefault(e.name, name)
            child.side.dist_columns = [renamed[d] for d in child.side.dist_columns if d in renamed]
        return child

    def _TableFunction(self, n: L.TableFunction) -> _Open:
        child = self.visit(n.input)
        for name in n.names:
            self.display[name] = f"`{name.split('.', 1)[-1].split('#')[0]}`"
        tuple_id = self.new_tuple()
        call = f"{n.display.split('(', 1)[0]}({', '.join(self.text(a) for a in n.args)})"
        node = self.node("TABLE FUNCTION NODE", [f"table function: {call} ",
                                                 f"lateral view tuple id: {tuple_id} "],
                         [child.node], tuples=child.node.tuple_ids + [tuple_id])
        return _Open(node, child.partition, child.instances, child.side)

    def _Extend(self, n: L.Extend) -> _Open:
        return self._Project(L.Project(n.input, n.exprs, n.names), extend=True)

    def _Rename(self, n: L.Rename) -> _Open:
        child = self.visit(n.input)
        for src, dst in zip(n.names, n.aliases):
            if n.relation:
                self.display[dst] = f"`{n.relation}`.`{dst.split('.', 1)[-1].split('#')[0]}`"
            else:
                self.display[dst] = self.name(src)
        mapping = dict(zip(n.names, n.aliases))
        child.side.dist_columns = [mapping[d] for d in child.side.dist_columns if d in mapping]
        return child

    def _ScalarSubquery(self, n: L.ScalarSubquery) -> _Open:
        child = self.visit(n.input)
        if child.partition != UNPARTITIONED:
            ex = self.exchange(child, UNPARTITIONED)
            child = _Open(ex, UNPARTITIONED, 1, child.side)
        node = self.node("ASSERT NUMBER OF ROWS", ["assert number of rows: EQ 1"], [child.node])
        return _Open(node, UNPARTITIONED, 1, SideInfo(None, [], 1, 16, 1))

    def _Join(self, n: L.Join) -> _Open:
        left, right = self.visit(n.left), self.visit(n.right)
        op = f"{n.kind.upper()} JOIN"
        if n.kind == "cross":
            return self._cross_join(n, left, right)
        dist = choose(left.side, right.side, n.kind, n.left_keys, n.right_keys,
                      n.hint, self.ctx.session, self.ctx.fe_config)
        n.distribution = dist.kind
        n.bucket_right_keys = _covers(n.left_keys, n.right_keys, left.side.dist_columns)
        eq = "<=>" if n.null_safe else "="
        preds = [f"{self.name(a)} {eq} {self.name(b)}" for a, b in zip(n.left_keys, n.right_keys)]
        colocate = "colocate: true" if dist.kind == COLOCATE else f"colocate: false, reason: {dist.colocate_reason}"
        details = [f"join op: {op} ({dist.kind})", "hash predicates:", colocate]
        details += [f"  {p}" for p in preds]
        if n.nested_loop:  # keys are one constant: every pair meets the other predicates
            details = [f"join op: {op} ({dist.kind})"]
        if n.residual is not None:
            details.append(f"other join predicates: {self.text(n.residual)}")
        details += self._runtime_filters(n)
        rows = max(left.side.rows, right.side.rows) if n.kind != "inner" else left.side.rows
        side = SideInfo(left.side.scan_table if dist.kind in (COLOCATE, BUCKET_SHUFFLE, BROADCAST)
                        else None, left.side.dist_columns, rows,
                        left.side.bytes + right.side.bytes, left.instances,
                        left.side.group, left.side.group_stable)
        if dist.kind == COLOCATE:
            build, partition = right.node, left.partition
        elif dist.kind == BUCKET_SHUFFLE:
            keys = ", ".join(self.name(k) for k in n.right_keys)
            build, partition = self.exchange(right, f"BUCKET_SHFFULE_HASH_PARTITIONED: {keys}"), left.partition
            build.source = (L.BUILD_EXCHANGE, id(n))
        elif dist.kind == BROADCAST:
            build, partition = self.exchange(right, UNPARTITIONED), left.partition
        else:
            lkeys = ", ".join(self.name(k) for k in n.left_keys)
            rkeys = ", ".join(self.name(k) for k in n.right_keys)
            probe = self.exchange(left, f"HASH_PARTITIONED: {lkeys}")
            build = self.exchange(right, f"HASH_PARTITIONED: {rkeys}")
            probe.source = (L.PROBE_EXCHANGE, id(n))  # the executor times the hashing
            build.source = (L.BUILD_EXCHANGE, id(n))
            left = _Open(probe, f"HASH_PARTITIONED: {lkeys}", left.instances, side)
            side.scan_table = None
            partition = left.partition
        details.append(f"cardinality={rows}")
        node = self.node("NESTED LOOP JOIN" if n.nested_loop else "HASH JOIN", details,
                         [left.node, build])
        node.details.append(f"tuple ids: {' '.join(map(str, node.tuple_ids))}")
        return _Open(node, partition, left.instances, side)

    def _runtime_filters(self, n: L.Join) -> list[str]:
        """`runtime filters:` lines: on the join (built from the right keys) and on the scan
        that the left key reads (applied there)."""
        if n.kind not in FILTERABLE_JOINS:
            return []
        built = []
        for lk, rk in zip(n.left_keys, n.right_keys):
            path = trace_scan_column(n.left, lk)
            scan_node = self.pnode_of.get(id(path[-2])) if path else None
            if scan_node is None:
                continue
            rf = f"RF{self.next_rf:03d}[in_or_bloom]"
            self.next_rf += 1
            built.append(f"{rf} <- {self.name(rk)}")
            line = f"{rf} -> `{path[-2].alias}`.`{path[-1]}`"  # the scan column it filters
            existing = [i for i, d in enumerate(scan_node.details) if d.startswith("runtime filters:")]
            if existing:
                scan_node.details[existing[0]] += f", {line}"
            else:
                scan_node.details.insert(len(scan_node.details) - 1, f"runtime filters: {line}")
        return [f"runtime filters: {', '.join(built)}"] if built else []

    def _cross_join(self, n: L.Join, left: _Open, right: _Open) -> _Open:
        build = self.exchange(right, UNPARTITIONED)
        details = ["cross join:"]
        if n.residual is not None:
            details.append(f"predicates is NULL.  other predicates: {self.text(n.residual)}")
        node = self.node("CROSS JOIN", details, [left.node, build])
        node.details.append(f"tuple ids: {' '.join(map(str, node.tuple_ids))}")
        return _Open(node, left.partition, left.instances,
                     SideInfo(None, [], left.side.rows * max(right.side.rows, 1),
                              left.side.bytes, left.instances))

    def _Aggregate(self, n: L.Aggregate) -> _Open:
        child = self.visit(n.input)
        outputs = [self._agg_text(c) for c in n.calls]
        keys = [self.name(g) for g in n.group_names]
        for c, text in zip(n.calls, outputs):
            self.display[c.output] = text
        details = [f"output: {', '.join(outputs)}"] if outputs else []
        if keys:
            details.append(f"group by: {', '.join(keys)}")
        if n.grouping_sets is not None:
            details.append("grouping sets: " + ", ".join(
                "(" + ", ".join(self.name(k) for k in s) + ")" for s in n.grouping_sets))
        tuple_id = self.new_tuple(None, [(k, "", True, None) for k in keys]
                                  + [(o, "", True, None) for o in outputs])
        if child.partition == UNPARTITIONED:
            node = self.node("AGGREGATE (update finalize)", details, [child.node], [tuple_id])
            return _Open(node, UNPARTITIONED, 1, SideInfo(None, [], child.side.rows, child.side.bytes, 1))
        first = self.node("AGGREGATE (update serialize)",
                          (["STREAMING"] if keys else []) + details, [child.node], [tuple_id])
        first.source = (L.FIRST_PHASE, id(n))  # timed when run tablet by tablet
        partition = f"HASH_PARTITIONED: {', '.join(keys)}" if keys else UNPARTITIONED
        ex = self.exchange(_Open(first, child.partition, child.instances, child.side), partition)
        ex.source = (L.PHASE_EXCHANGE, id(n))
        second = self.node("AGGREGATE (merge finalize)", details, [ex], [tuple_id])
        side = SideInfo(None, list(n.group_names), child.side.rows, child.side.bytes,
                        child.instances if keys else 1)
        return _Open(second, partition, child.instances if keys else 1, side)

    def _agg_text(self, c: L.AggCall) -> str:
        if c.func == "count_all":
            return "count(*)"
        if c.func == "grouping_id":
            return f"grouping_id({', '.join(self.name(a) for a in c.args)})"
        args = ", ".join(self.name(a) for a in c.args) if c.args else self.name(c.arg)
        if isinstance(c.param, tuple):  # window_funnel, sequence_match, kurt, topn_array, ...
            return c.param[-1]  # the call as written (its inputs are internal columns)
        if c.param is not None:
            args += f", {c.param:g}"
        func = {"mean": "avg", "count_distinct": "count", "count_distinct_multi": "count",
                "sum_distinct": "sum", "mean_distinct": "avg"}.get(c.func, c.func)
        distinct = "DISTINCT " if "distinct" in c.func or c.distinct else ""
        return f"{func}({distinct}{args})"

    def _Distinct(self, n: L.Distinct) -> _Open:
        child = self.visit(n.input)
        return child  # shown by the aggregate Doris plans for DISTINCT: kept simple here

    def _Sort(self, n: L.Sort) -> _Open:
        child = self.visit(n.input)
        order = ", ".join(f"{self.name(k.name)} {k.explain()}" for k in n.keys)
        details = [f"order by: {order}"]
        if n.limit is not None:
            details += ["offset: 0", f"limit: {n.limit}"]
        node = self.node("TOP-N" if n.limit is not None else "SORT", details, [child.node])
        if child.partition == UNPARTITIONED:
            return _Open(node, UNPARTITIONED, 1, child.side)
        extra = ["offset: 0"] + ([f"limit: {n.limit}"] if n.limit is not None else [])
        ex = self.exchange(_Open(node, child.partition, child.instances, child.side),
                           UNPARTITIONED, merging=True, details=extra)
        return _Open(ex, UNPARTITIONED, 1, child.side)

    def _Limit(self, n: L.Limit) -> _Open:
        child = self.visit(n.input)
        if child.node.name == "MERGING-EXCHANGE":
            child.node.details = [f"offset: {n.offset}"] + ([f"limit: {n.limit}"] if n.limit is not None else [])
            return child
        if child.partition != UNPARTITIONED:
            ex = self.exchange(child, UNPARTITIONED, details=[f"limit: {n.limit}"] if n.limit is not None else [])
            child = _Open(ex, UNPARTITIONED, 1, child.side)
        else:
            child.node.details.append(f"limit: {n.limit}")
        return child

    def _Window(self, n: L.Window) -> _Open:
        child = self.visit(n.input)
        first = n.calls[0]
        keys = ", ".join(self.name(p) for p in first.partition_by)
        if child.partition != UNPARTITIONED:
            partition = f"HASH_PARTITIONED: {keys}" if keys else UNPARTITIONED
            ex = self.exchange(child, partition)
            child = _Open(ex, partition, child.instances if keys else 1, child.side)
        order = [self.name(p) + " ASC" for p in first.partition_by] + [
            f"{self.name(k.name)} {k.explain()}" for k in first.order_by]
        sort = self.node("SORT", [f"order by: {', '.join(order)}"] if order else [], [child.node])
        funcs = []
        for c in n.calls:
            text = f"{c.func}({self.name(c.arg) if c.arg else ''})"
            self.display[c.output] = text
            funcs.append(text)
        details = [f"functions: [{', '.join(funcs)}]"]
        if keys:
            details.append(f"partition by: {keys}")
        if first.order_by:
            details.append("order by: " + ", ".join(
                f"{self.name(k.name)} {k.explain()}" for k in first.order_by))
        kind, start, end = first.frame
        details.append(f"window: {kind.upper()} BETWEEN {_bound(start)} AND {_bound(end, True)}")
        node = self.node("ANALYTIC", details, [sort], child.node.tuple_ids + [self.new_tuple()])
        return _Open(node, child.partition, child.instances, SideInfo(None, [], child.side.rows,
                                                                       child.side.bytes, child.instances))

    def _SetOp(self, n: L.SetOp) -> _Open:
        left, right = self.visit(n.left), self.visit(n.right)
        children = [self.exchange(x, RANDOM if n.kind == "union" else UNPARTITIONED) for x in (left, right)]
        name = {"union": "UNION", "intersect": "INTERSECT", "except": "EXCEPT"}[n.kind]
        node = self.node(name, [], children, [self.new_tuple()])
        partition = RANDOM if n.kind == "union" else UNPARTITIONED
        return _Open(node, partition, max(left.instances, 1),
                     SideInfo(None, [], left.side.rows + right.side.rows,
                              left.side.bytes + right.side.bytes, left.instances))


def _nullable_and_id(table: object, column: str) -> tuple[bool, int | None]:
    """A column's nullability and its unique id (its position in the schema)."""
    for i, c in enumerate(table.columns):
        if c.name == column:
            return bool(c.nullable), i
    return True, None


def _bound(v, end: bool = False) -> str:
    if v is None:
        return "UNBOUNDED FOLLOWING" if end else "UNBOUNDED PRECEDING"
    if v == 0:
        return "CURRENT ROW"
    return f"{abs(v)} {'PRECEDING' if v < 0 else 'FOLLOWING'}"


def build_fragments(plan: object, columns: list, ctx: FragmentContext) -> list[Fragment]:
    b = _Builder(ctx)
    top = b.visit(plan)
    if top.partition != UNPARTITIONED:
        ex = b.exchange(top, UNPARTITIONED)
        top = _Open(ex, UNPARTITIONED, 1, top.side)
    root = Fragment(UNPARTITIONED, top.node, ["RESULT SINK"],
                    [b.name(c.internal) for c in columns])
    order = [root]
    _number(root, b, order)
    for i, f in enumerate(order):
        f.fragment_id = i
    if order:
        order[0].tuples = b.tuples
    return order


def _number(frag: Fragment, b: _Builder, order: list[Fragment]) -> None:
    """Fragments in Doris's order: the root, then sources found depth-first from each node."""
    def walk(node: PNode) -> None:
        for child in node.children:
            walk(child)
        source = b.exchange_sources.get(node.node_id)
        if source is not None and node.name.endswith("EXCHANGE"):
            order.append(source)
            _number(source, b, order)
    walk(frag.root)
