"""Stream Load: `PUT /api/{db}/{table}/_stream_load` with a CSV or JSON body, one transaction.

The life of a stream load (`run_stream_load`):
 1. the headers become `StreamLoadOptions`; a label already used by the database is refused;
 2. a body larger than `streaming_load_max_mb` (a JSON body not read by line:
    `streaming_load_json_max_mb`) is refused before it is read, with Doris's EXCEEDED_LIMIT
    text; a chunked one when it grows past the limit;
 3. the body is read as it arrives, batch by batch (`load_source.read_batches`: pyarrow's
    streaming CSV reader over the request stream), each batch as text columns, lines with the
    wrong number of fields counted as filtered;
 4. per batch, derived columns (`columns: k1, tmp, v = tmp * 2`) are evaluated, then every
    table column the load supplies is converted to its type with Doris's non-strict CAST: a
    value that does not convert is NULL, and the row is filtered when `strict_mode` is true;
    rows with an over-long string, a NULL in a NOT NULL column, or no partition are filtered;
    `where` leaves rows unselected (not counted as filtered); the rest go to the load's
    `OlapTableSink` (catalog/load_sink.py: routing, buckets, per-tablet memtables flushed at
    `write_buffer_size` or under memory pressure), so memory does not grow with the body;
 5. at the end, when filtered / (total - unselected) exceeds `max_filter_ratio` the load fails
    and its rowsets are removed; otherwise the sink's pending rowsets are published at once
    (`catalog.load.commit_load`: one journaled publish that also takes the label), or, with
    the header `group_commit: sync_mode | async_mode` and no label, the rows join the table's
    group commit (catalog/group_commit.py; the reply carries the group's Label and TxnId,
    GroupCommit true).
With `two_phase_commit: true` the load stops after writing its rowsets (pre-committed, the
label held) and `_stream_load_2pc` commits or aborts it (server/http/two_phase.py).
The reply is Doris's JSON (TxnId, Label, Status, Message, NumberTotalRows, NumberLoadedRows,
NumberFilteredRows, NumberUnselectedRows, LoadBytes, LoadTimeMs, ...), with an ErrorURL listing
the rejected rows when there are any.
"""

from __future__ import annotations

import io
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa

from catalog.mtmv import check_writable
from catalog.errors import AnalysisError, DorisError, LabelAlreadyUsed, MemLimitExceeded
from catalog.load import commit_load
from catalog.load_sink import OlapTableSink
from catalog.partial_update import NEW_KEY_STRICT, complete_partial_columns
from server.http.merge_type import check_headers, source_names
from executor.expressions import EvalContext
from executor.expressions.errors import ExpressionError
from server.http.error_log import ErrorLogStore
from server.http.load_options import StreamLoadOptions
from server.http.load_rows import prepare_rows, target_partitions
from server.http.load_source import SourceRows, read_batches
from server.http.two_phase import PreparedTxns

_MAX_ERRORS_KEPT = 100


@dataclass
class BodyLimits:
    """BE configs bounding a Stream Load body (Doris's names and defaults, in MB)."""

    streaming_load_max_mb: int = 10240
    streaming_load_json_max_mb: int = 100


class ExceededLimit(DorisError):
    """Doris's EXCEEDED_LIMIT status, as the BE words it in a Stream Load reply."""

    doris_prefix = False

    def __init__(self, message: str):
        super().__init__(f"[EXCEEDED_LIMIT]{message}")


def body_limit(opts: StreamLoadOptions, limits: BodyLimits) -> tuple[int, str]:
    """(bytes, the BE conf) a body may hold: a JSON body not read by line is bounded by
    streaming_load_json_max_mb (it is parsed whole), any other by streaming_load_max_mb."""
    if opts.format == "json" and not opts.read_json_by_line:
        return limits.streaming_load_json_max_mb << 20, "streaming_load_json_max_mb"
    return limits.streaming_load_max_mb << 20, "streaming_load_max_mb"


