"""Slice units (storage/slice_unit.py): tablets whose rows are one load-file slice each, read
together, give exactly the rows and per-tablet counts their snapshots give one by one, with and
without predicates, across several load files; Unique tablets and tablets of two rowsets are
not eligible."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pytest

from catalog.catalog import Catalog
from catalog.load import load_table
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ColumnPredicate, ScanStats, StorageEngine
from storage.slice_unit import eligible, read_slices


def _catalog(path: Path, model: str) -> Catalog:
    cat = Catalog(path / "meta", StorageEngine(str(path / "storage")), backend_num=1)
    cat.open()
    cat.create_database("db")
    value = " SUM" if model == "AGGREGATE" else ""
    cat.create_table("db", parse_create_table(TokenCursor(
        f"CREATE TABLE t (k INT, s VARCHAR(8), v BIGINT{value}) {model} KEY(k, s) "
        "PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN (500), PARTITION p2 VALUES "
        "LESS THAN (1000)) DISTRIBUTED BY HASH(k) BUCKETS 10 "
        "PROPERTIES ('replication_num' = '1')")))
    return cat


def _load(cat: Catalog, rng: random.Random) -> None:
    n = 300
    load_table(cat, "db", "t", pa.table({
        "k": pa.array([rng.randrange(1000) for _ in range(n)], pa.int32()),
        "s": pa.array([rng.choice([None, "a", "b", "cc"]) for _ in range(n)]),
        "v": pa.array([rng.randrange(100) for _ in range(n)], pa.int64())}), datetime.now())


def _snapshots(cat: Catalog) -> list:
    table = cat.get_table("db", "t")
    return [cat.engine.get_tablet(tid).capture(p.visible_version)
            for p in table.sorted_partitions() for tid in p.tablets]


@pytest.mark.parametrize("predicates", [[], [ColumnPredicate("v", "<", (50,))],
                                        [ColumnPredicate("s", "=", ("a",)),
                                         ColumnPredicate("k", ">=", (300,))]])
def test_read_slices_equals_reading_each_snapshot(tmp_path, predicates):
    cat = _catalog(tmp_path, "DUPLICATE")
    _load(cat, random.Random(1))
    snaps = _snapshots(cat)
    assert all(eligible(s) for s in snaps)
    table, rows = read_slices(snaps, ["k", "s", "v"], predicates, ScanStats())
    one_by_one = [s.read(["k", "s", "v"], predicates, ScanStats()) for s in snaps]
    assert rows.tolist() == [t.num_rows for t in one_by_one]
    assert table.equals(pa.concat_tables(one_by_one))
    counted, _ = read_slices(snaps, [], predicates, ScanStats())
    assert counted.num_rows == table.num_rows
    cat.close()


def test_slices_of_several_files_and_what_is_not_eligible(tmp_path):
    cat = _catalog(tmp_path, "DUPLICATE")
    rng = random.Random(2)
    _load(cat, rng)
    first = _snapshots(cat)
    _load(cat, rng)  # every tablet now has two slices, of two files: read in version order
    both = _snapshots(cat)
    assert all(eligible(s) for s in both)
    table, rows = read_slices(both, ["k", "v"], [ColumnPredicate("v", ">", (20,))], ScanStats())
    one_by_one = [s.read(["k", "v"], [ColumnPredicate("v", ">", (20,))], ScanStats())
                  for s in both]
    assert rows.tolist() == [t.num_rows for t in one_by_one]
    assert table.equals(pa.concat_tables(one_by_one))
    # snapshots of the first version still read one slice each, of the first file
    table, rows = read_slices(first, ["k", "v"], [], ScanStats())
    assert table.equals(pa.concat_tables([s.read(["k", "v"], [], ScanStats()) for s in first]))
    cat.close()
    unique = _catalog(tmp_path / "u", "UNIQUE")
    _load(unique, rng)
    assert not any(eligible(s) for s in _snapshots(unique))
    unique.close()
    agg = _catalog(tmp_path / "a", "AGGREGATE")
    _load(agg, rng)
    assert all(eligible(s) for s in _snapshots(agg))  # one slice each: nothing to merge
    _load(agg, rng)
    assert not any(eligible(s) for s in _snapshots(agg))  # two: the merge-on-read path
    agg.close()
