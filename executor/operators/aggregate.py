"""Hash aggregation with pyarrow's grouped aggregate kernels, plus GROUPING SETS.

SUM widens as Doris does: integers to BIGINT (LARGEINT stays LARGEINT), DECIMAL(p,s) to
DECIMAL(38,s), FLOAT to DOUBLE; never sum in the column's own narrow type. AVG of integers is a
DOUBLE. A global aggregate (no keys) over no rows gives one row: count 0, others NULL.

The keys are grouped as int64 codes where their types allow (`group_keys.py`). SUM and AVG of a
DECIMAL whose values fit in int64 (`decimal_int64`) sum the int64 unscaled values - split into
two 32-bit halves when the row count times the largest value could pass 2^63 - and write the
DECIMAL(38, s) sum, or round the AVG (half away from zero, at scale max(s, 4)) as Arrow's
decimal mean does; MIN/MAX of such a DECIMAL compare the int64 values.

Calls pyarrow has no kernel for are finished from a list-valued kernel, vectorised:
SUM/AVG(DISTINCT) from `distinct` lists, GROUP_CONCAT from `list` (or `distinct`) lists, and
COUNT(DISTINCT a, b) counts distinct length-prefixed concatenations of the arguments. GROUPING
SETS run one aggregation per set and concatenate them, with NULL for the keys a set does not
group by and GROUPING_ID computed per set.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.errors import ExpressionError
from storage.types import from_arrow
from executor.expressions import decimal_int64
from executor.expressions.decimal_int64 import Unscaled
from executor.expressions.casts import cast_value
from executor.operators import aggregate_collect, aggregate_more, aggregate_numpy
from executor.operators.aggregate_numpy import decimal_from_totals, round_div, totals_of
from executor.operators.group_keys import KeyCodes
from executor.operators.sort import sort_indices
from executor.operators.aggregate_lists import quantile, value_at_extreme
from executor.operators.aggregate_objects import LIST_FINISH
from executor.operators.window_funnel import window_funnel
from executor.operators.sequence_match import sequence_match

_KERNEL = {"sum_distinct": "distinct", "mean_distinct": "distinct", "group_concat": "list",
           "bitmap_union": "list", "bitmap_union_count": "list", "hll_union": "list",
           "hll_union_agg": "list", "group_bit_or": "list", "group_bit_and": "list",
           "group_bit_xor": "list", "group_bitmap_xor": "list"}
_INT64_MAX = 2**63


class AggInput:
    """The aggregate's input columns by name: Arrow arrays, or `Unscaled` DECIMALs (as the
    arguments' Project leaves them, see executor/run.py), and the row count."""

    def __init__(self, columns: dict, num_rows: int):
        # A NULL literal argument (`COUNT(DISTINCT NULL)`) has Arrow's null type, which the
        # grouped kernels do not take: an all-NULL TINYINT column means the same.
        self.columns = {n: v.cast(pa.int8()) if not isinstance(v, Unscaled)
                        and pa.types.is_null(v.type) else v for n, v in columns.items()}
        self.num_rows = num_rows

    @classmethod
    def of(cls, table: pa.Table) -> AggInput:
        return cls({n: table.column(n) for n in table.column_names}, table.num_rows)

    def raw(self, name: str):
        return self.columns[name]

    def column(self, name: str):
        value = self.columns[name]
        return value.to_arrow() if isinstance(value, Unscaled) else value

    def table(self) -> pa.Table:
        return pa.table({n: self.column(n) for n in self.columns}) if self.columns else \
            pa.table({"__rows": pa.nulls(self.num_rows, pa.bool_())})

    @property
    def nbytes(self) -> int:
        return sum(8 * len(v) if isinstance(v, Unscaled) else v.nbytes
                   for v in self.columns.values())


