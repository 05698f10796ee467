"""INSERT INTO t [(cols)] VALUES ... | SELECT ...: an Arrow table, or the SELECT's batches, loaded.
INSERT OVERWRITE loads into temporary copies of the target partitions and swaps them in.

A SELECT's result is not materialised: its batches go to the load's memtables as the
executor produces them (catalog.load.load_batches), so an INSERT ... SELECT of any size holds
about the memtables' memory.

VALUES rows are constant expressions: literals become Arrow arrays column by column (a literal
fast path: no expression evaluation per value); other constant expressions are evaluated once
each through the expression evaluator.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from catalog import insert_overwrite
from catalog.mtmv import check_writable
from catalog.errors import AnalysisError, DataQualityError, NotSupported
from catalog.hidden_columns import check_sequence_given
from catalog.load import load_batches
from catalog.load_jobs import record_insert_job
from catalog.partial_update import NEW_KEY_STRICT, complete_partial_columns
from server.http.load_options import StreamLoadOptions
from server.http.load_rows import Rejects, check_partitions, convert_columns
from planner.partition_selection import find_partition, names_of
from server.handlers.context import StatementContext
from server.handlers.query import eval_context, query_batches
from server.parser.fast_values import FastInsert
from server.results import OkResult


def _literal(e: exp.Expression):
    if isinstance(e, exp.Literal):
        if e.is_string:
            return e.this
        text = e.this
        try:
            return int(text)
        except ValueError:
            from decimal import Decimal
            return Decimal(text)
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
        v = _literal(e.this)
        return -v
    raise _NotLiteral


class _NotLiteral(Exception):
    pass


def _column_array(values: list) -> pa.Array:
    kinds = {type(v) for v in values if v is not None}
    if len(kinds) == 1:
        try:
            return pa.array(values)
        except (OverflowError, pa.ArrowInvalid):  # e.g. an integer beyond BIGINT: as text
            pass
    # Mixed literal kinds (1, '2'): load them as text, cast strictly by the column type.
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def _values_table(values: exp.Values, names: list[str], ctx: StatementContext,
                  literal_only: list | None = None) -> pa.Table:
    """The VALUES rows as columns; `literal_only` (a one-item list) is set False when a value
    is an expression (such an INSERT is not group-committed, as in Doris)."""
    rows = values.expressions
    width = len(names)
    columns: list[list] = [[] for _ in range(width)]
    for row in rows:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        if len(items) != width:
            raise AnalysisError("Column count doesn't match value count")
        for i, item in enumerate(items):
            try:
                columns[i].append(_literal(item))
            except _NotLiteral:
                columns[i].append(_evaluate_constant(item, ctx))
                if literal_only:
                    literal_only[0] = False
    return pa.Table.from_arrays([_column_array(c) for c in columns], names=names)


def _evaluate_constant(e: exp.Expression, ctx: StatementContext):
    from executor.expressions import evaluate
    if e.find(exp.Column):
        raise AnalysisError(f"Unknown column in VALUES: {e.sql(dialect='doris')}")
    value = evaluate(e, pa.table({"__one": [None]}), eval_context(ctx))[0]
    if _holds_map_or_struct(value.type):  # as its text, read back by the column's type
        from executor.expressions.casts import scalar_text
        from executor.expressions.nested_text import format_nested
        from storage.types import from_arrow
        one = pa.array([value.as_py()], value.type)
        return format_nested(one, from_arrow(value.type), _escaped(scalar_text),
                             field_names=False)[0].as_py()
    return value.as_py()


def _escaped(scalar_text):
    """Values' text with `\\` and `"` escaped, as the nested text reader unescapes them."""
    def text(arr: pa.Array, dtype) -> pa.Array:
        out = pc.replace_substring(scalar_text(arr, dtype), "\\", "\\\\")
        return pc.replace_substring(out, '"', '\\"')
    return text


