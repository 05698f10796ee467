"""`minidoris serve`: start the server (FE + simulated BEs in one process).

Start-up: load the config (file, then flags) -> create the data dir -> open the storage engine
-> open the catalog (image + journal replay, tablets restored, orphan rowsets removed) -> FE
configs at runtime (`catalog/fe_config.py`) -> listen on the query port and the HTTP port
(`server/http/`, stream load) -> start the dynamic partition scheduler (an APScheduler
interval job). SIGTERM / Ctrl-C stop the scheduler (waiting
for a running pass), close the listener and the journal cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from datetime import datetime
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from mysql_mimic import MysqlServer
from mysql_mimic.stream import ConnectionClosed

from catalog.catalog import Catalog
from catalog.dynamic_scheduler import DynamicPartitionScheduler
from server.handlers import async_mv
from server.mtmv_tasks import MTMVTasks
from catalog.fe_config import FeConfig
from catalog.compaction_scheduler import CompactionScheduler, SchedulerConfig
from catalog.group_commit import GroupCommitManager
from catalog import insert_overwrite
from catalog.rollup_job import resume_jobs
from catalog.tablet_scheduler import TabletScheduler
from catalog.recycle_scheduler import RecycleBinDaemon
from server import gc_tuning, local_tvf
from server.auth import DorisIdentity
from pipeline.load_manager import LoadManager
from catalog.export_jobs import cancel_interrupted
from server.config import Config, load_config, parse_mem_limit
from server.data_dir_lock import DataDirInUse, lock_data_dir
from server.handlers.profile import ProfileStore
from server.http.service import HttpService
from server.http.stream_load_records import StreamLoadRecords
from server.http.two_phase import PreparedTxns
from server.limits import BoundedStream, max_packet_of
from server.protocol import fast_commands
from server.metrics import QueryMetrics
from server.protocol.connection import DorisConnection
from server.session import DorisSession
from server.variables import new_global_variables
from server.system_variables import restore_globals
from storage import StorageEngine, cpu_slots, gil_affinity
from storage.compaction_policy import CompactionConfig
from storage.memtable import MemTableLimiter
from storage.process_memory import ProcessMemory, physical_bytes, tune_allocator

log = logging.getLogger("minidoris")

# How long a thread may hold the GIL while another waits (CPython's default is 5 ms). Scan and
# join threads alternate short GIL-free numpy/Arrow kernels with Python bookkeeping: with the
# default, a thread coming back from a 50 us kernel waits up to 5 ms for the other to yield
# (the convoy effect), so two threads used about one core. 0.2 ms keeps both busy (SSB SF1
# Q2.1/Q4.1: 1.0 -> 1.4-1.6 cores, 20-35 % less wall time) for a few % of switching overhead.
GIL_SWITCH_INTERVAL_S = 0.0002
STATEMENT_THREADS = 64
COMPACTION_SLOTS = 1  # compaction tasks running their Python at once (storage/cpu_slots.py)


def executor_slots(configured: int) -> int:
    """`pipeline_executor_size`: 0 means the machine's cores (as Doris's BE), -1 no limit
    (INSERTs get as many slots of their own: storage/cpu_slots.py)."""
    if configured < 0:
        return 0
    return configured or os.cpu_count() or 2


@dataclass
class Services:
    """Process-wide services every session shares."""

    config: Config
    catalog: Catalog
    engine: StorageEngine
    pool: ThreadPoolExecutor
    global_variables: object
    fe_config: FeConfig | None = None
    dynamic_scheduler: DynamicPartitionScheduler | None = None
    tablet_scheduler: TabletScheduler | None = None
    compaction: CompactionScheduler | None = None
    profiles: ProfileStore = field(default_factory=ProfileStore)  # SHOW QUERY PROFILE
    sessions: dict = field(default_factory=dict)  # connection id -> DorisSession (PROCESSLIST, KILL)
    data_dir_lock: object = None  # the open LOCK file (server/data_dir_lock.py)
    load_manager: object = None  # Spark Load jobs (pipeline/load_manager.py)
    group_commit: GroupCommitManager | None = None  # INSERT/Stream Load group commit
    metrics: QueryMetrics = field(default_factory=QueryMetrics)  # /metrics (server/metrics.py)
    stream_loads: StreamLoadRecords | None = None  # SHOW STREAM LOAD
    prepared_txns: PreparedTxns | None = None  # pre-committed two-phase Stream Loads
    recycle_bin: RecycleBinDaemon | None = None  # erases what expires in the recycle bin
    mtmv: object = None  # async materialized views' refresh tasks (server/mtmv_tasks.py)


PAGE_CACHE_SHARE = 20  # Doris's storage_page_cache_limit default: 20% of mem_limit


def page_cache_bytes(cfg: Config, mem_limit: int) -> int:
    """storage_page_cache_limit, at most Doris's default share of mem_limit (a cache that
    refills during a query would otherwise take a small budget from the query itself)."""
    if not mem_limit:
        return cfg.storage_page_cache_limit
    return min(cfg.storage_page_cache_limit, mem_limit * PAGE_CACHE_SHARE // 100)


def open_services(cfg: Config) -> Services:
    Path(cfg.data_dir).mkdir(parents=True, exist_ok=True)
    data_dir_lock = lock_data_dir(Path(cfg.data_dir))  # before anything reads the journal
    mem_limit = parse_mem_limit(cfg.mem_limit, physical_bytes())
    engine = StorageEngine(cfg.path("storage_root_path"), page_size=cfg.data_page_size,
                           short_key_interval=cfg.short_key_index_interval,
                           max_segment_size=cfg.max_segment_size,
                           page_cache_bytes=page_cache_bytes(cfg, mem_limit))
    engine.write_buffer_size = cfg.write_buffer_size
    engine.memtables = MemTableLimiter(load_soft_limit(cfg))
    engine.process_memory = ProcessMemory(mem_limit, wait_ms=cfg.thread_wait_gc_max_milliseconds)
    tune_allocator()
    catalog = Catalog(cfg.path("meta_dir"), engine, backend_num=cfg.backend_num,
                      edit_log_roll_num=cfg.edit_log_roll_num)
    catalog.open()
    local_tvf.register(catalog, cfg.user_files_secure_path)
    if cfg.initial_root_password:  # conf/minidoris.conf sets root's password (a double SHA-1)
        catalog.auth.set_initial_root_password(cfg.initial_root_password)
    group_commit = GroupCommitManager(catalog, os.path.join(cfg.path("storage_root_path"), "wal"))
    group_commit.recover()  # acknowledged async group commit loads, before anyone reads
    pool = cpu_slots.SlotPool(max_workers=max(cfg.exec_threads, 2), thread_name_prefix="exec")
    fe_config = FeConfig.from_object(cfg)
    fe_config.on_change("edit_log_roll_num", lambda n: setattr(catalog, "edit_log_roll_num", n))
    scheduler = DynamicPartitionScheduler(catalog, fe_config)
    catalog.attach_fe_config(fe_config)
    tablets = TabletScheduler(catalog, fe_config.get)  # relocation, repair, colocate balance
    catalog.max_tablet_version_num = cfg.max_tablet_version_num
    compaction = CompactionScheduler(catalog, compaction_config(cfg), SchedulerConfig(
        cfg.compaction_task_num_per_disk, cfg.min_compaction_failure_interval_sec,
        cfg.compaction_tablet_scan_frequency_factor,
        cfg.compaction_tablet_compaction_score_factor,
        cfg.generate_compaction_tasks_min_interval_ms,
        cfg.cumulative_compaction_rounds_for_each_base_compaction_round,
        cfg.total_permits_for_compaction_score, cfg.max_compaction_threads),
        disabled=lambda: cfg.disable_auto_compaction)
    global_variables = new_global_variables()
    restore_globals(global_variables, catalog.global_variables)  # SET GLOBAL before a restart
    services = Services(cfg, catalog, engine, pool, global_variables, fe_config, scheduler,
                        tablets, compaction=compaction, data_dir_lock=data_dir_lock,
                        group_commit=group_commit,
                        stream_loads=StreamLoadRecords(fe_config),
                        prepared_txns=PreparedTxns(catalog),
                        recycle_bin=RecycleBinDaemon(catalog, fe_config.get))
    services.load_manager = LoadManager(
        catalog, cfg.data_dir, {"page_size": cfg.data_page_size,
                                "short_key_interval": cfg.short_key_index_interval,
                                "max_segment_size": cfg.max_segment_size},
        lambda: str(services.global_variables.get("time_zone")))
    services.load_manager.recover()
    services.mtmv = MTMVTasks(services)
    async_mv.register(catalog)  # mv_infos(), jobs(), tasks()
    cancel_interrupted(catalog, datetime.now().strftime("%Y-%m-%d %H:%M:%S"))  # EXPORT jobs
    return services


def load_soft_limit(cfg: Config) -> int:
    """The bytes all loads' memtables may hold before loads flush their largest (Doris's
    MemTableMemoryLimiter: mem_limit x load_process_max_memory_limit_percent x
    load_process_soft_mem_limit_percent)."""
    return parse_mem_limit(cfg.mem_limit, physical_bytes()) * \
        cfg.load_process_max_memory_limit_percent \
        // 100 * cfg.load_process_soft_mem_limit_percent // 100


def compaction_config(cfg: Config) -> CompactionConfig:
    """Seed 002's policy settings (conf/minidoris.conf) for storage/compaction_policy.py."""
    if cfg.cumulative_compaction_policy.lower() != "size_based":
        raise ValueError(f"cumulative_compaction_policy {cfg.cumulative_compaction_policy!r}: "
                         f"only size_based is supported (num_based is deprecated)")
    return CompactionConfig(
        cfg.cumulative_size_based_promotion_ratio,
        cfg.cumulative_size_based_promotion_size_mbytes,
        cfg.cumulative_size_based_promotion_min_size_mbytes,
        cfg.cumulative_size_based_compaction_lower_size_mbytes,
        cfg.max_cumulative_compaction_num_singleton_deltas, cfg.cumulative_compaction_min_deltas,
        cfg.cumulative_compaction_skip_window_seconds, cfg.base_compaction_num_cumulative_deltas,
        cfg.base_cumulative_delta_ratio,
        cfg.base_compaction_interval_seconds_since_last_operation)