def _widen(arr: pa.ChunkedArray, func: str) -> pa.ChunkedArray:
    t = arr.type
    base = func.replace("_distinct", "")
    if base == "sum":
        if pa.types.is_integer(t) or pa.types.is_boolean(t):
            return arr.cast(pa.int64())
        if pa.types.is_decimal(t):
            target = pa.decimal128(38, t.scale)
            same_bytes = decimal_int64.retyped(arr, target)
            return same_bytes if same_bytes is not None else arr.cast(target)
        if pa.types.is_floating(t):
            return arr.cast(pa.float64())
    if base in ("mean", "stddev", "stddev_samp", "variance", "variance_samp") and (
            pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_floating(t)):
        return arr.cast(pa.float64(), safe=False)  # BIGINT beyond 2^53: the nearest double
    if base in ("sum", "mean", "stddev", "stddev_samp", "variance", "variance_samp") and (
            pa.types.is_string(t) or pa.types.is_large_string(t)):
        return cast_value(arr, pa.float64())  # Doris casts text to DOUBLE (not a number: NULL)
    if base == "mean" and pa.types.is_decimal(t):
        # Doris: AVG(DECIMAL(p,s)) keeps a decimal with at least 4 fractional digits.
        target = pa.decimal128(38, max(t.scale, 4))
        rescaled = decimal_int64.retyped(arr, target)
        return rescaled if rescaled is not None else arr.cast(target)
    return arr


def _multi_key(inp: AggInput, names: list[str]) -> pa.ChunkedArray:
    """One string per row that is equal iff all arguments are (NULL if any argument is)."""
    parts = []
    for n in names:
        text = pc.cast(inp.column(n), pa.string())
        parts += [pc.cast(pc.utf8_length(text), pa.string()), pa.scalar(":"), text]
    return pc.binary_join_element_wise(*parts, "")


class _Specs:
    """The Acero source columns and aggregation specs of one aggregation; equal requests
    (the same kernel over the same input) share one spec."""

    def __init__(self) -> None:
        self.columns: dict[str, object] = {}
        self.specs: list[tuple] = []
        self.names: list[str] = []  # the result column of each spec
        self._index: dict[tuple, int] = {}

    def add(self, key: tuple, column: Callable[[], object] | None, func: str, opts=None) -> int:
        """The result index of `func` over the column `column()` builds (None: count_all)."""
        found = self._index.get(key)
        if found is not None:
            return found
        if column is None:
            self.specs.append(([], func))
            self.names.append(func)
        else:
            name = f"__in{len(self.specs)}"
            self.columns[name] = column()
            self.specs.append((name, func, opts) if opts else (name, func))
            self.names.append(f"{name}_{func}")
        self._index[key] = len(self.specs) - 1
        return self._index[key]


def _int64_array(values: np.ndarray, valid: np.ndarray | None) -> pa.Array:
    validity = None if valid is None else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(pa.int64(), len(values),
                                 [validity, pa.py_buffer(np.ascontiguousarray(values))])


def _exact_sum(specs: _Specs, name: str, u: Unscaled, n: int) -> list[int]:
    """Result indexes of the int64 sums whose total is the exact sum of `u`: one sum, or the
    sums of the high and low 32-bit halves when the total could pass int64."""
    if u.bound * max(n, 1) < _INT64_MAX:
        return [specs.add((name, "sum64"), lambda: _int64_array(u.values, u.valid), "sum")]
    return [specs.add((name, "sum_high"), lambda: _int64_array(u.values >> 32, u.valid), "sum"),
            specs.add((name, "sum_low"), lambda: _int64_array(u.values & 0xFFFFFFFF, u.valid),
                      "sum")]


def _count(specs: _Specs, name: str, u: Unscaled) -> int:
    if u.valid is None:
        return specs.add(("count_all",), None, "count_all")
    return specs.add((name, "count"), lambda: _int64_array(u.values, u.valid), "count",
                     pc.CountOptions(mode="only_valid"))


