"""A load's source rows made ready to write: derived columns, conversion, rejects, WHERE.

Shared by every load that reads text or typed source columns (Stream Load on the HTTP port,
Spark Load's executors in pipeline/): `prepare_rows` evaluates derived columns, converts every
column the load supplies with Doris's non-strict CAST, rejects rows as Doris does (strict-mode
conversion failures, over-long strings, NULL in NOT NULL, no partition, outside the load's
partitions), applies `where` (unselected rows, not counted as filtered) and returns the rows to
load with the counts the filter ratio needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.errors import DorisError
from catalog.partitions import partition_index
from executor.expressions import EvalContext, evaluate, evaluate_predicate
from executor.expressions.array_text import lost_elements
from executor.expressions.casts import cast_value
from executor.expressions.variant_text import to_variant
from server.http.load_options import StreamLoadOptions
from server.http.load_source import SourceRows
from server.http.merge_type import with_delete_sign, with_sequence_source
from storage.types import as_json, json_storage

_MAX_ERRORS_KEPT = 100


@dataclass
class LoadRows:
    rows: pa.Table                  # converted rows to load (selected, not rejected)
    total: int                      # source rows, bad lines included
    filtered: int                   # rejected rows (WHERE-unselected rows are not counted)
    unselected: int
    errors: list[str] = field(default_factory=list)  # first reasons, with the source line


def prepare_rows(table, src: SourceRows, opts: StreamLoadOptions, ctx: EvalContext) -> LoadRows:
    """The source rows converted to the table's types, rejected rows counted and dropped."""
    batch = src.table
    for name, derivation in opts.columns or []:
        if derivation is not None:
            batch = batch.append_column(name, evaluate(derivation, batch, ctx))
    batch = with_sequence_source(table, batch, opts)
    rejects = Rejects(batch.num_rows, src.errors)
    converted = convert_columns(table, batch, opts, rejects)
    data = pa.table(converted) if converted else pa.table({})
    if data.num_columns:
        data = with_delete_sign(data, batch, opts, ctx, rejects)  # merge_type DELETE / MERGE
    selected = np.ones(batch.num_rows, dtype=bool)
    if opts.where is not None:
        keep = evaluate_predicate(opts.where, data if converted else batch, ctx)
        selected = np.asarray(pc.fill_null(keep, False).to_numpy(zero_copy_only=False), dtype=bool)
    check_partitions(table, data, opts, rejects, batch)
    bad = rejects.mask & selected
    filtered = src.bad_lines + int(bad.sum())
    unselected = int((~selected).sum())
    total = batch.num_rows + src.bad_lines
    rows = data.filter(pa.array(selected & ~rejects.mask)) if data.num_columns else data
    return LoadRows(rows, total, filtered, unselected, rejects.errors)


class Rejects:
    """Rows filtered so far: a mask over the source rows and the first reasons."""

    def __init__(self, n: int, errors: list[str]):
        self.mask = np.zeros(n, dtype=bool)
        self.errors = list(errors)

    def add(self, bad: pa.Array | np.ndarray, reason, source: pa.Table) -> None:
        bad = np.asarray(pc.fill_null(bad, False).to_numpy(zero_copy_only=False), dtype=bool) \
            if isinstance(bad, (pa.Array, pa.ChunkedArray)) else bad
        new = bad & ~self.mask
        self.mask |= bad
        room = _MAX_ERRORS_KEPT - len(self.errors)
        for i in np.flatnonzero(new)[:max(room, 0)]:
            line = ",".join("\\N" if v is None else str(v) for v in source.slice(int(i), 1).to_pylist()[0].values())
            self.errors.append(f"Reason: {reason(int(i))}. src line [{line}];")


