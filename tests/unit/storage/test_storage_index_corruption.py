"""Damaged bloom filter and bitmap index pages (in segments and in side files) are detected:
a read that uses them raises CorruptionError or returns exactly the right rows."""

import pytest
from storage_testutil import read_all, write_and_open
from test_storage_corruption import flip, sample_table

from storage import ColumnPredicate, CorruptionError, ScanStats, TabletSchema
from storage.segment import SegmentReader, side_index
from storage.segment.reader import IndexOptions
from storage.segment.writer import SegmentOptions


def _indexed(sch):
    return TabletSchema(sch.columns, sch.keys_type, bloom_filter_columns=("x",),
                        bitmap_indexes={"v": 1})


PREDS = [ColumnPredicate("v", "in", ("v3", "v5")), ColumnPredicate("x", "in", (5, 17, -3))]


def _regions(reader: SegmentReader) -> list[tuple[int, int]]:
    bloom = reader.columns["x"].meta["bloom_filter"]
    bitmap = reader.columns["v"].meta["bitmap_index"]
    pages = [bloom] + [p[:2] for p in bitmap["dict_pages"] + bitmap["bitmap_pages"]]
    return [(offset, offset + size) for offset, size in pages]


def test_flipped_index_bytes_are_detected_or_harmless(tmp_path):
    sch, table = sample_table(1500)
    reader = write_and_open(tmp_path, _indexed(sch), table, page_size=512)
    pristine = open(reader.path, "rb").read()
    expected = read_all(reader, PREDS)[0]
    assert expected.num_rows > 0
    detected = 0
    for start, end in _regions(reader):
        for offset in range(start, end, 17):
            with open(reader.path, "wb") as f:
                f.write(pristine)
            flip(reader.path, offset)
            try:
                got = read_all(SegmentReader(reader.path, 3), PREDS)[0]
            except CorruptionError as e:
                assert "column" in str(e)
                detected += 1
                continue
            assert got.equals(expected), f"byte {offset}"
    assert detected > 0


def test_damaged_side_index_file_is_detected(tmp_path):
    sch, table = sample_table(1500)
    reader = write_and_open(tmp_path, sch, table, page_size=512)
    side = str(tmp_path / side_index.file_name(1, 0, 9))
    side_index.write(side, table.column("v").combine_chunks(), "v", sch.column("v").type,
                     SegmentOptions(page_size=512))
    options = IndexOptions(bitmap=(("v", side),))
    pred = [ColumnPredicate("v", "=", ("v5",))]
    stats = ScanStats()
    got = SegmentReader(reader.path, 3).read(["k"], pred, stats, indexes=options)
    assert got.column("k").to_pylist() == [i for i in range(1500) if i % 11 and i % 37 == 5]
    assert stats.rows_bitmap_index_filtered > 0
    index = side_index.open_index(side, 3, 1500, sch.column("v").type)
    offset, size, _ = index.meta["dict_pages"][0]  # every lookup loads the dictionary
    flip(side, offset + size - 2)
    with pytest.raises(CorruptionError, match=r"\.idx"):
        SegmentReader(reader.path, 3).read(["k"], pred, ScanStats(), indexes=options)
