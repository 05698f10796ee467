"""Damaged segment files raise CorruptionError naming tablet, file and column; never wrong rows."""

import numpy as np
import pyarrow as pa
import pytest
from storage_testutil import column, read_all, schema, write_and_open

from storage import ColumnPredicate, CorruptionError, ScanStats, StorageEngine
from storage.segment import SegmentReader
from storage.segment.column_reader import SegmentIO


def sample_table(n: int = 4000) -> tuple:
    sch = schema([column("k", "BIGINT", key=True), column("v", "VARCHAR", 20),
                  column("x", "INT")])
    rng = np.random.default_rng(3)
    table = pa.table({"k": pa.array(np.arange(n), pa.int64()),
                      "v": pa.array([f"v{i % 37}" if i % 11 else None for i in range(n)]),
                      "x": pa.array(rng.integers(-1000, 1000, n).astype(np.int32))})
    return sch, table


def flip(path: str, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x5A]))


def test_data_page_corruption_names_tablet_file_and_column(tmp_path):
    sch, table = sample_table()
    reader = write_and_open(tmp_path, sch, table, page_size=2048, tablet_id=777)
    with SegmentIO(reader.path, 777, ScanStats()) as io:
        locs = reader.columns["v"].locations(io)
    flip(reader.path, int(locs.offsets[1] + locs.sizes[1] // 2))
    fresh = SegmentReader(reader.path, 777)
    with pytest.raises(CorruptionError) as info:
        read_all(fresh)
    message = str(info.value)
    assert "tablet 777" in message and reader.path in message and "column v" in message
    assert info.value.column == "v" and info.value.tablet_id == 777
    # other columns are intact and still readable
    got, _ = read_all(fresh, columns=["k", "x"])
    assert got.equals(table.select(["k", "x"]))


def test_footer_and_truncation_are_detected(tmp_path):
    sch, table = sample_table(100)
    reader = write_and_open(tmp_path, sch, table)
    raw = open(reader.path, "rb").read()
    flip(reader.path, len(raw) - 20)  # inside the footer JSON
    with pytest.raises(CorruptionError, match="footer checksum"):
        SegmentReader(reader.path, 1)
    with open(reader.path, "wb") as f:
        f.write(raw[: len(raw) // 2])
    with pytest.raises(CorruptionError):
        SegmentReader(reader.path, 1)
    with open(reader.path, "wb") as f:
        f.write(b"")
    with pytest.raises(CorruptionError):
        SegmentReader(reader.path, 1)


def test_every_flipped_byte_is_detected_or_harmless(tmp_path):
    """Flip each byte of a small file: the read either raises or returns the exact rows."""
    sch, table = sample_table(600)
    reader = write_and_open(tmp_path, sch, table, page_size=512, interval=64)
    pristine = open(reader.path, "rb").read()
    preds = [ColumnPredicate("k", ">=", (100,)), ColumnPredicate("x", ">", (0,))]
    expected = read_all(reader, preds)[0]
    detected = harmless = 0
    for offset in range(0, len(pristine), 5):
        with open(reader.path, "wb") as f:
            f.write(pristine)
        flip(reader.path, offset)
        try:
            fresh = SegmentReader(reader.path, 9)
            full = read_all(fresh)[0]
            pruned = read_all(fresh, preds)[0]
        except CorruptionError:
            detected += 1
            continue
        assert full.equals(table) and pruned.equals(expected), f"byte {offset}"
        harmless += 1
    assert detected > harmless  # only alignment padding is unchecked


def test_tablet_read_of_a_corrupt_segment_raises(tmp_path):
    sch, table = sample_table(5000)
    engine = StorageEngine(str(tmp_path), page_size=4096)
    tablet = engine.create_tablet(5, sch)
    meta = tablet.write_rowset(table, txn_id=1)
    tablet.publish(meta, 2)
    path = f"{tablet.directory}/{meta.segments[0]}"
    size = len(open(path, "rb").read())
    flip(path, size // 3)
    engine2 = StorageEngine(str(tmp_path), page_size=4096)
    restored = engine2.restore_tablet(5, sch, [(meta, 2)])
    with pytest.raises(CorruptionError, match="tablet 5"):
        restored.read(2, ["k", "v", "x"], [], ScanStats())
