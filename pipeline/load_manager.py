"""Spark Load jobs on the server: states, the driver thread, LOADING and publish, recovery.

The life of a job (Doris's states, each journaled through catalog/load_jobs.py):
  PENDING   `LOAD LABEL ... WITH RESOURCE` checked (database, table, partitions, resource,
            label, properties) and recorded; `job.json` (pipeline/job_spec.py) written under
            `<data_dir>/spark_load/<job_id>/`; a thread starts.
  ETL       `spark_load.run_etl` on the server's SparkSession (one per process, started by the
            first job, on the resource's spark.master; job group = the job id, so CANCEL LOAD
            and the timeout cancel its Spark jobs; the session stays for the next jobs).
            Executors convert their input splits, then write segment files into the job
            directory (Progress ETL:50% between the two stages); the manifest comes back.
  LOADING   the filter ratio is checked (over it: CANCELLED, `ETL_QUALITY_UNSATISFIED`); each
            tablet adopts its files as a pending rowset (`Tablet.adopt_rowset`), then
            `catalog.load.commit_load` publishes every rowset with one new version per
            partition and takes the label, in one journal entry.
  FINISHED / CANCELLED, the job directory removed (the error log is kept for ErrorURL).
A Spark failure, CANCEL LOAD or the timeout before the publish leaves nothing visible. After a
crash (kill -9) `recover` finishes the record of a job whose publish was journaled; a job that
had not published starts again from PENDING (as Doris's FE goes on with its jobs after a
restart), under a new transaction id and within what is left of its timeout, its partial
output discarded (job directories here, adopted rowsets by the storage engine's orphan sweep
at start-up); a job whose timeout has passed, or whose job.json is gone, is CANCELLED.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import re
import shutil
import threading
import time
from datetime import datetime
from pathlib import Path

from catalog.errors import AnalysisError, DdlError, DorisError, LabelAlreadyUsed
from catalog.load import PreparedLoad, commit_load
from catalog.load_gate import load_gate
from catalog.load_jobs import FINAL_STATES, new_job_id, save_load_job
from catalog.load_statements import CancelLoadStmt, LoadFilter, LoadStmt
from pipeline.job_spec import build_spec

log = logging.getLogger("minidoris.spark_load")

SHOW_LOAD_COLUMNS = ["JobId", "Label", "State", "Progress", "Type", "EtlInfo", "TaskInfo",
                     "ErrorMsg", "CreateTime", "EtlStartTime", "EtlFinishTime", "LoadStartTime",
                     "LoadFinishTime", "URL", "JobDetails", "TransactionId", "ErrorTablets",
                     "User", "Comment"]
DEFAULT_TIMEOUT_S = 86400  # Doris's spark_load_default_timeout_second


def _now_text() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


class LoadManager:
    def __init__(self, catalog, data_dir: str, segment_options: dict, time_zone=lambda: "UTC"):
        self.catalog = catalog
        self.root = Path(data_dir) / "spark_load"
        self.errors_dir = self.root / "errors"
        self.segment_options = segment_options
        self.time_zone = time_zone
        self.http_base_url = ""
        self._lock = threading.Lock()
        self._cancel_reasons: dict[int, str] = {}
        self._threads: dict[int, threading.Thread] = {}
        self._gates: dict[int, object] = {}  # job id -> its GatePass (catalog/load_gate.py)
        self._spark = None
        self._spark_master = None
        self._session_lock = threading.Lock()

    # -- start-up ------------------------------------------------------------------------------
    def recover(self) -> None:
        """After a restart: finish, resume or cancel each unfinished job (module docstring)."""
        resumed = []
        for job in list(self.catalog.load_jobs.values()):
            if job["State"] in FINAL_STATES:
                continue
            used = self.catalog.label_txn(job["db"], job["Label"])
            if used is not None and used == job.get("TransactionId"):
                self._save(job, State="FINISHED", Progress="ETL:100%; LOAD:100%",
                           LoadFinishTime=_now_text())
                continue
            spec_path = self.root / str(job["job_id"]) / "job.json"
            left = _time_left(job)
            if not spec_path.exists() or left <= 0:
                reason = "type:TIMEOUT; msg:loading timeout to cancel" if left <= 0 else \
                    "type:LOAD_RUN_FAIL; msg:the server restarted during the load"
                self._save(job, State="CANCELLED", ErrorMsg=reason)
                continue
            resumed.append((job, json.loads(spec_path.read_text()), left))
        keep = {str(job["job_id"]) for job, _, _ in resumed}
        if self.root.exists():
            for entry in self.root.iterdir():
                if entry.name != "errors" and entry.name not in keep:
                    shutil.rmtree(entry, ignore_errors=True)
        for job, spec, left in resumed:
            self._resume(job, spec, left)

    def _resume(self, job: dict, spec: dict, left: float) -> None:
        """Start a job again from PENDING: a new transaction, an empty output directory."""
        out = Path(spec["output_dir"])
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        spec["txn_id"] = self.catalog.begin_txn()
        (out / "job.json").write_text(json.dumps(spec))
        self._gates[job["job_id"]] = load_gate(spec["table"]["table_id"]).enter()
        self._save(job, State="PENDING", Progress="ETL:0%; LOAD:0%", TransactionId=spec["txn_id"],
                   EtlStartTime=None, EtlFinishTime=None, LoadStartTime=None)
        log.info("spark load %s resumed after a restart (%.0f s left)", job["job_id"], left)
        thread = threading.Thread(target=self._run, args=(job["job_id"], spec, left),
                                  name=f"spark-load-{job['job_id']}", daemon=True)
        with self._lock:
            self._threads[job["job_id"]] = thread
        thread.start()

    # -- statements ----------------------------------------------------------------------------
    def submit(self, stmt: LoadStmt, current_db: str | None, user: str = "root") -> int:
        cat = self.catalog
        with cat.lock:
            db = cat.get_db(stmt.db or current_db).name
        if len(stmt.data) != 1:
            raise AnalysisError("Spark Load takes one data description per job here")
        if stmt.resource is None:
            raise AnalysisError("Broker Load is not supported: use WITH RESOURCE (Spark Load)")
        with cat.lock:
            resource = cat.resources.get(stmt.resource)
        if resource is None:
            raise DdlError(f"Resource does not exist. name: {stmt.resource}")
        if resource["type"] != "spark":
            raise DdlError(f"Resource type is not spark. name: {stmt.resource}")
        timeout, ratio = _properties(stmt.properties)
        with cat.lock:
            table_id = cat.get_table(db, stmt.data[0].table).table_id
        # The job is a load of the table from now until it publishes or is cancelled: ALTER
        # jobs begun later wait for it, shape-changing DDL makes its publish fail
        # (catalog/load_gate.py); the spec below takes the table's shape once inside.
        gate = load_gate(table_id).enter()
        try:
            with self._lock:
                self._check_label(db, stmt.label)
                job_id = new_job_id(cat)
                props = {**resource["properties"], **stmt.resource_properties}
                txn_id = cat.begin_txn()
                spec = build_spec(cat, db, stmt, job_id, txn_id, props, ratio,
                                  str(self.root / str(job_id)), self.segment_options,
                                  self.time_zone())
                if spec["table"]["table_id"] != table_id:  # dropped and made again meanwhile
                    raise AnalysisError(f"Table {spec['table']['name']} changed during the "
                                        f"load; load again")
                record = {
                    "job_id": job_id, "db": db, "table": spec["table"]["name"],
                    "JobId": job_id, "Label": stmt.label, "State": "PENDING",
                    "Progress": "ETL:0%; LOAD:0%", "Type": "SPARK", "EtlInfo": None,
                    "TaskInfo": f"cluster:{stmt.resource}; timeout(s):{timeout}; "
                                f"max_filter_ratio:{ratio}",
                    "ErrorMsg": None, "CreateTime": _now_text(), "EtlStartTime": None,
                    "EtlFinishTime": None, "LoadStartTime": None, "LoadFinishTime": None,
                    "URL": None, "JobDetails": "{}", "TransactionId": txn_id,
                    "ErrorTablets": "{}", "User": user, "Comment": "",
                }
                save_load_job(cat, record)
                os.makedirs(spec["output_dir"], exist_ok=True)
                Path(spec["output_dir"], "job.json").write_text(json.dumps(spec))
                thread = threading.Thread(target=self._run, args=(job_id, spec, timeout),
                                          name=f"spark-load-{job_id}", daemon=True)
                self._threads[job_id] = thread
                self._gates[job_id] = gate
        except BaseException:
            gate.leave()
            raise
        thread.start()
        return job_id

    def cancel(self, stmt: CancelLoadStmt, current_db: str | None) -> None:
        with self.catalog.lock:
            db = self.catalog.get_db(stmt.db or current_db).name
        jobs = self._matching(db, stmt.where)
        if not jobs:
            raise DdlError("Load job does not exist")
        with self._lock:  # the LOADING step takes this lock too: no cancel slips past it
            current = [self._job(j["job_id"]) for j in jobs]  # states as of now, not before
            running = [j for j in current if j["State"] not in FINAL_STATES]
            if not running:
                raise DdlError("There is no uncompleted job")
            if all(j["State"] == "LOADING" for j in running):
                raise DdlError("Job could not be cancelled when job is committing.")
            for job in running:
                if job["State"] != "LOADING":
                    self._cancel_reasons.setdefault(job["job_id"],
                                                    "type:USER_CANCEL; msg:user cancel")
            spark = self._spark
        if spark is not None:
            for job in running:
                spark.sparkContext.cancelJobGroup(str(job["job_id"]))

    def show(self, db: str, where: LoadFilter) -> list[list]:
        return [[j.get(c) for c in SHOW_LOAD_COLUMNS] for j in self._matching(db, where)]

    def error_log(self, job_id: int) -> str | None:
        path = self.errors_dir / f"{int(job_id)}.log"
        return path.read_text() if path.exists() else None

    def wait(self, job_id: int, timeout: float | None = None) -> None:
        """Wait for a job's thread (tests and scripts)."""
        thread = self._threads.get(job_id)
        if thread is not None:
            thread.join(timeout)

    # -- the job -------------------------------------------------------------------------------
    def _run(self, job_id: int, spec: dict, timeout: int) -> None:
        timer = threading.Timer(timeout, self._cancel, (job_id, "type:TIMEOUT; msg:loading timeout to cancel"))
        timer.daemon = True
        timer.start()
        deadline = time.monotonic() + timeout
        try:
            self._etl_and_load(job_id, spec, deadline)
        except Exception as e:  # a Spark failure, a bad file: the job is cancelled
            reason = e.args[0] if isinstance(e, _Cancelled) else self._cancel_reasons.get(job_id)
            if reason is None:
                phase = "LOAD_RUN_FAIL" if self._job(job_id)["State"] == "LOADING" else "ETL_RUN_FAIL"
                reason = f"type:{phase}; msg:{_message(e)}"
                # A job's own failure (Spark's error, a missing file, a Doris error) is its
                # state and reason; anything else is a bug and logged with its traceback.
                log.warning("spark load %s failed: %s", job_id, _message(e),
                            exc_info=not _is_job_failure(e))
            self._finish_cancelled(job_id, reason)
        finally:
            timer.cancel()
            gate = self._gates.pop(job_id, None)
            if gate is not None:
                gate.leave()
            shutil.rmtree(spec["output_dir"], ignore_errors=True)

    def _etl_and_load(self, job_id: int, spec: dict, deadline: float = float("inf")) -> None:
        from pipeline.spark_load import run_etl
        self._save(self._job(job_id), State="ETL", EtlStartTime=_now_text())
        spark = self._session(spec)
        self._raise_if_cancelled(job_id)
        spark.sparkContext.setJobGroup(str(job_id), spec["label"], interruptOnCancel=True)
        try:
            manifest = run_etl(spark, spec, lambda done: self._etl_progress(job_id, done))
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        delay = self.catalog.fe_config_get("spark_load_etl_delay_ms")
        if delay:
            time.sleep(delay / 1000)  # test hook: a job slow enough to time out
        self._raise_if_cancelled(job_id)
        job = self._job(job_id)
        url = self._keep_errors(job_id, manifest["errors"])
        considered = manifest["total"] - manifest["unselected"]
        etl_info = (f"unselected.rows={manifest['unselected']}; dpp.abnorm.ALL="
                    f"{manifest['filtered']}; dpp.norm.ALL={manifest['loaded']}")
        details = json.dumps({"ScannedRows": manifest["total"], "TaskNumber": 1,
                              "FileNumber": len(spec["files"]), "LoadBytes": 0})
        self._save(job, EtlFinishTime=_now_text(), EtlInfo=etl_info, URL=url,
                   JobDetails=details, Progress="ETL:100%; LOAD:0%")
        if considered and manifest["filtered"] / considered > spec["max_filter_ratio"]:
            raise _Cancelled("type:ETL_QUALITY_UNSATISFIED; msg:quality not good enough to cancel")
        with self._lock:  # CANCEL LOAD is refused from here on
            if time.monotonic() > deadline:  # the timer's cancel may not have landed yet
                self._cancel_reasons.setdefault(job_id, "type:TIMEOUT; msg:loading timeout to cancel")
            self._raise_if_cancelled(job_id)
            self._save(self._job(job_id), State="LOADING", LoadStartTime=_now_text())
        shape = spec["shape"]
        prepared = PreparedLoad(spec["db"], spec["table"]["name"], spec["txn_id"], [],
                                manifest["loaded"], spec["label"],
                                shape=(tuple(shape[0]), tuple(shape[1]), shape[2]),
                                gate=self._gates.pop(job_id, None),
                                source_type="BATCH_LOAD_JOB")
        self._check_same_table(spec, manifest, prepared)
        engine = self.catalog.engine
        for t in manifest["tablets"]:
            meta = engine.get_tablet(t["tablet_id"]).adopt_rowset(t["files"], t["segment_rows"],
                                                                  spec["txn_id"])
            prepared.rowsets.append((t["partition_id"], t["tablet_id"], meta))
        commit_load(self.catalog, prepared)
        self._save(self._job(job_id), State="FINISHED", Progress="ETL:100%; LOAD:100%",
                   LoadFinishTime=_now_text())

    def _check_same_table(self, spec: dict, manifest: dict, prepared: PreparedLoad) -> None:
        """The job's table is still the one its ETL wrote for (not dropped and made again under
        its name, every written tablet still there); a changed shape (an index added, dropped
        or converted, a partition dropped) is refused by commit_load's checks as any load's."""
        with self.catalog.lock:
            try:
                table = self.catalog.get_table(spec["db"], spec["table"]["name"])
            except DorisError:
                table = None
            tablets_gone = table is None or table.table_id != spec["table"]["table_id"]
        if not tablets_gone:
            engine = self.catalog.engine
            tablets_gone = not all(engine.has_tablet(t["tablet_id"])
                                   for t in manifest["tablets"])
        if tablets_gone:
            prepared.leave_gate()
            raise AnalysisError(f"Table {spec['table']['name']} changed during the load; "
                                f"load again")

    def _etl_progress(self, job_id: int, done: float) -> None:
        """Between run_etl's stages: SHOW LOAD's progress; a job cancelled meanwhile stops."""
        self._raise_if_cancelled(job_id)
        self._save(self._job(job_id), Progress=f"ETL:{int(done * 100)}%; LOAD:0%")

    def _session(self, spec: dict):
        from pipeline.spark_load import session_for
        with self._session_lock:  # not self._lock: CANCEL LOAD must not wait for Spark to start
            if self._spark is not None and self._spark_master != spec["master"]:
                if any(t.is_alive() and t is not threading.current_thread()
                       for t in self._threads.values()):
                    raise DdlError("another Spark Load runs on a different spark.master")
                self._spark.stop()
                self._spark = None
            if self._spark is None:
                log = self.root.parent / "log" / "spark_launcher.log"
                # The driver JVM only schedules tasks and carries a few small rows (the
                # executors' Python does the work): C1 alone starts it faster on few cores.
                conf = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
                        **spec.get("spark_conf", {})}
                self._spark = session_for(spec["master"], conf, launcher_log=log)
                self._spark_master = spec["master"]
            return self._spark

    def stop(self) -> None:
        with self._session_lock:
            if self._spark is not None:
                self._spark.stop()
                self._spark = None

    # -- helpers -------------------------------------------------------------------------------
    def _cancel(self, job_id: int, reason: str) -> None:
        with self._lock:
            job = self._job(job_id)
            if job["State"] in FINAL_STATES or job["State"] == "LOADING":
                return
            self._cancel_reasons.setdefault(job_id, reason)
            spark = self._spark
        if spark is not None:
            spark.sparkContext.cancelJobGroup(str(job_id))

    def _raise_if_cancelled(self, job_id: int) -> None:
        reason = self._cancel_reasons.get(job_id)
        if reason is not None:
            raise _Cancelled(reason)

    def _finish_cancelled(self, job_id: int, reason: str) -> None:
        self._save(self._job(job_id), State="CANCELLED", ErrorMsg=reason,
                   LoadFinishTime=_now_text())

    def _keep_errors(self, job_id: int, lines: list[str]) -> str | None:
        if not lines:
            return None
        os.makedirs(self.errors_dir, exist_ok=True)
        (self.errors_dir / f"{job_id}.log").write_text("\n".join(lines) + "\n")
        return f"{self.http_base_url}/api/_load_error_log?file=__spark_load_{job_id}"

    def _check_label(self, db: str, label: str) -> None:
        used = self.catalog.label_txn(db, label)
        if used is not None:
            raise LabelAlreadyUsed(label, used)
        for job in self.catalog.load_jobs.values():
            if job["db"] == db and job["Label"] == label and job["State"] != "CANCELLED":
                raise LabelAlreadyUsed(label, job["TransactionId"])

    def _job(self, job_id: int) -> dict:
        return self.catalog.load_jobs[job_id]

    def _save(self, job: dict, **changes) -> None:
        save_load_job(self.catalog, {**job, **changes})

    def _matching(self, db: str, where: LoadFilter) -> list[dict]:
        out = []
        for job in sorted(self.catalog.load_jobs.values(), key=lambda j: j["job_id"]):
            if job["db"] != db:
                continue
            if where.label is not None and job["Label"] != where.label:
                continue
            if where.label_like is not None and not fnmatch.fnmatchcase(
                    job["Label"], where.label_like.replace("%", "*").replace("_", "?")):
                continue
            if where.state is not None and job["State"] != where.state:
                continue
            out.append(job)
        return out