def _holds_map_or_struct(t: pa.DataType) -> bool:
    """A MAP / STRUCT value, or an ARRAY of them: Python's view of it (tuples, dicts) does not
    make an Arrow array again, its text does (nested_text.py; a STRUCT's values by position,
    as INSERT assigns them to the column's fields)."""
    if pa.types.is_map(t) or pa.types.is_struct(t):
        return True
    return pa.types.is_list(t) and _holds_map_or_struct(t.value_type)


def insert(stmt: exp.Insert, ctx: StatementContext) -> OkResult:
    if stmt.args.get("overwrite"):
        return _insert_overwrite(stmt, ctx)
    target = stmt.this
    if isinstance(target, exp.Schema):
        table_expr = target.this
        names = [c.name for c in target.expressions]
    else:
        table_expr = target
        names = None
    db = table_expr.db or ctx.db
    check_target(ctx, db, table_expr.name)
    names = _target_columns(ctx, db, table_expr.name, names)
    partition_ids = _target_partitions(ctx, db, table_expr)
    source = stmt.expression
    literal_only = [isinstance(source, exp.Values)]
    if isinstance(source, exp.Values):
        data = _values_table(source, names, ctx, literal_only)
        return _load(ctx, db, table_expr.name, data, stmt.meta.get("label"), partition_ids,
                     literal_only[0])
    columns, batches = query_batches(source, ctx)
    try:
        if len(columns) != len(names):
            raise AnalysisError("Column count doesn't match value count")
        return _load(ctx, db, table_expr.name, (b.rename_columns(names) for b in batches),
                     stmt.meta.get("label"), partition_ids)
    finally:
        batches.close()


def _insert_overwrite(stmt: exp.Insert, ctx: StatementContext) -> OkResult:
    """INSERT OVERWRITE TABLE t [PARTITION (...)]: the rows go to temporary copies of the
    target partitions, which then replace them at once (catalog/insert_overwrite.py)."""
    target = stmt.this
    table_expr = target.this if isinstance(target, exp.Schema) else target
    names = [c.name for c in target.expressions] if isinstance(target, exp.Schema) else None
    db = table_expr.db or ctx.db
    check_target(ctx, db, table_expr.name)
    names = _target_columns(ctx, db, table_expr.name, names)
    spec = names_of(table_expr)
    auto_detect = spec is not None and _is_star(table_expr)
    if spec is not None and not auto_detect and (spec[1] or not spec[0]):
        raise NotSupported("INSERT OVERWRITE of temporary partitions is not supported")
    source = stmt.expression
    if isinstance(source, exp.Values):
        data = _values_table(source, names, ctx)  # bad VALUES fail before anything is created
    ow = insert_overwrite.begin(ctx.catalog, db, table_expr.name,
                                spec[0] if spec is not None and not auto_detect else None,
                                auto_detect)
    try:
        if isinstance(source, exp.Values):
            result = _load(ctx, db, table_expr.name, data, stmt.meta.get("label"), ow.temps)
        else:
            columns, batches = query_batches(source, ctx)
            try:
                if len(columns) != len(names):
                    raise AnalysisError("Column count doesn't match value count")
                result = _load(ctx, db, table_expr.name,
                               (b.rename_columns(names) for b in batches),
                               stmt.meta.get("label"), ow.temps)
            finally:
                batches.close()
        insert_overwrite.commit(ctx.catalog, ow)
    except BaseException:
        insert_overwrite.abort(ctx.catalog, ow)
        raise
    return result


def _is_star(table: exp.Table) -> bool:
    """`PARTITION (*)`: Doris's auto-detect overwrite."""
    part = table.args.get("partition")
    return part is not None and len(part.expressions) == 1 and \
        isinstance(part.expressions[0], exp.Star)