def _int64_call(specs: _Specs, call, inp: AggInput):
    """The finisher of SUM/AVG/MIN/MAX over a DECIMAL held as int64 (`Unscaled`), or of AVG
    over a DECIMAL column; None for other calls."""
    arg = inp.raw(call.arg) if call.func in ("sum", "mean", "min", "max") else None
    if isinstance(arg, Unscaled):
        t, n = arg.type, inp.num_rows
        if call.func in ("min", "max"):
            i = specs.add((call.arg, call.func), lambda: _int64_array(arg.values, arg.valid),
                          call.func)
            return lambda res: decimal_from_totals(*totals_of([res[i]]), t)
        sums = _exact_sum(specs, call.arg, arg, n)
        count = _count(specs, call.arg, arg) if call.func == "mean" else None
    elif call.func == "mean" and pa.types.is_decimal128(arg.type):
        # The exact DECIMAL(38, s) sum (as SUM computes it) and the count; rounded below.
        t = arg.type
        sums = [specs.add((call.arg, "sum"), lambda: _widen(arg, "sum"), "sum")]
        count = specs.add((call.arg, "count"), lambda: arg, "count",
                          pc.CountOptions(mode="only_valid"))
    else:
        return None
    if call.func == "sum":
        return lambda res: decimal_from_totals(*totals_of([res[i] for i in sums]),
                                                pa.decimal128(38, t.scale))
    out = pa.decimal128(38, max(t.scale, 4))

    def mean(res):
        totals, valid = totals_of([res[i] for i in sums])
        counts = np.asarray(res[count].fill_null(0))
        valid = valid & (counts > 0)
        return decimal_from_totals(round_div(totals, counts, valid, 10 ** (out.scale - t.scale)),
                                    valid, out)
    return mean


def _arrow_call(specs: _Specs, call, inp: AggInput, i: int):
    """The finisher of a call computed by an Acero kernel on the Arrow column."""
    if call.func == "count_all":
        j = specs.add(("count_all",), None, "count_all")
        return lambda res: res[j]
    if call.func == "count_distinct_multi":
        j = specs.add((tuple(call.args), "count_distinct_multi"),
                      lambda: _multi_key(inp, call.args), "count_distinct",
                      pc.CountOptions(mode="only_valid"))
        return lambda res: res[j]
    if call.func == "percentile":
        j = specs.add((call.arg, "values"), lambda: inp.column(call.arg), "list")
        return lambda res: quantile(res[j], call.param)
    if call.func in ("sequence_match", "sequence_count"):
        ts, bits = call.args
        jt = specs.add((ts, "values"), lambda: inp.column(ts), "list")
        jb = specs.add((bits, "values"), lambda: inp.column(bits), "list")
        pattern, conds, _ = call.param
        return lambda res: sequence_match(res[jt], res[jb], pattern, conds,
                                          call.func == "sequence_count")
    if call.func == "window_funnel":
        ts, bits = call.args
        jt = specs.add((ts, "values"), lambda: inp.column(ts), "list")
        jb = specs.add((bits, "values"), lambda: inp.column(bits), "list")
        return lambda res: window_funnel(res[jt], res[jb], *call.param[:3])
    if call.func in aggregate_collect.KERNEL:  # collect_list, collect_set, topn, histogram, ...
        kernel = aggregate_collect.KERNEL[call.func]
        j = specs.add((call.arg, "values" if kernel == "list" else "distinct"),
                      lambda: inp.column(call.arg), kernel)
        return lambda res: aggregate_collect.finish(call.func, res[j], call.param)
    if call.func in aggregate_more.FUNCS:  # kurt, skew, percentile_array, count_by_enum, ...
        kernel = "distinct" if call.distinct else "list"
        js = [specs.add((a, "values" if kernel == "list" else "distinct"),
                        lambda a=a: inp.column(a), kernel) for a in call.args]
        return lambda res: aggregate_more.finish(call.func, [res[j] for j in js], call.param[0])
    if call.func in ("max_by", "min_by"):
        key, by = call.args
        jk = specs.add((key, "values"), lambda: inp.column(key), "list")
        jb = specs.add((by, "values"), lambda: inp.column(by), "list")
        return lambda res: value_at_extreme(res[jk], res[jb], call.func == "max_by")
    func = _KERNEL.get(call.func, call.func)
    if call.func == "group_concat":
        func = "distinct" if call.distinct else "list"
    opts = pc.CountOptions(mode="only_valid") if func in ("count", "count_distinct") else None
    if func in ("stddev", "variance"):
        opts = pc.VarianceOptions(ddof=0)
    elif func in ("stddev_samp", "variance_samp"):
        func = func.replace("_samp", "")
        opts = pc.VarianceOptions(ddof=1)

    def column():
        raw = inp.column(call.arg)
        if call.func in _NUMERIC_ONLY:
            _check_numeric(raw.type, call)
        arr = _widen(raw, call.func)
        return pc.cast(arr, pa.string()) if call.func == "group_concat" else arr
    j = specs.add((call.arg, call.func, call.distinct, i if call.func == "group_concat" else 0),
                  column, func, opts)
    return lambda res: _finish(res[j], call)


