"""EXPORT jobs' records (SHOW EXPORT, CANCEL EXPORT): journaled catalog state, as Doris's
ExportMgr keeps them. A record is a dict with SHOW EXPORT's fields plus `job_id` and `db`;
every state change journals the whole record (`export_job`), so SHOW EXPORT survives a
restart. The work (a SELECT ... INTO OUTFILE of the table's rows) is
server/handlers/export.py's; this module owns the state and Doris's label rule.

    op            data
    export_job    the record (upsert by job_id)
"""

from __future__ import annotations

from catalog.errors import DdlError

STATES = ("PENDING", "IN_QUEUE", "EXPORTING", "FINISHED", "CANCELLED")
COLUMNS = ["JobId", "Label", "State", "Progress", "TaskInfo", "Path", "CreateTime", "StartTime",
           "FinishTime", "Timeout", "ErrorMsg", "OutfileInfo"]


def check_label(catalog, db: str, label: str) -> None:
    """A label names one export job of the database (ExportMgr: LabelAlreadyUsedException)."""
    with catalog.lock:
        for job in catalog.export_jobs.values():
            if job["db"] == db and job["Label"] == label and job["State"] != "CANCELLED":
                raise DdlError(f"Label [{label}] has already been used.")


def save_export_job(catalog, record: dict) -> None:
    with catalog.lock:
        catalog._log("export_job", dict(record), sync=False)  # noqa: SLF001


def cancel_interrupted(catalog, now: str) -> int:
    """At start-up: a job a crash interrupted (PENDING or EXPORTING: its statement never
    returned) is CANCELLED, its files left as they are, as Doris cancels export jobs whose
    tasks were lost; how many were."""
    with catalog.lock:
        stale = [j for j in catalog.export_jobs.values()
                 if j["State"] in ("PENDING", "IN_QUEUE", "EXPORTING")]
    for job in stale:
        save_export_job(catalog, {**job, "State": "CANCELLED", "FinishTime": now,
                                  "ErrorMsg": "type:RUN_FAIL; msg:the server restarted"})
    return len(stale)


def _apply_export_job(cat, data: dict) -> None:
    cat.export_jobs[int(data["job_id"])] = data
    cat.next_id = max(cat.next_id, int(data["job_id"]))


APPLY = {"export_job": _apply_export_job}
