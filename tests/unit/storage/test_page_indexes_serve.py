"""Which scans read their tablets whole, as scan units, and which keep the per-segment path
with its page-level indexes (storage/scan_unit.page_indexes_serve): a predicate on the first
sort column, on a column with a bloom filter, or whose page zone maps skip pages (a column that
follows the sort key) keeps the indexes; one on a column in random order does not, whatever
the segment size; a segment pruned whole by its segment zone map says nothing of its pages."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa

from catalog.catalog import Catalog
from catalog.load import load_table
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ColumnPredicate, StorageEngine
from storage import scan_unit
from storage.scan_unit import eligible, page_indexes_serve

ROWS = 200_000  # one segment of many pages, larger than UNIT_SEGMENT_ROWS


def _snapshots(tmp_path: Path) -> list:
    cat = Catalog(tmp_path / "meta", StorageEngine(str(tmp_path / "storage")), backend_num=1)
    cat.open()
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(
        "CREATE TABLE t (k BIGINT, z BIGINT, r BIGINT, b BIGINT) DUPLICATE KEY(k) "
        "PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN (100000), PARTITION p2 VALUES "
        "LESS THAN (1000000)) DISTRIBUTED BY HASH(k) BUCKETS 1 "
        "PROPERTIES ('replication_num' = '1', 'bloom_filter_columns' = 'b')")))
    k = np.arange(ROWS, dtype=np.int64)
    rng = np.random.default_rng(1)
    load_table(cat, "db", "t", pa.table({
        "k": k, "z": k * 2,  # z follows the sort key: its page zone maps are tight
        "r": rng.integers(0, 1_000_000, ROWS), "b": rng.integers(0, 1_000_000, ROWS)}),
        datetime.now())
    table = cat.get_table("db", "t")
    return [cat.engine.get_tablet(tid).capture(p.visible_version)
            for p in table.sorted_partitions() for tid in p.tablets]


def test_tablets_larger_than_a_unit_keep_the_segment_path(tmp_path, monkeypatch):
    snaps = _snapshots(tmp_path)
    monkeypatch.setattr(scan_unit, "UNIT_TABLET_ROWS", 150_000)  # p1: 100k rows, p2: 100k
    assert all(eligible(s, any_size=True) for s in snaps)
    monkeypatch.setattr(scan_unit, "UNIT_TABLET_ROWS", 50_000)
    assert not any(eligible(s, any_size=True) for s in snaps)


def test_which_predicates_page_indexes_serve(tmp_path):
    snaps = _snapshots(tmp_path)
    assert all(eligible(s, any_size=True) for s in snaps)
    assert not eligible(snaps[1])  # p2's 100k rows: more than a small unit takes

    def serve(*preds):
        return page_indexes_serve(snaps, list(preds))

    assert serve(ColumnPredicate("k", "=", (5,)))  # the short key
    assert serve(ColumnPredicate("b", "=", (5,)))  # the bloom filter
    assert serve(ColumnPredicate("z", ">=", (150_000,)), ColumnPredicate("z", "<", (150_100,)))
    assert not serve(ColumnPredicate("r", "<", (500_000,)))  # random order: every page kept
    assert not serve(ColumnPredicate("r", "in", (500_000, 500_001, 500_002)))
    assert not serve()
    assert page_indexes_serve(snaps, [], inverted_matches=True)
    # p1 holds z < 200_000: its segment is pruned whole and p2's pages decide (all kept)
    assert not serve(ColumnPredicate("z", ">=", (200_000,)))