# aggregates over numbers (strings and booleans are cast): Doris refuses a DATE, DATETIME,
# ARRAY, MAP, STRUCT, JSON, BITMAP or HLL argument at analysis
_NUMERIC_ONLY = {"sum": "sum", "sum_distinct": "sum", "mean": "avg", "mean_distinct": "avg",
                 "stddev": "stddev", "stddev_samp": "stddev_samp", "variance": "variance",
                 "variance_samp": "variance_samp"}


def _check_numeric(t: pa.DataType, call) -> None:
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) \
            or pa.types.is_boolean(t) or pa.types.is_null(t) or pa.types.is_string(t) \
            or pa.types.is_large_string(t):
        return
    try:
        type_name = from_arrow(t).sql()
    except (ValueError, KeyError, TypeError):
        type_name = str(t)
    raise ExpressionError(f"{_NUMERIC_ONLY[call.func]} requires a numeric parameter, not "
                          f"{type_name}")


def _order_of(call) -> tuple:
    return tuple((k.name, k.descending, k.nulls_first) for k in call.order) \
        if call.func == "group_concat" and call.order else ()


def _aggregate_once(inp: AggInput, group_names: list[str], calls: list) -> pa.Table:
    orders = list(dict.fromkeys(o for o in map(_order_of, calls) if o))
    if len(orders) > 1:  # group_concats ordered differently: one pass per ORDER BY
        return _aggregate_per_order(inp, group_names, calls, orders)
    if orders:
        # Lists keep input order: sort by the ORDER BY of group_concat beforehand.
        first = next(c for c in calls if _order_of(c))
        table = inp.table()
        inp = AggInput.of(table.take(sort_indices(table, first.order)))
    # A lone sorted key is grouped by runs on its own values (no key code to pack); whether
    # numpy covers the calls does not depend on the grouping, so a refusal goes to Acero.
    runs = aggregate_numpy.runs_of_sorted_key(inp.raw(group_names[0])) \
        if len(group_names) == 1 else None
    if runs:
        codes, groups = None, runs[0]
    else:
        codes = KeyCodes([inp.raw(n) for n in group_names])
        groups = aggregate_numpy.groups_of(codes.packed, codes.radix) \
            if group_names and codes.packed is not None else None
    if groups is not None:
        out = aggregate_numpy.aggregate(groups, [c for c in calls if c.func != "grouping_id"], inp)
        if out is not None:
            keys = [runs[1]] if runs else codes.decode([pa.array(groups.keys)])
            return pa.table(dict(zip(group_names, keys)) | out)
    codes = codes or KeyCodes([inp.raw(n) for n in group_names])
    specs = _Specs()
    finishers = []
    for i, call in enumerate(calls):
        if call.func == "grouping_id":
            continue
        finish = _int64_call(specs, call, inp)
        finishers.append((call, finish or _arrow_call(specs, call, inp, i)))
    if not specs.specs:
        specs.add(("count_all",), None, "count_all")  # keeps the row count (one row, no keys)
    keys = [f"__key{j}" for j in range(len(codes.columns))]
    columns = dict(zip(keys, codes.columns)) | specs.columns
    src = pa.table(columns) if columns else pa.table({"__rows": pa.nulls(inp.num_rows, pa.bool_())})
    if not keys and any(spec[1] in ("distinct", "list") for spec in specs.specs):
        # "distinct" and "list" exist only as hash kernels: group by one constant key.
        src = src.append_column("__all", pa.repeat(pa.scalar(0, pa.int8()), src.num_rows))
        result = src.group_by(["__all"], use_threads=False).aggregate(specs.specs)
        if result.num_rows == 0:
            result = _empty_input_row(result)
    else:
        result = src.group_by(keys, use_threads=False).aggregate(specs.specs)
    res = [result.column(name) for name in specs.names]
    out = dict(zip(group_names, codes.decode([result.column(k) for k in keys])))
    for call, finish in finishers:
        out[call.output] = finish(res)
    if not out:
        out["__rows"] = pa.nulls(result.num_rows, pa.bool_())  # rows without columns
    return pa.table(out)


