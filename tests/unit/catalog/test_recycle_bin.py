"""The recycle bin's expiry rules (CatalogRecycleBin.runAfterCatalogReady): nothing goes before
minEraseLatency (10 minutes), expired objects go after catalog_trash_expire_second, and only
the max_same_name_catalog_trash_num newest of one name are kept; erasure deletes the tablets
and is journaled (a restart sees the same bin)."""

from __future__ import annotations

from pathlib import Path

from catalog.catalog import Catalog
from catalog.recycle_scheduler import RecycleBinDaemon
from cluster_testutil import create, make_catalog
from storage import StorageEngine

T0 = 1_700_000_000.0
TABLE = ("CREATE TABLE {} (k INT, v INT SUM) DISTRIBUTED BY HASH(k) BUCKETS 2 "
         "PROPERTIES (\"replication_num\" = \"1\")")


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def _catalog(tmp_path: Path, clock: Clock) -> Catalog:
    cat = make_catalog(tmp_path)
    cat.clock = clock
    return cat


def _daemon(cat: Catalog, expire: int, keep: int = 3) -> RecycleBinDaemon:
    config = {"catalog_trash_expire_second": expire, "max_same_name_catalog_trash_num": keep}
    return RecycleBinDaemon(cat, config.__getitem__)


def _tablets(cat: Catalog, name: str) -> list[int]:
    return [tid for p in cat.get_table("db", name).all_partitions() for tid in p.tablets]


def test_expiry_waits_for_both_the_minimum_latency_and_the_setting(tmp_path):
    clock = Clock()
    cat = _catalog(tmp_path, clock)
    create(cat, TABLE.format("t"))
    tablets = _tablets(cat, "t")
    cat.drop_table("db", "t")
    assert _daemon(cat, expire=1).step(T0 + 599).tables == []  # within minEraseLatency
    assert _daemon(cat, expire=86400).step(T0 + 601).tables == []  # not expired yet
    assert all(cat.engine.get_tablet(t) is not None for t in tablets)
    erased = _daemon(cat, expire=1).step(T0 + 601)
    assert len(erased.tables) == 1 and not cat.recycle_bin.tables
    assert not any(t in cat.engine._tablets for t in tablets)  # noqa: SLF001 - files gone


def test_only_the_newest_of_one_name_are_kept(tmp_path):
    clock = Clock()
    cat = _catalog(tmp_path, clock)
    ids = []
    for i in range(4):
        clock.now = T0 + i
        create(cat, TABLE.format("t"))
        ids.append(cat.get_table("db", "t").table_id)
        cat.drop_table("db", "t")
    assert _daemon(cat, expire=86400, keep=3).step(T0 + 100).tables == []  # too recent
    erased = _daemon(cat, expire=86400, keep=3).step(T0 + 700)
    assert erased.tables == [ids[0]]  # the oldest beyond three
    assert sorted(cat.recycle_bin.tables) == sorted(ids[1:])
    assert _daemon(cat, expire=86400, keep=-1).step(T0 + 800).tables == []  # -1: no limit


def test_a_database_expires_with_its_tables_and_a_restart_keeps_the_bin(tmp_path):
    clock = Clock()
    cat = _catalog(tmp_path, clock)
    create(cat, TABLE.format("t"))
    cat.create_database("other")
    cat.drop_database("db")
    assert [r.db.name for r in cat.recycle_bin.databases.values()] == ["db"]
    cat.close()
    again = Catalog(tmp_path / "meta", StorageEngine(str(tmp_path / "storage")), clock=clock)
    again.open()
    assert [r.table.name for r in again.recycle_bin.tables.values()] == ["t"]
    erased = _daemon(again, expire=1000).step(T0 + 1001)
    assert len(erased.databases) == 1 and len(erased.tables) == 1
    assert not again.recycle_bin.databases and not again.recycle_bin.tables
    again.close()
    third = Catalog(tmp_path / "meta", StorageEngine(str(tmp_path / "storage")))
    third.open()
    assert not third.recycle_bin.databases and not third.recycle_bin.tables
    assert sorted(third.dbs) == ["other"]
