"""Spark Load's executor functions without Spark: `etl.convert` and `etl.write` over plain
Arrow batches, then the server's LOADING step (`Tablet.adopt_rowset` + `commit_load`). The
table they produce equals what Stream Load's conversion + `load_table` produce from the same
lines (the same code decides values, rejects, partitions, buckets and segments)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from catalog.catalog import Catalog
from catalog.load import PreparedLoad, commit_load, load_table, place_rows
from catalog.load_statements import DataDescription, LoadStmt
from executor.expressions import EvalContext
from pipeline import etl
from pipeline.job_spec import build_spec
from server.http.load_rows import prepare_rows
from server.http.load_source import read_source
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ScanStats, StorageEngine

DDL = """CREATE TABLE {name} (k INT NOT NULL, g VARCHAR(4), v BIGINT SUM) AGGREGATE KEY(k, g)
    PARTITION BY RANGE(k) (PARTITION p0 VALUES LESS THAN (50), PARTITION p1 VALUES LESS THAN (100))
    DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1")"""

LINES = [f"{i % 120},g{i % 3},{i}" for i in range(1000)] + ["x,1", "5,toolong,1", "7,a,notanumber"]


def _catalog(path: Path) -> Catalog:
    cat = Catalog(path / "meta", StorageEngine(str(path / "storage")), backend_num=2)
    cat.open()
    cat.create_database("db")
    for name in ("t", "twin"):
        cat.create_table("db", parse_create_table(TokenCursor(DDL.format(name=name))))
    return cat


def _rows(cat: Catalog, name: str) -> list[tuple]:
    table = cat.get_table("db", name)
    out = []
    for p in table.partitions.values():
        for tid in p.tablets:
            t = cat.engine.get_tablet(tid).read(p.visible_version, ["k", "g", "v"], [], ScanStats())
            out += list(zip(*(t.column(c).to_pylist() for c in ("k", "g", "v"))))
    return sorted(out, key=str)


def test_convert_write_adopt_equals_stream_load(tmp_path):
    cat = _catalog(tmp_path)
    stmt = LoadStmt("db", "l1", [DataDescription(["file:///x.csv"], "t", column_separator=",",
                                                  columns=["k", "g", "v"])], "spark0")
    spec = build_spec(cat, "db", stmt, 1, cat.begin_txn(), {"spark.master": "local[2]"}, 0.5,
                      str(tmp_path / "job"), {"page_size": 65536, "short_key_interval": 1024,
                                              "max_segment_size": 1 << 28}, "UTC")
    lines = pa.array(LINES)
    batches = [pa.RecordBatch.from_arrays([lines.slice(0, 600)], ["value"]),
               pa.RecordBatch.from_arrays([lines.slice(600)], ["value"])]
    out = pa.Table.from_batches(list(etl.convert(spec)(iter(batches)))).to_pylist()
    runs, stats = etl.collect_runs(out)
    assert stats["total"] == 1003
    # k 100..119 (160 rows) have no partition; the short line; the over-long string
    assert stats["filtered"] == 162 and stats["errors"]
    # the same lines read by split tasks from the file, in byte ranges, give the same runs
    csv = tmp_path / "in.csv"
    csv.write_text("\n".join(LINES) + "\n")
    spec["files"] = [f"file://{csv}"]
    splits = [("csv", str(csv), s, s + 1000) for s in range(0, csv.stat().st_size, 1000)]
    by_split = pa.Table.from_batches(list(etl.convert(spec, splits)(
        iter([pa.RecordBatch.from_arrays([pa.array(range(len(splits)))], ["id"])])))).to_pylist()
    runs2, stats2 = etl.collect_runs(by_split)
    assert runs2.keys() == runs.keys() and stats2.pop("errors") and stats.pop("errors")
    assert stats2 == stats
    # every line is in one split: the same rows per (partition, bucket)
    assert {pb: sum(n for _, _, n in p) for pb, p in runs2.items()} == \
        {pb: sum(n for _, _, n in p) for pb, p in runs.items()}
    # partition and bucket are the server's own routing of the same rows
    table = cat.get_table("db", "t")
    for pb, pieces in runs.items():
        data = pa.concat_tables(pa.ipc.open_file(p).read_all().slice(o, n) for p, o, n in pieces)
        _, part_idx, buckets = place_rows(table, data, datetime.now())
        assert set(((part_idx << 32) | buckets).tolist()) == {pb}
    # write: the groups dealt to two tasks
    assignments = etl.assign(runs, 2)
    assert sorted(pb for a in assignments for pb, _ in a) == sorted(runs)
    ids = pa.RecordBatch.from_arrays([pa.array(range(len(assignments)))], ["id"])
    tablets = pa.Table.from_batches(list(etl.write(spec, assignments)(iter([ids])))).to_pylist()
    assert {m["tablet_id"] for m in tablets} <= set(p for part in table.partitions.values()
                                                     for p in part.tablets)
    prepared = PreparedLoad("db", "t", spec["txn_id"], [], 0, "l1")
    import json
    for m in tablets:
        meta = cat.engine.get_tablet(m["tablet_id"]).adopt_rowset(
            json.loads(m["files"]), json.loads(m["segment_rows"]), spec["txn_id"])
        prepared.rowsets.append((m["partition_id"], m["tablet_id"], meta))
    commit_load(cat, prepared)
    assert cat.label_txn("db", "l1") == spec["txn_id"]
    assert [p.visible_version for p in table.sorted_partitions()] == [2, 2]
    # the twin gets the same lines through Stream Load's code path
    from server.http.load_options import StreamLoadOptions
    opts = StreamLoadOptions.from_headers({"column_separator": ",", "columns": "k, g, v"})
    src = read_source(("\n".join(LINES) + "\n").encode(), opts, ["k", "g", "v"])
    prepared_rows = prepare_rows(cat.get_table("db", "twin"), src, opts,
                                 EvalContext(now=datetime.now(), time_zone="UTC"))
    assert prepared_rows.filtered == 162
    load_table(cat, "db", "twin", prepared_rows.rows, datetime.now())
    assert _rows(cat, "t") == _rows(cat, "twin")
    assert len(_rows(cat, "t")) == 101  # one g per k < 100, and (7, 'a') with v NULL


