"""AUTO_INCREMENT columns (Doris 2.1): Doris's rules for declaring one, and the ids loads give it.

    check_definition(columns, keys_type)   CREATE TABLE (ColumnDef / CreateTableInfo checks):
                                           at most one per table, BIGINT, NOT NULL, no
                                           DEFAULT, a start that is not negative, in a
                                           Duplicate or Unique table
    fill(table, column, values, n)         the column for a load of n rows: values given are
                                           kept, NULLs and a column the load leaves out get
                                           new ids, in row order
    next_id(table) / observe(table, id)    the counter journaled with each publish into the
                                           table, and its replay

Ids come from one counter per table (`OlapTable.auto_increment_next`), in memory under a lock;
each load takes a contiguous range, starting at the column's AUTO_INCREMENT(n) (1 by default),
as Doris's regression suites show (AUTO_INCREMENT(10000): 10000, 10001, ... in file order). A
publish journals the counter, so after a restart ids continue past every id an acknowledged
load used; ids taken by loads that failed are skipped, as Doris skips the ids its BEs had
cached. Unlike Doris, values given explicitly move the counter past them (MySQL's rule; in
Doris a generated id may repeat one given explicitly): a generated id never repeats a stored
one, and rows a group commit's WAL replays after a crash keep theirs without collisions.
"""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.errors import AnalysisError
from catalog.model import Column, OlapTable
from catalog.statements import ColumnDef

_LOCK = threading.Lock()  # the counters of every table (a load takes its range at once)


def check_definition(columns: list[ColumnDef], keys_type: str) -> None:
    auto = [c for c in columns if c.auto_increment]
    if not auto:
        return
    if len(auto) > 1:
        raise AnalysisError("there can be at most one auto increment column in OlapTable.")
    c = auto[0]
    if keys_type == "AGG_KEYS":
        raise AnalysisError("the auto increment is only supported in duplicate table and "
                            "unique table.")
    if c.type.kind != "BIGINT":
        raise AnalysisError("the auto increment must be BIGINT type.")
    if c.nullable is not False:
        raise AnalysisError("the auto increment column should be NOT NULL.")
    if c.has_default:
        raise AnalysisError("the auto increment column can't have default value.")
    if c.auto_increment_start < 0:
        raise AnalysisError("AUTO_INCREMENT start value can not be negative.")


def fill(table: OlapTable, column: Column, values: pa.Array | pa.ChunkedArray | None,
         n: int) -> pa.Array:
    """`column`'s values for n rows (int64): the given ones, new ids where none is given; the
    counter moves past both."""
    given = None
    if values is not None:
        given = pc.cast(values, pa.int64()) if values.type != pa.int64() else values
        if isinstance(given, pa.ChunkedArray):
            given = given.combine_chunks()
    missing = n if given is None else given.null_count
    top = pc.max(given).as_py() if given is not None and len(given) > missing else None
    with _LOCK:
        first = max(table.auto_increment_next, column.auto_increment_start,
                    top + 1 if top is not None else 0)
        table.auto_increment_next = first + missing
    if given is not None and not missing:
        return given
    ids = np.arange(first, first + missing, dtype=np.int64)
    if given is None:
        return pa.array(ids)
    out = np.array(given.fill_null(0))
    out[np.asarray(given.is_null())] = ids
    return pa.array(out)


def next_id(table: OlapTable) -> int | None:
    """The counter to journal with a publish into `table` (None: no AUTO_INCREMENT column)."""
    if not any(c.auto_increment for c in table.columns):
        return None
    with _LOCK:
        return table.auto_increment_next


def observe(table: OlapTable, next_value: int) -> None:
    """The counter is at least `next_value` (a replayed publish, ids given explicitly)."""
    with _LOCK:
        if next_value > table.auto_increment_next:
            table.auto_increment_next = next_value