class DorisServer(MysqlServer):
    """mysql-mimic's server, building DorisConnection instead of its own Connection."""

    def __init__(self, services: Services, **kwargs):
        super().__init__(session_factory=lambda: DorisSession(services), **kwargs)
        self.services = services

    async def start_server(self, **kwargs) -> None:
        """mysql-mimic's, with readers that let a connection answer a key lookup in the data
        callback (server/protocol/fast_commands.py)."""
        self._server = await fast_commands.start_server(
            self._client_connected_cb, **{"port": 3306, **self._serve_kwargs, **kwargs})

    async def _client_connected_cb(self, reader, writer) -> None:
        session = DorisSession(self.services)
        stream = BoundedStream(reader, writer, max_packet_of(session))  # server/limits.py
        peer = writer.get_extra_info("peername")
        identity = DorisIdentity(self.services, session, peer[0] if peer else "")  # server/auth.py
        connection = DorisConnection(stream=stream, session=session, control=self.control,
                                     server_capabilities=self.capabilities,
                                     identity_provider=identity, ssl=self.ssl)
        connection_id = await self.control.add(connection)
        connection.connection_id = connection_id
        try:
            await connection.start()
        except (ConnectionError, asyncio.IncompleteReadError, ConnectionClosed):
            pass
        except asyncio.CancelledError:
            # The server is stopping: ending the connection is the point. Re-raised, the
            # cancellation would reach asyncio's stream callback and be logged as an error.
            pass
        except Exception as e:  # noqa: BLE001 - a malformed handshake ends this connection only
            log.info("connection %d: bad handshake: %s: %s", connection_id, type(e).__name__, e)
        finally:
            writer.close()
            await self.control.remove(connection_id)


