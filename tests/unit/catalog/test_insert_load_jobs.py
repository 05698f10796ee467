"""INSERT records in SHOW LOAD (catalog/load_jobs.record_insert_job): journaled without an
fsync of their own, not DDL (cached plans stay valid), and bounded per database (the oldest
tenth goes past LABEL_NUM_THRESHOLD), all of it replayed after a restart."""

from __future__ import annotations

from catalog import load_jobs
from catalog.catalog import Catalog
from cluster_testutil import make_catalog
from storage import StorageEngine


def _record(cat, db: str, n: int) -> None:
    load_jobs.record_insert_job(cat, db, "t", f"l{n}", 100 + n, 1, "root",
                                "2026-11-28 00:00:00", "2026-11-28 00:00:01", 14400)


def test_insert_jobs_are_bounded_per_database_and_replayed(tmp_path, monkeypatch):
    monkeypatch.setattr(load_jobs, "LABEL_NUM_THRESHOLD", 10)
    cat = make_catalog(tmp_path)
    epoch = cat.ddl_epoch
    for n in range(11):
        _record(cat, "a", n)
    _record(cat, "b", 0)
    assert cat.ddl_epoch == epoch
    labels_a = sorted(j["Label"] for j in cat.load_jobs.values() if j["db"] == "a")
    assert labels_a == sorted(f"l{n}" for n in range(2, 11))  # 11 > 10: down to 9
    assert [j["Label"] for j in cat.load_jobs.values() if j["db"] == "b"] == ["l0"]
    job = next(j for j in cat.load_jobs.values() if j["Label"] == "l5")
    assert (job["State"], job["Type"], job["TransactionId"]) == ("FINISHED", "INSERT", 105)
    cat.close()
    again = Catalog(tmp_path / "meta", StorageEngine(str(tmp_path / "storage")))
    again.open()
    assert sorted(again.load_jobs) == sorted(cat.load_jobs)
