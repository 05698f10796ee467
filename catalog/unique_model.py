"""The Unique model's table-level rules: merge-on-write and its property.

Doris 2.1 makes every new UNIQUE KEY table merge-on-write unless CREATE TABLE says
`"enable_unique_key_merge_on_write" = "false"` (PropertyAnalyzer.analyzeUniqueKeyMergeOnWrite,
Nereids CreateTableInfo.validate); the property is refused on other models and shown by SHOW
CREATE TABLE. A merge-on-write table shows `NONE` as its value columns' aggregation (DESC), and
DELETE may test its value columns (catalog/delete.py).

The sequence column (`"function_column.sequence_col" = "c"`, PropertyAnalyzer /
InternalCatalog.createOlapTable's checks and texts) decides which row of a key wins: the largest
value of c, ties to the later load (storage: `TabletSchema.sequence_column`, used when loads
flush and reads merge). With `function_column.sequence_type` the value lives only in the hidden
`__DORIS_SEQUENCE_COL__` (catalog/hidden_columns.py), which loads must fill.

A merge-on-write table's base index tablets get `TabletSchema.merge_on_write`
(`OlapTable.tablet_schema`): each publish marks the rows it replaces in the tablet's delete
bitmap and reads merge no keys (storage/mow.py, docs/ARCHITECTURE.md "Unique tables:
merge-on-write"); its rollups merge on read. A table created before the property existed here
(no property stored) is merge-on-read.
"""

from __future__ import annotations

from catalog.errors import AnalysisError
from catalog.model import UNIQUE_KEYS, OlapTable

MERGE_ON_WRITE = "enable_unique_key_merge_on_write"


def analyze_merge_on_write(properties: dict[str, str], keys_type: str) -> None:
    """Check the property and store its normalised value (default "true" for UNIQUE)."""
    raw = properties.get(MERGE_ON_WRITE)
    if raw is not None and keys_type != UNIQUE_KEYS:
        raise AnalysisError(f"{MERGE_ON_WRITE} property only support unique key table")
    if keys_type != UNIQUE_KEYS:
        return
    value = "true" if raw is None else raw.strip().lower()
    if value not in ("true", "false"):
        raise AnalysisError(f"{MERGE_ON_WRITE} must be `true` or `false`")
    properties[MERGE_ON_WRITE] = value


SEQUENCE_COL = "function_column.sequence_col"
SEQUENCE_TYPE = "function_column.sequence_type"


def analyze_sequence(properties: dict[str, str], keys_type: str, columns: list) -> None:
    col_name, type_name = properties.get(SEQUENCE_COL), properties.get(SEQUENCE_TYPE)
    if col_name is None and type_name is None:
        return
    if keys_type != UNIQUE_KEYS:
        raise AnalysisError("sequence column only support UNIQUE_KEYS")
    if col_name is not None and type_name is not None:
        raise AnalysisError("The sequence_col and sequence_type cannot be set at the same time")
    if type_name is not None:
        return  # checked when the hidden column is built (catalog/hidden_columns.py)
    col = next((c for c in columns if c.name.lower() == col_name.lower()), None)
    if col is None:
        raise AnalysisError(f"The specified sequence column[{col_name}] not exists")
    if not (col.type.is_integer or col.type.is_temporal):
        raise AnalysisError("Sequence type only support integer types and date types")
    properties[SEQUENCE_COL] = col.name


def is_merge_on_write(table: OlapTable) -> bool:
    return table.keys_type == UNIQUE_KEYS and table.properties.get(MERGE_ON_WRITE) == "true"
