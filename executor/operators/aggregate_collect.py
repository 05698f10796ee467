"""Collecting aggregates finished from each group's values (Acero's `list` / `distinct` hash
kernels give one list per group, values in input order):

    collect_list(x[, k])   the non-NULL values, the first k            ARRAY<T>
    array_agg(x)           every value, NULLs kept                     ARRAY<T>
    collect_set(x[, k])    the distinct non-NULL values, the first k   ARRAY<T>
    topn(x, n)             `{"v":count,...}`: the n most frequent non-NULL values, most frequent
                           first (Doris's regression suite test_aggregate_all_functions,
                           select34: `{"10":2,"13":1}`); equal counts in ascending value order
                           (Doris's order among ties comes from its hash table)
    histogram(x[, b])      `{"num_buckets":N,"buckets":[{"lower":"v","upper":"v","ndv":d,
                           "count":c,"pre_sum":s},...]}`: Doris's equal-height buckets
                           (histogram_helpers build_histogram: at most b buckets (128), each
                           holding at most ceil(total / buckets) values unless a value alone
                           holds more; values as text, compact JSON)

Everything but histogram's bucket filling runs on the flat values with Arrow kernels and numpy;
the bucket filling walks each group's distinct values in order (greedy and sequential: a
Python loop over distinct values, not over rows).
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.list_layout import keep_values, nonnull, parts, positions

KERNEL = {"collect_list": "list", "array_agg": "list", "collect_set": "distinct",
          "topn": "list", "histogram": "list"}
DEFAULT_BUCKETS = 128


def finish(func: str, lists: pa.ChunkedArray | pa.Array, param: float | None) -> pa.Array:
    lists = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
    if func == "array_agg":
        return lists
    if func in ("collect_list", "collect_set"):
        return _limited(lists, None if param is None else int(param))
    if func == "topn":
        return topn(lists, int(param or 1))
    return histogram(lists, int(param) if param else DEFAULT_BUCKETS)


def _limited(lists: pa.Array, limit: int | None) -> pa.Array:
    """Non-NULL values of each list, at most `limit` of them (a group's list is never NULL)."""
    offsets, values, _ = parts(lists)
    keep = nonnull(values)
    out = keep_values(offsets, values, keep, np.ones(len(lists), dtype=bool))
    if limit is None:
        return out
    offsets, values, _ = parts(out)
    return keep_values(offsets, values, positions(offsets) < limit, np.ones(len(out), bool))


def _counted(lists: pa.Array) -> tuple[pa.Table, int]:
    """(group, v, count) of every distinct non-NULL value of every group, sorted by group then
    value; and the number of groups."""
    offsets, values, _ = parts(lists)
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), np.diff(offsets))
    keep = pa.array(nonnull(values))
    table = pa.table({"g": pa.array(rows), "v": values}).filter(keep)
    counts = table.group_by(["g", "v"], use_threads=False).aggregate([([], "count_all")])
    counts = counts.rename_columns(["g", "v", "count"])
    return counts.sort_by([("g", "ascending"), ("v", "ascending")]), len(lists)


def _text(values: pa.Array) -> pa.Array:
    """Values as Doris writes them in these JSON texts (numbers shortest, strings as they are)."""
    if pa.types.is_floating(values.type):
        as_int = pc.cast(values, pa.int64(), safe=False)
        whole = pc.and_(pc.equal(pc.cast(as_int, values.type), values), pc.is_finite(values))
        return pc.if_else(whole, pc.cast(as_int, pa.string()), pc.cast(values, pa.string()))
    if pa.types.is_boolean(values.type):
        return pc.if_else(values, "1", "0")
    return pc.cast(values, pa.string())


def _json_string(text: pa.Array) -> pa.Array:
    escaped = pc.replace_substring(pc.replace_substring(text, "\\", "\\\\"), '"', '\\"')
    return pc.binary_join_element_wise('"', escaped, '"', "")


def topn(lists: pa.Array, n: int) -> pa.Array:
    counts, groups = _counted(lists)
    order = pc.sort_indices(counts, sort_keys=[("g", "ascending"), ("count", "descending"),
                                               ("v", "ascending")])
    counts = counts.take(order)
    g = np.asarray(counts.column("g").to_numpy(), dtype=np.int64)
    sizes = np.bincount(g, minlength=groups) if len(g) else np.zeros(groups, np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    entries = pc.binary_join_element_wise(
        _json_string(_text(counts.column("v").combine_chunks())),
        pc.cast(counts.column("count").combine_chunks(), pa.string()), ":")
    kept = keep_values(offsets, entries, positions(offsets) < n, np.ones(groups, bool))
    joined = pc.binary_join(kept, ",")
    out = pc.binary_join_element_wise("{", joined, "}", "")
    return pc.if_else(pa.array(sizes > 0), out, pa.scalar(None, pa.string()))


def histogram(lists: pa.Array, max_buckets: int) -> pa.Array:
    counts, groups = _counted(lists)
    g = np.asarray(counts.column("g").to_numpy(), dtype=np.int64)
    texts = _text(counts.column("v").combine_chunks()).to_pylist()
    numbers = np.asarray(counts.column("count").to_numpy(), dtype=np.int64)
    bounds = np.searchsorted(g, np.arange(groups + 1))
    out = []
    for i in range(groups):
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        buckets = _buckets(texts[lo:hi], numbers[lo:hi].tolist(), max_buckets)
        out.append(json.dumps({"num_buckets": len(buckets), "buckets": buckets},
                              separators=(",", ":"), ensure_ascii=False))
    return pa.array(out, pa.string())


def _buckets(values: list[str], counts: list[int], max_buckets: int) -> list[dict]:
    """Doris's build_histogram over one group's distinct values (ascending) and counts."""
    if not values or max_buckets <= 0:
        return []
    num = min(len(values), max_buckets)
    cap = -(-sum(counts) // num)
    buckets: list[dict] = []
    ndv = in_bucket = cumulative = 0
    remaining = len(values)
    lower = values[0]
    for i, (value, count) in enumerate(zip(values, counts)):
        ndv += 1
        remaining -= 1
        in_bucket += count
        cumulative += count
        last = i + 1 == len(values)
        empty_left = num - len(buckets) - 1
        if not last and remaining > empty_left and in_bucket + counts[i + 1] <= cap:
            continue
        buckets.append({"lower": lower, "upper": value, "ndv": ndv, "count": in_bucket,
                        "pre_sum": cumulative - in_bucket})
        if not last:
            lower = values[i + 1]
        ndv = in_bucket = 0
    return buckets

