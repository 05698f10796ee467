"""The Unique model's table-level rules: merge-on-write and its property.

Doris 2.1 makes every new UNIQUE KEY table merge-on-write unless CREATE TABLE says
`"enable_unique_key_merge_on_write" = "false"` (PropertyAnalyzer.analyzeUniqueKeyMergeOnWrite,
Nereids CreateTableInfo.validate); the property is refused on other models and shown by SHOW
CREATE TABLE. A merge-on-write table shows `NONE` as its value columns' aggregation (DESC), and
DELETE may test its value columns (catalog/delete.py).

minidoris stores a merge-on-write table exactly as a merge-on-read one (its value columns keep
REPLACE inside, and reads merge keys across rowsets): the visible rows are the same. A table
created before the property existed here (no property stored) is merge-on-read.
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


def is_merge_on_write(table: OlapTable) -> bool:
    return table.keys_type == UNIQUE_KEYS and table.properties.get(MERGE_ON_WRITE) == "true"