def _aggregate_per_order(inp: AggInput, group_names: list[str], calls: list,
                         orders: list[tuple]) -> pa.Table:
    """`group_concat(... ORDER BY a)` and `group_concat(... ORDER BY b)` in one query: the calls
    of each ORDER BY aggregate their own sorted input (the first pass also takes every call
    without one), and each later pass's rows are matched to the first's by their group keys
    (a walk over the groups, not the rows)."""
    passes = [[c for c in calls if _order_of(c) in (orders[0], ())]] + \
        [[c for c in calls if _order_of(c) == o] for o in orders[1:]]
    out = _aggregate_once(inp, group_names, passes[0])
    if group_names:
        keys = list(zip(*(out.column(n).to_pylist() for n in group_names)))
        position = {k: i for i, k in enumerate(keys)}
    for part_calls in passes[1:]:
        part = _aggregate_once(inp, group_names, part_calls)
        if group_names:
            rows = list(zip(*(part.column(n).to_pylist() for n in group_names)))
            at = np.empty(len(keys), dtype=np.int64)
            at[[position[k] for k in rows]] = np.arange(len(rows))
            part = part.take(pa.array(at))
        for call in part_calls:
            out = out.append_column(call.output, part.column(call.output))
    return out


def _empty_input_row(result: pa.Table) -> pa.Table:
    """Aggregating no rows without keys still yields one row (empty lists, zero counts)."""
    cols = {}
    for f in result.schema:
        if pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
            cols[f.name] = pa.array([[]], f.type)
        elif f.name == "count_all" or f.name.endswith(("_count", "_count_distinct")):
            cols[f.name] = pa.array([0], f.type)
        else:
            cols[f.name] = pa.nulls(1, f.type)
    return pa.table(cols)


def _finish(col: pa.ChunkedArray, call) -> pa.Array | pa.ChunkedArray:
    if call.func in LIST_FINISH:
        return LIST_FINISH[call.func](col.to_pylist())
    if call.func not in ("sum_distinct", "mean_distinct", "group_concat"):
        return col
    lists = col.combine_chunks()
    n = len(lists)
    flat = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists)
    keep = pc.is_valid(flat)
    flat, parents = flat.filter(keep), np.asarray(parents.filter(keep).to_numpy(), dtype=np.int64)
    counts = np.bincount(parents, minlength=n)
    if call.func == "group_concat":
        if call.separator is None:
            return pa.nulls(n, pa.string())
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
        joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), flat), call.separator)
        return pc.if_else(pa.array(counts > 0), joined, pa.nulls(n, pa.string()))
    sums = pa.table({"p": pa.array(parents), "v": flat}).group_by("p").aggregate(
        [("v", "sum" if call.func == "sum_distinct" else "mean")])
    if sums.num_rows == 0:
        return pa.nulls(n, sums.schema.field(1).type)
    position = np.full(n, -1, dtype=np.int64)
    position[np.asarray(sums.column("p").to_numpy())] = np.arange(sums.num_rows)
    values = sums.column(1).combine_chunks().take(pa.array(np.where(position >= 0, position, 0)))
    return pc.if_else(pa.array(position >= 0), values, pa.nulls(n, values.type))


def run_aggregate(source: pa.Table | AggInput, group_names: list[str], calls: list,
                  grouping_sets: list[list[str]] | None = None) -> pa.Table:
    inp = source if isinstance(source, AggInput) else AggInput.of(source)
    order = group_names + [c.output for c in calls]
    if grouping_sets is None:
        return _aggregate_once(inp, group_names, calls).select(order)
    parts = []
    for keys in grouping_sets:
        part = _aggregate_once(inp, keys, calls)
        for name in group_names:
            if name not in keys:
                part = part.append_column(name, pa.nulls(part.num_rows, inp.column(name).type))
        for call in calls:
            if call.func == "grouping_id":
                gid = 0
                for k in call.args:
                    gid = gid * 2 + (0 if k in keys else 1)
                part = part.append_column(call.output, pa.array([gid] * part.num_rows, pa.int64()))
        parts.append(part.select(order))
    return pa.concat_tables(parts)
