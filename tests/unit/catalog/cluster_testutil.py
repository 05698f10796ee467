"""Helpers for the backend and colocation tests: an in-process Catalog on temporary dirs."""

from __future__ import annotations

from pathlib import Path

from catalog.catalog import Catalog
from catalog.tablet_scheduler import TabletScheduler
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import StorageEngine


def make_catalog(tmp_path: Path, backends: int = 3) -> Catalog:
    cat = Catalog(tmp_path / "meta", StorageEngine(str(tmp_path / "storage")), backend_num=backends)
    cat.open()
    cat.create_database("db")
    return cat


def reopen(cat: Catalog, tmp_path: Path) -> Catalog:
    """The same catalog after a restart (image + journal replay)."""
    cat.close()
    again = Catalog(tmp_path / "meta", StorageEngine(str(tmp_path / "storage")))
    again.open()
    return again


def create(cat: Catalog, sql: str) -> None:
    cat.create_table("db", parse_create_table(TokenCursor(sql)))


def table(cat: Catalog, name: str):
    return cat.get_table("db", name)


def bucket_backends(cat: Catalog, name: str) -> list[list[set[int]]]:
    """For each partition (by id) the replica set of each bucket, for every index."""
    t = table(cat, name)
    return [[set(p.tablets[tid].replicas) for tid in tids]
            for p in t.sorted_partitions() for tids in p.tablets_by_index.values()]


def scheduler(cat: Catalog, **config: bool) -> TabletScheduler:
    return TabletScheduler(cat, lambda name: config.get(name, False), batch=4)


def colocated(sql_name: str, group: str, key_type: str = "INT", buckets: int = 8,
              extra: str = "") -> str:
    return (f"CREATE TABLE {sql_name} (k1 {key_type}, v1 INT SUM) DISTRIBUTED BY HASH(k1) "
            f"BUCKETS {buckets} PROPERTIES (\"colocate_with\" = \"{group}\"{extra})")
