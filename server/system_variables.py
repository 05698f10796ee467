"""Doris's system variables beyond the basic table in variables.py: more of Doris's session and
global variables with Doris 2.1's defaults (SessionVariable.java / GlobalVariable.java), each
variable's scope flag, and the session/global value semantics.

- A session reads its own value if it SET one, else the current GLOBAL value (SET GLOBAL
  changes new sessions and the current one, as in Doris, and is journaled: the catalog keeps
  it across restarts, catalog/global_variables.py, and `restore_globals` applies it).
- Flags as Doris's VarAttr: READ_ONLY (SET fails, 1238), GLOBAL (global only: SET without
  GLOBAL fails, 1229), SESSION_ONLY (SET GLOBAL fails, 1228); the rest may be set either way.
- INVISIBLE variables are read and set like the others but SHOW VARIABLES and
  information_schema.session/global_variables do not list them (`list()`).
- An unknown name is 1193 `Unknown system variable 'x'`, in SET and in SELECT @@x.
The tables here are the variables clients, BI tools and Doris users read or set; every other
variable of Doris's FE comes from doris_variables_data.py with Doris's default and flag
(most are planner/engine knobs that minidoris accepts and shows but does not act on).
"""

from __future__ import annotations

from mysql_mimic.errors import MysqlError
from mysql_mimic.variables import SYSTEM_VARIABLES, GlobalVariables, SessionVariables

from catalog.errors import DorisError
from server.doris_variables_data import (DORIS_SOURCE_VARIABLES, GLOBAL, INVISIBLE, READ_ONLY,
                                         SESSION_ONLY)


def bool_value(v) -> bool:
    if isinstance(v, str):
        low = v.strip().lower()
        if low not in ("1", "true", "on", "0", "false", "off"):
            raise ValueError(v)
        return low in ("1", "true", "on")
    return bool(v)


# name -> (type, Doris 2.1 default)
MORE_DORIS_VARIABLES = {
    "analyze_timeout": (int, 43200), "auto_profile_threshold_ms": (int, -1),
    "auto_increment_increment": (int, 1), "auto_increment_offset": (int, 1),
    "character_set_server": (str, "utf8mb4"), "character_set_database": (str, "utf8mb4"),
    "collation_connection": (str, "utf8mb4_0900_bin"), "collation_database": (str, "utf8mb4_0900_bin"),
    "collation_server": (str, "utf8mb4_0900_bin"), "sql_auto_is_null": (bool_value, False),
    "sql_select_limit": (int, 9223372036854775807), "interactive_timeout": (int, 3600),
    "wait_timeout": (int, 28800), "net_write_timeout": (int, 600), "net_read_timeout": (int, 600),
    "net_buffer_length": (int, 16384), "have_query_cache": (bool_value, False),
    "lc_time_names": (str, "en_US"), "max_execution_time": (int, 900000),
    "transaction_read_only": (bool_value, False), "performance_schema": (str, "OFF"),
    "init_connect": (str, ""), "default_rowset_type": (str, "beta"),
    "default_password_lifetime": (int, 0), "password_history": (int, 0),
    "validate_password_policy": (int, 0), "show_full_dbname_in_info_schema_db": (bool_value, False),
    "sql_converter_service_url": (str, ""), "enable_audit_plugin": (bool_value, False),
    "audit_plugin_max_batch_bytes": (int, 52428800), "audit_plugin_max_batch_interval_sec": (int, 60),
    "audit_plugin_max_sql_length": (int, 4096), "read_only": (bool_value, True),
    "super_read_only": (bool_value, True), "workload_group": (str, ""),
    "scan_queue_mem_limit": (int, 107374182), "prefer_join_method": (str, "broadcast"),
    "disable_streaming_preaggregations": (bool_value, False), "enable_pipeline_engine": (bool_value, True),
    "enable_pipeline_x_engine": (bool_value, True), "enable_local_exchange": (bool_value, True),
    "runtime_filter_mode": (str, "GLOBAL"), "runtime_filter_type": (str, "IN_OR_BLOOM_FILTER"),
    "runtime_filter_wait_time_ms": (int, 1000), "runtime_filters_max_num": (int, 10),
    "runtime_bloom_filter_size": (int, 2097152), "runtime_bloom_filter_min_size": (int, 1048576),
    "runtime_bloom_filter_max_size": (int, 16777216), "enable_runtime_filter_prune": (bool_value, True),
    "enable_sql_cache": (bool_value, False), "enable_spilling": (bool_value, False),
    "enable_unique_key_partial_update": (bool_value, False), "enable_inverted_index_query": (bool_value, True),
    "return_object_data_as_binary": (bool_value, False), "trim_tailing_spaces_for_external_table_query": (bool_value, False),
    "truncate_char_or_varchar_columns": (bool_value, False), "max_pushdown_conditions_per_column": (int, 1024),
    "send_batch_parallelism": (int, 1), "rewrite_or_to_in_predicate_threshold": (int, 2),
    "skip_storage_engine_merge": (bool_value, False), "skip_delete_predicate": (bool_value, False),
    "skip_delete_bitmap": (bool_value, False), "skip_missing_version": (bool_value, False),
    "enable_single_replica_insert": (bool_value, False), "forward_to_master": (bool_value, True),
    "faster_float_convert": (bool_value, False), "use_fix_replica": (int, -1),
    "insert_max_filter_ratio": (float, 1.0), "group_commit": (str, "off_mode"),
    "enable_cost_based_join_reorder": (bool_value, False), "enable_exchange_node_parallel_merge": (bool_value, False),
    "load_mem_limit": (int, 0), "codegen_level": (int, 0), "enable_agg_state": (bool_value, False),
    "enable_memtable_on_sink_node": (bool_value, True), "parallel_exchange_instance_num": (int, 100),
    "lower_case_table_names": (int, 0), "time_zone": (str, "UTC"), "max_scan_key_num": (int, 48),
    "enable_join_spill": (bool_value, False), "enable_sort_spill": (bool_value, False),
    "enable_agg_spill": (bool_value, False), "query_freshness_tolerance_ms": (int, -1),
    "cte_max_recursion_depth": (int, 100),
}

