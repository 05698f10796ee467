"""Configuration: `conf/minidoris.conf` loaded into one typed object at start-up.

Every setting is declared once in `Config` with Doris's name, type and default. `load_config`
reads a `key = value` file (unknown keys are an error, so typos do not pass silently), then the
command line overrides it. Layers below `main` receive explicit values, never this object's file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_CONFIG_PATHS = (Path("conf/minidoris.conf"),)


@dataclass
class Config:
    query_port: int = 9030
    http_port: int = 8030
    priority_networks: str = "127.0.0.1"
    meta_dir: str = "meta"
    edit_log_roll_num: int = 50000  # Doris FE's default
    dynamic_partition_enable: bool = True
    dynamic_partition_check_interval_seconds: int = 600
    max_dynamic_partition_num: int = 500
    disable_colocate_join: bool = False
    disable_colocate_balance: bool = False
    disable_colocate_relocate: bool = False
    tablet_schedule_interval_ms: int = 1000
    catalog_trash_expire_second: int = 86400
    max_same_name_catalog_trash_num: int = 3
    storage_root_path: str = "storage"
    backend_num: int = 3
    data_page_size: int = 65536
    short_key_index_interval: int = 1024
    max_segment_size: int = 268435456
    storage_page_cache_limit: int = 2147483648
    disable_auto_compaction: bool = False
    # compaction (seed 002): names and defaults of the seed; ALIASES maps Doris 2.x names
    cumulative_compaction_policy: str = "size_based"
    cumulative_size_based_promotion_ratio: float = 0.05
    cumulative_size_based_promotion_size_mbytes: int = 1024
    cumulative_size_based_promotion_min_size_mbytes: int = 64
    cumulative_size_based_compaction_lower_size_mbytes: int = 64
    max_cumulative_compaction_num_singleton_deltas: int = 1000
    cumulative_compaction_min_deltas: int = 5
    cumulative_compaction_skip_window_seconds: int = 30
    base_compaction_num_cumulative_deltas: int = 5
    base_cumulative_delta_ratio: float = 0.3
    base_compaction_interval_seconds_since_last_operation: int = 86400
    compaction_task_num_per_disk: int = 2
    min_compaction_failure_interval_sec: int = 600
    compaction_tablet_scan_frequency_factor: float = 0.0
    compaction_tablet_compaction_score_factor: float = 1.0
    generate_compaction_tasks_min_interval_ms: int = 10
    cumulative_compaction_rounds_for_each_base_compaction_round: int = 9
    total_permits_for_compaction_score: int = 10000
    max_compaction_threads: int = 10
    max_tablet_version_num: int = 2000
    exec_threads: int = 2
    # BE: where local() may read files ("" = the directory the server started in; Doris's
    # default is DORIS_HOME)
    user_files_secure_path: str = ""
    # statements running their Python at once (storage/cpu_slots.py); 0 = the cores, -1 = no limit
    pipeline_executor_size: int = 0
    # auto: while statements queue for CPU slots, the Python threads share one core
    # (storage/gil_affinity.py); none: threads run where the OS puts them
    python_cpu_affinity: str = "auto"
    # Accounts (catalog/auth.py): root's password as MySQL's double SHA-1 ('*' + 40 hex
    # digits, what PASSWORD('x') returns), applied at start-up; empty keeps the journaled one.
    initial_root_password: str = ""
    qe_max_connection: int = 1024  # connections the server accepts at once
    arrow_flight_sql_port: int = -1  # Arrow Flight SQL (server/flight_sql.py); -1 = off
    alter_table_timeout_second: int = 86400
    rollup_job_tablet_delay_ms: int = 0
    spark_load_etl_delay_ms: int = 0  # a test hook: a Spark Load job waits after its ETL
    # SELECT ... INTO OUTFILE "file:///...": Doris refuses local files unless this is set
    enable_outfile_to_local: bool = False
    # Loads' memory (storage/memtable.py, catalog/load_sink.py, server/http/stream_load.py)
    write_buffer_size: int = 209715200
    mem_limit: str = "90%"
    load_process_max_memory_limit_percent: int = 50
    load_process_soft_mem_limit_percent: int = 80
    # over mem_limit, a load waits this long for other work to free memory before it fails
    thread_wait_gc_max_milliseconds: int = 1000
    streaming_load_max_mb: int = 10240
    streaming_load_json_max_mb: int = 100
    # SHOW STREAM LOAD (server/http/stream_load_records.py); Doris's default is false
    enable_stream_load_record: bool = False
    max_stream_load_record_size: int = 5000
    # Not file settings: where everything lives, set by --data-dir.
    data_dir: str = "minidoris-data"
    extra: dict = field(default_factory=dict)

    def path(self, setting: str) -> Path:
        """A directory setting resolved against the data dir."""
        p = Path(getattr(self, setting))
        return p if p.is_absolute() else Path(self.data_dir) / p


# Doris 2.x names of seed 002's settings (and this project's earlier name), accepted as well.
ALIASES = {
    "compaction_promotion_ratio": "cumulative_size_based_promotion_ratio",
    "compaction_promotion_size_mbytes": "cumulative_size_based_promotion_size_mbytes",
    "compaction_promotion_min_size_mbytes": "cumulative_size_based_promotion_min_size_mbytes",
    "compaction_min_size_mbytes": "cumulative_size_based_compaction_lower_size_mbytes",
    "cumulative_compaction_max_deltas": "max_cumulative_compaction_num_singleton_deltas",
    "base_compaction_min_rowset_num": "base_compaction_num_cumulative_deltas",
    "base_compaction_min_data_ratio": "base_cumulative_delta_ratio",
    "generate_compaction_tasks_interval_ms": "generate_compaction_tasks_min_interval_ms",
}


def parse_mem_limit(raw: str, physical: int) -> int:
    """Doris's mem_limit: a percentage of the machine's memory ("90%") or a size ("4G",
    "512M", "2147483648")."""
    text = raw.strip().upper()
    try:
        if text.endswith("%"):
            return int(physical * float(text[:-1]) / 100)
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
        if text.endswith("B"):
            text = text[:-1]
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        raise ValueError(f"config mem_limit: expected a size or a percentage, got {raw!r}") from None


def _coerce(name: str, raw: str, typ: type) -> object:
    if typ is bool:
        low = raw.strip().lower()
        if low not in ("true", "false"):
            raise ValueError(f"config {name}: expected true or false, got {raw!r}")
        return low == "true"
    if typ is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"config {name}: expected an integer, got {raw!r}") from None
    if typ is float:
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"config {name}: expected a number, got {raw!r}") from None
    return raw.strip()


def load_config(path: Path | None) -> Config:
    """Read the config file (explicit path, or conf/minidoris.conf if present, else defaults)."""
    cfg = Config()
    if path is None:
        path = next((p for p in DEFAULT_CONFIG_PATHS if p.exists()), None)
        if path is None:
            return cfg
    types = {f.name: f.type for f in dataclasses.fields(Config)}
    py_types = {"int": int, "bool": bool, "str": str, "float": float}
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            raise ValueError(f"{path}:{lineno}: expected key = value")
        key, value = (s.strip() for s in line.split("=", 1))
        key = ALIASES.get(key, key)
        if key not in types or key in ("data_dir", "extra"):
            raise ValueError(f"{path}:{lineno}: unknown setting {key!r}")
        setattr(cfg, key, _coerce(key, value, py_types[str(types[key])]))
    if cfg.python_cpu_affinity not in ("auto", "none"):
        raise ValueError(f"config python_cpu_affinity: expected auto or none, "
                         f"got {cfg.python_cpu_affinity!r}")
    return cfg
