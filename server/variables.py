"""Session variables: declared once as name -> (type, default, settable), Doris's names.

mysql-mimic's MySQL variables plus the Doris ones clients and users touch. Unknown names are
rejected the way Doris rejects them (1193 Unknown system variable).
"""

from __future__ import annotations

from mysql_mimic.variables import SYSTEM_VARIABLES, GlobalVariables, SessionVariables

from server.system_variables import bool_value
from server.system_variables import (FLAGS, MORE_DORIS_VARIABLES, READ_ONLY,
                                     DorisGlobalVariables, DorisSessionVariables)

DORIS_VERSION = "doris-2.1.7-minidoris-0.1.0"


def _bool(v) -> bool:
    return bool_value(v)


DORIS_VARIABLES = {
    "version": (str, "5.7.99", False),
    "version_comment": (str, f"Doris version {DORIS_VERSION}", False),
    "sql_mode": (str, "ONLY_FULL_GROUP_BY", True),
    "time_zone": (str, "UTC", True),
    "system_time_zone": (str, "UTC", False),
    "autocommit": (_bool, True, True),
    "exec_mem_limit": (int, 2147483648, True),
    "query_timeout": (int, 900, True),
    "insert_timeout": (int, 14400, True),
    "enable_bucket_shuffle_join": (_bool, True, True),
    "enable_profile": (_bool, False, True),
    "is_report_success": (_bool, False, True),
    "parallel_fragment_exec_instance_num": (int, 8, True),
    "parallel_pipeline_task_num": (int, 0, True),
    "disable_colocate_plan": (_bool, False, True),
    "enable_insert_strict": (_bool, True, True),
    "enable_nereids_planner": (_bool, True, True),
    "enable_fallback_to_original_planner": (_bool, False, True),
    "batch_size": (int, 4064, True),
    "tx_isolation": (str, "REPEATABLE-READ", True),
    "transaction_isolation": (str, "REPEATABLE-READ", True),
    "tx_read_only": (_bool, False, True),
    "language": (str, "/palo/share/english/", False),
    "net_read_timeout": (int, 600, True),
    "query_cache_size": (int, 1048576, True),
    "query_cache_type": (int, 0, True),
    "have_query_cache": (_bool, False, False),
    "character_set_filesystem": (str, "binary", True),
    "div_precision_increment": (int, 4, True),
    "default_order_by_limit": (int, -1, True),
    "sql_safe_updates": (int, 0, True),
    "lower_case_table_names": (int, 0, False),
    "max_allowed_packet": (int, 16777216, True),
    "license": (str, "Apache License, Version 2.0", False),
    "default_storage_engine": (str, "olap", True),
    "default_tmp_storage_engine": (str, "olap", True),
    "resource_group": (str, "normal", True),
    "group_concat_max_len": (int, 2147483646, True),
    "broadcast_row_count_limit": (int, 30000000, True),
    "broadcast_hashtable_mem_limit_percentage": (float, 0.2, True),
    "auto_broadcast_join_threshold": (float, 0.8, True),
    # MySQL variables drivers set at connect (MariaDB Connector/ODBC: session_track_schema)
    "session_track_schema": (_bool, True, True),
    "session_track_system_variables": (str, "time_zone,autocommit,character_set_client,"
                                       "character_set_results,character_set_connection", True),
    "session_track_state_change": (_bool, False, True),
    "session_track_transaction_info": (str, "OFF", True),
    "enable_unique_key_partial_update": (_bool, False, True),
}

SCHEMA = {**SYSTEM_VARIABLES, **DORIS_VARIABLES}


def new_session_variables(global_vars: GlobalVariables) -> SessionVariables:
    return DorisSessionVariables(global_vars)


def new_global_variables() -> GlobalVariables:
    return DorisGlobalVariables(dict(SCHEMA))


# More of Doris's variables, scope flags and session-over-global values: system_variables.py.
SCHEMA.update({k: (t, d, FLAGS.get(k) != READ_ONLY) for k, (t, d) in MORE_DORIS_VARIABLES.items()
               if k not in DORIS_VARIABLES})
