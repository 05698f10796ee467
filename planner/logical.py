"""Logical plan nodes: small dataclasses, one per relational operator.

Every node produces a relation whose columns have unique internal names (`alias.column` for
scans, `__gN`/`__aN` for grouping keys and aggregates, `__eN` for computed expressions).
Expressions are sqlglot ASTs whose column references use those internal names, so the executor
evaluates them against an Arrow table directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from storage.types import DataType


@dataclass
class ScanTablet:
    """One tablet to read at a snapshot version."""

    tablet_id: int
    version: int
    partition_id: int
    backend_id: int
    bucket: int = 0
    # storage.TabletSnapshot captured with the version (catalog lock held): the rowsets read
    snapshot: object = field(default=None, compare=False, repr=False)
    # {rollup index_id: its tablet's TabletSnapshot} captured with the base's (select_rollup.py)
    rollup_snapshots: dict = field(default=None, compare=False, repr=False)


@dataclass
class OlapScan:
    db: str
    table: str
    alias: str
    columns: list[str]           # storage column names to read
    output: list[str]            # internal names, same order as `columns`
    tablets: list[ScanTablet]
    predicates: list = field(default_factory=list)  # storage ColumnPredicates (pruning)
    partitions_total: int = 0
    partitions_selected: int = 0
    keys_type: str = ""
    merge_on_write: bool = False  # a merge-on-write Unique table: pre-aggregation always ON
    column_types: dict[str, DataType] = field(default_factory=dict)
    tablets_total: int = 0       # tablets of the selected partitions before bucket pruning
    num_buckets: int = 0         # buckets per partition when all partitions agree, else 0
    dist_columns: list[str] = field(default_factory=list)  # HASH distribution columns
    index_id: int = 0            # the materialized index read (planner/select_rollup.py)
    index_name: str = ""         # ... its name ("" until chosen: the base index)
    preaggregation: str = ""     # EXPLAIN's PREAGGREGATION text: ON | OFF. Reason: ...
    # Doris's pre-aggregation: the query's aggregates give the same result over rows not yet
    # merged by key (an Aggregate table, PREAGGREGATION ON): storage skips the merge-on-read
    preaggregate: bool = False
    # column -> PROPERTIES of its INVERTED index (MATCH analyses with them: match_columns.py)
    inverted_indexes: dict = field(default_factory=dict)
    match_without_index: bool = True  # session variable enable_match_without_inverted_index
    # MATCH conjuncts the segments' inverted indexes answer (storage/inverted/filter.py), and
    # LIKE conjuncts their NGRAM_BF indexes narrow (planner/ngram_like.py)
    match_filters: list = field(default_factory=list)
    # column -> gram_size of its NGRAM_BF index
    ngram_bf_indexes: dict = field(default_factory=dict)
    # a RANGE-partitioned table's first partition column and each selected partition's
    # bounds on it: runtime filters on that column prune partitions when the query runs
    # (planner/prune_partitions.range_bounds, executor/runtime_filter.py)
    range_column: str = ""
    range_bounds: tuple = ()


@dataclass
class InlineTable:
    """Rows computed at planning time (information_schema and mysql tables)."""

    table: object                # pa.Table with the output names
    alias: str
    db: str = "information_schema"


@dataclass
class OneRow:
    """The single empty row that SELECT without FROM runs over."""


@dataclass
class Filter:
    input: object
    condition: exp.Expression
    # the condition is exactly the storage predicates of the scan below (planner/pushdown.py):
    # storage applied it, the executor does not evaluate it again; EXPLAIN still shows it
    pushed: bool = False


@dataclass
class Project:
    input: object
    exprs: list[exp.Expression]
    names: list[str]             # internal output names


@dataclass
class Extend:
    """All of `input`'s columns plus computed ones."""

    input: object
    exprs: list[exp.Expression]
    names: list[str]


@dataclass
class TableFunction:
    """LATERAL VIEW fn(args) alias AS names: each input row repeated once per row the table
    function yields for it (none: the row is dropped, or kept once with NULLs when `outer`),
    with the function's columns `names` appended (executor/operators/table_function.py)."""

    input: object
    function: str                # explode, explode_split, explode_numbers, posexplode
    args: list[exp.Expression]
    names: list[str]             # internal output names
    outer: bool = False
    display: str = ""            # the call as written, for EXPLAIN


@dataclass
class Window:
    """Window functions (planner.window.WindowCall) added as columns to `input`."""

    input: object
    calls: list