def convert_columns(table, batch: pa.Table, opts: StreamLoadOptions, rejects: Rejects) -> dict:
    """The table's columns the load supplies, converted to their types; bad rows rejected."""
    by_lower = {n.lower(): n for n in batch.column_names}
    out = {}
    for col in [*table.columns, *table.hidden_columns]:  # hidden: server/http/merge_type.py
        name = by_lower.get(col.name.lower())
        if name is None:
            continue
        src = batch.column(name).combine_chunks()
        target = col.type.arrow()
        value = to_variant(src) if col.type.is_variant else \
            src if src.type == target else cast_value(src, target)
        failed = pc.and_(pc.is_valid(src), pc.is_null(value))
        if col.type.is_array and len(src):  # strict mode also filters a lost element
            failed = pc.or_(failed, pa.array(lost_elements(src, value) & _mask(src)))
        if opts.strict_mode:
            rejects.add(failed, lambda i, c=col.name, s=src: (
                f"column({c}) value is incorrect while strict mode is true, src value is {s[i].as_py()}"), batch)
        elif col.type.is_json:  # text that is not JSON is a bad row in any mode (jsonb_p0)
            rejects.add(failed, lambda i, c=col.name, s=src: (
                f"column({c}) value is not a JSON document, src value is {s[i].as_py()}"), batch)
        if col.type.kind in ("CHAR", "VARCHAR"):
            too_long = pc.greater(pc.binary_length(value), col.type.length)
            rejects.add(too_long, lambda i, c=col.name, s=src, n=col.type.length: (
                f"column_name[{c}], the length of input is too long than schema. first 32 bytes of "
                f"input str: [{str(s[i].as_py())[:32]}] schema length: {n}; actual length: "
                f"{len(str(s[i].as_py()).encode())};"), batch)
        if not col.nullable:
            rejects.add(pc.is_null(value), lambda i, c=col.name: (
                f"null value for not null column, column={c}"), batch)
            value = as_json(pc.fill_null(json_storage(value), "null")) if col.type.is_json \
                else pc.fill_null(value, pa.scalar(_zero(col.type.arrow()), target))
        out[col.name] = value
    return out


def _mask(src: pa.Array) -> np.ndarray:
    return np.asarray(pc.is_valid(src).to_numpy(zero_copy_only=False), dtype=bool)


def _zero(t: pa.DataType) -> object:
    """A placeholder for rejected rows' NULLs in NOT NULL columns (those rows are dropped)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return ""
    if pa.types.is_list(t) or pa.types.is_map(t):
        return []
    if pa.types.is_struct(t):
        return {}
    if pa.types.is_boolean(t):
        return False
    if pa.types.is_date(t):
        return datetime(1970, 1, 1).date()
    if pa.types.is_timestamp(t):
        return datetime(1970, 1, 1)
    return 0


def target_partitions(table, opts: StreamLoadOptions) -> list:
    """The partitions rows are routed among: the table's, or with the `temporary_partitions`
    header its temporary ones (catalog/temp_partitions.py)."""
    if opts.temporary_partitions:
        return sorted(table.temp_partitions.values(), key=lambda p: p.partition_id)
    return table.sorted_partitions()


def check_partitions(table, data: pa.Table, opts: StreamLoadOptions, rejects: Rejects,
                      source: pa.Table) -> None:
    info = table.partition_info
    if info.kind == "UNPARTITIONED" or not all(c in data.column_names for c in info.columns):
        return
    if info.auto and not opts.partitions and not opts.temporary_partitions:
        return  # the load creates the partitions its rows need (catalog/auto_partition.py)
    parts = target_partitions(table, opts)
    index = partition_index(table, data, parts)
    rejects.add(pc.is_null(index), lambda i: "no partition for this tuple", source)
    if opts.partitions:
        wanted = {p.lower() for p in opts.partitions}
        unknown = wanted - {p.name.lower() for p in parts}
        if unknown:
            raise DorisError(f"Unknown partition: {sorted(unknown)[0]}")
        allowed = pa.array([i for i, p in enumerate(parts) if p.name.lower() in wanted], pa.int32())
        outside = pc.and_(pc.is_valid(index), pc.invert(pc.is_in(index, allowed)))
        rejects.add(outside, lambda i: "the row is not in the partitions given by the load", source)
