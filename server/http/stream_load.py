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
With `two_phase_commit: true` the load stops after writing its rowsets (pre-committed, the
label held) and `_stream_load_2pc` commits or aborts it (server/http/two_phase.py).
The reply is Doris's JSON (TxnId, Label, Status, Message, NumberTotalRows, NumberLoadedRows,
NumberFilteredRows, NumberUnselectedRows, LoadBytes, LoadTimeMs, ...), with an ErrorURL listing
the rejected rows when there are any.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime

from catalog.errors import AnalysisError, DorisError, LabelAlreadyUsed
from catalog.load import load_table, prepare_load
from catalog.partial_update import complete_partial_columns
from executor.expressions import EvalContext
from executor.expressions.errors import ExpressionError
from server.http.error_log import ErrorLogStore
from server.http.load_options import StreamLoadOptions
from server.http.load_rows import prepare_rows, target_partitions
from server.http.load_source import read_source
from server.http.two_phase import PreparedTxns


def run_stream_load(catalog, errors: ErrorLogStore, db: str, table_name: str,
                    headers: dict[str, str], body: bytes, time_zone: str,
                    txns: PreparedTxns | None = None, group_commit=None) -> dict:
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
        two_phase = headers.get("two_phase_commit", "false").strip().lower() == "true"
        if two_phase and txns is None:
            raise AnalysisError("two phase commit is not available")
        reply["TwoPhaseCommit"] = "true" if two_phase else "false"
        _load(catalog, errors, db, table_name, opts, body, time_zone, reply,
              txns if two_phase else None, txns,
              group_commit if grouped and not two_phase else None)
    except LabelAlreadyUsed as e:
        reply.update(Status="Label Already Exists", Message=e.client_message(),
                     ExistingJobStatus="PRECOMMITTED" if e.txn_id < 0 else "FINISHED")
    except (DorisError, ExpressionError) as e:  # e.g. an unknown function in `where`
        reply.update(Status="Fail", Message=e.client_message())
    reply["LoadTimeMs"] = int((time.monotonic() - started) * 1000)
    return reply


def _load(catalog, errors: ErrorLogStore, db: str, table_name: str, opts: StreamLoadOptions,
          body: bytes, time_zone: str, reply: dict, two_phase: PreparedTxns | None = None,
          txns: PreparedTxns | None = None, group_commit=None) -> None:
    with catalog.lock:
        table = catalog.get_table(db, table_name)
        db = catalog.get_db(db).name
    used = catalog.label_txn(db, opts.label)
    if used is not None:
        raise LabelAlreadyUsed(opts.label, used)
    held = txns.label_txn(db, opts.label) if txns is not None else None
    if held is not None:  # a pre-committed load holds it (its id < 0 marks PRECOMMITTED)
        raise LabelAlreadyUsed(opts.label, -held)
    read_start = time.monotonic()
    names = [n for n, e in opts.columns if e is None] if opts.columns else [c.name for c in table.columns]
    src = read_source(body, opts, names)
    reply["ReadDataTimeMs"] = int((time.monotonic() - read_start) * 1000)
    ctx = EvalContext(now=datetime.now(), time_zone=time_zone)
    prepared = prepare_rows(table, src, opts, ctx)
    total, filtered, unselected = prepared.total, prepared.filtered, prepared.unselected
    reply.update(NumberTotalRows=total, NumberFilteredRows=filtered, NumberUnselectedRows=unselected)
    if prepared.errors:
        reply["ErrorURL"] = errors.put(prepared.errors)
    considered = total - unselected
    if considered and filtered / considered > opts.max_filter_ratio:
        reply["Message"] = "[DATA_QUALITY_ERROR]too many filtered rows"
        return
    rows = prepared.rows
    write_start = time.monotonic()
    if opts.partial_columns:
        rows = complete_partial_columns(catalog, db, table.name, rows)
    temps = [p.partition_id for p in target_partitions(table, opts)
             if p.name.lower() in {n.lower() for n in opts.partitions}] \
        if opts.temporary_partitions else None
    if two_phase is not None:
        prepared = prepare_load(catalog, db, table.name, rows, ctx.now, opts.label, temps)
        two_phase.add(prepared)
        loaded, txn_id = prepared.num_rows, prepared.txn_id
    elif group_commit is not None and temps is None and not opts.partial_columns:
        done = group_commit.submit(db, table.name, rows, opts.group_commit, ctx.now)
        reply.update(GroupCommit=True, Label=done.label)
        loaded, txn_id = done.rows, done.txn_id
    else:
        loaded, txn_id = load_table(catalog, db, table.name, rows, ctx.now, opts.label, temps)
    reply.update(TxnId=txn_id, Status="Success", Message="OK", NumberLoadedRows=loaded,
                 WriteDataTimeMs=int((time.monotonic() - write_start) * 1000))
