"""The table function operator (Doris's TABLE FUNCTION NODE): LATERAL VIEW explode & co.

Vectorised "unnest": the function gives, for the batch, a list column (one list per input
row); `list_layout.parts` yields its offsets and flat values, the input rows are repeated by
`take` on each value's parent row, and the flat values become the new column. `outer` keeps a
row whose list is NULL or empty once, with NULL in the new columns. explode_map unnests a map
the same way (its entries are the flat values) into a key and a value column; explode_bitmap
and explode_json_object build their lists in `table_function_objects.py`.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions import EvalContext, ExpressionError, evaluate_many
from executor.expressions.arrays import array_range
from executor.expressions.list_layout import is_list, parts, positions
from executor.expressions.vectors import map_distinct
from executor.operators import table_function_objects as objects


def run_table_function(table: pa.Table, node, ctx: EvalContext) -> pa.Table:
    args = evaluate_many(node.args, table, ctx)
    lists = _lists(node.function, args)
    offsets, values, _ = parts(lists)
    counts = np.diff(offsets)
    if node.outer:
        counts = np.maximum(counts, 1)
    rows = np.repeat(np.arange(table.num_rows, dtype=np.int64), counts)
    out_offsets = np.concatenate([[0], np.cumsum(counts)])
    pos = positions(out_offsets)
    present = pos < np.diff(offsets)[rows]  # False only for an outer row without values
    index = np.where(present, offsets[:-1][rows] + pos, 0)
    out = table.take(pa.array(rows))
    if node.function in ("explode_map", "explode_json_object"):
        # the entries' keys and values (NULL: an outer row)
        entries = values.take(pa.array(index, mask=~present)) if len(values) else \
            pa.nulls(len(rows), values.type)
        columns = objects.json_object_columns(entries) \
            if node.function == "explode_json_object" else entries.flatten()
        for name, column in zip(node.names, columns):
            out = out.append_column(name, column)
        return out
    if len(values):
        flat = values.take(pa.array(index))
        if not present.all():
            flat = pc.if_else(pa.array(present), flat, pa.scalar(None, flat.type))
    else:
        flat = pa.nulls(len(rows), values.type if not pa.types.is_null(values.type)
                        else pa.int8())
    new = [flat]
    if node.function == "posexplode":
        new = [pa.array(pos, pa.int32(), mask=~present), flat]
    for name, column in zip(node.names, new):
        out = out.append_column(name, column)
    return out


def _lists(function: str, args: list[pa.Array]) -> pa.Array:
    if function in objects.LISTS:
        return objects.LISTS[function](args[0])
    if function == "explode_map":
        if not pa.types.is_map(args[0].type) and not pa.types.is_null(args[0].type):
            raise ExpressionError(f"explode_map requires a MAP argument, got {args[0].type}")
        return args[0] if pa.types.is_map(args[0].type) else \
            pa.nulls(len(args[0]), pa.map_(pa.string(), pa.int8()))
    if function in ("explode", "posexplode"):
        if not is_list(args[0].type) and not pa.types.is_null(args[0].type):
            raise ExpressionError(f"{function} requires an ARRAY argument, got {args[0].type}")
        return args[0] if is_list(args[0].type) else pa.nulls(len(args[0]), pa.list_(pa.int8()))
    if function == "explode_split":
        sep = args[1]
        text = args[0].cast(pa.string())
        if pc.count_distinct(sep).as_py() > 1:
            raise ExpressionError("explode_split: the separator must be a constant")
        separator = next((v for v in sep.to_pylist()[:1] if v is not None), None)
        if separator is None:
            return pa.nulls(len(text), pa.list_(pa.string()))
        if separator == "":
            return pc.split_pattern_regex(text, "(?=.)(?<=.)") if len(text) else \
                pa.array([], pa.list_(pa.string()))
        return pc.split_pattern(text, separator)
    if function.startswith("explode_json_array_"):
        return _json_array_lists(args[0], function.rsplit("_", 1)[1])
    return array_range(args[0])  # explode_numbers(n): 0 .. n-1


_JSON_ELEMENT = {"int": pa.int64(), "double": pa.float64(), "string": pa.string(),
                 "json": pa.string()}


def _json_array_lists(text: pa.Array, kind: str) -> pa.Array:
    """explode_json_array_<kind>: each JSON array text's elements as BIGINT (numbers
    truncated; anything else NULL), DOUBLE, VARCHAR (a string's value, other elements' JSON
    text) or JSON text; text that is not a JSON array gives no elements (one parse per
    distinct text)."""
    def elements(doc: str):
        try:
            parsed = json.loads(doc)
        except (ValueError, TypeError):
            return None
        if not isinstance(parsed, list):
            return None
        return [_element(v, kind) for v in parsed]
    return map_distinct(text.cast(pa.string()), elements, pa.list_(_JSON_ELEMENT[kind]))


def _element(v, kind: str):
    if v is None:
        return None
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    if kind == "int":
        return int(v) if number and abs(v) < 2 ** 63 else None
    if kind == "double":
        return float(v) if number else None
    if kind == "string" and isinstance(v, str):
        return v
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)
