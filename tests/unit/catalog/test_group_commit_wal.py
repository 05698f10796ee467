"""Group commit's write-ahead log (catalog/group_commit.py): one Arrow IPC stream per group,
each async load appended and synced; recovery replays acknowledged loads exactly once, reads a
file up to its last complete batch (a crash mid-append), opens a new file when the rows'
schema changes within a group, and still replays the earlier one-file-per-load format."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from catalog.catalog import Catalog
from catalog.group_commit import GroupCommitManager
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ScanStats, StorageEngine

DDL = ('CREATE TABLE t (k INT, v VARCHAR(8)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 '
       'PROPERTIES ("replication_num" = "1", "group_commit_interval_ms" = "600000")')


def open_catalog(path: Path) -> Catalog:
    cat = Catalog(path / "meta", StorageEngine(str(path / "storage")), backend_num=1)
    cat.open()
    return cat


def rows_of(cat: Catalog) -> list[tuple]:
    table = cat.get_table("db", "t")
    out = []
    for p in table.sorted_partitions():
        for tid in p.tablets_by_index[table.base_index_id]:
            part = cat.engine.get_tablet(tid).read(p.visible_version, ["k", "v"], [], ScanStats())
            out += list(zip(part.column("k").to_pylist(), part.column("v").to_pylist()))
    return sorted(out, key=lambda r: r[0])


def setup(path: Path) -> tuple[Catalog, GroupCommitManager]:
    cat = open_catalog(path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL)))
    return cat, GroupCommitManager(cat, str(path / "wal"))


def submit(gcm: GroupCommitManager, ks: list[int]) -> None:
    data = pa.table({"k": pa.array(ks, pa.int32()), "v": pa.array([f"v{k}" for k in ks])})
    gcm.submit("db", "t", data, "async_mode", datetime.now())


def test_loads_of_a_group_share_one_file_and_replay_once(tmp_path):
    cat, gcm = setup(tmp_path)
    submit(gcm, [1, 2])
    submit(gcm, [3])
    submit(gcm, [4, 5])
    files = os.listdir(tmp_path / "wal")
    assert len(files) == 1 and files[0].endswith(".wal")
    # the "crash": nothing was committed; a new manager replays the WAL
    cat2 = open_catalog(tmp_path)
    assert GroupCommitManager(cat2, str(tmp_path / "wal")).recover() == 5
    assert rows_of(cat2) == [(1, "v1"), (2, "v2"), (3, "v3"), (4, "v4"), (5, "v5")]
    assert os.listdir(tmp_path / "wal") == []
    assert GroupCommitManager(cat2, str(tmp_path / "wal")).recover() == 0


def test_a_torn_tail_is_dropped_and_the_complete_loads_replayed(tmp_path):
    cat, gcm = setup(tmp_path)
    submit(gcm, [1, 2])
    submit(gcm, [3, 4])
    (name,) = os.listdir(tmp_path / "wal")
    path = tmp_path / "wal" / name
    whole = path.read_bytes()
    submit(gcm, [5, 6])
    grown = path.read_bytes()
    path.write_bytes(grown[:len(whole) + (len(grown) - len(whole)) // 2])  # a crash mid-append
    cat2 = open_catalog(tmp_path)
    assert GroupCommitManager(cat2, str(tmp_path / "wal")).recover() == 4
    assert [k for k, _ in rows_of(cat2)] == [1, 2, 3, 4]


def test_a_schema_change_within_a_group_starts_a_new_file(tmp_path):
    cat, gcm = setup(tmp_path)
    submit(gcm, [1])
    group = next(iter(gcm._groups.values()))
    first = group.wal
    other = pa.table({"k": pa.array([2], pa.int64()), "v": pa.array(["v2"])})  # k widened
    assert not first.fits(other)
    gcm._wal_for(group, other).append(other)
    assert len(group.wal_files) == 2 and group.wal is not first


def test_files_of_the_earlier_format_are_replayed(tmp_path):
    cat, gcm = setup(tmp_path)
    table = cat.get_table("db", "t")
    meta = {b"db": b"db", b"table": b"t", b"table_id": str(table.table_id).encode(),
            b"label": b"group_commit_00000000000000aa_00000000000000bb",
            b"txn_id": str(cat.begin_txn()).encode()}
    rows = pa.table({"k": pa.array([7, 8], pa.int32()), "v": pa.array(["a", "b"])})
    rows = rows.replace_schema_metadata(meta)
    with open(tmp_path / "wal" / "group_commit_00000000000000aa_00000000000000bb.1.arrow",
              "wb") as f, ipc.new_file(f, rows.schema) as writer:
        writer.write_table(rows)
    cat2 = open_catalog(tmp_path)
    assert GroupCommitManager(cat2, str(tmp_path / "wal")).recover() == 2
    assert rows_of(cat2) == [(7, "a"), (8, "b")]