class _Cancelled(DorisError):
    pass


def _time_left(job: dict) -> float:
    """Seconds of the job's timeout left since it was created (TaskInfo says the timeout)."""
    m = re.search(r"timeout\(s\):(\d+)", job.get("TaskInfo") or "")
    try:
        created = datetime.strptime(job["CreateTime"], "%Y-%m-%d %H:%M:%S").timestamp()
    except (TypeError, ValueError):
        return 0.0
    return (int(m.group(1)) if m else 0) - (time.time() - created)


def _is_job_failure(e: Exception) -> bool:
    """Spark's own errors (analysis, a failed stage), I/O and Doris errors fail the job."""
    from pyspark.errors import PySparkException
    from py4j.protocol import Py4JError
    return isinstance(e, (DorisError, OSError, PySparkException, Py4JError, _Cancelled))


def _message(e: Exception) -> str:
    """The cause of a failure in one line: a Python worker's exception (inside Spark's wrapped
    traceback) or the first line of the message."""
    text = str(e).strip()
    raised = [m.group(2) for m in re.finditer(r"^([\w.]+(?:Error|Exception)): (.+)$", text, re.M)]
    if raised:
        return raised[-1][:500]
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("Traceback", "File ", "at ")):
            return line[:500]
    return type(e).__name__


def _properties(props: dict[str, str]) -> tuple[int, float]:
    known = {"timeout", "max_filter_ratio", "strict_mode", "timezone", "exec_mem_limit",
             "load_parallelism", "send_batch_parallelism", "priority"}
    for key in props:
        if key not in known:
            raise AnalysisError(f"{key} is invalid property")
    try:
        timeout = int(props.get("timeout", DEFAULT_TIMEOUT_S))
    except ValueError:
        raise AnalysisError(f"Timeout is not LONG: {props['timeout']}") from None
    if timeout <= 0:
        raise AnalysisError("Timeout must be greater than 0")
    try:
        ratio = float(props.get("max_filter_ratio", "0"))
    except ValueError:
        raise AnalysisError(f"Max filter ratio is not DOUBLE: {props['max_filter_ratio']}") from None
    if not 0 <= ratio <= 1:
        raise AnalysisError("Max filter ratio must between [0, 1]")
    return timeout, ratio


def wait_until_done(manager: LoadManager, job_id: int, timeout: float) -> dict:
    """The job's record once final (scripts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = manager.catalog.load_jobs[job_id]
        if job["State"] in FINAL_STATES:
            return job
        time.sleep(0.2)
    return manager.catalog.load_jobs[job_id]