@pytest.mark.parametrize("columns,sets,expect", [
    (None, [("v", "1")], ["k", "g", "v"]),
    (["k", "g", "x"], [("v", "x * 2")], ["k", "g", "x", "v"]),
])
def test_load_options_columns(tmp_path, columns, sets, expect):
    cat = _catalog(tmp_path)
    stmt = LoadStmt("db", "l", [DataDescription(["file:///x"], "t", columns=columns, set_exprs=sets)], "r")
    spec = build_spec(cat, "db", stmt, 1, 1, {}, 0, str(tmp_path), {}, "UTC")
    names = [n for n, _ in etl.load_options(spec).columns]
    assert names == expect


def test_hex_separator_and_a_batch_of_bad_lines(tmp_path):
    cat = _catalog(tmp_path)
    stmt = LoadStmt("db", "l", [DataDescription(["file:///x"], "t", column_separator="\\x01")], "r")
    spec = build_spec(cat, "db", stmt, 1, 1, {}, 1.0, str(tmp_path), {}, "UTC")
    assert spec["column_separator"] == "\x01"
    good = pa.RecordBatch.from_arrays([pa.array(["1\x01a\x012", "2\x01b\x013"])], ["value"])
    bad = pa.RecordBatch.from_arrays([pa.array(["1,a,2", "2"])], ["value"])  # no field splits
    out = pa.Table.from_batches(list(etl.convert(spec)(iter([good, bad])))).to_pylist()
    runs, stats = etl.collect_runs(out)
    assert stats["filtered"] == 2 and stats["total"] == 4
    assert sum(n for pieces in runs.values() for _, _, n in pieces) == 2


def _run_rows(runs: dict) -> dict:
    return {pb: sorted(map(str, pa.concat_tables(pa.ipc.open_file(p).read_all().slice(o, n)
                                                 for p, o, n in pieces).to_pylist()))
            for pb, pieces in runs.items()}


def test_integers_parsed_typed_equal_the_text_path(tmp_path, monkeypatch):
    """Split tasks parse integer columns straight to int64 (a split with a value that does not
    parse is read as text): the rows and counts equal those of the text path."""
    cat = _catalog(tmp_path)
    stmt = LoadStmt("db", "l", [DataDescription(["file:///x"], "t", column_separator=",")], "r")
    spec = build_spec(cat, "db", stmt, 1, 1, {}, 1.0, str(tmp_path / "job"),
                      {"page_size": 65536, "short_key_interval": 1024,
                       "max_segment_size": 1 << 28}, "UTC")
    lines = ["007,a,1", "-5,b,2", "\\N,c,3", "1,d,9223372036854775807", "2,e,\\N",
             "3000000000,f,4", "9,h,-0"] * 50 + ["+8,g,5"]  # the last split: read as text
    csv = tmp_path / "in.csv"
    csv.write_text("\n".join(lines) + "\n")
    from pipeline import splits as splits_module
    typed_reads, original = [], splits_module.read_source

    def read_source(body, opts, names, typed=None):
        out = original(body, opts, names, typed)  # raises when a value does not parse typed
        typed_reads.append(bool(typed))
        return out
    monkeypatch.setattr(splits_module, "read_source", read_source)
    spec["files"] = [f"file://{csv}"]
    splits = [("csv", str(csv), s, s + 700) for s in range(0, csv.stat().st_size, 700)]
    ids = pa.RecordBatch.from_arrays([pa.array(range(len(splits)))], ["id"])
    typed_runs, typed_stats = etl.collect_runs(
        pa.Table.from_batches(list(etl.convert(spec, splits)(iter([ids])))).to_pylist())
    assert typed_reads.count(True) == len(splits) - 1 and typed_reads.count(False) == 1
    text = pa.RecordBatch.from_arrays([pa.array(lines)], ["value"])
    text_runs, text_stats = etl.collect_runs(
        pa.Table.from_batches(list(etl.convert(spec)(iter([text])))).to_pylist())
    assert typed_stats["filtered"] == text_stats["filtered"] > 0
    assert typed_stats["total"] == text_stats["total"] == 351
    assert _run_rows(typed_runs) == _run_rows(text_runs)
