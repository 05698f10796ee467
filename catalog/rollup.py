"""ROLLUP analysis: Doris's rules for a rollup's columns, keys and aggregation (seed 004).

`analyze_rollup(table, desc, index_id)` checks one `RollupDesc` against the table (Doris FE's
AddRollupClause.analyze + MaterializedViewHandler.checkAndPrepareMaterializedView, with their
messages) and returns the `MaterializedIndexMeta` it describes:

- every column exists in the base index; no column twice; the name is new; the column list and
  keys are not those of an existing index;
- AGGREGATE / UNIQUE tables: a rollup keeps each column's key flag and aggregation type; keys
  come before values; at least one key; a UNIQUE table's rollup, or one with a REPLACE value,
  holds every key of the base;
- DUPLICATE tables: a rollup gets its own sort keys. With DUPLICATE KEY (...) they must be a
  prefix of the rollup's columns; without, the leading columns become keys while they fit the
  short key (at most 3 columns, 36 bytes; a VARCHAR ends the key after itself, a FLOAT/DOUBLE
  before itself; a leading CHAR/VARCHAR longer than the budget is the whole key).
"""

from __future__ import annotations

from catalog.errors import AnalysisError, CodedDdlError, DdlError
from catalog.model import AGG_KEYS, DUP_KEYS, UNIQUE_KEYS, MaterializedIndexMeta, OlapTable
from catalog.names import check_table_name
from catalog.statements import RollupDesc
from storage.types import DataType

SHORT_KEY_MAX_COLUMNS = 3
SHORT_KEY_MAX_BYTES = 36
_VARCHAR_INDEX_BYTES = 20


def base_index_of(table: OlapTable, name: str | None) -> int:
    """The index a rollup is built FROM (the base unless named)."""
    if not name:
        return table.base_index_id
    index = table.index_by_name(name)
    if index is None or index.state != "NORMAL":
        raise DdlError(f"Base index[{name}] does not exist")
    return index.index_id


def analyze_rollup(table: OlapTable, desc: RollupDesc, index_id: int,
                   taken: set[str] = frozenset()) -> MaterializedIndexMeta:
    """The index `desc` describes (not yet added to the table); raises Doris's errors."""
    check_table_name(desc.name)
    if not desc.columns:
        raise CodedDdlError("A table must have at least 1 column", 1113)
    seen: set[str] = set()
    for c in desc.columns:
        if c in seen:
            raise CodedDdlError(f"Duplicate column name '{c}'", 1060)
        seen.add(c)
    if desc.name == table.name:
        raise DdlError(f"Table[{table.name}] can not add segment v2 rollup index without "
                       f"setting storage format to v2.")
    if table.index_by_name(desc.name) is not None or desc.name in taken:
        raise DdlError(f"Rollup index[{desc.name}] already exists")
    columns = [_base_column(table, c) for c in desc.columns]
    if table.keys_type == DUP_KEYS:
        key_count = _dup_key_count(table, desc, columns)
        index = MaterializedIndexMeta(index_id, desc.name, columns, DUP_KEYS, key_count,
                                      properties=dict(desc.properties))
    else:
        _check_aggregate_rollup(table, columns)
        index = MaterializedIndexMeta(index_id, desc.name, columns, table.keys_type,
                                      properties=dict(desc.properties))
    _check_new_column_set(table, index)
    return index


def _check_new_column_set(table: OlapTable, index: MaterializedIndexMeta) -> None:
    """A rollup with the column list and keys of an existing index would never be chosen over
    it (minidoris's message: Doris's source has no such check that we found)."""
    probe = -1  # a key no real index has (ids of new indexes are allocated later)
    table.indexes[probe] = index
    try:
        def shape(index_id: int) -> list[tuple]:
            return [(c.name, c.is_key, c.aggregation) for c in table.index_columns(index_id)]
        mine = shape(probe)
        for other_id, other in table.indexes.items():
            if other_id != probe and shape(other_id) == mine:
                raise DdlError(f"Rollup index[{index.name}] has the same columns and keys as "
                               f"index[{other.name}]")
    finally:
        del table.indexes[probe]


def _base_column(table: OlapTable, name: str) -> str:
    col = table.column(name)
    if col is None:
        raise DdlError(f"Column[{name}] does not exist")
    return col.name


def _check_aggregate_rollup(table: OlapTable, columns: list[str]) -> None:
    meet_value = meet_replace = has_key = False
    keys = 0
    for name in columns:
        col = table.column(name)
        if col.is_key and meet_value:
            raise DdlError("Invalid column order. value should be after key")
        if col.is_key:
            keys += 1
            has_key = True
        else:
            meet_value = True
            meet_replace = meet_replace or (col.aggregation or "").startswith("REPLACE")
    if not has_key:
        raise DdlError("No key column is found")
    if (table.keys_type == UNIQUE_KEYS or meet_replace) and keys != len(table.key_columns):
        if table.keys_type == UNIQUE_KEYS:
            raise DdlError("Rollup should contains all unique keys in basetable")
        raise DdlError("Rollup should contains all keys if there is a REPLACE value")


def _dup_key_count(table: OlapTable, desc: RollupDesc, columns: list[str]) -> int:
    if desc.dup_keys:
        if len(desc.dup_keys) > len(columns):
            raise DdlError("Num of duplicate keys should less than or equal to num of rollup "
                           "columns.")
        for key, col in zip(desc.dup_keys, columns):
            if key.lower() != col.lower():
                raise DdlError("Duplicate keys should be the prefix of rollup columns")
        return len(desc.dup_keys)
    count, size = 0, 0
    for i, name in enumerate(columns):
        t = table.column(name).type
        size += index_bytes(t)
        if i + 1 > SHORT_KEY_MAX_COLUMNS or size > SHORT_KEY_MAX_BYTES:
            if i == 0 and t.is_string:
                count = 1
            break
        if t.is_float:
            break
        if t.kind == "VARCHAR" or t.kind == "STRING":
            count += 1
            break
        count += 1
    if count == 0:
        raise DdlError("The first column could not be float or double")
    return count


def index_bytes(t: DataType) -> int:
    """Bytes a column takes in the short key (Doris's Type.getIndexSize)."""
    width = t.key_bytes()
    return _VARCHAR_INDEX_BYTES if width < 0 else width
