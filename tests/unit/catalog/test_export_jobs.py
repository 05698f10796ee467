"""EXPORT records: labels used once per database (a CANCELLED job's label may be used again),
and a job a crash left PENDING or EXPORTING is CANCELLED at start-up."""

from __future__ import annotations

import pytest

from catalog import export_jobs
from catalog.errors import DdlError
from cluster_testutil import make_catalog


def _job(job_id: int, label: str, state: str) -> dict:
    return {"job_id": job_id, "db": "db", "JobId": job_id, "Label": label, "State": state}


def test_labels_and_interrupted_jobs(tmp_path):
    cat = make_catalog(tmp_path)
    export_jobs.save_export_job(cat, _job(1, "a", "FINISHED"))
    export_jobs.save_export_job(cat, _job(2, "b", "EXPORTING"))
    export_jobs.save_export_job(cat, _job(3, "c", "CANCELLED"))
    with pytest.raises(DdlError, match=r"Label \[a\] has already been used."):
        export_jobs.check_label(cat, "db", "a")
    export_jobs.check_label(cat, "db", "c")
    export_jobs.check_label(cat, "other", "a")
    assert export_jobs.cancel_interrupted(cat, "2026-11-28 00:00:00") == 1
    job = cat.export_jobs[2]
    assert (job["State"], job["ErrorMsg"]) == ("CANCELLED", "type:RUN_FAIL; msg:the server restarted")
    assert cat.export_jobs[1]["State"] == "FINISHED"
