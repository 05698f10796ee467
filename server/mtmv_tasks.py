"""Refresh tasks of asynchronous materialized views, and the triggers that start them.

    REFRESH MATERIALIZED VIEW / BUILD IMMEDIATE   -> MTMVTasks.refresh (in the statement's thread)
    ON SCHEDULE EVERY n UNIT                      -> an APScheduler interval job per view
    ON COMMIT                                     -> Catalog.publish_listeners: a publish into a
                                                     base table queues a refresh
    both                                          -> MTMVTasks.submit (one background thread)

A task (`_run`) captures the base tables' visible versions, runs the view's query in an
internal session (rewrite to materialized views off, the view's database current) and loads
the rows through INSERT OVERWRITE's machinery (catalog/insert_overwrite.py): temporary
copies of the view's partitions receive the rows, then replace them in one journal entry, so
readers see the old contents or the new, and a crash mid-refresh leaves the old ones (the
copies are dropped at start-up). The task's record, the versions and the refresh state are
then journaled in one `mtmv_set` entry (catalog/mtmv.py). REFRESH AUTO of a view whose
contents are current does nothing (RefreshMode NOT_REFRESH), as Doris's.

Doris runs every task asynchronously; here REFRESH and BUILD IMMEDIATE wait for their task
(a client sees the result at once), scheduled and commit-triggered tasks do not.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import sqlglot
from apscheduler.schedulers.background import BackgroundScheduler

from catalog import insert_overwrite, mtmv
from catalog.errors import DorisError

log = logging.getLogger(__name__)
_UNIT_SECONDS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400, "WEEK": 604800}


class TaskCanceled(DorisError):
    def __init__(self) -> None:
        super().__init__("task canceled")


class MTMVTasks:
    def __init__(self, services) -> None:
        self.services = services
        self.catalog = services.catalog
        self._locks: dict[int, threading.Lock] = defaultdict(threading.Lock)
        self._running: dict[int, tuple[int, object]] = {}  # task id -> (view id, session)
        self._background = ThreadPoolExecutor(1, thread_name_prefix="mtmv")
        self._scheduler: BackgroundScheduler | None = None
        self._guard = threading.Lock()

    # -- life --------------------------------------------------------------------------------
    def start(self) -> None:
        self._scheduler = BackgroundScheduler(daemon=True)
        self._scheduler.start()
        with self.catalog.lock:
            names = [(db.name, t.name) for db, t in mtmv.views(self.catalog)]
        for db, name in names:
            self.reschedule(db, name)
        self.catalog.publish_listeners.append(self._on_publish)

    def shutdown(self) -> None:
        if self._on_publish in self.catalog.publish_listeners:
            self.catalog.publish_listeners.remove(self._on_publish)
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None
        self._background.shutdown(wait=False, cancel_futures=True)

    # -- triggers ----------------------------------------------------------------------------
    def reschedule(self, db: str, name: str) -> None:
        """(Re)make the view's interval job from its trigger and job state."""
        with self.catalog.lock:
            try:
                _, table = mtmv.get_mtmv(self.catalog, db, name)
            except DorisError:
                return
            rec = dict(table.mtmv)
        self.unschedule(rec["job_id"])
        trigger = rec["trigger"]
        if self._scheduler is None or trigger["kind"] != "SCHEDULE" \
                or rec["job_status"] != "RUNNING":
            return
        start = datetime.strptime(trigger["starts"], "%Y-%m-%d %H:%M:%S") \
            if trigger.get("starts") else None
        self._scheduler.add_job(self._scheduled, "interval", args=[rec["job_id"]],
                                seconds=trigger["interval"] * _UNIT_SECONDS[trigger["unit"]],
                                start_date=start, id=f"mtmv_{rec['job_id']}",
                                replace_existing=True, max_instances=1, coalesce=True)

    def unschedule(self, job_id: int) -> None:
        if self._scheduler is not None and self._scheduler.get_job(f"mtmv_{job_id}"):
            self._scheduler.remove_job(f"mtmv_{job_id}")

    def _scheduled(self, job_id: int) -> None:
        found = self._by_job(job_id)
        if found is not None:
            self.submit(*found, "SYSTEM")

    def _by_job(self, job_id: int) -> tuple[str, str] | None:
        with self.catalog.lock:
            for db, t in mtmv.views(self.catalog):
                if t.mtmv["job_id"] == job_id:
                    return db.name, t.name
        return None

    def _on_publish(self, table_ids: set[int]) -> None:
        """A load into a table committed: queue a refresh of each ON COMMIT view over it."""
        with self.catalog.lock:
            due = [(db.name, t.name) for db, t in mtmv.views(self.catalog)
                   if t.mtmv["trigger"]["kind"] == "COMMIT" and t.mtmv["job_status"] == "RUNNING"
                   and any(b["table_id"] in table_ids for b in t.mtmv.get("base_tables", []))]
        for db, name in due:
            self.submit(db, name, "COMMIT")

    def submit(self, db: str, name: str, trigger_mode: str) -> None:
        """Run a refresh in the background (scheduled and commit-triggered tasks)."""
        def run() -> None:
            try:
                self.refresh(db, name, complete=False, trigger_mode=trigger_mode)
            except DorisError as e:  # the view went away: nothing to refresh
                log.info("materialized view %s.%s not refreshed: %s", db, name, e)
        try:
            self._background.submit(run)
        except RuntimeError:
            pass  # shutting down

    # -- tasks -------------------------------------------------------------------------------
    def refresh(self, db: str, name: str, complete: bool, trigger_mode: str) -> dict:
        """Run one refresh task now; its record (also journaled). A failed task is recorded,
        not raised."""
        with self.catalog.lock:
            db, table = mtmv.get_mtmv(self.catalog, db, name)
            view_id = table.table_id
        with self._locks[view_id]:
            with self.catalog.lock:
                db, table = mtmv.get_mtmv(self.catalog, db, name)
                rec = dict(table.mtmv)
                task_id = self.catalog._alloc_id()  # noqa: SLF001
                fresh = mtmv.is_sync(self.catalog, table)
                # the query's tables now (one dropped and made again has a new id)
                base = mtmv.base_tables_of(self.catalog, rec["db"],
                                           sqlglot.parse_one(rec["query"], read="doris"))
                versions = mtmv.snapshot(self.catalog, base)
            now = time.time()
            task = {"id": task_id, "status": "RUNNING", "create": now, "start": now,
                    "context": json.dumps({"triggerMode": trigger_mode, "partitions": [],
                                           "isComplete": complete}, separators=(",", ":")),
                    "query_id": uuid.uuid4().hex}
            fields: dict = {}
            if not complete and (fresh or rec["refresh_method"] == "NEVER"
                                 and trigger_mode != "MANUAL"):
                task.update(status="SUCCESS", mode="NOT_REFRESH", progress="100.00% (0/0)")
            else:
                try:
                    self._overwrite(db, name, rec, view_id, task_id)
                    task.update(status="SUCCESS", mode="COMPLETE", progress="100.00% (1/1)",
                                need=json.dumps([name]), completed=json.dumps([name]))
                    fields = {"snapshot": versions, "base_tables": base,
                              "last_refresh_time": time.time(), "refresh_state": "SUCCESS"}
                except TaskCanceled:
                    task.update(status="CANCELED", mode="COMPLETE", progress="0.00% (0/1)")
                except DorisError as e:
                    task.update(status="FAILED", mode="COMPLETE", progress="0.00% (0/1)",
                                error=e.args[0] if e.args else str(e))
                    fields = {"refresh_state": "FAIL"}
            task["finish"] = time.time()
            with self.catalog.lock:
                try:
                    db, table = mtmv.get_mtmv(self.catalog, db, name)
                except DorisError:
                    return task  # dropped while it ran
                tasks = [*table.mtmv.get("tasks", []), task][-mtmv.MAX_TASKS:]
                mtmv.set_fields(self.catalog, db, table.name, {**fields, "tasks": tasks})
            return task

    def _overwrite(self, db: str, name: str, rec: dict, view_id: int, task_id: int) -> None:
        from server.handlers.insert import _load
        from server.handlers.query import query_batches
        session = self._session(rec["db"])
        self._running[task_id] = (view_id, session)
        ctx = _context(self.services, session, rec["query"])
        ow = insert_overwrite.begin(self.catalog, db, name, None)
        try:
            with self.catalog.lock:
                names = [c.name for c in self.catalog.get_table(db, name).columns]
            query = sqlglot.parse_one(rec["query"], read="doris")
            _, batches = query_batches(query, ctx)
            try:
                _load(ctx, db, name, (b.rename_columns(names) for b in batches), None,
                      ow.temps)
            finally:
                batches.close()
            if session.cancel.is_set():
                raise TaskCanceled()
            insert_overwrite.commit(self.catalog, ow)
        except DorisError:
            insert_overwrite.abort(self.catalog, ow)
            if session.cancel.is_set():
                raise TaskCanceled() from None
            raise
        except BaseException:
            insert_overwrite.abort(self.catalog, ow)
            raise
        finally:
            self._running.pop(task_id, None)

    def _session(self, db: str):
        from catalog.access import Access
        from server.session import DorisSession  # session imports the handlers
        session = DorisSession(self.services)
        root = self.catalog.auth.get_user("root", "%")
        session.access, session.username = Access(self.catalog.auth, root, "127.0.0.1"), "root"
        session.database = db
        session.variables.set("enable_materialized_view_rewrite", False)
        return session

    def cancel(self, view_id: int, task_id: int) -> None:
        """CANCEL MATERIALIZED VIEW TASK: stop a running task (AbstractJob.cancelTaskById)."""
        from catalog.errors import DdlError
        running = {t: s for t, (v, s) in list(self._running.items()) if v == view_id}
        if not running:
            raise DdlError("no running task")
        if task_id not in running:
            raise DdlError(f"Not find task which id is {task_id}")
        running[task_id].cancel.set()


def _context(services, session, sql: str):
    from server.handlers.context import StatementContext
    return StatementContext(services.catalog, services.engine, services.pool, session,
                            datetime.now().astimezone(), sql)