def _too_large(size: int, limit: int, conf: str, opts: StreamLoadOptions) -> ExceededLimit:
    what = "json body size" if conf == "streaming_load_json_max_mb" else "body size"
    return ExceededLimit(f"{what} {size} exceed BE's conf `{conf}` {limit}. increase it if you "
                         f"are sure this load is reasonable")


def run_stream_load(catalog, errors: ErrorLogStore, db: str, table_name: str,
                    headers: dict[str, str], body, time_zone: str,
                    txns: PreparedTxns | None = None, group_commit=None,
                    limits: BodyLimits | None = None, progress: dict | None = None) -> dict:
    """`body`: bytes, or a file-like stream read as the load goes (server/http/request_body.py:
    its `length`, None when chunked, is checked against the limits before anything is read).
    `progress`: a dict that becomes the reply, filled in as the load runs (running_loads.py)."""
    started = time.monotonic()
    headers = {k.lower(): v for k, v in headers.items()}
    stream = io.BytesIO(body) if isinstance(body, (bytes, bytearray)) else body
    length = len(body) if isinstance(body, (bytes, bytearray)) else body.length
    reply = progress if progress is not None else {}
    reply |= {"TxnId": -1, "Label": headers.get("label") or str(uuid.uuid4()),
             "Comment": "", "TwoPhaseCommit": "false", "Status": "Fail", "Message": "",
             "NumberTotalRows": 0, "NumberLoadedRows": 0, "NumberFilteredRows": 0,
             "NumberUnselectedRows": 0, "LoadBytes": length or 0, "LoadTimeMs": 0,
             "BeginTxnTimeMs": 0, "StreamLoadPutTimeMs": 0, "ReadDataTimeMs": 0,
             "WriteDataTimeMs": 0, "CommitAndPublishTimeMs": 0}
    try:
        opts = StreamLoadOptions.from_headers(headers)
        limit, conf = body_limit(opts, limits or BodyLimits())
        if length is not None and length > limit:
            raise _too_large(length, limit, conf, opts)
        if length is None:  # chunked: refused once it grows past the limit
            stream.limit, stream.too_large = limit, lambda n: _too_large(n, limit, conf, opts)
        grouped = opts.group_commit != "off_mode" and opts.label is None and \
            group_commit is not None  # a labelled load is never grouped (Doris)
        opts.label = reply["Label"]
        two_phase = headers.get("two_phase_commit", "false").strip().lower() == "true"
        if two_phase and txns is None:
            raise AnalysisError("two phase commit is not available")
        reply["TwoPhaseCommit"] = "true" if two_phase else "false"
        _load(catalog, errors, db, table_name, opts, stream, time_zone, reply,
              txns if two_phase else None, txns,
              group_commit if grouped and not two_phase else None)
    except LabelAlreadyUsed as e:
        reply.update(Status="Label Already Exists", Message=e.client_message(),
                     ExistingJobStatus="PRECOMMITTED" if e.txn_id < 0 else "FINISHED")
    except MemLimitExceeded as e:  # a BE status: its text without the FE's errCode prefix
        reply.update(Status="Fail", Message=e.message)
    except (DorisError, ExpressionError) as e:  # e.g. an unknown function in `where`
        reply.update(Status="Fail", Message=e.client_message())
    if length is None:
        reply["LoadBytes"] = getattr(stream, "received", 0)
    reply["LoadTimeMs"] = int((time.monotonic() - started) * 1000)
    return reply