# The rest of the variables Doris 2.1 documents (docs: query-variables/variables), with its
# defaults, and MySQL ones Doris keeps for tools (profiling: Navicat; storage_engine).
MORE_DORIS_VARIABLES.update({
    "delete_without_partition": (bool_value, False), "disable_colocate_join": (bool_value, False),
    "enable_fold_constant_by_be": (bool_value, False), "insert_visible_timeout_ms": (int, 10000),
    "allow_partition_column_nullable": (bool_value, True), "use_v2_rollup": (bool_value, False),
    "rewrite_count_distinct_to_bitmap_hll": (bool_value, True),
    "extract_wide_range_expr": (bool_value, True), "cpu_resource_limit": (int, -1),
    "disable_join_reorder": (bool_value, False), "enable_infer_predicate": (bool_value, True),
    "block_encryption_mode": (str, ""), "skip_bad_tablet": (bool_value, False),
    "group_by_and_having_use_alias_first": (bool_value, False),
    "enable_file_cache": (bool_value, False), "file_cache_base_path": (str, "random"),
    "topn_opt_limit_threshold": (int, 1024), "drop_table_if_ctas_failed": (bool_value, True),
    "show_user_default_role": (bool_value, False), "dry_run_query": (bool_value, False),
    "enable_parquet_lazy_materialization": (bool_value, True),
    "enable_orc_lazy_materialization": (bool_value, True),
    "enable_strong_consistency_read": (bool_value, False),
    "jdbc_clickhouse_query_final": (bool_value, False),
    "describe_extend_variant_column": (bool_value, False), "profiling": (bool_value, False),
    "storage_engine": (str, "olap"), "show_hidden_columns": (bool_value, False),
    "sql_dialect": (str, "doris"), "enable_decimal256": (bool_value, False),
    "enable_common_expr_pushdown": (bool_value, True), "enable_two_phase_read_opt": (bool_value, True),
    "enable_nereids_dml": (bool_value, True),
    "enable_match_without_inverted_index": (bool_value, True),
})

