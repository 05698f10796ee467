"""INSERT records in SHOW LOAD (catalog/load_jobs.record_insert_job): journaled without an
fsync of their own, not DDL (cached plans stay valid), and bounded in all, every database's
together (the oldest tenth goes past LABEL_NUM_THRESHOLD), all of it replayed after a restart."""

from __future__ import annotations

from catalog import load_jobs
from catalog.catalog import Catalog
from cluster_testutil import make_catalog
from storage import StorageEngine


def _record(cat, db: str, n: int) -> None:
    load_jobs.record_insert_job(cat, db, "t", f"l{n}", 100 + n, 1, "root",
                                "2026-11-28 00:00:00", "2026-11-28 00:00:01", 14400)


def test_insert_jobs_are_bounded_in_all_and_replayed(tmp_path, monkeypatch):
    monkeypatch.setattr(load_jobs, "LABEL_NUM_THRESHOLD", 10)
    cat = make_catalog(tmp_path)
    epoch = cat.ddl_epoch
    for n in range(6):
        _record(cat, "a", n)
    for n in range(5):
        _record(cat, "b", n)
    assert cat.ddl_epoch == epoch
    labels = sorted((j["db"], j["Label"]) for j in cat.load_jobs.values())
    # 11 > 10 records of both databases: the oldest two (a's first) go, down to 9
    assert labels == sorted([("a", f"l{n}") for n in range(2, 6)] +
                            [("b", f"l{n}") for n in range(5)])
    _record(cat, "b", 5)
    assert len(cat.load_jobs) == 10  # counted again only after the next interval
    job = next(j for j in cat.load_jobs.values() if j["Label"] == "l5")
    assert (job["State"], job["Type"], job["TransactionId"]) == ("FINISHED", "INSERT", 105)
    cat.close()
    again = Catalog(tmp_path / "meta", StorageEngine(str(tmp_path / "storage")))
    again.open()
    assert sorted(again.load_jobs) == sorted(cat.load_jobs)
