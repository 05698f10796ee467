"""storage/tablet_bloom.py: a tablet of many small rowsets read with `=` / `IN` on bloom filter
columns returns what a plain Python filter keeps, with and without the tablet-wide bloom test,
and the segments it rules out are counted as bloom-filtered rows."""

import datetime as dt
import random
import tempfile
from decimal import Decimal

import pytest
from storage_testutil import table_for
from test_storage_index_property import INDEXED, NAMES
from test_storage_pruning_property import holds

from storage import ColumnPredicate as P
from storage import ScanStats, StorageEngine, tablet_bloom


def _value(rng: random.Random, name: str):
    if name in ("k1", "k2"):
        return rng.randint(-3, 3)
    if name == "v":
        return rng.randint(-5, 5)
    if name == "k3":
        return "".join(rng.choice("ab\x00é") for _ in range(rng.randint(0, 6)))
    if name == "d":
        return dt.date(2020, 1, rng.randint(1, 9))
    if name == "dec":
        return Decimal(rng.randint(-200, 200)).scaleb(-2)
    return "".join(rng.choice("xyz") for _ in range(rng.randint(0, 3)))


def _rows(rng: random.Random, n: int) -> list[dict]:
    return [{name: _value(rng, name) if rng.random() > 0.1 else None for name in NAMES}
            for _ in range(n)]


def _key(row: dict) -> tuple:
    return tuple((row[n] is not None, str(row[n])) for n in NAMES)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("segment_bytes", [None, 600])  # 600: rowsets of several segments
def test_many_segments_read_equals_python_filter(seed, segment_bytes, monkeypatch):
    rng = random.Random(seed)
    sizes = {"max_segment_size": segment_bytes} if segment_bytes else {}
    with tempfile.TemporaryDirectory() as tmp:
        tablet = StorageEngine(tmp, page_size=64, short_key_interval=3,
                               **sizes).create_tablet(1, INDEXED)
        loaded, version = [], 2
        for i in range(12):  # 12 rowsets (segments), a DELETE after the fourth
            rows = _rows(rng, rng.randint(1, 30))
            tablet.publish(tablet.write_rowset(table_for(INDEXED, {n: [r[n] for r in rows]
                                                                   for n in NAMES}), version),
                           version)
            loaded += rows
            version += 1
            if i == 3:
                delete = [P("k2", "<", [0])]
                tablet.publish(tablet.write_delete(delete, version), version)
                loaded = [r for r in loaded if not all(holds(p, r[p.column]) for p in delete)]
                version += 1
        if segment_bytes:
            assert max(rs.num_segments for rs in tablet.rowsets()) > 1
        picked = rng.choice(loaded)
        cases = [[P("s", "=", [picked["s"]])], [P("k2", "=", [picked["k2"]])],
                 [P("s", "in", [picked["s"], "zz-not-there"]), P("k3", "=", [picked["k3"]])],
                 [P("dec", "=", [picked["dec"]])], [P("s", "=", ["zz-not-there"])],
                 [P("k3", "in", [picked["k3"], "\x00", "a\x00"])], [P("k3", "=", ["\x00"])]]
        for preds in cases:
            want = sorted(_key(r) for r in loaded if all(holds(p, r[p.column]) for p in preds))
            results = {}
            for limit in (1, 10**9):  # the tablet-wide test on, then off
                monkeypatch.setattr(tablet_bloom, "MIN_SEGMENTS", limit)
                for _ in range(2):  # the first read loads the filters, the second uses them
                    stats = ScanStats()
                    got = tablet.read(version - 1, NAMES, preds, stats)
                results[limit] = stats
                assert sorted(_key(r) for r in got.to_pylist()) == want, (preds, limit)
                assert stats.rows_total == (
                    stats.rows_short_key_filtered + stats.rows_zone_map_filtered
                    + stats.rows_bloom_filter_filtered + stats.rows_bitmap_index_filtered
                    + stats.rows_read)
            if preds[0].column == "s" and preds[0].values == ["zz-not-there"]:
                assert results[1].rows_returned == 0
            assert results[1].rows_total == results[10**9].rows_total


def _small_loads(tablet, rng: random.Random, loads: int, rows: int, s) -> list[dict]:
    """`loads` rowsets (versions 2, 3, ...) of `rows` random rows whose `s` is `s(rng)`."""
    loaded = []
    for v in range(2, 2 + loads):
        batch = _rows(rng, rows)
        for r in batch:
            r["s"] = s(rng)
        tablet.publish(tablet.write_rowset(
            table_for(INDEXED, {n: [r[n] for r in batch] for n in NAMES}), v), v)
        loaded += batch
    return loaded