# Scope flags of Doris's VarAttr (variables not listed can be set per session and globally).
FLAGS = {
    "version": READ_ONLY, "version_comment": READ_ONLY, "lower_case_table_names": READ_ONLY,
    "license": READ_ONLY, "language": READ_ONLY, "system_time_zone": READ_ONLY,
    "performance_schema": READ_ONLY, "net_buffer_length": READ_ONLY, "have_query_cache": READ_ONLY,
    "init_connect": GLOBAL, "query_cache_size": GLOBAL, "default_rowset_type": GLOBAL,
    "default_password_lifetime": GLOBAL, "password_history": GLOBAL,
    "validate_password_policy": GLOBAL, "show_full_dbname_in_info_schema_db": GLOBAL,
    "sql_converter_service_url": GLOBAL, "enable_audit_plugin": GLOBAL,
    "audit_plugin_max_batch_bytes": GLOBAL, "audit_plugin_max_batch_interval_sec": GLOBAL,
    "audit_plugin_max_sql_length": GLOBAL, "read_only": GLOBAL, "super_read_only": GLOBAL,
    "analyze_timeout": GLOBAL,
}


# Every other variable of Doris's FE (doris_variables_data.py), under the ones above and in
# variables.py and mysql-mimic's, whose defaults and flags stay as they are.
INVISIBLE_VARIABLES = {name for name, (_, _, flag) in DORIS_SOURCE_VARIABLES.items()
                       if flag == INVISIBLE}
for _name, (_type, _default, _flag) in DORIS_SOURCE_VARIABLES.items():
    if _name not in SYSTEM_VARIABLES:
        MORE_DORIS_VARIABLES.setdefault(_name, (bool_value if _type is bool else _type, _default))
    if _flag in (READ_ONLY, GLOBAL, SESSION_ONLY):
        FLAGS.setdefault(_name, _flag)


class UnknownVariable(DorisError):
    code = 1193
    sqlstate = "HY000"

    def __init__(self, name: str):
        super().__init__(f"Unknown system variable '{name}'")


class VariableScopeError(DorisError):
    """SET of a read-only variable, or in the wrong scope (Doris's ErrorCode texts)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _listed(pairs: list[tuple[str, object]]) -> list[tuple[str, object]]:
    return [(name, value) for name, value in pairs if name not in INVISIBLE_VARIABLES]


class DorisGlobalVariables(GlobalVariables):
    def list(self) -> list[tuple[str, object]]:  # noqa: D102 - INVISIBLE ones are not listed
        return _listed(super().list())

    def get(self, name, default=None):  # noqa: D102 - Mapping.get would hide unknown names
        return self.get_variable(name)

    def get_variable(self, name: str):
        try:
            return super().get_variable(name)
        except MysqlError:
            raise UnknownVariable(name.lower()) from None


class DorisSessionVariables(SessionVariables):
    """The session's own values over the current global ones."""

    def list(self) -> list[tuple[str, object]]:  # noqa: D102
        return _listed(super().list())

    def get(self, name, default=None):  # noqa: D102
        return self.get_variable(name)

    def get_variable(self, name: str):
        name = name.lower()
        if name in self._values:
            return self._values[name]
        return self.global_variables.get_variable(name)

    def default(self, name: str):
        return self.schema[name.lower()][1]

    def set_scoped(self, name: str, value, scope: str | None) -> None:
        """SET [GLOBAL | SESSION] name = value with Doris's checks."""
        name = name.lower()
        if name not in self.schema:
            raise UnknownVariable(name)
        flag = FLAGS.get(name)
        if flag == READ_ONLY:
            raise VariableScopeError(1238, f"Variable '{name}' is a read only variable")
        if scope == "GLOBAL":
            if flag == SESSION_ONLY:
                raise VariableScopeError(
                    1228, f"Variable '{name}' is a SESSION variable and can't be used with SET GLOBAL")
            self.global_variables.set(name, value, force=True)
            self._values.pop(name, None)
            return
        if flag == GLOBAL:
            raise VariableScopeError(
                1229, f"Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL")
        self.set(name, value, force=True)

    def changed(self, name: str) -> bool:
        return self.get_variable(name) != self.default(name)

    def info_rows(self) -> list[tuple[str, object, object, object]]:
        """(name, session value, global value, default) of every variable, for
        information_schema.session_variables / global_variables."""
        return [(name, value, self.global_variables.get(name), self.default(name))
                for name, value in self.list()]


def restore_globals(global_vars: GlobalVariables, saved: dict) -> None:
    """Apply the SET GLOBAL values the catalog kept (catalog/global_variables.py) at start-up;
    a name this version does not know is skipped."""
    for name, value in saved.items():
        try:
            global_vars.set(name, value, force=True)
        except (MysqlError, DorisError, TypeError, ValueError):
            continue
