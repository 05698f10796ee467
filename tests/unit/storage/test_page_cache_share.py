"""A column read whole is kept in the page cache once: as the one contiguous array that later
full scans take without copying, not also as its pages (the same rows twice halved what a
cache of a given size held: SSB SF 10's scans stopped fitting in 2 GB and were decoded again
on every run)."""

import numpy as np
import pyarrow as pa
from storage_testutil import column, schema, table_for

from storage import ScanStats, StorageEngine

ROWS = 200_000
DUP = schema([column("k", "BIGINT", key=True, nullable=False), column("v", "BIGINT")])


def _tablet(tmp_path, cache_bytes: int = 64 << 20):
    engine = StorageEngine(str(tmp_path / "data"), page_size=4096, page_cache_bytes=cache_bytes)
    tablet = engine.create_tablet(1, DUP)
    keys = np.arange(ROWS, dtype=np.int64)
    tablet.publish(tablet.write_rowset(table_for(DUP, {"k": keys, "v": keys * 3}), txn_id=2), 2)
    return engine, tablet


def _scan(tablet):
    stats = ScanStats()
    rows = tablet.read(2, ["k", "v"], [], stats)
    return rows, stats


def test_a_whole_column_is_cached_once(tmp_path):
    engine, tablet = _tablet(tmp_path)
    rows, first = _scan(tablet)
    assert rows.num_rows == ROWS and first.pages_read > 2  # several pages per column
    decoded = 2 * ROWS * 8  # two BIGINT columns
    assert decoded <= engine.page_cache.size < 1.5 * decoded


def test_the_second_full_scan_decodes_nothing(tmp_path):
    _, tablet = _tablet(tmp_path)
    first_rows, _ = _scan(tablet)
    rows, second = _scan(tablet)
    assert second.pages_read == 0 and second.cached_pages_num > 0
    assert rows.equals(first_rows)
    assert pa.compute.sum(rows.column("v")).as_py() == 3 * ROWS * (ROWS - 1) // 2


def test_a_cache_of_one_copy_holds_the_scan(tmp_path):
    """A cache a little larger than the decoded columns keeps them all (with pages beside the
    whole arrays it held about half and the next scan decoded again)."""
    _, tablet = _tablet(tmp_path, cache_bytes=int(2 * ROWS * 8 * 1.3))
    _scan(tablet)
    _, second = _scan(tablet)
    assert second.pages_read == 0