@dataclass
class AggCall:
    func: str                    # count_all, count, count_distinct, sum, min, max, mean,
                                 # sum_distinct, mean_distinct, group_concat, grouping, ...
    arg: str | None              # internal input column name
    output: str
    args: list[str] = field(default_factory=list)  # multi-argument calls (count(DISTINCT a, b))
    separator: str | None = ", "  # group_concat (None: a NULL separator, a NULL result)
    distinct: bool = False       # group_concat(DISTINCT ...)
    order: list = field(default_factory=list)      # group_concat(... ORDER BY ...): SortKeys
    param: object = None         # percentile's level; window_funnel's (window, mode, levels)


@dataclass
class Aggregate:
    input: object
    group_names: list[str]       # internal input columns to group by (already projected)
    calls: list[AggCall]
    grouping_sets: list[list[str]] | None = None  # GROUPING SETS / ROLLUP / CUBE


@dataclass
class Join:
    left: object
    right: object
    kind: str                    # inner, left outer, right outer, full outer, cross, left semi, left anti
    left_keys: list[str]
    right_keys: list[str]
    residual: exp.Expression | None = None  # non-equi part of ON, applied to matched pairs
    hint: str | None = None      # JOIN [broadcast] / [shuffle] / [bucket] / [colocate]
    distribution: str | None = None   # set by planner/fragments.py: COLOCATE, BROADCAST, ...
    bucket_right_keys: list[str] | None = None  # right keys in the left's distribution order
    output: list[str] | None = None  # columns read above it (planner/prune_join_columns.py); None: all
    null_safe: bool = False      # keys compare with <=> (NULL matches NULL): subquery joins
    nested_loop: bool = False    # an outer join without equality: keys are one constant


@dataclass
class SortKey:
    name: str
    descending: bool
    nulls_first: bool | None = None  # None: Doris's default (first ascending, last descending)

    @staticmethod
    def of(name: str, ordered: exp.Ordered) -> "SortKey":
        """The key of a sqlglot `Ordered` (its `nulls_first` is always resolved by the dialect)."""
        desc = bool(ordered.args.get("desc"))
        first = ordered.args.get("nulls_first")
        return SortKey(name, desc, None if first is None or bool(first) == (not desc) else bool(first))

    def nulls_at_start(self) -> bool:
        return (not self.descending) if self.nulls_first is None else self.nulls_first

    def explain(self) -> str:
        """Doris's OrderByElement text: `NULLS FIRST|LAST` only when not the default."""
        text = "DESC" if self.descending else "ASC"
        if self.nulls_first is not None:
            text += " NULLS FIRST" if self.nulls_first else " NULLS LAST"
        return text


@dataclass
class Sort:
    input: object
    keys: list[SortKey]
    limit: int | None = None     # top-N when set (offset included)


@dataclass
class Limit:
    input: object
    limit: int | None
    offset: int = 0


@dataclass
class Distinct:
    input: object


@dataclass
class ScalarSubquery:
    """Exactly one row of `input` (no row: one row of NULLs; more than one: an error)."""

    input: object


@dataclass
class SetOp:
    """UNION / INTERSECT / EXCEPT of two inputs with identical column names."""

    kind: str                    # union, intersect, except
    distinct: bool
    left: object
    right: object


@dataclass
class Rename:
    """Expose `input`'s columns `names` under `aliases` and keep only those (derived tables)."""

    input: object
    names: list[str]
    aliases: list[str]
    relation: str = ""  # the derived table's alias, when it is one


@dataclass
class ResultColumnInfo:
    name: str
    internal: str
    type: DataType | None = None  # declared type when the column comes straight from a table


@dataclass
class QueryPlan:
    root: object
    columns: list[ResultColumnInfo]


# Profile counters of steps that run inside one logical node's execution but are operators of
# their own in the distributed plan: the executor records them under (part, id(node)) and the
# fragment builder gives those plan nodes that source (server/handlers/profile_tree.py).
FIRST_PHASE = "update serialize"    # a two-phase aggregate's per-tablet (first) phase
PHASE_EXCHANGE = "exchange"         # the exchange between an aggregate's two phases
PROBE_EXCHANGE = "exchange probe"   # a PARTITIONED join's probe side hashed to its instances
BUILD_EXCHANGE = "exchange build"   # a shuffled join's build side hashed to its instances


def olap_scans(plan: object) -> list[OlapScan]:
    """Every OlapScan of a logical plan (through `input`, `left` and `right`)."""
    out, stack = [], [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, OlapScan):
            out.append(node)
        stack += [c for c in (getattr(node, a, None) for a in ("input", "left", "right"))
                  if c is not None]
    return out