async def serve(cfg: Config, host: str) -> None:
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    queries = executor_slots(cfg.pipeline_executor_size)
    cpu_slots.configure(queries, queries, COMPACTION_SLOTS)
    gil_affinity.configure(cfg.python_cpu_affinity == "auto")
    services = open_services(cfg)
    gc_tuning.apply()  # after the catalog's replay: see server/gc_tuning.py
    # Statements run in the loop's default executor (asyncio.to_thread): enough threads that
    # many clients (and sync group commit loads waiting for their group) do not queue.
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=STATEMENT_THREADS, thread_name_prefix="stmt"))
    services.group_commit.start()
    server = DorisServer(services)
    await server.start_server(host=host, port=cfg.query_port)
    http = _start_http(services, host, cfg.http_port)
    if http is not None:
        cfg.http_port = http.port  # with 0 a free port was picked: SHOW TABLETS' links use it
        services.load_manager.http_base_url = f"http://{host}:{http.port}"
    flight_sql = _start_flight_sql(services, host, cfg.arrow_flight_sql_port)
    services.dynamic_scheduler.start()
    services.tablet_scheduler.start(cfg.tablet_schedule_interval_ms / 1000)
    services.compaction.start()
    services.recycle_bin.start()
    resume_jobs(services.catalog)  # ADD ROLLUP jobs a restart interrupted
    insert_overwrite.drop_leftovers(services.catalog)  # INSERT OVERWRITEs a crash interrupted
    services.mtmv.start()  # async materialized views: schedules, ON COMMIT (after the above)
    log.info("minidoris ready on %s:%d (data dir %s)", host, cfg.query_port, cfg.data_dir)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down")
    server.close()
    if http is not None:
        await http.stop()
    services.dynamic_scheduler.shutdown()
    services.mtmv.shutdown()
    services.tablet_scheduler.stop()
    services.recycle_bin.stop()
    services.compaction.stop()
    services.group_commit.stop()  # publishes the open groups
    services.load_manager.stop()
    if flight_sql is not None:
        flight_sql.shutdown()
    services.pool.shutdown(wait=False, cancel_futures=True)
    services.catalog.close()


