"""The table properties CREATE TABLE knows: Doris's PropertyAnalyzer takes each property it
understands out of the statement's map, and InternalCatalog.createOlapTable refuses whatever is
left with "Unknown properties: {k=v, ...}" (a misspelt "replication_nmu" creates nothing).

    check_known(properties)   raises AnalysisError naming every property neither of the lists
                              below covers, in the statement's order, as Java prints a map

Property names compare as Doris compares them: exactly ("REPLICATION_NUM" is unknown there
too). The list is Doris 2.1's and 3.0's, including the properties minidoris records without
modelling (storage policies, time-series compaction, row store, variant settings): a DDL
written for Doris must create its table here.
"""

from __future__ import annotations

from catalog.errors import AnalysisError

KNOWN = frozenset({
    # replicas and placement
    "replication_num", "replication_allocation", "min_load_replica_num", "colocate_with",
    "storage_medium", "storage_cooldown_time", "storage_policy", "storage_vault_name",
    "storage_vault_id", "tablet_type", "is_being_synced",
    # storage format
    "storage_type", "storage_format", "inverted_index_storage_format", "compression",
    "short_key", "in_memory", "light_schema_change", "storage_page_size",
    "storage_dict_page_size", "row_store_page_size", "store_row_column", "row_store_columns",
    "skip_write_index_on_load", "float_type_default_use_plain_encoding", "file_cache_ttl_seconds",
    "tde_algorithm", "estimate_partition_size", "_auto_bucket",
    # indexes
    "bloom_filter_columns", "bloom_filter_fpp",
    # models
    "enable_unique_key_merge_on_write", "enable_unique_key_skip_bitmap_column",
    "enable_mow_light_delete", "enable_duplicate_without_keys_by_default",
    # compaction
    "disable_auto_compaction", "enable_single_replica_compaction", "compaction_policy",
    "vertical_compaction_num_columns_per_group",
    # loads
    "group_commit_interval_ms", "group_commit_data_bytes", "group_commit_mode",
    # statistics and partitions
    "auto_analyze_policy", "partition.retention_count", "mutable",
    # restore and migration (written by Doris's own tools)
    "version_info", "schema_version", "data_base_time_ms",
})

KNOWN_PREFIXES = (
    "dynamic_partition.", "binlog.", "function_column.", "data_sort.", "tag.location.",
    "time_series_compaction_", "variant_", "deprecated_variant_",
)


def check_known(properties: dict[str, str]) -> None:
    unknown = {k: v for k, v in properties.items()
               if k not in KNOWN and not k.startswith(KNOWN_PREFIXES)}
    if unknown:
        listed = ", ".join(f"{k}={v}" for k, v in unknown.items())
        raise AnalysisError(f"Unknown properties: {{{listed}}}")
