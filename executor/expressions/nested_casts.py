"""Converting MAP and STRUCT values: their children converted one level at a time.

Used by CAST and Stream Load (casts.py, non-strict: a child value that does not convert is
NULL, a map entry whose key does not is dropped) and by INSERT (catalog/values.py, strict: the
child conversion raises). Text is read first (nested_parse.py), then the same path runs.
A STRUCT converts field by field in order (Doris's StructType.canCastTo: same field count).
Every step is Arrow kernels over the flat children; no Python per row.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa

from executor.expressions.list_layout import nonnull, parts
from storage.types import DataType

Convert = Callable[[pa.Array, DataType], pa.Array]


def build_map(offsets: np.ndarray, keys: pa.Array, items: pa.Array,
              valid: np.ndarray | None = None) -> pa.MapArray:
    """A map array of `keys` / `items` cut at `offsets`, NULL where `valid` is False; entries
    whose key is NULL are dropped (Arrow's maps have none)."""
    if keys.null_count:
        keep = nonnull(keys)
        rows = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        lengths = np.bincount(rows[keep], minlength=len(offsets) - 1)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        keys, items = keys.filter(pa.array(keep)), items.filter(pa.array(keep))
    mask = None if valid is None or valid.all() else pa.array(~valid)
    return pa.MapArray.from_arrays(pa.array(offsets.astype(np.int32)), keys, items, mask=mask)


def convert_map(arr: pa.Array, dtype: DataType, convert: Convert) -> pa.MapArray:
    """A map array's keys and values converted to `dtype`'s by `convert`."""
    offsets, entries, valid = parts(arr)
    keys = convert(entries.field(0), dtype.map_key)
    items = convert(entries.field(1), dtype.map_value)
    return build_map(offsets, keys, items, valid)


def convert_struct(arr: pa.Array, dtype: DataType, convert: Convert) -> pa.StructArray:
    """A struct array's fields converted, in order, to `dtype`'s fields and names."""
    if arr.type.num_fields != len(dtype.fields):
        raise ValueError(f"{arr.type.num_fields} fields, the STRUCT has {len(dtype.fields)}")
    # flatten(): each field with the struct's NULL rows NULL too (under a NULL struct Arrow
    # may hold any child value, e.g. "" that a strict conversion would refuse)
    children = [convert(child, f.type) for child, f in zip(arr.flatten(), dtype.fields)]
    return struct_of(children, dtype, nonnull(arr))


def struct_of(children: list[pa.Array], dtype: DataType,
              valid: np.ndarray | None = None) -> pa.StructArray:
    fields = [pa.field(f.name, f.type.arrow()) for f in dtype.fields]
    mask = None if valid is None or valid.all() else pa.array(~valid)
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)


def is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)