def _start_http(services: Services, host: str, port: int) -> HttpService | None:
    """The HTTP port (stream load); a port in use leaves the MySQL side running, logged."""
    try:
        http = HttpService(services, host, port)
    except OSError as e:
        log.error("http_port %d unavailable (%s): stream load is disabled", port, e)
        return None
    http.start()
    return http


def _start_flight_sql(services: Services, host: str, port: int):
    """Arrow Flight SQL (off when -1); a port in use is logged, the rest keeps running."""
    from server import flight_sql
    try:
        return flight_sql.start(services, host, port)
    except Exception as e:  # pyarrow raises FlightUnavailableError/OSError for a port in use
        log.error("arrow_flight_sql_port %d unavailable (%s): Flight SQL is disabled", port, e)
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="minidoris", description="A Doris-compatible SQL server")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="start the server")
    s.add_argument("--config", type=Path, default=None, help="config file (conf/minidoris.conf)")
    s.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=None, help="MySQL protocol port (default 9030)")
    s.add_argument("--http-port", type=int, default=None,
                   help="HTTP port for stream load (default 8030; 0 picks a free one)")
    s.add_argument("--data-dir", default=None, help="data directory (default ./minidoris-data)")
    s.add_argument("--arrow-flight-sql-port", type=int, default=None,
                   help="Arrow Flight SQL port (default -1: off)")
    s.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # sqlglot warns for every Doris statement it leaves to the project's parsers as a Command
    # ("contains unsupported syntax"): expected, and a busy log's noise
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    try:
        cfg = load_config(args.config)
    except (OSError, ValueError) as e:
        print(f"minidoris: {e}", file=sys.stderr)
        return 2
    if args.port is not None:
        cfg.query_port = args.port
    if args.http_port is not None:
        cfg.http_port = args.http_port
    if args.data_dir is not None:
        cfg.data_dir = args.data_dir
    if args.arrow_flight_sql_port is not None:
        cfg.arrow_flight_sql_port = args.arrow_flight_sql_port
    host = args.host or cfg.priority_networks or "127.0.0.1"
    try:
        with asyncio.Runner(loop_factory=fast_commands.new_event_loop) as runner:
            runner.run(serve(cfg, host))
    except DataDirInUse as e:
        print(f"minidoris: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a read-only data dir, a port in use: the machine's state, said once
        print(f"minidoris: cannot start: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
