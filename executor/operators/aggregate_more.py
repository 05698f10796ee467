"""Finishing planner/more_aggregates.py's calls from each group's collected arguments (Acero's
`list` hash kernel, or `distinct` for kurtosis(DISTINCT x) and the like), vectorised over the
flattened lists: numpy bincounts per group for the moments, one Arrow group_by over
(group, value) for the frequency aggregates, `aggregate_lists.quantile` per level.

    kurt / skew            population moments of the non-NULL values: m4 / m2^2 - 3 and
                           m3 / m2^1.5, the central moments from the power sums (Doris's
                           regression suites aggregate_function_kurt / _skew); NULL without
                           values or when m2 is 0
    percentile_array       [percentile(x, p) for each p]; a group without values gives []
    count_by_enum          `[{"cbe":{"v":count,...},"notnull":n,"null":m,"all":a},...]`, one
                           object per argument; values as text, most frequent first, equal
                           counts in ascending value order (Doris's order comes from its hash
                           table and is not specified)
    topn_array             the n most frequent non-NULL values, most frequent first
    topn_weighted          the n values whose rows' weights sum largest (rows with a NULL value
                           or weight skipped); ties in ascending value order
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.list_layout import keep_values, positions
from executor.operators.aggregate_collect import _json_string, _text
from executor.operators.aggregate_lists import flatten_groups, quantile


def moment(lists, which: str) -> pa.Array:
    """Population excess kurtosis (`kurt`) or skewness (`skew`) of each group's values."""
    flat, parents, n = flatten_groups(lists)
    keep = np.asarray(pc.is_valid(flat).to_numpy(zero_copy_only=False), dtype=bool)
    x = np.asarray(pc.cast(flat.filter(pa.array(keep)), pa.float64()).to_numpy(),
                   dtype=np.float64)
    g = parents[keep]
    count = np.bincount(g, minlength=n).astype(np.float64)
    safe = np.maximum(count, 1)
    # from the power sums, as Doris's moments state keeps them (its regression values
    # carry the same rounding: kurt of (-10, 100, 1000) is -1.4999999999999991)
    mean, s2, s3, s4 = (np.bincount(g, weights=x ** k, minlength=n) / safe for k in range(1, 5))
    m2 = s2 - mean * mean
    valid = (count > 0) & (m2 > 0)
    m2 = np.where(valid, m2, 1.0)
    if which == "kurt":
        m4 = s4 - 4 * mean * s3 + 6 * mean * mean * s2 - 3 * mean ** 4
        result = m4 / (m2 * m2) - 3
    else:
        m3 = s3 - 3 * mean * s2 + 2 * mean ** 3
        result = m3 / m2 ** 1.5
    return pa.array(result, pa.float64(), mask=~valid)


def percentile_array(lists, levels: tuple[float, ...]) -> pa.Array:
    flat, parents, n = flatten_groups(lists)
    present = np.bincount(parents[np.asarray(pc.is_valid(flat).to_numpy(
        zero_copy_only=False), dtype=bool)], minlength=n) > 0
    columns = [np.asarray(quantile(lists, q).fill_null(0).to_numpy(zero_copy_only=False))
               for q in levels]
    values = np.stack(columns, axis=1)[present].ravel() if columns else np.zeros(0)
    sizes = np.where(present, len(levels), 0)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, pa.float64()))


def _ranked(values: pa.Array, parents: np.ndarray, weights: np.ndarray | None, n: int
            ) -> tuple[pa.Table, np.ndarray]:
    """(g, v, w) per distinct non-NULL value of each group, w its count or summed weight,
    ordered by group, w descending, value; and the offsets of each group's rows."""
    keep = np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False), dtype=bool)
    if weights is None:
        w = np.ones(len(values), dtype=np.int64)
    else:
        w = weights
        keep &= ~np.isnan(w) if w.dtype.kind == "f" else True
    table = pa.table({"g": pa.array(parents), "v": values, "w": pa.array(w)}).filter(
        pa.array(keep))
    sums = table.group_by(["g", "v"], use_threads=False).aggregate([("w", "sum")])
    sums = sums.rename_columns(["g", "v", "w"])
    sums = sums.sort_by([("g", "ascending"), ("w", "descending"), ("v", "ascending")])
    g = np.asarray(sums.column("g").to_numpy(), dtype=np.int64)
    sizes = np.bincount(g, minlength=n) if len(g) else np.zeros(n, np.int64)
    return sums, np.concatenate([[0], np.cumsum(sizes)])


def topn_array(lists, n_top: int, weights=None) -> pa.Array:
    flat, parents, n = flatten_groups(lists)
    w = None
    if weights is not None:
        wflat, _, _ = flatten_groups(weights)
        w = np.asarray(pc.cast(wflat, pa.float64()).fill_null(np.nan).to_numpy(),
                       dtype=np.float64)
    ranked, offsets = _ranked(flat, parents, w, n)
    values = ranked.column("v").combine_chunks()
    return keep_values(offsets, values, positions(offsets) < n_top, np.ones(n, bool))


def count_by_enum(columns: list) -> pa.Array:
    parts = []
    for lists in columns:
        flat, parents, n = flatten_groups(lists)
        total = np.bincount(parents, minlength=n)
        nonnull = np.bincount(parents[np.asarray(pc.is_valid(flat).to_numpy(
            zero_copy_only=False), dtype=bool)], minlength=n)
        texts = _text(flat) if len(flat) else pa.array([], pa.string())
        ranked, offsets = _ranked(texts, parents, None, n)
        entries = pc.binary_join_element_wise(
            _json_string(ranked.column("v").combine_chunks()),
            pc.cast(ranked.column("w").combine_chunks(), pa.string()), ":")
        joined = pc.binary_join(pa.ListArray.from_arrays(
            pa.array(offsets.astype(np.int32)), entries), ",")
        parts.append(pc.binary_join_element_wise(
            '{"cbe":{', joined, '},"notnull":', pa.array(nonnull).cast(pa.string()),
            ',"null":', pa.array(total - nonnull).cast(pa.string()),
            ',"all":', pa.array(total).cast(pa.string()), "}", ""))
    return pc.binary_join_element_wise("[", pc.binary_join_element_wise(*parts, ","), "]", "")


def finish(func: str, lists: list, param) -> pa.Array:
    """The result of `func` (kurt, skew, percentile_array, count_by_enum, topn_array,
    topn_weighted) from the collected lists of its column arguments."""
    if func in ("kurt", "skew"):
        return moment(lists[0], func)
    if func == "percentile_array":
        return percentile_array(lists[0], param)
    if func == "topn_array":
        return topn_array(lists[0], param)
    if func == "topn_weighted":
        return topn_array(lists[0], param, weights=lists[1])
    return count_by_enum(lists)


FUNCS = ("kurt", "skew", "percentile_array", "count_by_enum", "topn_array", "topn_weighted")