def _target_partitions(ctx: StatementContext, db: str | None, table: exp.Table) -> list[int] | None:
    """`INSERT INTO t [TEMPORARY] PARTITION (p, ...)`: the partition ids (Nereids BindSink's
    message for an unknown name)."""
    spec = names_of(table)
    if spec is None:
        return None
    names, temporary = spec
    with ctx.catalog.lock:
        t = ctx.catalog.get_table(db, table.name)
        out = []
        for name in names:
            p = find_partition(t, name, temporary)
            if p is None:
                raise AnalysisError(f"partition {name} is not found in table {t.name}")
            out.append(p.partition_id)
    return out


def fast_insert(stmt: FastInsert, ctx: StatementContext) -> OkResult:
    """The literal-tuples fast path (`server/parser/fast_values.py`)."""
    db = stmt.db or ctx.db
    check_target(ctx, db, stmt.table)
    names = _target_columns(ctx, db, stmt.table, stmt.columns)
    if len(stmt.values) != len(names):
        raise AnalysisError("Column count doesn't match value count")
    data = pa.Table.from_arrays([v if isinstance(v, pa.Array) else _column_array(v)
                                 for v in stmt.values], names=names)
    return _load(ctx, db, stmt.table, data, stmt.label, group_commit=True)


def check_target(ctx: StatementContext, db: str | None, table: str) -> None:
    """An async materialized view is written only by its refresh (Doris's
    MTMVUtil.allowModifyMTMVData: unless allow_modify_materialized_view_data is set)."""
    if not (ctx.session is not None
            and ctx.session.variables.get("allow_modify_materialized_view_data")):
        check_writable(ctx.catalog, db, table)


def _target_columns(ctx: StatementContext, db: str | None, table: str,
                    names: list[str] | None) -> list[str]:
    """The columns the INSERT gives (the visible ones without a list); a table with a sequence
    column needs it unless the INSERT is a partial update (catalog/hidden_columns.py)."""
    with ctx.catalog.lock:
        t = ctx.catalog.get_table(db, table)
        names = names or [c.name for c in t.columns]
        partial = ctx.session is not None and \
            ctx.session.variables.get("enable_unique_key_partial_update")
        if not partial:
            check_sequence_given(t, names)
        return names


def _non_strict(ctx: StatementContext, db: str | None, table: str,
                data: pa.Table | Iterator[pa.Table]) -> pa.Table | Iterator[pa.Table]:
    """With enable_insert_strict = false, rows that do not fit are filtered, as Doris's load
    filters them (the rules of Stream Load without strict_mode, server/http/load_rows.py): a
    value that cannot be converted becomes NULL, a row is dropped for NULL in a NOT NULL
    column, text longer than its VARCHAR, JSON that is not JSON, or no partition. The INSERT
    fails when more than `insert_max_filter_ratio` (1.0 by default) of its rows were filtered:
    "Insert has too many filtered data f/n insert_max_filter_ratio is r"."""
    if ctx.session is None or ctx.session.variables.get("enable_insert_strict"):
        return data
    with ctx.catalog.lock:
        t = ctx.catalog.get_table(db, table)
    ratio = float(ctx.session.variables.get("insert_max_filter_ratio", 1.0))
    batches = [data] if isinstance(data, pa.Table) else data

    def filtered_batches() -> Iterator[pa.Table]:
        total = filtered = 0
        for batch in batches:
            rejects = Rejects(batch.num_rows, [])
            converted = convert_columns(t, batch, _LENIENT, rejects)
            rows = pa.table(converted) if converted else batch
            check_partitions(t, rows, _LENIENT, rejects, batch)
            total += batch.num_rows
            filtered += int(rejects.mask.sum())
            yield rows.filter(pa.array(~rejects.mask)) if rejects.mask.any() else rows
        if total and filtered / total > ratio:
            raise DataQualityError(f"Insert has too many filtered data {filtered}/{total} "
                                   f"insert_max_filter_ratio is {ratio}")
    return filtered_batches()


_LENIENT = StreamLoadOptions()  # strict_mode false, no partitions named


