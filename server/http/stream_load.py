"""Stream Load: `PUT /api/{db}/{table}/_stream_load` with a CSV or JSON body, one transaction.

The life of a stream load (`run_stream_load`):
 1. the headers become `StreamLoadOptions`; a label already used by the database is refused;
 2. the body becomes text columns (`load_source.read_source`), lines with the wrong number of
    fields counted as filtered;
 3. derived columns (`columns: k1, tmp, v = tmp * 2`) are evaluated, then every table column
    the load supplies is converted to its type with Doris's non-strict CAST: a value that does
    not convert is NULL, and the row is filtered when `strict_mode` is true; rows with an
    over-long string, a NULL in a NOT NULL column, or no partition are filtered; `where`
    leaves rows unselected (not counted as filtered);
 4. when filtered / (total - unselected) exceeds `max_filter_ratio` the load fails and writes
    nothing; otherwise the remaining rows go through `catalog.load.load_table` (routing,
    buckets, rowsets, one journaled publish that also takes the label), or, with the header
    `group_commit: sync_mode | async_mode` and no label, join the table's group commit
    (catalog/group_commit.py; the reply carries the group's Label and TxnId, GroupCommit true).
The reply is Doris's JSON (TxnId, Label, Status, Message, NumberTotalRows, NumberLoadedRows,
NumberFilteredRows, NumberUnselectedRows, LoadBytes, LoadTimeMs, ...), with an ErrorURL listing
the rejected rows when there are any.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.errors import DorisError, LabelAlreadyUsed
from catalog.load import load_table
from catalog.partitions import partition_index
from executor.expressions import EvalContext, evaluate, evaluate_predicate
from executor.expressions.casts import cast_value
from server.http.error_log import ErrorLogStore
from server.http.load_options import StreamLoadOptions
from server.http.load_source import read_source

_MAX_ERRORS_KEPT = 100


class _Rejects:
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


def run_stream_load(catalog, errors: ErrorLogStore, db: str, table_name: str,
                    headers: dict[str, str], body: bytes, time_zone: str,
                    group_commit=None) -> dict:
    started = time.monotonic()
    headers = {k.lower(): v for k, v in headers.items()}
    reply = {"TxnId": -1, "Label": headers.get("label") or str(uuid.uuid4()),
             "Comment": "", "TwoPhaseCommit": "false", "Status": "Fail", "Message": "",
             "NumberTotalRows": 0, "NumberLoadedRows": 0, "NumberFilteredRows": 0,
             "NumberUnselectedRows": 0, "LoadBytes": len(body), "LoadTimeMs": 0,
             "BeginTxnTimeMs": 0, "StreamLoadPutTimeMs": 0, "ReadDataTimeMs": 0,
             "WriteDataTimeMs": 0, "CommitAndPublishTimeMs": 0}
    try:
        opts = StreamLoadOptions.from_headers(headers)
        grouped = opts.group_commit != "off_mode" and opts.label is None and \
            group_commit is not None  # a labelled load is never grouped (Doris)
        opts.label = reply["Label"]
        _load(catalog, errors, db, table_name, opts, body, time_zone, reply,
              group_commit if grouped else None)
    except LabelAlreadyUsed as e:
        reply.update(Status="Label Already Exists", ExistingJobStatus="FINISHED",
                     Message=e.client_message())
    except DorisError as e:
        reply.update(Status="Fail", Message=e.client_message())
    reply["LoadTimeMs"] = int((time.monotonic() - started) * 1000)
    return reply


def _load(catalog, errors: ErrorLogStore, db: str, table_name: str, opts: StreamLoadOptions,
          body: bytes, time_zone: str, reply: dict, group_commit=None) -> None:
    with catalog.lock:
        table = catalog.get_table(db, table_name)
        db = catalog.get_db(db).name
    used = catalog.label_txn(db, opts.label)
    if used is not None:
        raise LabelAlreadyUsed(opts.label, used)
    read_start = time.monotonic()
    names = [n for n, e in opts.columns if e is None] if opts.columns else [c.name for c in table.columns]
    src = read_source(body, opts, names)
    reply["ReadDataTimeMs"] = int((time.monotonic() - read_start) * 1000)
    batch = src.table
    ctx = EvalContext(now=datetime.now(), time_zone=time_zone)
    for name, derivation in opts.columns or []:
        if derivation is not None:
            batch = batch.append_column(name, evaluate(derivation, batch, ctx))
    rejects = _Rejects(batch.num_rows, src.errors)
    converted = _convert(table, batch, opts, rejects)
    data = pa.table(converted) if converted else pa.table({})
    selected = np.ones(batch.num_rows, dtype=bool)
    if opts.where is not None:
        keep = evaluate_predicate(opts.where, data if converted else batch, ctx)
        selected = np.asarray(pc.fill_null(keep, False).to_numpy(zero_copy_only=False), dtype=bool)
    _check_partitions(table, data, opts, rejects, batch)
    bad = rejects.mask & selected
    filtered = src.bad_lines + int(bad.sum())
    unselected = int((~selected).sum())
    total = batch.num_rows + src.bad_lines
    reply.update(NumberTotalRows=total, NumberFilteredRows=filtered, NumberUnselectedRows=unselected)
    if rejects.errors:
        reply["ErrorURL"] = errors.put(rejects.errors)
    considered = total - unselected
    if considered and filtered / considered > opts.max_filter_ratio:
        reply["Message"] = "[DATA_QUALITY_ERROR]too many filtered rows"
        return
    rows = data.filter(pa.array(selected & ~rejects.mask)) if data.num_columns else data
    write_start = time.monotonic()
    if group_commit is not None:
        done = group_commit.submit(db, table.name, rows, opts.group_commit, ctx.now)
        reply.update(GroupCommit=True, Label=done.label)
        loaded, txn_id = done.rows, done.txn_id
    else:
        loaded, txn_id = load_table(catalog, db, table.name, rows, ctx.now, opts.label)
    reply.update(TxnId=txn_id, Status="Success", Message="OK", NumberLoadedRows=loaded,
                 WriteDataTimeMs=int((time.monotonic() - write_start) * 1000))


def _convert(table, batch: pa.Table, opts: StreamLoadOptions, rejects: _Rejects) -> dict:
    """The table's columns the load supplies, converted to their types; bad rows rejected."""
    by_lower = {n.lower(): n for n in batch.column_names}
    out = {}
    for col in table.columns:
        name = by_lower.get(col.name.lower())
        if name is None:
            continue
        src = batch.column(name).combine_chunks()
        target = col.type.arrow()
        value = src if src.type == target else cast_value(src, target)
        failed = pc.and_(pc.is_valid(src), pc.is_null(value))
        if opts.strict_mode:
            rejects.add(failed, lambda i, c=col.name, s=src: (
                f"column({c}) value is incorrect while strict mode is true, src value is {s[i].as_py()}"), batch)
        if col.type.kind in ("CHAR", "VARCHAR"):
            too_long = pc.greater(pc.binary_length(value), col.type.length)
            rejects.add(too_long, lambda i, c=col.name, s=src, n=col.type.length: (
                f"column_name[{c}], the length of input is too long than schema. first 32 bytes of "
                f"input str: [{str(s[i].as_py())[:32]}] schema length: {n}; actual length: "
                f"{len(str(s[i].as_py()).encode())};"), batch)
        if not col.nullable:
            rejects.add(pc.is_null(value), lambda i, c=col.name: (
                f"null value for not null column, column={c}"), batch)
            value = pc.fill_null(value, pa.scalar(_zero(col.type.arrow()), target))
        out[col.name] = value
    return out


