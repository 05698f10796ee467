"""Doris's hidden columns of Unique tables: the batch delete sign, the version and sequence columns.

Doris 2.x adds to every new UNIQUE KEY table (CreateTableStmt.analyze, with the FE configs
enable_batch_delete_by_default and enable_hidden_version_column_by_default both true):

    __DORIS_DELETE_SIGN__   TINYINT NOT NULL DEFAULT 0   1: the key is deleted (batch delete)
    __DORIS_VERSION_COL__   BIGINT  NOT NULL DEFAULT 0   the version that loaded the row
                            (storage/load_version.py)
    __DORIS_SEQUENCE_COL__  nullable, only with "function_column.sequence_col" = "c" (c's type;
                            loads copy c into it) or "function_column.sequence_type" = "t"

They are value columns after the visible ones (REPLACE; DESC shows NONE on merge-on-write
tables), kept apart from `OlapTable.columns` in `OlapTable.hidden_columns` (journaled with the
table) so that every use of the visible schema stays as it was, and stored in each index of the
table (`OlapTable.tablet_schema`). A table created here before they existed has none, as a Doris
table without batch delete ("load by MERGE or DELETE need to upgrade table to support batch
delete.").

    reads   SELECT * and DESC leave them out unless `show_hidden_columns`; a scan of a table with
            the sign filters `__DORIS_DELETE_SIGN__ = 0` after the key merge (BindRelation's
            delete sign filter, planner/binder.py) unless show_hidden_columns / skip_delete_sign
    loads   `fill_hidden` (catalog/load.py's complete_columns): the sign and version 0 unless
            given, the sequence column from the sequence_col column unless given
    merge   storage merges the sequence column first (TabletSchema.sequence_column) and a base
            compaction drops rows whose merged sign is 1 (storage/compaction.py)

ALTER TABLE ... ENABLE FEATURE "BATCH_DELETE" | "SEQUENCE_LOAD" adds them to an existing table
(catalog/enable_feature.py).
"""

from __future__ import annotations

import re

import pyarrow as pa

from catalog.errors import AnalysisError
from catalog.model import UNIQUE_KEYS, Column, OlapTable
from storage.schema import DELETE_SIGN, SEQUENCE_COL, VERSION_COL
from storage.types import DataType

SEQUENCE_COL_PROPERTY = "function_column.sequence_col"
SEQUENCE_TYPE_PROPERTY = "function_column.sequence_type"
HIDDEN_NAMES = (DELETE_SIGN, VERSION_COL, SEQUENCE_COL)


def build_hidden_columns(keys_type: str, properties: dict[str, str],
                         columns: list[Column]) -> list[Column]:
    """The hidden columns a new table gets (after its properties were analyzed)."""
    if keys_type != UNIQUE_KEYS:
        return []
    hidden = [Column(DELETE_SIGN, DataType("TINYINT"), False, "REPLACE", False, "0",
                     "doris delete flag hidden column"),
              Column(VERSION_COL, DataType("BIGINT"), False, "REPLACE", False, "0",
                     "doris version hidden column")]
    seq_type = sequence_type(properties, columns)
    if seq_type is not None:
        hidden.append(Column(SEQUENCE_COL, seq_type, False, "REPLACE", True, None,
                             "sequence column hidden column"))
    return hidden


def sequence_type(properties: dict[str, str], columns: list[Column]) -> DataType | None:
    """The sequence column's type: the sequence_col column's, or the sequence_type."""
    name = properties.get(SEQUENCE_COL_PROPERTY)
    if name is not None:
        return next(c.type for c in columns if c.name.lower() == name.lower())
    raw = properties.get(SEQUENCE_TYPE_PROPERTY)
    if raw is None:
        return None
    m = re.fullmatch(r"\s*(\w+)\s*(?:\(([\d,\s]*)\))?\s*", raw)
    try:
        if m is None:
            raise ValueError(raw)
        args = [int(a) for a in (m.group(2) or "").split(",") if a.strip()]
        dtype = DataType.of(m.group(1), *args)
    except ValueError:
        raise AnalysisError(f"Unknown type: {raw}") from None
    if not (dtype.is_integer or dtype.is_temporal):
        raise AnalysisError("Sequence type only support integer types and date types")
    return dtype


def hidden_column(table: OlapTable, name: str) -> Column | None:
    low = name.lower()
    return next((c for c in table.hidden_columns if c.name.lower() == low), None)


def has_delete_sign(table: OlapTable) -> bool:
    return hidden_column(table, DELETE_SIGN) is not None


def has_sequence(table: OlapTable) -> bool:
    """The table has a sequence column (either form)."""
    return SEQUENCE_COL_PROPERTY in table.properties or SEQUENCE_TYPE_PROPERTY in table.properties


def sequence_map_column(table: OlapTable) -> str | None:
    """The visible column `function_column.sequence_col` names, if any."""
    name = table.properties.get(SEQUENCE_COL_PROPERTY)
    col = table.column(name) if name else None
    return col.name if col is not None else None


def rewritten_columns(table: OlapTable) -> list[str]:
    """The columns an INSERT that writes a Unique table's current rows back gives (UPDATE, and
    DELETE ... USING with the delete sign): the visible ones, and the hidden sequence column
    unless a visible column maps to it (Doris's UpdateCommand: "the sequence map column is
    null, we query it"), so the rewritten row never loses to the row it replaces."""
    names = [c.name for c in table.columns]
    if has_sequence(table) and sequence_map_column(table) is None:
        names.append(SEQUENCE_COL)
    return names


def fill_hidden(table: OlapTable, given: dict[str, pa.ChunkedArray | pa.Array],
                visible: dict[str, pa.Array], n: int) -> dict[str, pa.Array]:
    """Each hidden column's values for a load of `n` rows: `given` (the load named it, by lower
    name) or its default; the sequence column of a sequence_col table copies that column
    (`visible`: the load's completed visible columns, by name)."""
    out = {}
    for col in table.hidden_columns:
        arr = given.get(col.name.lower())
        if arr is None and col.name == SEQUENCE_COL:
            source = sequence_map_column(table)
            arr = visible[source] if source is not None else pa.nulls(n, col.type.arrow())
        if arr is None:
            arr = pa.nulls(n, col.type.arrow()) if col.default is None else \
                pa.repeat(pa.scalar(int(col.default), col.type.arrow()), n)
        out[col.name] = arr
    return out


def check_sequence_given(table: OlapTable, names: list[str]) -> None:
    """An INSERT with a column list must give the sequence column (Doris's
    BindSink/InsertUtils check: the sequence_col column or __DORIS_SEQUENCE_COL__)."""
    if not has_sequence(table):
        return
    low = {n.lower() for n in names}
    source = sequence_map_column(table)
    if SEQUENCE_COL.lower() in low or (source is not None and source.lower() in low):
        return
    if source is not None and str(table.column(source).default).upper() == "CURRENT_TIMESTAMP":
        return  # Doris fills it (LoadScanProvider / BindSink)
    raise AnalysisError(f"Table {table.name} has sequence column, need to specify the "
                        "sequence column")
