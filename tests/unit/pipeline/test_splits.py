"""Spark Load's input splits: byte ranges own whole lines, each line exactly once, whatever
the split size and line delimiter; what a task cannot read alone goes to Spark's reader."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.splits import input_files, plan_splits, read_csv_range


@pytest.mark.parametrize("delimiter", [b"\n", b"\r\n", b"||"])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 10_000])
def test_ranges_own_each_line_once(tmp_path, delimiter, size):
    rng = random.Random(size)
    lines = [b"x" * rng.randrange(0, 12) + str(i).encode() for i in range(300)]
    data = delimiter.join(lines) + (delimiter if size % 2 else b"")  # with or without a last one
    path = tmp_path / "f.csv"
    path.write_bytes(data)
    pieces = [read_csv_range(str(path), s, s + size, delimiter) for s in range(0, len(data), size)]
    assert b"".join(pieces) == data
    nonempty = [p for p in pieces if p]  # each piece is whole lines
    assert all(p.endswith(delimiter) for p in nonempty[:-1])


def test_empty_file(tmp_path):
    (tmp_path / "e.csv").write_bytes(b"")
    assert read_csv_range(str(tmp_path / "e.csv"), 0, 10, b"\n") == b""


def test_input_files_and_fallbacks(tmp_path):
    for name in ("a.csv", "b.csv", "_SUCCESS", ".a.csv.crc"):
        (tmp_path / name).write_text("1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.csv").write_text("1\n")
    (tmp_path / "sub" / "_tmp").write_text("1\n")
    assert input_files([f"file://{tmp_path}/*.csv"]) == [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]
    assert input_files([f"file://{tmp_path}/sub"]) == [str(tmp_path / "sub" / "c.csv")]
    assert input_files([str(tmp_path / "a.csv")]) == [str(tmp_path / "a.csv")]
    # Spark's reader: a pattern matching nothing (its PATH_NOT_FOUND), another file system,
    # a brace pattern, a compressed file
    assert input_files([f"file://{tmp_path}/missing-*.csv"]) is None
    assert input_files(["hdfs://nn/x.csv"]) is None
    assert input_files([f"file://{tmp_path}/{{a,b}}.csv"]) is None
    (tmp_path / "z.csv.gz").write_bytes(b"")
    assert input_files([f"file://{tmp_path}/z.csv.gz"]) is None


def test_plan_splits(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(b"1,2\n" * (3 << 20))  # 12 MB: at least 4 MB a split
    spec = {"format": "csv", "files": [f"file://{path}"]}
    splits = plan_splits(spec, 2)
    assert splits == [("csv", str(path), s, min(s + (4 << 20), 12 << 20))
                      for s in range(0, 12 << 20, 4 << 20)]
    pq.write_table(pa.table({"k": list(range(10))}), tmp_path / "p.parquet", row_group_size=4)
    assert plan_splits({"format": "parquet", "files": [str(tmp_path / "p.parquet")]}, 2) == \
        [("parquet", str(tmp_path / "p.parquet"), g) for g in range(3)]
    assert plan_splits({"format": "orc", "files": [str(path)]}, 2) is None
