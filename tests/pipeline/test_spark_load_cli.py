"""The Spark Load driver on its own, as spark-submit would run it:
`python -m pipeline.spark_load --job job.json` writes the segment files and manifest.json that
the server's LOADING step adopts and publishes."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from catalog.catalog import Catalog
from catalog.load import PreparedLoad, commit_load
from catalog.load_statements import DataDescription, LoadStmt
from pipeline.job_spec import build_spec
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ScanStats, StorageEngine

pytest.importorskip("pyspark")
REPO = Path(__file__).resolve().parents[2]


def test_driver_command_line(tmp_path):
    cat = Catalog(tmp_path / "meta", StorageEngine(str(tmp_path / "storage")), backend_num=1)
    cat.open()
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(
        "CREATE TABLE t (k INT, v BIGINT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
        "PROPERTIES ('replication_num' = '1')")))
    csv = tmp_path / "in.csv"
    csv.write_text("".join(f"{i % 50}|{i}\n" for i in range(200)) + "bad\n")
    stmt = LoadStmt("db", "cli", [DataDescription([f"file://{csv}"], "t", column_separator="|")],
                    "spark0")
    spec = build_spec(cat, "db", stmt, 7, cat.begin_txn(), {"spark.master": "local[1]"}, 0.1,
                      str(tmp_path / "job"), {"page_size": 65536, "short_key_interval": 1024,
                                              "max_segment_size": 1 << 28}, "UTC")
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "job.json").write_text(json.dumps(spec))
    run = subprocess.run([sys.executable, "-m", "pipeline.spark_load", "--job",
                          str(tmp_path / "job" / "job.json")], cwd=REPO, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary == {"total": 201, "filtered": 1, "unselected": 0, "loaded": 200}
    manifest = json.loads((tmp_path / "job" / "manifest.json").read_text())
    prepared = PreparedLoad("db", "t", spec["txn_id"], [], summary["loaded"], "cli")
    for t in manifest["tablets"]:
        meta = cat.engine.get_tablet(t["tablet_id"]).adopt_rowset(t["files"], t["segment_rows"],
                                                                  spec["txn_id"])
        prepared.rowsets.append((t["partition_id"], t["tablet_id"], meta))
    commit_load(cat, prepared)
    table = cat.get_table("db", "t")
    rows = {}
    for p in table.partitions.values():
        for tid in p.tablets:
            got = cat.engine.get_tablet(tid).read(p.visible_version, ["k", "v"], [], ScanStats())
            rows.update(zip(got.column("k").to_pylist(), got.column("v").to_pylist()))
    # AGGREGATE KEY: pre-aggregated on the executors, one row per key
    assert rows == {k: sum(range(k, 200, 50)) for k in range(50)}
    assert datetime.fromisoformat(spec["now"])
