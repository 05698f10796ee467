"""Stream Load into Unique tables: `merge_type` (batch delete) and the sequence column headers.

Doris's Stream Load headers and checks (StreamLoadPlanner.plan, DataDescription
.analyzeSequenceCol / checkMergeType, Load.initColumns), over the hidden columns of
catalog/hidden_columns.py:

    merge_type: APPEND   the rows are loaded (the default); `__DORIS_DELETE_SIGN__` may be
                         loaded like any column (named in `columns`, or in `hidden_columns`
                         for a body without `columns`): 1 deletes the key
    merge_type: DELETE   every row's sign is 1: the keys of the rows are deleted
    merge_type: MERGE    `delete: <condition>` over the row decides the sign (NULL: the row is
                         filtered, the sign being NOT NULL)
    function_column.sequence_col: c   the hidden sequence column of a `sequence_type` table
                         takes source column c (required there: "Table t has sequence
                         column, need to specify the sequence column"); a `sequence_col` table
                         takes its own column and needs no header, but a `columns` header
                         must name it (the same refusal) unless its default is
                         CURRENT_TIMESTAMP

MERGE / DELETE need a Unique table with the sign ("load by MERGE or DELETE is only supported in
unique tables.", "... need to upgrade table to support batch delete.").
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.errors import AnalysisError
from catalog.hidden_columns import (check_sequence_given, has_delete_sign, has_sequence,
                                    sequence_map_column)
from catalog.model import UNIQUE_KEYS, OlapTable
from executor.expressions import EvalContext, evaluate_predicate
from storage.schema import DELETE_SIGN, SEQUENCE_COL


def source_names(table: OlapTable, opts) -> list[str]:
    """The body's columns in file order: the `columns` header's source columns, else the
    visible columns followed by those of the `hidden_columns` header."""
    if opts.columns:
        return [n for n, e in opts.columns if e is None]
    return [c.name for c in table.columns] + list(opts.hidden_columns)


def check_headers(table: OlapTable, opts) -> None:
    """Doris's refusals of merge_type and sequence headers that do not fit the table."""
    if opts.merge_type != "APPEND":
        if table.keys_type != UNIQUE_KEYS:
            raise AnalysisError("load by MERGE or DELETE is only supported in unique tables.")
        if not has_delete_sign(table):
            raise AnalysisError("load by MERGE or DELETE need to upgrade table to support "
                                "batch delete.")
    if opts.partial_columns and opts.sequence_col is None:
        return  # a partial update keeps the rows' sequence values
    if not has_sequence(table):
        if opts.sequence_col is not None:
            raise AnalysisError(f"There is no sequence column in the table {table.name}")
        return
    if sequence_map_column(table) is not None:
        if opts.columns:  # the table's own column is the sequence: the load must give it
            check_sequence_given(table, [n for n, _ in opts.columns])
        return
    if opts.sequence_col is None:
        raise AnalysisError(f"Table {table.name} has sequence column, need to specify the "
                            "sequence column")
    names = [n for n, _ in opts.columns] if opts.columns else [c.name for c in table.columns]
    if opts.sequence_col.lower() not in {n.lower() for n in names}:
        raise AnalysisError(f"There is no sequence column {opts.sequence_col} in the "
                            f"{table.name} or the COLUMNS and SET clause")


def with_sequence_source(table: OlapTable, batch: pa.Table, opts) -> pa.Table:
    """The source batch with `__DORIS_SEQUENCE_COL__` taken from the header's column (a
    sequence_type table); converted with the other columns afterwards."""
    if opts.sequence_col is None or sequence_map_column(table) is not None \
            or not has_sequence(table):
        return batch
    by_lower = {n.lower(): n for n in batch.column_names}
    name = by_lower.get(opts.sequence_col.lower())
    if name is None:
        return batch
    return batch.append_column(SEQUENCE_COL, batch.column(name))


def with_delete_sign(data: pa.Table, batch: pa.Table, opts, ctx: EvalContext,
                     rejects) -> pa.Table:
    """`data` (converted rows) with the sign merge_type DELETE / MERGE gives every row."""
    n = batch.num_rows
    if opts.merge_type == "DELETE":
        sign = pa.array(np.ones(n, dtype=np.int8))
    elif opts.merge_type == "MERGE":
        scope = data
        for name in batch.column_names:  # source-only columns the condition may test
            if name.lower() not in {c.lower() for c in scope.column_names}:
                scope = scope.append_column(name, batch.column(name))
        hit = evaluate_predicate(opts.delete, scope, ctx)
        rejects.add(pc.is_null(hit), lambda i: (
            f"null value for not null column, column={DELETE_SIGN}"), batch)
        sign = pc.cast(pc.fill_null(hit, False), pa.int8())
    else:
        return data
    if DELETE_SIGN in data.column_names:
        return data.set_column(data.column_names.index(DELETE_SIGN), DELETE_SIGN, sign)
    return data.append_column(DELETE_SIGN, sign)
