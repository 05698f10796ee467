"""Aggregation straight over a scan, tablet by tablet in the pool, so that both cores work.

`Aggregate(Project(Filter*(OlapScan)))` - what planner/aggregation.py gives a GROUP BY over one
table - runs the way Doris runs it (update serialize in each scan instance, merge finalize): each
tablet (or scan unit of small tablets, executor/operators/scan.py) is read, filtered, projected
(DECIMALs stay int64, see project_for_aggregate) and aggregated by a pool thread; the query's thread then combines the per-tablet results:

- when the grouping keys include the table's hash distribution columns and the scan reads one
  partition, all the rows of a group are in one tablet: each tablet's aggregate is final and the
  results are concatenated;
- otherwise each tablet gives partial states (COUNT: a count, SUM: a sum, AVG: a sum and a
  count, MIN/MAX: themselves) and one more aggregation merges them (SUM of the counts and sums,
  MIN of the MINs, ...), then AVG divides, rounding as the one-pass AVG does. Aggregates whose
  partial states would not merge into exactly the one-pass result (DISTINCT, GROUP_CONCAT,
  variances; sums of floats, which would add in another order) leave the query to the one-pass
  path (None).

Either way the groups come out in the one-pass order (first appearance, tablets in scan order):
a tablet's groups are in first-appearance order within the tablet, and the merge keeps the order
of the concatenated partial results.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.env import ExecEnv
from executor.expressions import decimal_int64
from executor.expressions import ExpressionError, infer_type
from executor.operators.aggregate import AggInput, run_aggregate
from executor.operators.aggregate_numpy import decimal_from_totals, round_div, totals_of
from executor.operators.filter import run_filter
from executor.operators.project import project_for_aggregate
from executor.operators.scan import read_unit, scan_schema, scan_units
from planner import logical as L

# A tablet whose partial aggregate keeps more than this share of its rows (sampled on the first
# tablet of at least SAMPLE_ROWS rows) makes the later tablets pass their rows on as states.
REDUCTION = 0.5
SAMPLE_ROWS = 10_000


def run_scan_aggregate(node: L.Aggregate, env: ExecEnv, check_memory) -> pa.Table | None:
    """The aggregate computed tablet by tablet, or None when its shape does not allow it."""
    project = node.input
    if not isinstance(project, L.Project) or node.grouping_sets is not None:
        return None
    filters, scan = [], project.input
    while isinstance(scan, L.Filter):
        filters.append(scan)
        scan = scan.input
    if not isinstance(scan, L.OlapScan) or len(scan.tablets) < 2:
        return None
    schema = scan_schema(scan)
    if _one_tablet_per_group(node, project, scan):
        unit_calls, finish = node.calls, None
    else:
        try:
            types = {n: infer_type(e, schema, env.eval_ctx)
                     for e, n in zip(project.exprs, project.names)}
        except ExpressionError:
            return None  # the one-pass path reports it with the data
        split = split_calls(node, types)
        if split is None:
            return None
        unit_calls, finish = split

    def unit(tablets: list[L.ScanTablet]):
        env.check_cancelled()
        began = time.perf_counter()
        table, stats, _ = read_unit(scan, tablets, env, schema)
        check_memory(table, env)
        rows = [table.num_rows]
        for f in reversed(filters):
            if not f.pushed:
                table = run_filter(table, f.condition, env.eval_ctx)
            rows.append(table.num_rows)
        inp = project_for_aggregate(table, project.exprs, project.names, env.eval_ctx)
        read = time.perf_counter()
        if finish is not None and few_groups[0] is False:
            part = as_states(inp, node.group_names, unit_calls)
        else:
            part = run_aggregate(inp, node.group_names, unit_calls)
            if finish is not None and inp.num_rows >= SAMPLE_ROWS:
                few_groups[0] = part.num_rows <= inp.num_rows * REDUCTION
        timing[0] += read - began
        timing[1] += time.perf_counter() - read
        return part, stats, rows

    few_groups: list[bool | None] = [None]  # set by the first large tablet aggregated
    timing = [0.0, 0.0]  # seconds the units spent reading (scan, filters, project), aggregating

    start = time.perf_counter()
    results = list(env.pool.map(unit, scan_units(scan, env)))
    for _, stats, _ in results:
        env.scan_stats.merge(stats)
    wall = time.perf_counter() - start
    _record(env, [scan, *reversed(filters), project], [r for _, _, r in results], wall, timing)
    env.record(node, sum(r.num_rows for r, _, _ in results), wall, part=L.FIRST_PHASE)
    start = time.perf_counter()
    parts = pa.concat_tables([r for r, _, _ in results])
    env.record(node, parts.num_rows, time.perf_counter() - start, part=L.PHASE_EXCHANGE)
    return parts if finish is None else finish(parts)


def as_states(inp: AggInput, keys: list[str], calls: list[L.AggCall]) -> pa.Table:
    """Each row as its own partial state (as `run_aggregate(inp, keys, calls)` would give it
    for a group of that one row): what a tablet hands to the merge when aggregating it would
    hardly reduce its rows (Doris's streaming pre-aggregation passes rows through likewise)."""
    n = inp.num_rows
    out = {k: inp.column(k) for k in keys}
    for call in calls:
        if call.func == "count_all":
            out[call.output] = pa.repeat(pa.scalar(1, pa.int64()), n)
            continue
        value = inp.column(call.arg)
        t = value.type
        if call.func == "count":
            out[call.output] = pc.cast(pc.is_valid(value), pa.int64())
        elif call.func == "sum" and pa.types.is_decimal(t):
            target = pa.decimal128(38, t.scale)
            out[call.output] = decimal_int64.retyped(value, target) or value.cast(target)
        elif call.func == "sum":
            out[call.output] = value.cast(pa.int64())
        else:  # min, max
            out[call.output] = value
    return pa.table(out)


def _record(env: ExecEnv, nodes: list, rows: list[list[int]], wall: float,
            timing: list[float]) -> None:
    """Profile: rows per node as the one-pass plan counts them (project = last filter); the
    units' wall time, shared by the readers (scan, filters, project, inclusive of each other)
    and the first phase (inclusive of them) in the proportion of the units' own seconds."""
    if env.profile is None:
        return
    busy = timing[0] + timing[1]
    reading = wall * timing[0] / busy if busy > 0 else wall
    for i, n in enumerate(nodes):
        env.record(n, sum(r[min(i, len(r) - 1)] for r in rows), reading)


def _one_tablet_per_group(node: L.Aggregate, project: L.Project, scan: L.OlapScan) -> bool:
    """True when the grouping keys include every hash distribution column (as they are read)
    and the tablets are the buckets of one partition."""
    dist = scan.dist_columns
    if not dist or any(c not in scan.columns for c in dist) \
            or len({t.partition_id for t in scan.tablets}) != 1:
        return False
    keys = {e.name for e, n in zip(project.exprs, project.names)
            if isinstance(e, exp.Column) and n in node.group_names}
    return all(scan.output[scan.columns.index(c)] in keys for c in dist)


def split_calls(node: L.Aggregate, types: dict[str, pa.DataType]):
    """(per-tablet calls, merge-and-finish function), or None if a call does not split."""
    unit: list[L.AggCall] = []
    merge: list[L.AggCall] = []
    means: list[tuple[L.AggCall, str, str, pa.DataType]] = []
    for i, call in enumerate(node.calls):
        t = types.get(call.arg)
        state = f"__p{i}"
        if call.func in ("count_all", "count"):
            unit.append(replace(call, output=state))
            merge.append(L.AggCall("sum", state, call.output))
        elif call.func in ("min", "max"):
            unit.append(replace(call, output=state))
            merge.append(L.AggCall(call.func, state, call.output))
        elif call.func == "sum" and (pa.types.is_integer(t) or pa.types.is_boolean(t)
                                     or pa.types.is_decimal(t)):
            unit.append(replace(call, output=state))
            merge.append(L.AggCall("sum", state, call.output))
        elif call.func == "mean" and pa.types.is_decimal(t):
            count = f"__c{i}"
            unit += [L.AggCall("sum", call.arg, state), L.AggCall("count", call.arg, count)]
            merge += [L.AggCall("sum", state, state), L.AggCall("sum", count, count)]
            means.append((call, state, count, t))
        else:
            return None

    def finish(parts: pa.Table) -> pa.Table:
        merged = run_aggregate(parts, node.group_names, merge)
        for call, state, count, t in means:
            merged = merged.append_column(call.output, _mean(merged.column(state),
                                                             merged.column(count), t))
        return merged.select(node.group_names + [c.output for c in node.calls])
    return unit, finish


def _mean(sums: pa.ChunkedArray, counts: pa.ChunkedArray, t: pa.DataType) -> pa.Array:
    """AVG(DECIMAL(p, s)) from the merged DECIMAL(38, s) sums and counts (aggregate.py)."""
    totals, valid = totals_of([sums])
    n = np.asarray(counts.fill_null(0))
    valid = valid & (n > 0)
    out = pa.decimal128(38, max(t.scale, 4))
    return decimal_from_totals(round_div(totals, n, valid, 10 ** (out.scale - t.scale)), valid, out)
