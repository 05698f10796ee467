"""The dynamic partition scheduler: Doris's DynamicPartitionScheduler as an APScheduler job.

Owns the clock the dynamic partition rules are evaluated at, the per-table runtime info that
SHOW DYNAMIC PARTITION TABLES reports (not journaled: Doris keeps it in memory too), and the
background interval job.

    BackgroundScheduler job "dynamic_partition" (every dynamic_partition_check_interval_seconds,
    first run at start-up)
      -> run_pass(now)            skipped while FE config dynamic_partition_enable is false
         -> run_table(db, t, now) for every table whose rule is enabled, under its locks:
              plan = dynamic_partition.plan(rule, column type, partitions, now)   (pure)
              partition_ddl.apply_plan(...)                                         (journaled)
              runtime info updated in Doris's order (see `_apply`); a table under an ALTER
              job (state ROLLUP / SCHEMA_CHANGE) is skipped and the reason recorded (`_skip`)

Changing dynamic_partition_check_interval_seconds reschedules the job at once. The clock is
injectable: `clock` for tests of the object, `set_time` (ADMIN SET DYNAMIC PARTITION TIME) to fix
it in a running server; `run_pass` (ADMIN RUN DYNAMIC PARTITION) runs a pass on demand.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from apscheduler.schedulers.background import BackgroundScheduler

from catalog.catalog import Catalog
from catalog.dynamic_partition import DynamicPlan, items_of, plan
from catalog.dynamic_periods import sorted_periods_text
from catalog.dynamic_properties import DynamicProperty, read
from catalog.errors import DorisError
from catalog.fe_config import FeConfig
from catalog.model import OlapTable
from catalog.partition_ddl import apply_plan, locked_table, set_dynamic_properties
from catalog.rollup_job import not_normal_message, table_state

log = logging.getLogger(__name__)
JOB_ID = "dynamic_partition"
NA = "N/A"
SHOW_COLUMNS = ["TableName", "Enable", "TimeUnit", "Start", "End", "Prefix", "Buckets", "StartOf",
                "LastUpdateTime", "LastSchedulerTime", "State", "LastCreatePartitionMsg",
                "LastDropPartitionMsg", "ReservedHistoryPeriods"]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class RuntimeInfo:
    last_update_time: str = NA
    last_scheduler_time: str = NA
    state: str = "NORMAL"
    create_msg: str = NA
    drop_msg: str = NA

    def record_create(self, message: str | None) -> None:
        self.state, self.create_msg = ("NORMAL", NA) if message is None else ("ERROR", message)

    def record_drop(self, message: str | None) -> None:
        self.state, self.drop_msg = ("NORMAL", NA) if message is None else ("ERROR", message)


class DynamicPartitionScheduler:
    def __init__(self, catalog: Catalog, fe_config: FeConfig,
                 clock: Callable[[], datetime] = utc_now):
        self.catalog = catalog
        self.fe_config = fe_config
        self.clock = clock
        self._fixed: datetime | None = None
        self._runtime: dict[int, RuntimeInfo] = {}
        self._lock = threading.Lock()
        self._scheduler: BackgroundScheduler | None = None
        fe_config.on_change("dynamic_partition_check_interval_seconds", self._reschedule)

    # -- the clock -----------------------------------------------------------------------------
    def now(self) -> datetime:
        """Aware (the real clock) or naive (a fixed wall time in each table's zone)."""
        return self._fixed if self._fixed is not None else self.clock()

    def set_time(self, fixed: datetime | None) -> None:
        self._fixed = fixed

    def _time_text(self, now: datetime) -> str:
        local = now if now.tzinfo is None else now.astimezone()
        return local.strftime("%Y-%m-%d %H:%M:%S")

    def max_partitions(self) -> int:
        return int(self.fe_config.get("max_dynamic_partition_num"))

    # -- runtime info --------------------------------------------------------------------------
    def info(self, table_id: int) -> RuntimeInfo:
        with self._lock:
            return self._runtime.setdefault(table_id, RuntimeInfo())

    def table_created(self, db_name: str, table_name: str) -> None:
        """CREATE TABLE ran the rule once (catalog.create_table): note the scheduling time."""
        with self.catalog.lock:
            table = self.catalog.get_table(db_name, table_name)
        if read(table.properties) is not None:
            self.info(table.table_id).last_scheduler_time = self._time_text(self.now())

    def show_rows(self, db_name: str | None) -> list[tuple]:
        """SHOW DYNAMIC PARTITION TABLES: every table with a rule, enabled or not, by name."""
        with self.catalog.lock:
            db = self.catalog.get_db(db_name)
            tables = [(t, read(t.properties)) for _, t in sorted(db.tables.items())]
        return [_show_row(t, prop, self.info(t.table_id)) for t, prop in tables if prop]

    # -- ALTER TABLE SET -----------------------------------------------------------------------
    def alter_properties(self, db_name: str, table_name: str, given: dict[str, str]) -> None:
        """Apply new dynamic_partition.* values; an enabled rule runs at once, as in Doris
        (its failures go to the runtime info, not to the ALTER)."""
        prop = set_dynamic_properties(self.catalog, db_name, table_name, given,
                                      self.max_partitions())
        with self.catalog.lock:
            table = self.catalog.get_table(db_name, table_name)
        self.info(table.table_id).last_update_time = self._time_text(self.now())
        if prop.enable:
            self.run_table(db_name, table_name, self.now())

    # -- passes --------------------------------------------------------------------------------
    def run_pass(self, now: datetime | None = None, db_name: str | None = None,
                 table_name: str | None = None) -> int:
        """One scheduler pass over every enabled dynamic table (of one database, or one table,
        if given); nothing while dynamic_partition_enable is false. Returns the tables visited."""
        if not self.fe_config.get("dynamic_partition_enable"):
            return 0
        now = now or self.now()
        with self.catalog.lock:
            targets = [(db.name, t.name) for db in self.catalog.dbs.values()
                       if db_name is None or db.name == db_name
                       for t in db.tables.values()
                       if _enabled(t) and (table_name is None or t.name == table_name)]
        for db, table in targets:
            self.run_table(db, table, now)
        return len(targets)

    def run_table(self, db_name: str, table_name: str, now: datetime) -> None:
        try:
            with locked_table(self.catalog, db_name, table_name) as table:
                prop = read(table.properties)
                if prop is None or not prop.enable:
                    return
                info = self.info(table.table_id)
                state = table_state(self.catalog, table.table_id)
                if state != "NORMAL":  # an ALTER job runs: adds skipped, drops refused
                    info.record_create(f"Table[{table.name}]'s state is not NORMAL.Do not allow "
                                       f"doing dynamic add partition. table state={state}")
                info.last_scheduler_time = self._time_text(now)
                column_type = table.column(table.partition_info.columns[0]).type
                result = plan(prop, column_type, items_of(table), now)
                if state != "NORMAL":
                    self._skip(table, result, info, state)
                else:
                    self._apply(table, prop, result, info)
        except DorisError as e:  # the table went away (or its database) while we waited
            log.info("dynamic partition: skipped %s.%s: %s", db_name, table_name, e.message)

    def _apply(self, table: OlapTable, prop: DynamicProperty, result: DynamicPlan,
               info: RuntimeInfo) -> None:
        """Apply and record in Doris's order: create-planning messages; drop message cleared,
        then set by a drop failure; each successful add clears the create message."""
        for event in result.create_events:
            info.record_create(event)
        info.record_drop(result.drop_error)
        try:
            apply_plan(self.catalog, table, prop, result)
        except DorisError as e:
            info.record_create(e.message)
            log.warning("dynamic partition of %s failed: %s", table.name, e.message)
            return
        if result.add:
            info.record_create(None)

    def _skip(self, table: OlapTable, result: DynamicPlan, info: RuntimeInfo,
              state: str) -> None:
        """Doris's DynamicPartitionScheduler on a table whose state is not NORMAL: no add is
        planned (its message is recorded above); the drop message is cleared, then each
        planned drop fails InternalCatalog.dropPartition's state check. Nothing changes."""
        info.record_drop(None)
        if result.drop:
            info.record_drop(not_normal_message(table.name, state))
            log.info("dynamic partition of %s skipped: its state is %s", table.name, state)

    # -- the background job --------------------------------------------------------------------
    def start(self) -> None:
        interval = int(self.fe_config.get("dynamic_partition_check_interval_seconds"))
        self._scheduler = BackgroundScheduler(daemon=True)
        self._scheduler.add_job(self._tick, "interval", seconds=max(interval, 1), id=JOB_ID,
                                next_run_time=datetime.now(timezone.utc), coalesce=True,
                                max_instances=1)
        self._scheduler.start()

    def shutdown(self) -> None:
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=True)
            self._scheduler = None

    def _tick(self) -> None:
        visited = self.run_pass()
        log.debug("dynamic partition pass: %d tables", visited)

    def _reschedule(self, seconds: int) -> None:
        if self._scheduler is not None:
            self._scheduler.reschedule_job(JOB_ID, trigger="interval", seconds=max(int(seconds), 1))


def _enabled(table: OlapTable) -> bool:
    prop = read(table.properties)
    return prop is not None and prop.enable


def _show_row(table: OlapTable, prop: DynamicProperty, info: RuntimeInfo) -> tuple:
    return (table.name, "true" if prop.enable else "false", prop.time_unit, str(prop.start),
            str(prop.end), prop.prefix, str(prop.buckets), prop.start_of_text(),
            info.last_update_time, info.last_scheduler_time, info.state, info.create_msg,
            info.drop_msg, sorted_periods_text(prop.reserved_history_periods, prop.time_unit))
