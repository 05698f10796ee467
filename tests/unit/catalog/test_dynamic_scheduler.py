"""The dynamic partition scheduler on an in-process catalog, with an injected clock: CREATE
TABLE's first partitions, passes day by day, runtime info, FE configs, the APScheduler job."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pytest

from catalog.catalog import Catalog
from catalog.dynamic_scheduler import DynamicPartitionScheduler
from catalog.errors import DorisError
from catalog.fe_config import FeConfig
from catalog.load import load_table
from server.config import Config
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import StorageEngine

DAY_RULE = ('"dynamic_partition.time_unit" = "DAY", "dynamic_partition.start" = "-7", '
            '"dynamic_partition.end" = "3", "dynamic_partition.prefix" = "p", '
            '"dynamic_partition.buckets" = "2", "dynamic_partition.time_zone" = "UTC"')


class Clock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def open_catalog(path: Path) -> Catalog:
    cat = Catalog(path / "meta", StorageEngine(str(path / "storage")), backend_num=3)
    cat.open()
    return cat


@pytest.fixture
def env(tmp_path):
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    clock = Clock(datetime(2020, 5, 29, 10))
    fe = FeConfig.from_object(Config())
    sched = DynamicPartitionScheduler(cat, fe, clock)
    yield cat, sched, clock, fe
    sched.shutdown()
    cat.close()


def create(cat: Catalog, sched: DynamicPartitionScheduler, sql: str) -> None:
    stmt = parse_create_table(TokenCursor(sql))
    cat.create_table("db", stmt, dynamic_now=sched.now(),
                     max_dynamic_partitions=sched.max_partitions())
    sched.table_created("db", stmt.name)


def names(cat: Catalog, table: str = "t") -> list[str]:
    return sorted(p.name for p in cat.get_table("db", table).partitions.values())


def day_table(rule: str = DAY_RULE) -> str:
    return (f"CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) () DISTRIBUTED BY HASH(k1) "
            f'BUCKETS 1 PROPERTIES ("replication_num" = "1", {rule})')


def test_seed_example_day_by_day(env):
    cat, sched, clock, _ = env
    create(cat, sched, day_table())
    assert names(cat) == ["p20200529", "p20200530", "p20200531", "p20200601"]
    assert all(p.buckets == 2 for p in cat.get_table("db", "t").partitions.values())
    clock.now = datetime(2020, 5, 30, 10)
    assert sched.run_pass() == 1
    assert names(cat)[-1] == "p20200602" and len(names(cat)) == 5
    clock.now = datetime(2020, 6, 6, 10)
    sched.run_pass()
    assert "p20200529" not in names(cat) and names(cat)[0] == "p20200530"
    row = sched.show_rows("db")[0]
    assert row[:8] == ("t", "true", "DAY", "-7", "3", "p", "2", "N/A")
    assert row[8:] == ("N/A", "2020-06-06 10:00:00", "NORMAL", "N/A", "N/A", "NULL")


def test_dropped_partition_leaves_the_disk_and_replay_agrees(env, tmp_path):
    """The scheduler drops without FORCE, as Doris's does: the partition waits in the recycle
    bin with its tablets, which leave the disk when the bin erases it."""
    from catalog.recycle_ops import erase_instantly

    cat, sched, clock, _ = env
    create(cat, sched, day_table())
    load_table(cat, "db", "t", pa.table({"k1": pa.array([datetime(2020, 5, 29).date()]),
                                         "v": pa.array([1], pa.int32())}), datetime.now())
    old = cat.get_table("db", "t").partition_by_name("p20200529")
    tablets = list(old.tablets)
    assert all(cat.engine.has_tablet(t) for t in tablets)
    clock.now = datetime(2020, 6, 6, 10)
    sched.run_pass()
    assert list(cat.recycle_bin.partitions) == [old.partition_id]
    assert all(cat.engine.has_tablet(t) for t in tablets)
    erase_instantly(cat, "PartitionId", old.partition_id)
    assert not any(cat.engine.has_tablet(t) for t in tablets)
    assert not any((tmp_path / "storage" / "data" / str(t)).exists() for t in tablets)
    expected = names(cat)
    cat.close()
    again = open_catalog(tmp_path)
    assert names(again) == expected
    again.close()


def test_fe_config_disables_the_scheduler(env):
    cat, sched, clock, fe = env
    create(cat, sched, day_table())
    fe.set("dynamic_partition_enable", "false")
    clock.now = datetime(2020, 5, 30, 10)
    assert sched.run_pass() == 0 and "p20200602" not in names(cat)
    fe.set("dynamic_partition_enable", "true")
    assert sched.run_pass() == 1 and "p20200602" in names(cat)


def test_disabled_rule_is_listed_but_not_scheduled(env):
    cat, sched, clock, _ = env
    create(cat, sched, day_table(DAY_RULE + ', "dynamic_partition.enable" = "false"'))
    assert names(cat) == []
    assert sched.run_pass() == 0
    assert sched.show_rows("db")[0][1] == "false"


def test_alter_enables_and_runs_at_once(env):
    cat, sched, clock, _ = env
    create(cat, sched, "CREATE TABLE t (k1 DATE) PARTITION BY RANGE(k1) ("
                       'PARTITION p_old VALUES [("2020-01-01"), ("2020-02-01"))) '
                       'DISTRIBUTED BY HASH(k1) BUCKETS 1 PROPERTIES ("replication_num" = "1")')
    assert sched.show_rows("db") == []
    sched.alter_properties("db", "t", {"dynamic_partition.time_unit": "DAY",
                                       "dynamic_partition.start": "-3",
                                       "dynamic_partition.end": "1",
                                       "dynamic_partition.prefix": "p"})
    assert names(cat) == ["p20200529", "p20200530"]  # p_old was before START
    row = sched.show_rows("db")[0]
    assert row[8] == row[9] == "2020-05-29 10:00:00"


def test_conflict_is_recorded_and_cleared(env):
    cat, sched, clock, _ = env
    create(cat, sched, "CREATE TABLE t (k1 DATE) PARTITION BY RANGE(k1) ("
                       'PARTITION p_manual VALUES [("2020-05-28"), ("2020-06-05"))) '
                       'DISTRIBUTED BY HASH(k1) BUCKETS 1 PROPERTIES ("replication_num" = "1")')
    sched.alter_properties("db", "t", {"dynamic_partition.time_unit": "DAY",
                                       "dynamic_partition.end": "1",
                                       "dynamic_partition.prefix": "p"})
    info = sched.info(cat.get_table("db", "t").table_id)
    assert names(cat) == ["p_manual"] and "is intersected with range" in info.create_msg
    clock.now = datetime(2020, 6, 10)
    sched.run_pass()
    assert info.create_msg == "N/A" and info.state == "NORMAL"
    assert names(cat) == ["p20200610", "p20200611", "p_manual"]


def test_create_table_conflict_fails_and_creates_nothing(env):
    cat, sched, _, _ = env
    with pytest.raises(DorisError, match="is intersected with range"):
        create(cat, sched, "CREATE TABLE t (k1 DATE) PARTITION BY RANGE(k1) ("
                           'PARTITION p_manual VALUES [("2020-05-28"), ("2020-06-05"))) '
                           'DISTRIBUTED BY HASH(k1) BUCKETS 1 PROPERTIES ("replication_num" = "1", '
                           f"{DAY_RULE})")
    assert "t" not in cat.get_db("db").tables


def test_background_job_and_interval_change(env):
    cat, sched, clock, fe = env
    create(cat, sched, day_table())
    clock.now = datetime(2020, 5, 30, 10)
    sched.start()  # the first pass runs at start
    job = sched._scheduler.get_job("dynamic_partition")
    assert job.trigger.interval.total_seconds() == 600
    fe.set("dynamic_partition_check_interval_seconds", "7200")
    assert sched._scheduler.get_job("dynamic_partition").trigger.interval.total_seconds() == 7200
    for _ in range(100):
        if "p20200602" in names(cat):
            break
        time.sleep(0.02)
    assert "p20200602" in names(cat)


def test_fixed_time_overrides_the_clock(env):
    _, sched, clock, _ = env
    sched.set_time(datetime(2021, 1, 1, 0, 0))
    assert sched.now() == datetime(2021, 1, 1)
    sched.set_time(None)
    assert sched.now() == clock.now


def test_rule_changes_survive_a_restart(env, tmp_path):
    cat, sched, _, _ = env
    create(cat, sched, day_table())
    sched.alter_properties("db", "t", {"dynamic_partition.end": "5",
                                       "dynamic_partition.replication_num": "1"})
    before = dict(cat.get_table("db", "t").properties)
    assert before["dynamic_partition.end"] == "5"
    assert before["dynamic_partition.replication_allocation"] == "tag.location.default: 1"
    expected = names(cat)
    cat.close()
    again = open_catalog(tmp_path)
    assert again.get_table("db", "t").properties == before and names(again) == expected
    again.close()
