"""ALTER TABLE t SET (...): the rules Doris applies before any property takes effect
(Alter.processAlterOlapTable, ModifyTablePropertiesClause.analyze).

    check_alterable(cat, db, table)  the table exists and is NORMAL: an ALTER job (rollup,
                                     materialized view, heavy schema change) refuses every
                                     ALTER TABLE SET with OlapTable.checkNormalStateForAlter's
                                     message, whatever the property
    check_one(properties)            one property at a time, except several dynamic_partition.*
                                     or binlog.* ones (and minidoris's bloom filter pair,
                                     bloom_filter_columns with bloom_filter_fpp)
    settle(properties)               for the properties no other module handles: True when
                                     Doris accepts them and they change nothing here (in_memory
                                     false, light_schema_change true: tables are light already,
                                     storage_format v2, storage_type column); Doris's refusal
                                     otherwise; NotSupported for what Doris takes and
                                     minidoris does not model (storage policies, binlog);
                                     "Unknown table
                                     property: [k]" for what Doris does not know either
                                     (storage_medium is a partition's: MODIFY PARTITION)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.errors import AnalysisError, NotSupported
from catalog.model import OlapTable

if TYPE_CHECKING:
    from catalog.catalog import Catalog

DYNAMIC_PREFIX = "dynamic_partition."
BINLOG_PREFIX = "binlog."
BLOOM_PAIR = {"bloom_filter_columns", "bloom_filter_fpp"}

# accepted, and already so in minidoris: property -> the one value that is a no-op
_NO_OP = {"in_memory": "false", "light_schema_change": "true", "storage_format": "v2",
          "storage_type": "column"}
# value-independent refusals (ModifyTablePropertiesClause's texts)
_REFUSED = {
    "enable_unique_key_merge_on_write": "Can not change UNIQUE KEY to Merge-On-Write mode",
    "enable_duplicate_without_keys_by_default":
        "Can not change enable_duplicate_without_keys_by_default",
    "estimate_partition_size": "You can not modify estimate partition size",
    "storage_vault_name": "You can not modify storage vault name",
    "storage_vault_id": "You can not modify storage vault id",
    "tablet_type": "Alter tablet type not supported",
}
# properties Doris takes that minidoris does not model
# (replication and compaction properties: catalog/partition_properties.py)
_NOT_MODELLED = {
    "min_load_replica_num", "storage_policy", "is_being_synced", "skip_write_index_on_load", "enable_single_replica_compaction", "enable_mow_light_delete",
    "file_cache_ttl_seconds", "store_row_column", "row_store_columns", "distribution_type",
    "send_clear_alter_task",
}


def check_alterable(cat: Catalog, db_name: str | None, table_name: str) -> None:
    from catalog.rollup_job import check_normal  # (rollup_job imports the catalog)
    with cat.lock:
        table = cat.get_table(cat.get_db(db_name).name, table_name)
        if isinstance(table, OlapTable):
            check_normal(cat, table)


def check_one(properties: dict[str, str]) -> None:
    if not properties:
        raise AnalysisError("Properties is not set")
    keys = set(properties)
    if len(keys) == 1 or keys <= BLOOM_PAIR or \
            all(k.startswith(DYNAMIC_PREFIX) for k in keys) or \
            all(k.startswith(BINLOG_PREFIX) for k in keys):
        return
    raise AnalysisError("Can only set one table property at a time")


def settle(properties: dict[str, str]) -> None:
    """Accept (return) or refuse the remaining properties, as the module docstring says."""
    for key, value in properties.items():
        text = str(value).strip().lower()
        if key in _REFUSED:
            raise AnalysisError(_REFUSED[key])
        if key == "in_memory" and text == "true":
            raise AnalysisError("Not support set 'in_memory'='true' now!")
        if key == "storage_type" and text != "column":
            raise AnalysisError("Can only change storage type to COLUMN")
        if key == "storage_format" and text != "v2":
            raise AnalysisError("Property storage_format should be v2")
        if key == "distribution_type" and text != "random":
            raise AnalysisError("Can only change distribution type from HASH to RANDOM")
        if key == "skip_write_index_on_load" and text == "true":
            raise AnalysisError("Property skip_write_index_on_load is forbidden now")
        if _NO_OP.get(key) == text:
            continue
        if key in _NOT_MODELLED or key in _NO_OP or key.startswith(BINLOG_PREFIX):
            raise NotSupported(f"ALTER TABLE SET of {key} is not supported yet")
        raise AnalysisError(f"Unknown table property: [{key}]")