def _partial_rows(ctx: StatementContext, db: str | None, table: str, batch: pa.Table,
                  strict: bool) -> pa.Table:
    """A partial update's batch with every column (catalog/partial_update.py); strict mode
    (enable_insert_strict, Doris's default) refuses rows of keys the table does not hold."""
    done = complete_partial_columns(ctx.catalog, db, table, batch, strict)
    if done.new_keys_dropped:
        raise DataQualityError("Insert has filtered data in strict mode. First error: "
                               + NEW_KEY_STRICT)
    return done.rows


def _load(ctx: StatementContext, db: str | None, table: str, data: pa.Table | Iterator[pa.Table],
          label: str | None = None, partition_ids: list[int] | None = None,
          group_commit: bool = False) -> OkResult:
    """One load transaction; `label` (INSERT ... WITH LABEL) is taken once per database.
    `data` is a table, or a SELECT's batches: written as they come (catalog.load.load_batches).

    With the session's `group_commit` on and a statement that may be grouped (literal VALUES,
    no label, no PARTITION clause, no partial update), the rows join the table's group commit
    instead (catalog/group_commit.py)."""
    partial = ctx.session is not None and \
        ctx.session.variables.get("enable_unique_key_partial_update")
    lenient = _non_strict(ctx, db, table, data)
    if lenient is not data and isinstance(data, pa.Table):  # VALUES: filtered at once
        lenient = pa.concat_tables(list(lenient))
    data = lenient
    batches = [data] if isinstance(data, pa.Table) else data
    if partial:
        strict = bool(ctx.session.variables.get("enable_insert_strict"))
        batches = (_partial_rows(ctx, db, table, b, strict) for b in batches)
    mode = ctx.session.variables.get("group_commit") if ctx.session is not None else "off_mode"
    manager = getattr(ctx.session.services, "group_commit", None) if ctx.session else None
    if group_commit and label is None and mode != "off_mode" and manager is not None \
            and partition_ids is None and not partial:
        done = manager.submit(db, table, data, mode, ctx.now.replace(tzinfo=None))
        _remember(ctx, done.txn_id, done.label, db, table, "PREPARE", done.rows)
        return OkResult(affected_rows=done.rows,
                        info=f"{{'label':'{done.label}', 'status':'PREPARE', "
                             f"'txnId':'{done.txn_id}'}}")
    created = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    rows, txn_id = load_batches(ctx.catalog, db, table, batches, ctx.now.replace(tzinfo=None),
                                label, partition_ids, source_type="INSERT_STREAMING")
    label = label or f"insert_{uuid.uuid4().hex[:16]}"
    status = "VISIBLE" if rows else "NO_DATA"  # Doris skips the transaction for 0 rows
    _remember(ctx, txn_id, label, db, table, status, rows)
    if rows:  # SHOW LOAD lists the INSERT (Doris's InsertLoadJob)
        with ctx.catalog.lock:
            db_name = ctx.catalog.get_db(db or ctx.db).name
        session = ctx.session
        record_insert_job(ctx.catalog, db_name, table, label, txn_id, rows,
                          (session.username if session is not None else None) or "root",
                          created, datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
                          int(session.variables.get("insert_timeout")) if session else 14400)
    return OkResult(affected_rows=rows,
                    info=f"{{'label':'{label}', 'status':'{status}', 'txnId':'{txn_id}'}}")


def _remember(ctx: StatementContext, txn_id: int, label: str, db: str | None, table: str,
              status: str, rows: int) -> None:
    """SHOW LAST INSERT's row (ConnectContext.setOrUpdateInsertResult): TransactionId, Label,
    Database, Table, TransactionStatus, LoadedRows, FilteredRows (strict INSERTs filter none)."""
    if ctx.session is not None:
        ctx.session.last_insert = (txn_id, label, db or ctx.db, table, status, rows, 0)