def _load(catalog, errors: ErrorLogStore, db: str, table_name: str, opts: StreamLoadOptions,
          stream, time_zone: str, reply: dict, two_phase: PreparedTxns | None = None,
          txns: PreparedTxns | None = None, group_commit=None) -> None:
    with catalog.lock:
        table = catalog.get_table(db, table_name)
        db = catalog.get_db(db).name
    check_writable(catalog, db, table_name)  # an async materialized view (catalog/mtmv.py)
    used = catalog.label_txn(db, opts.label)
    if used is not None:
        raise LabelAlreadyUsed(opts.label, used)
    held = txns.label_txn(db, opts.label) if txns is not None else None
    if held is not None:  # a pre-committed load holds it (its id < 0 marks PRECOMMITTED)
        raise LabelAlreadyUsed(opts.label, -held)
    check_headers(table, opts)  # merge_type, sequence column: server/http/merge_type.py
    names = source_names(table, opts)
    ctx = EvalContext(now=datetime.now(), time_zone=time_zone)
    temps = [p.partition_id for p in target_partitions(table, opts)
             if p.name.lower() in {n.lower() for n in opts.partitions}] \
        if opts.temporary_partitions else None
    grouped = group_commit is not None and temps is None and not opts.partial_columns
    sink = None if grouped else OlapTableSink(catalog, db, table.name, ctx.now, opts.label, temps)
    kept: list[pa.Table] = []  # a group commit's rows (small loads: its group bounds them)
    counts = LoadCounts()
    try:
        mark = time.monotonic()
        json_columns = frozenset(c.name.lower() for c in table.columns
                                 if c.type.is_json or c.type.holds_map_or_struct)
        for src in _at_least_one(read_batches(stream, opts, names, json_columns=json_columns),
                                 names):
            counts.read_seconds += time.monotonic() - mark
            prepared = prepare_rows(table, src, opts, ctx)
            counts.add(prepared)
            reply["NumberTotalRows"] = counts.total  # progress, while the body arrives
            rows = prepared.rows
            if opts.partial_columns:
                done = complete_partial_columns(catalog, db, table.name, rows,
                                                strict=opts.strict_mode, stream_load=True)
                rows = done.rows
                counts.filtered += done.new_keys_dropped
                if done.new_keys_dropped and len(counts.errors) < _MAX_ERRORS_KEPT:
                    counts.errors.append(f"Reason: {NEW_KEY_STRICT}. "
                                         f"{done.new_keys_dropped} rows")
            if sink is not None:
                sink.write(rows)
            else:
                kept.append(rows)
            mark = time.monotonic()
        reply.update(NumberTotalRows=counts.total, NumberFilteredRows=counts.filtered,
                     NumberUnselectedRows=counts.unselected)
        if counts.errors:
            reply["ErrorURL"] = errors.put(counts.errors)
        considered = counts.total - counts.unselected
        if considered and counts.filtered / considered > opts.max_filter_ratio:
            reply["Message"] = "[DATA_QUALITY_ERROR]too many filtered rows"
            if sink is not None:
                sink.abort()
            return
        write_start = time.monotonic()
        if sink is None:
            rows = pa.concat_tables(kept)
            done = group_commit.submit(db, table.name, rows, opts.group_commit, ctx.now)
            reply.update(GroupCommit=True, Label=done.label)
            loaded, txn_id = done.rows, done.txn_id
        else:
            prepared_load = sink.finish()
            sink = None  # the prepared load owns the rowsets now: commit_load aborts them
            prepared_load.source_type = "BACKEND_STREAMING"
            loaded, txn_id = prepared_load.num_rows, prepared_load.txn_id
            if two_phase is not None:
                two_phase.add(prepared_load)
            else:
                commit_load(catalog, prepared_load)
    except BaseException:
        if sink is not None:
            sink.abort()
        raise
    reply.update(TxnId=txn_id, Status="Success", Message="OK", NumberLoadedRows=loaded,
                 ReadDataTimeMs=int(counts.read_seconds * 1000),
                 WriteDataTimeMs=int((time.monotonic() - write_start) * 1000))


def _at_least_one(batches, names: list[str]):
    """The batches, or one empty batch for an empty body (the load still runs: its label is
    taken, its columns checked)."""
    empty = True
    for batch in batches:
        empty = False
        yield batch
    if empty:
        yield SourceRows(pa.table({n: pa.array([], pa.string()) for n in names}))


@dataclass
class LoadCounts:
    """A streamed load's counts over its batches (the filter ratio needs them all)."""

    total: int = 0
    filtered: int = 0
    unselected: int = 0
    errors: list[str] = field(default_factory=list)
    read_seconds: float = 0.0

    def add(self, rows) -> None:
        self.total += rows.total
        self.filtered += rows.filtered
        self.unselected += rows.unselected
        self.errors += rows.errors[:max(0, _MAX_ERRORS_KEPT - len(self.errors))]


