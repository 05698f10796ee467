"""Resources (CREATE / DROP RESOURCE) and load jobs' records: journaled catalog state.

A resource is a name, a type and its properties (`"type" = "spark"`, `"spark.master" = ...`),
as Doris's ResourceMgr keeps them. A load job's record (Spark Load: `LOAD LABEL ... WITH
RESOURCE`) is a dict with Doris's SHOW LOAD fields; every state change journals the whole
record again (`load_job`), so SHOW LOAD survives a restart. The job's work (the Spark driver,
publishing its files) lives in pipeline/load_manager.py; this module only owns the state.

    create_resource(catalog, name, props)   Doris's messages for an existing name / bad type
    drop_resource(catalog, name)
    save_load_job(catalog, record)          journal + apply a job record (upsert by job_id)
    record_insert_job(catalog, ...)         an INSERT's record (Doris's InsertLoadJob, Type
                                            INSERT), at most LABEL_NUM_THRESHOLD in all
"""

from __future__ import annotations

from catalog.errors import DdlError

RESOURCE_TYPES = ("spark",)  # the kinds this server can run (Doris also has odbc, s3, jdbc, ...)
FINAL_STATES = ("FINISHED", "CANCELLED")
LABEL_NUM_THRESHOLD = 2000  # Doris's label_num_threshold: INSERT records kept, all databases'
TRIM_INTERVAL = 64  # INSERTs between two counts of the records
INSERT_JOB_DETAILS = ('{"Unfinished backends":{},"ScannedRows":%d,"TaskNumber":1,"LoadBytes":0,'
                      '"All backends":{},"FileNumber":0,"FileSize":0}')


def create_resource(catalog, name: str, props: dict[str, str], if_not_exists: bool = False) -> None:
    kind = props.get("type", "").strip().lower()
    if not kind:
        raise DdlError("Resource type can't be null")
    if kind not in RESOURCE_TYPES:
        raise DdlError(f"Unrecognized resource type: {kind}. Only "
                       f"{list(RESOURCE_TYPES)} are supported.")
    if kind == "spark" and not props.get("spark.master"):
        raise DdlError("Missing spark.master in properties")
    with catalog.lock:
        if name in catalog.resources:
            if if_not_exists:
                return
            raise DdlError(f"Resource({name}) already exist")
        catalog._log("create_resource", {"name": name, "type": kind,
                                         "properties": dict(props)})


def drop_resource(catalog, name: str, if_exists: bool = False) -> None:
    with catalog.lock:
        if name not in catalog.resources:
            if if_exists:
                return
            raise DdlError(f"Resource({name}) does not exist")
        catalog._log("drop_resource", {"name": name})


def save_load_job(catalog, record: dict) -> None:
    """Journal a load job's record (its new state); the catalog keeps the latest."""
    with catalog.lock:
        catalog._log("load_job", dict(record))


def record_insert_job(catalog, db: str, table: str, label: str, txn_id: int, rows: int,
                      user: str, created: str, finished: str, timeout_s: int) -> None:
    """Doris's LoadManager.recordFinishedLoadJob for an INSERT: a FINISHED job of Type INSERT
    in SHOW LOAD. Past LABEL_NUM_THRESHOLD INSERT records (every database's, counted every
    TRIM_INTERVAL INSERTs), the oldest tenth goes (one journal entry), as Doris's
    LoadManager.removeOverLimitLoadJob bounds its jobs in all: records of databases loaded
    once (or dropped since) do not pile up in every catalog image."""
    with catalog.lock:
        job_id = catalog._alloc_id()  # noqa: SLF001
        catalog._log("load_job", {  # noqa: SLF001
            "job_id": job_id, "db": db, "table": table, "JobId": job_id, "Label": label,
            "State": "FINISHED", "Progress": f"Unknown id: {job_id}", "Type": "INSERT",
            "EtlInfo": None,
            "TaskInfo": f"cluster:N/A; timeout(s):{timeout_s}; max_filter_ratio:0.0",
            "ErrorMsg": None, "CreateTime": created, "EtlStartTime": created,
            "EtlFinishTime": created, "LoadStartTime": created, "LoadFinishTime": finished,
            "URL": None, "JobDetails": INSERT_JOB_DETAILS % rows, "TransactionId": txn_id,
            "ErrorTablets": "{}", "User": user, "Comment": ""}, sync=False)
        # the records are counted every `interval` INSERTs, not on each (a walk over every
        # record under the catalog lock): the bound is exceeded by less than `interval`
        # records, as Doris's label cleaner also runs only now and then
        catalog.inserts_since_trim += 1
        if catalog.inserts_since_trim < max(1, min(TRIM_INTERVAL, LABEL_NUM_THRESHOLD // 10)):
            return
        catalog.inserts_since_trim = 0
        inserts = sorted(j["job_id"] for j in catalog.load_jobs.values()
                         if j.get("Type") == "INSERT")
        if len(inserts) > LABEL_NUM_THRESHOLD:
            drop = inserts[:len(inserts) - LABEL_NUM_THRESHOLD * 9 // 10]
            catalog._log("remove_load_jobs", {"job_ids": drop}, sync=False)  # noqa: SLF001


def new_job_id(catalog) -> int:
    """A fresh catalog id for a load job (journaled with the job's first record)."""
    with catalog.lock:
        return catalog._alloc_id()


def _apply_create_resource(cat, data: dict) -> None:
    cat.resources[data["name"]] = {"type": data["type"], "properties": data["properties"]}


def _apply_drop_resource(cat, data: dict) -> None:
    cat.resources.pop(data["name"], None)


def _apply_load_job(cat, data: dict) -> None:
    cat.load_jobs[int(data["job_id"])] = data
    cat.next_id = max(cat.next_id, int(data["job_id"]))


def _apply_remove_load_jobs(cat, data: dict) -> None:
    for job_id in data["job_ids"]:
        cat.load_jobs.pop(int(job_id), None)


APPLY = {
    "remove_load_jobs": _apply_remove_load_jobs,
    "create_resource": _apply_create_resource,
    "drop_resource": _apply_drop_resource,
    "load_job": _apply_load_job,
}