def test_segments_are_ruled_out_once_filters_are_loaded():
    with tempfile.TemporaryDirectory() as tmp:
        tablet = StorageEngine(tmp).create_tablet(1, INDEXED)
        _small_loads(tablet, random.Random(3), 12, 20, lambda rng: f"{rng.random():.6f}")
        preds = [P("s", "=", ["0.5"])]  # within every segment's zone map: filters loaded
        tablet.read(13, NAMES, preds, ScanStats())  # loads the filters
        snapshot = tablet.rowsets()
        out = tablet_bloom.ruled_out(tablet, snapshot, preds, INDEXED)
        # fpp 0.05: most, likely all (one segment per rowset: ruled out as whole rowsets)
        assert len(out.whole) >= 10 and not out.segments
        survivors = {rs.rowset_id for rs in snapshot if rs.num_rows} - out.whole
        assert {rs_id for rs_id, _ in out.pages} == survivors
        assert all(column == "s" and keep.any() for column, keep in out.pages.values())


def test_false_positive_pages_are_probed_together(monkeypatch):
    """Values the filters keep pages for but no row holds (false positives): the surviving
    segments' kept pages are decoded and tested at once (Verdict.probe); the result and the
    row counters equal the per-segment scans'."""
    with tempfile.TemporaryDirectory() as tmp:
        tablet = StorageEngine(tmp).create_tablet(1, INDEXED)  # a page per segment
        loaded = _small_loads(tablet, random.Random(7), 40, 40,
                              lambda rng: f"{rng.getrandbits(48):012x}")
        tablet.read(41, NAMES, [P("s", "=", ["8"])], ScanStats())  # loads the filters
        probed = 0
        for i in range(200):
            value = loaded[i]["s"] if i % 10 == 0 else f"absent-{i}"
            preds = [P("s", "=", [value])]
            verdict = tablet_bloom.ruled_out(tablet, tablet.rowsets(), preds, INDEXED)
            verdict.probe(NAMES, preds, ScanStats())
            probed += len(verdict.probed)
            results = {}
            for limit in (1, 10**9):  # the tablet-wide test (and probe) on, then off
                monkeypatch.setattr(tablet_bloom, "MIN_SEGMENTS", limit)
                stats = ScanStats()
                got = tablet.read(41, NAMES, preds, stats)
                results[limit] = (sorted(_key(r) for r in got.to_pylist()), stats)
            want = sorted(_key(r) for r in loaded if r["s"] == value)
            assert results[1][0] == want == results[10**9][0]
            for counter in ("rows_total", "rows_returned", "segments_total"):
                assert getattr(results[1][1], counter) == getattr(results[10**9][1], counter)
        assert probed > 0  # fpp 0.05 over 40 segments x 200 values: false positives met


def test_two_bloom_columns_count_each_segment_once(monkeypatch):
    """`s = a AND k3 = b` on two bloom filter columns: a segment one column keeps and the other
    rules out is counted once, as the per-segment path counts it."""
    with tempfile.TemporaryDirectory() as tmp:
        tablet = StorageEngine(tmp).create_tablet(1, INDEXED)
        loaded = _small_loads(tablet, random.Random(11), 30, 30,
                              lambda rng: f"{rng.getrandbits(48):012x}")
        tablet.read(31, NAMES, [P("s", "=", ["8"]), P("k3", "=", ["a"])], ScanStats())
        for i in range(0, 300, 7):
            row = loaded[i]
            for k3 in (row["k3"], "b", "ab\x00"):
                if k3 is None:  # `= NULL` is never a storage predicate (the planner folds it)
                    continue
                preds = [P("s", "=", [row["s"]]), P("k3", "=", [k3])]
                results = {}
                for limit in (1, 10**9):
                    monkeypatch.setattr(tablet_bloom, "MIN_SEGMENTS", limit)
                    stats = ScanStats()
                    got = tablet.read(31, NAMES, preds, stats)
                    results[limit] = (sorted(_key(r) for r in got.to_pylist()), stats)
                    assert stats.rows_total == (
                        stats.rows_short_key_filtered + stats.rows_zone_map_filtered
                        + stats.rows_bloom_filter_filtered + stats.rows_bitmap_index_filtered
                        + stats.rows_read)
                want = sorted(_key(r) for r in loaded if r["s"] == row["s"] and r["k3"] == k3)
                assert results[1][0] == want == results[10**9][0]
                assert results[1][1].rows_total == results[10**9][1].rows_total
                assert results[1][1].segments_total == results[10**9][1].segments_total