def _zero(t: pa.DataType) -> object:
    """A placeholder for rejected rows' NULLs in NOT NULL columns (those rows are dropped)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return ""
    if pa.types.is_boolean(t):
        return False
    if pa.types.is_date(t):
        return datetime(1970, 1, 1).date()
    if pa.types.is_timestamp(t):
        return datetime(1970, 1, 1)
    return 0


def _check_partitions(table, data: pa.Table, opts: StreamLoadOptions, rejects: _Rejects,
                      source: pa.Table) -> None:
    info = table.partition_info
    if info.kind == "UNPARTITIONED" or not all(c in data.column_names for c in info.columns):
        return
    parts = table.sorted_partitions()
    index = partition_index(table, data)
    rejects.add(pc.is_null(index), lambda i: "no partition for this tuple", source)
    if opts.partitions:
        wanted = {p.lower() for p in opts.partitions}
        unknown = wanted - {p.name.lower() for p in parts}
        if unknown:
            raise DorisError(f"Unknown partition: {sorted(unknown)[0]}")
        allowed = pa.array([i for i, p in enumerate(parts) if p.name.lower() in wanted], pa.int32())
        outside = pc.and_(pc.is_valid(index), pc.invert(pc.is_in(index, allowed)))
        rejects.add(outside, lambda i: "the row is not in the partitions given by the load", source)
