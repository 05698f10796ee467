"""The Catalog: databases and tables, changed only through journaled operations.

Every change is an operation `(op, data)`: `data` carries everything the change needs, ids
included, so that applying it is deterministic. `_log` appends the operation to the journal
(fsynced) and then applies it; start-up loads the image and applies the journal's operations
again with the same functions (`_APPLY`). Storage tablets follow the catalog: creating a table
creates its tablets, dropping one drops them, publishing a load makes its rowsets visible.

Concurrency: one re-entrant lock guards the catalog's state; readers take a snapshot (the table
object and each partition's visible version) under the lock and read storage without it. A
publish journals (fsync) without the lock and applies under it (`_log_outside_lock`).
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from catalog import auto_increment
from catalog import backend as backend_ops
from catalog import colocation
from catalog import delete_history
from catalog.cluster import ClusterMixin
from catalog.create_table import new_table, plan_partitions, replication_num
from catalog.debug_points import debug_point
from catalog.dynamic_partition import prepare_create
from catalog.rollup import analyze_rollup
from catalog.errors import (DatabaseDropNotExists, DatabaseExists, UnknownTableToDrop, DdlError, NoDatabaseSelected, TableExists,
                            UnknownDatabase, UnknownTable, LabelAlreadyUsed)
from catalog.journal import Journal
from catalog.names import check_database_name
from catalog.model import Database, OlapTable, Partition, TabletMeta
from catalog.partition_journal import APPLY as PARTITION_APPLY
from catalog.index_journal import APPLY as INDEX_APPLY
from catalog.temp_partition_journal import APPLY as TEMP_PARTITION_APPLY
from catalog.compaction import APPLY as COMPACTION_APPLY
from catalog.auth import Auth, catalog_apply as auth_apply
from catalog.load_jobs import APPLY as LOAD_JOB_APPLY
from catalog.export_jobs import APPLY as EXPORT_JOB_APPLY
from catalog.alias_functions import APPLY as FUNCTION_APPLY
from catalog import encrypt_keys, partition_properties, sql_block_rules, workload_groups
from catalog import rollup_job, rollup_job_journal
from catalog.column_stats import APPLY as COLUMN_STATS_APPLY
from catalog import row_policy
from catalog.views import APPLY as VIEW_APPLY
from catalog.mtmv import APPLY as MTMV_APPLY
from catalog.rename import APPLY as RENAME_APPLY
from catalog.database_alter import APPLY as DATABASE_ALTER_APPLY, check_replica_quota
from catalog.information_schema import table_totals
from catalog import precommit
from catalog.global_variables import APPLY as GLOBAL_VARIABLE_APPLY
from catalog.schema_change import APPLY as SCHEMA_CHANGE_APPLY
from catalog.enable_feature import APPLY as ENABLE_FEATURE_APPLY
from catalog.recycle_bin import RecycleBin
from catalog import recycle_ops
from catalog.statements import CreateTableStmt
from storage import RowsetMeta, StorageEngine

log = logging.getLogger(__name__)


class Catalog(ClusterMixin):  # ClusterMixin (catalog/cluster.py): backends, placement, colocation
    def __init__(self, meta_dir: Path, engine: StorageEngine, backend_num: int = 3,
                 edit_log_roll_num: int = 50000, clock: Callable[[], float] = time.time):
        self.lock = threading.RLock()
        self.engine = engine
        self.journal = Journal(meta_dir)
        self.dbs: dict[str, Database] = {}
        self.next_id = 10000
        self.last_txn_id = 0
        self.labels: dict[str, dict[str, int]] = {}  # db -> load label -> transaction id
        # labelled txn -> (publish time, source type): SHOW PROC '/transactions' (in the image)
        self.txn_info: dict[int, tuple[float, str | None]] = {}
        self.delete_infos: dict[str, list[dict]] = {}  # db -> SHOW DELETE (delete_history.py)
        self.resources: dict[str, dict] = {}  # CREATE RESOURCE (catalog/load_jobs.py)
        self.load_jobs: dict[int, dict] = {}  # Spark Load jobs' records (SHOW LOAD)
        self.export_jobs: dict[int, dict] = {}  # EXPORT jobs' records (catalog/export_jobs.py)
        # alias functions: db name ("" = GLOBAL) -> signature -> definition
        self.functions: dict[str, dict[str, dict]] = {}
        self.sql_block_rules: dict[str, dict] = {}  # catalog/sql_block_rules.py
        self.workload_groups: dict[str, dict] = {}  # catalog/workload_groups.py
        self.encrypt_keys: dict[str, dict[str, str]] = {}  # db -> name -> key (encrypt_keys.py)
        workload_groups.ensure_normal(self)
        self.alter_jobs: dict[int, rollup_job.RollupJob] = {}  # ADD ROLLUP / CREATE MV jobs
        self.global_variables: dict[str, Any] = {}  # SET GLOBAL values (catalog/global_variables.py)
        self.precommitted: dict[int, dict] = {}  # two-phase Stream Loads (catalog/precommit.py)
        self.column_stats: dict[str, dict] = {}  # ANALYZE TABLE (catalog/column_stats.py)
        self.analyze_jobs: list[dict] = []  # the ANALYZE jobs run, oldest first (SHOW ANALYZE)
        self.row_policies: list[row_policy.RowPolicy] = []  # catalog/row_policy.py
        self.recycle_bin = RecycleBin()  # dropped, recoverable objects (catalog/recycle_bin.py)
        self.restored_precommits: list = []  # their PreparedLoads after a restart
        self._init_cluster(backend_num)
        self.edit_log_roll_num = edit_log_roll_num
        self.clock = clock
        self.replaying = False  # True while the journal is replayed: storage is not touched
        self.auth = Auth()  # users, roles, privileges (catalog/auth.py), journaled through _log
        self.auth.log, self.auth.lock = self._log, self.lock  # one lock: no lock-order cycle
        self.auth.block_rule_names = lambda: self.sql_block_rules
        self.max_tablet_version_num = 2000  # BE config: loads refused beyond it (-235)
        self._unapplied = 0  # publish entries journaled, not yet applied (no checkpoint then)
        self._labels_in_flight: set[tuple[str, str]] = set()  # (db, label) being published
        # Bumped by every journaled change but publishes and compactions (DDL, privileges,
        # properties, partitions): what caches of plans and privilege checks are keyed on
        # (server/short_circuit.py); a load leaves it alone.
        self.ddl_epoch = 0
        # Bumped by every journaled change once applied, loads and compactions included: what
        # planner statistics kept across statements are keyed on (planner/statistics.py).
        self.data_epoch = 0
        # called with the ids of the tables a batch of publishes loaded, after it is applied
        # (async materialized views refreshed ON COMMIT: server/mtmv_tasks.py)
        self.publish_listeners: list[Callable[[set[int]], None]] = []
        # INSERTs since the SHOW LOAD records were last counted (load_jobs.py)
        self.inserts_since_trim = 0

    # -- start-up ------------------------------------------------------------------------------
    def open(self) -> None:
        state = self.journal.load_image()
        if state is not None:
            self._load_state(state)
        replayed = 0
        # Replay changes the catalog only; storage is restored once from the final state, so
        # a tablet created, loaded and dropped within the journal never needs its files.
        self.replaying = True
        for op, data in self.journal.replay():
            _APPLY[op](self, data)
            replayed += 1
        self.replaying = False
        self._bootstrap_backends()
        known: set[int] = set()
        for table in self.all_tables():
            self._restore_tablets(table)
            known |= {tid for p in table.all_partitions() for tid in p.tablets}
        known |= self._restore_recycled_tablets()  # files stay until the bin erases them
        self.engine.remove_unknown_tablets(known)
        self.restored_precommits = precommit.restore(self)  # held before the orphan sweep
        for tid in known:
            self.engine.remove_orphans(tid)
        self.engine.remove_unreferenced_load_files()
        log.info("catalog opened: %d databases, %d journal entries replayed", len(self.dbs), replayed)

    def _load_state(self, state: dict) -> None:
        self.next_id = state["next_id"]
        self.last_txn_id = state.get("last_txn_id", 0)
        self.labels = {db: dict(labels) for db, labels in state.get("labels", {}).items()}
        self.txn_info = {int(k): (v[0], v[1]) for k, v in state.get("txn_info", {}).items()}
        self.delete_infos = {db: list(r) for db, r in state.get("delete_infos", {}).items()}
        for d in state["databases"]:
            db = Database.from_dict(d)
            self.dbs[db.name] = db
        self.backends = {b["backend_id"]: backend_ops.Backend.from_dict(b)
                         for b in state.get("backends", [])}
        self.colocation.load(state.get("colocation", []))
        self.auth.load(state.get("auth"))
        self.resources = dict(state.get("resources", {}))
        self.load_jobs = {int(k): v for k, v in state.get("load_jobs", {}).items()}
        self.export_jobs = {int(k): v for k, v in state.get("export_jobs", {}).items()}
        self.functions = {db: dict(fns) for db, fns in state.get("functions", {}).items()}
        self.sql_block_rules = dict(state.get("sql_block_rules", {}))
        self.workload_groups = dict(state.get("workload_groups", {}))
        workload_groups.ensure_normal(self)
        self.encrypt_keys = {db: dict(k) for db, k in state.get("encrypt_keys", {}).items()}
        self.alter_jobs = {j["job_id"]: rollup_job.RollupJob.from_dict(j)
                           for j in state.get("alter_jobs", [])}
        self.global_variables = dict(state.get("global_variables", {}))
        self.precommitted = {int(k): v for k, v in state.get("precommitted", {}).items()}
        self.column_stats = dict(state.get("column_stats", {}))
        self.analyze_jobs = list(state.get("analyze_jobs", []))
        self.row_policies = [row_policy.RowPolicy(**p) for p in state.get("row_policies", [])]
        self.recycle_bin = RecycleBin.from_dict(state.get("recycle_bin"))

    def _restore_tablets(self, table: OlapTable) -> None:
        for p in table.all_partitions():
            for index_id, tablet_ids in p.tablets_by_index.items():
                schema = table.tablet_schema(index_id)
                for tid in tablet_ids:
                    published = [(RowsetMeta.from_dict(r["meta"]), r["version"])
                                 for r in p.tablets[tid].rowsets]
                    self.engine.restore_tablet(tid, schema, published)

    def _restore_recycled_tablets(self) -> set[int]:
        tables = {r.table.table_id: r.table for r in self.recycle_bin.tables.values()}
        tables.update({t.table_id: t for t in self.all_tables()})
        known: set[int] = set()
        for r in self.recycle_bin.tables.values():
            self._restore_tablets(r.table)
            known |= {tid for p in r.table.all_partitions() for tid in p.tablets}
        for r in self.recycle_bin.partitions.values():
            table = tables.get(r.table_id)
            if table is None:
                continue  # its table was erased: so are its files
            for index_id, tablet_ids in r.partition.tablets_by_index.items():
                if index_id not in table.indexes:
                    continue  # an index dropped since: nothing can read these tablets
                schema = table.tablet_schema(index_id)
                for tid in tablet_ids:
                    published = [(RowsetMeta.from_dict(x["meta"]), x["version"])
                                 for x in r.partition.tablets[tid].rowsets]
                    self.engine.restore_tablet(tid, schema, published)
                    known.add(tid)
        return known

    def state(self) -> dict:
        return {"next_id": self.next_id, "last_txn_id": self.last_txn_id, "labels": self.labels,
                "txn_info": {str(k): list(v) for k, v in self.txn_info.items()},
                "delete_infos": self.delete_infos,
                "databases": [d.to_dict() for d in self.dbs.values()],
                "backends": [b.to_dict() for b in self.backends.values()],
                "colocation": self.colocation.to_dict(), "auth": self.auth.to_dict(),
                "resources": self.resources,
                "load_jobs": {str(k): v for k, v in self.load_jobs.items()},
                "export_jobs": {str(k): v for k, v in self.export_jobs.items()},
                "functions": self.functions,
                "sql_block_rules": self.sql_block_rules,
                "workload_groups": self.workload_groups, "encrypt_keys": self.encrypt_keys,
                "alter_jobs": [j.to_dict() for j in self.alter_jobs.values()],
                "global_variables": self.global_variables,
                "precommitted": {str(k): v for k, v in self.precommitted.items()},
                "column_stats": self.column_stats,
                "analyze_jobs": self.analyze_jobs,
                "row_policies": [p.to_dict() for p in self.row_policies],
                "recycle_bin": self.recycle_bin.to_dict()}

    def close(self) -> None:
        self.journal.close()

    # -- journal -------------------------------------------------------------------------------
    def _log(self, op: str, data: Any, sync: bool = True) -> None:
        """Journal and apply one entry; `sync=False` for records whose loss on a machine crash
        harms nothing (an INSERT's SHOW LOAD record): written, not fsynced (the next entry's
        fsync, or the OS, makes it durable; a kill -9 of the server keeps it)."""
        with self.lock:
            self.journal.append_many([(op, data)], sync=sync)
            debug_point("journal.before_apply." + op)
            if op not in _NOT_DDL:
                self.ddl_epoch += 1
            _APPLY[op](self, data)
            self.data_epoch += 1
            self._maybe_checkpoint()

    def _maybe_checkpoint(self) -> None:
        """Under the lock: roll the journal into an image when due, unless an entry is journaled
        but not applied (the image would claim it and miss it)."""
        if self._unapplied == 0 and self.journal.entries_since_image >= self.edit_log_roll_num:
            self.journal.checkpoint(self.state())

    def _log_outside_lock(self, entries: list[tuple[str, Any]],
                          on_durable: Callable[[], None] | None = None) -> None:
        """`_log` for publishes: the fsync happens without the catalog lock, so readers taking
        snapshots and other tables' loads do not wait for it; the entries are applied under the
        lock right after. The caller holds the table's load lock, so entries of one table are
        applied in journal order; entries of different tables commute. `on_durable` is called
        once the entries are durable: a failure after that (of an apply, of a checkpoint) must
        not undo the loads, which a restart replays."""
        with self.lock:
            self._unapplied += len(entries)
        try:
            self.journal.append_many(entries, hand_off_slot=True)
            debug_point("publish.before_apply")
        except BaseException:
            with self.lock:
                self._unapplied -= len(entries)
            raise
        if on_durable is not None:
            on_durable()
        with self.lock:
            self._unapplied -= len(entries)
            for op, data in entries:
                _APPLY[op](self, data)
            self.data_epoch += 1
            self._maybe_checkpoint()
        debug_point("publish.after_apply")

    def label_txn(self, db_name: str, label: str) -> int | None:
        """The transaction that used `label` in the database, if one did."""
        with self.lock:
            return self.labels.get(db_name, {}).get(label)

    def begin_txn(self) -> int:
        """A transaction id: unique across restarts (the publish entry records it)."""
        with self.lock:
            self.last_txn_id += 1
            return self.last_txn_id

    def _alloc_id(self) -> int:
        self.next_id += 1
        return self.next_id

    # -- lookups -------------------------------------------------------------------------------
    def get_db(self, name: str | None) -> Database:
        if not name:
            raise NoDatabaseSelected()
        db = self.dbs.get(name)
        if db is None:
            raise UnknownDatabase(name)
        return db

    def get_table(self, db_name: str | None, table_name: str) -> OlapTable:
        db = self.get_db(db_name)
        table = db.tables.get(table_name)
        if table is None:
            raise UnknownTable(table_name, db.name)
        return table

    def all_tables(self) -> list[OlapTable]:
        return [t for db in self.dbs.values() for t in db.tables.values()]

    def find_table_by_id(self, table_id: int) -> tuple[Database, OlapTable]:
        for db in self.dbs.values():
            for t in db.tables.values():
                if t.table_id == table_id:
                    return db, t
        raise DdlError(f"Unknown table id {table_id}")

    # -- databases -----------------------------------------------------------------------------
    def create_database(self, name: str, if_not_exists: bool = False) -> None:
        check_database_name(name)
        with self.lock:
            if name in self.dbs:
                if if_not_exists:
                    return
                raise DatabaseExists(name)
            self._log("create_db", {"db_id": self._alloc_id(), "name": name,
                                    "next_id": self.next_id})

    def drop_database(self, name: str, if_exists: bool = False, force: bool = False) -> None:
        """Without FORCE the database and its tables go to the recycle bin (RECOVER)."""
        with self.lock:
            if name not in self.dbs:
                if if_exists:
                    return
                raise DatabaseDropNotExists(name)
            if not force:
                for table in self.dbs[name].tables.values():
                    _check_droppable(self, table)
            self._log("drop_db", _drop_data({"name": name}, force, self.clock()))

    # -- tables --------------------------------------------------------------------------------
    def create_table(self, db_name: str | None, stmt: CreateTableStmt, *,
                     dynamic_now: datetime | None = None,
                     max_dynamic_partitions: int = 500) -> None:
        """`dynamic_now`: the dynamic partition scheduler's clock, for the first partitions of a
        table with dynamic_partition.* properties (now, when not given)."""
        with self.lock:
            db = self.get_db(stmt.db or db_name)
            if stmt.name in db.tables:
                if stmt.if_not_exists:
                    return
                raise TableExists(stmt.name)
            table = new_table(stmt, self._alloc_id(), self._alloc_id())
            for desc in stmt.rollups:  # CREATE TABLE ... ROLLUP (...): visible at once
                index = analyze_rollup(table, desc, self._alloc_id())
                table.indexes[index.index_id] = index
            replicas = replication_num(stmt.properties)
            self._check_replication(replicas)
            table.properties["replication_num"] = str(replicas)
            table.properties.pop("replication_allocation", None)
            colocate = self._prepare_colocation(db, table, replicas)  # before any tablet is placed
            try:
                self._create_partitions(db, stmt, table, replicas, colocate, dynamic_now,
                                        max_dynamic_partitions)
            finally:
                self._pending_seqs.pop(table.table_id, None)

    def _create_partitions(self, db: Database, stmt: CreateTableStmt, table: OlapTable,
                           replicas: int, colocate: dict | None, dynamic_now: datetime | None,
                           max_dynamic_partitions: int) -> None:
        if table.partition_info.kind == "UNPARTITIONED":
            specs = [(stmt.name, None, None, None)]
        else:
            specs = plan_partitions(table, stmt.partitions, [])
        for name, lower, upper, values in specs:
            self._add_partition(table, name, lower, upper, values,
                                table.distribution.buckets, replicas)
        self._add_dynamic_partitions(table, replicas, dynamic_now or datetime.now(timezone.utc),
                                     max_dynamic_partitions)
        check_replica_quota(self, db, table_totals(table)[1])  # (tablets come with the entry)
        self._log("create_table", {"db": db.name, "table": table.to_dict(),
                                   "next_id": self.next_id, "colocate": colocate})

    def _add_dynamic_partitions(self, table: OlapTable, replicas: int, now: datetime,
                                max_partitions: int) -> None:
        """Check dynamic_partition.* properties; create (and drop) what the rule says now."""
        dynamic = prepare_create(table, now, max_partitions, len(self.available_backends()))
        if dynamic is None:
            return
        prop, plan = dynamic
        for name in plan.drop:
            del table.partitions[table.partition_by_name(name).partition_id]
        for new in plan.add:
            self._add_partition(table, new.name, [new.lower], [new.upper], None, prop.buckets,
                                prop.replication_num or replicas)

    def _add_partition(self, table: OlapTable, name: str, lower: list | None,
                       upper: list | None, values: list | None, buckets: int,
                       replicas: int) -> Partition:
        p = self.new_partition(table, name, lower, upper, values, buckets, replicas)
        table.partitions[p.partition_id] = p
        return p

    def new_partition(self, table: OlapTable, name: str, lower: list | None,
                      upper: list | None, values: list | None, buckets: int,
                      replicas: int) -> Partition:
        """A partition of `table` with fresh ids and placed tablets, not yet in the table."""
        colocation.check_add_partition(self, table, buckets, replicas)
        p = Partition(self._alloc_id(), name, lower, upper, values, buckets, replicas,
                      visible_version=1, visible_version_time=self.clock())
        for index_id in table.indexes:
            tablet_ids = []
            for bucket in range(buckets):
                tid = self._alloc_id()
                tablet_ids.append(tid)
                p.tablets[tid] = TabletMeta(tid, self._place_bucket(table, bucket, replicas))
            p.tablets_by_index[index_id] = tablet_ids
        return p

    def drop_table(self, db_name: str | None, name: str, if_exists: bool = False,
                   force: bool = False) -> None:
        """Without FORCE the table goes to the recycle bin (RECOVER TABLE)."""
        with self.lock:
            db = self.get_db(db_name)
            if name not in db.tables:
                if if_exists:
                    return
                raise UnknownTableToDrop(name, db.name)
            if not force:
                _check_droppable(self, db.tables[name])
            self._log("drop_table", _drop_data({"db": db.name, "name": name}, force,
                                               self.clock()))

    # -- loads ---------------------------------------------------------------------------------
    def publish(self, db_name: str, table_name: str, txn_id: int,
                partition_versions: dict[int, int],
                rowsets: list[tuple[int, int, RowsetMeta]], label: str | None = None,
                source_type: str | None = None, delete_info: dict | None = None) -> None:
        """Make a load visible: new partition versions and (partition, tablet, rowset) at once;
        the load's label, when it has one, is taken by the same journal entry (with the load's
        source type, for SHOW PROC '/transactions'); a DELETE's record for SHOW DELETE
        (catalog/delete_history.py) likewise. Call with the
        table's load lock held and without the catalog lock (the fsync runs outside it)."""
        self.reserve_label(db_name, label, txn_id)
        try:
            self.publish_many([self.publish_data(db_name, table_name, txn_id, partition_versions,
                                                 rowsets, label, source_type, delete_info)])
        finally:
            self.release_label(db_name, label)

    def reserve_label(self, db_name: str, label: str | None, txn_id: int) -> None:
        """Hold `label` for a publish in flight (LabelAlreadyUsed if taken or held)."""
        if label is None:
            return
        key = (db_name, label)
        with self.lock:
            used = self.labels.get(db_name, {}).get(label)
            if used is not None or key in self._labels_in_flight:
                raise LabelAlreadyUsed(label, used if used is not None else txn_id)
            self._labels_in_flight.add(key)

    def release_label(self, db_name: str, label: str | None) -> None:
        if label is not None:
            with self.lock:
                self._labels_in_flight.discard((db_name, label))

    def publish_data(self, db_name: str, table_name: str, txn_id: int,
                     partition_versions: dict[int, int],
                     rowsets: list[tuple[int, int, RowsetMeta]], label: str | None,
                     source_type: str | None = None, delete_info: dict | None = None) -> dict:
        """A `publish` journal entry's data (with the load's source type, for SHOW PROC
        '/transactions'); a merge-on-write rowset's delete bitmap is computed here, against
        the published rowsets, and journaled with it (call with the table's load lock)."""
        for pid, tid, meta in rowsets:
            self.engine.get_tablet(tid).prepare_publish(meta, partition_versions[pid])
        table = self.dbs[db_name].tables.get(table_name) if db_name in self.dbs else None
        counter = auto_increment.next_id(table) if table is not None else None
        return {"db": db_name, "table": table_name, "time": self.clock(), "txn_id": txn_id,
                "label": label, **({"source_type": source_type} if source_type else {}),
                **({"auto_increment": counter} if counter else {}),
                **({"delete": delete_info} if delete_info else {}),
                "partitions": {str(k): v for k, v in partition_versions.items()},
                "rowsets": [{"partition": pid, "tablet": tid, "meta": meta.to_dict()}
                            for pid, tid, meta in rowsets]}

    def publish_many(self, entries: list[dict],
                     on_durable: Callable[[], None] | None = None) -> None:
        """Journal `publish` entries (one write, one fsync, without the catalog lock), then
        apply them in order: the batch of catalog/load.py:commit_load. The caller holds the
        table's load lock and the entries' labels (reserve_label); `on_durable`: see
        `_log_outside_lock`."""
        self._log_outside_lock([("publish", data) for data in entries], on_durable)
        if self.publish_listeners:  # ON COMMIT materialized views (server/mtmv_tasks.py)
            with self.lock:
                ids = {t.table_id for t in (self.dbs[e["db"]].tables.get(e["table"])
                                            for e in entries if e["db"] in self.dbs)
                       if t is not None}
            for listener in list(self.publish_listeners):
                listener(ids)

    def log_compaction(self, data: dict, op: str = "compact") -> None:
        """Journal and apply a compacted rowset replacing its inputs (catalog/compaction.py), or
        (`compact_slices`) many tablets' at once (catalog/slice_compaction.py)."""
        self._log(op, data)


def _drop_data(data: dict, force: bool, time: float) -> dict:
    """A drop entry: `recycle` (with the drop time) unless FORCE; entries written before the
    recycle bin existed have neither and erase at once, as they did."""
    return data if force else {**data, "recycle": True, "time": time}


def _check_droppable(cat: Catalog, table: OlapTable) -> None:
    """Doris refuses a recoverable drop of a table under an ALTER job."""
    job = rollup_job.running_job(cat, table.table_id)
    if job is not None:
        state = "SCHEMA_CHANGE" if job.kind == "SCHEMA_CHANGE" else "ROLLUP"
        raise DdlError(f"The table [{table.name}]'s state is {state}, cannot be dropped. please "
                       "cancel the operation on olap table firstly. If you want to forcibly "
                       "drop(cannot be recovered), please use \"DROP table FORCE\".")


# -- apply functions: the only code that changes catalog state ---------------------------------
def _apply_create_db(cat: Catalog, data: dict) -> None:
    cat.dbs[data["name"]] = Database(data["db_id"], data["name"])
    cat.next_id = max(cat.next_id, data["next_id"])


def _apply_drop_db(cat: Catalog, data: dict) -> None:
    db = cat.dbs.pop(data["name"], None)
    for txn in cat.labels.pop(data["name"], {}).values():
        cat.txn_info.pop(txn, None)
    cat.delete_infos.pop(data["name"], None)
    if db is not None and data.get("recycle"):
        recycle_ops.recycle_database(cat, db, data["time"])
    elif db is not None:
        for table in db.tables.values():
            colocation.remove_table(cat, table.table_id)
            _drop_tablets(cat, table)


def _apply_create_table(cat: Catalog, data: dict) -> None:
    table = OlapTable.from_dict(data["table"])
    cat.dbs[data["db"]].tables[table.name] = table
    cat.next_id = max(cat.next_id, data["next_id"])
    if data.get("colocate"):
        colocation.APPLY["colocate_join"](cat, data["colocate"])
    if cat.replaying:
        return
    for p in table.partitions.values():
        for index_id, tablet_ids in p.tablets_by_index.items():
            schema = table.tablet_schema(index_id)
            for tid in tablet_ids:
                cat.engine.create_tablet(tid, schema)


def _drop_tablets(cat: Catalog, table: OlapTable) -> None:
    if cat.replaying:
        return
    for p in table.all_partitions():
        for tid in p.tablets:
            cat.engine.drop_tablet(tid)


def _apply_drop_table(cat: Catalog, data: dict) -> None:
    db = cat.dbs[data["db"]]
    table = db.tables.pop(data["name"])
    if data.get("recycle"):
        recycle_ops.recycle_table(cat, db.db_id, table, data["time"])
        return
    colocation.remove_table(cat, table.table_id)
    _drop_tablets(cat, table)


def _apply_publish(cat: Catalog, data: dict) -> None:
    cat.last_txn_id = max(cat.last_txn_id, data.get("txn_id", 0))
    db = cat.dbs.get(data["db"])
    table = db.tables.get(data["table"]) if db is not None else None
    if table is None:
        return  # dropped between this entry's fsync and its apply (journal order: before)
    if data.get("label"):
        cat.labels.setdefault(data["db"], {})[data["label"]] = data["txn_id"]
        cat.txn_info[data["txn_id"]] = (data.get("time", 0.0), data.get("source_type"))
    if data.get("auto_increment"):  # ids past every one this load used
        auto_increment.observe(table, int(data["auto_increment"]))
    if data.get("delete"):
        delete_history.apply(cat, data["db"], data["table"], data.get("time", 0.0),
                             data["delete"])
    versions = {int(k): v for k, v in data["partitions"].items()}
    for r in data["rowsets"]:
        p = table.any_partition(r["partition"])
        version = versions[r["partition"]]
        tablet = p.tablets[r["tablet"]]
        if cat.replaying and any(x["meta"]["rowset_id"] == r["meta"]["rowset_id"]
                                 for x in tablet.rowsets):
            continue
        tablet.rowsets.append({"meta": r["meta"], "version": version})
        if not cat.replaying:
            cat.engine.get_tablet(r["tablet"]).publish(RowsetMeta.from_dict(r["meta"]), version)
    for pid, version in versions.items():
        p = table.any_partition(pid)
        p.visible_version = max(p.visible_version, version)
        p.visible_version_time = data["time"]


# entries that change no schema, partition, privilege or property: cached plans stay valid
# (ddl_epoch); a compaction swaps rowsets, which every run captures afresh in its snapshots
_NOT_DDL = frozenset({"compact", "compact_slices", "load_job", "remove_load_jobs", "export_job",
                      "txn_precommit", "txn_precommit_end"})

_APPLY: dict[str, Callable[[Catalog, Any], None]] = {
    "create_db": _apply_create_db,
    "drop_db": _apply_drop_db,
    "create_table": _apply_create_table,
    "drop_table": _apply_drop_table,
    "publish": _apply_publish,
    **PARTITION_APPLY,  # add/drop partitions, truncate, table properties
    **backend_ops.APPLY,  # add/decommission/drop backends, replica moves
    **colocation.APPLY,  # colocation groups: join/leave, bucket sequences, bucket moves
    **TEMP_PARTITION_APPLY,  # REPLACE PARTITION WITH TEMPORARY PARTITION, REPLACE WITH TABLE
    **INDEX_APPLY,  # bitmap indexes: add/drop (DELETE versions are "publish" entries)
    **COMPACTION_APPLY,  # a tablet's compacted rowset replaces its inputs
    **auth_apply(),  # users, roles, passwords, grants (catalog/auth.py)
    **LOAD_JOB_APPLY,  # resources, Spark Load jobs' records
    **EXPORT_JOB_APPLY,  # EXPORT jobs' records
    **FUNCTION_APPLY,  # CREATE ALIAS FUNCTION / DROP FUNCTION
    **sql_block_rules.APPLY,  # CREATE / ALTER / DROP SQL_BLOCK_RULE
    **workload_groups.APPLY,  # CREATE / ALTER / DROP WORKLOAD GROUP
    **encrypt_keys.APPLY,  # CREATE / DROP ENCRYPTKEY
    **partition_properties.APPLY,  # MODIFY PARTITION, replication, MODIFY DISTRIBUTION
    **rollup_job_journal.APPLY,  # ADD ROLLUP / CREATE MATERIALIZED VIEW jobs, DROP ROLLUP
    **COLUMN_STATS_APPLY,  # ANALYZE TABLE, DROP STATS
    **row_policy.APPLY,  # CREATE / DROP ROW POLICY
    **VIEW_APPLY,  # views: create (or replace), drop
    **RENAME_APPLY,  # ALTER TABLE RENAME / REPLACE WITH TABLE
    **DATABASE_ALTER_APPLY,  # ALTER DATABASE RENAME / SET DATA | REPLICA QUOTA
    **GLOBAL_VARIABLE_APPLY,  # SET GLOBAL values
    **SCHEMA_CHANGE_APPLY,  # light schema change: a table's new columns (catalog/schema_change.py)
    **ENABLE_FEATURE_APPLY,  # ENABLE FEATURE: hidden columns added (catalog/enable_feature.py)
    **precommit.APPLY,  # two-phase Stream Loads pre-committed (catalog/precommit.py)
    **recycle_ops.APPLY,  # RECOVER DATABASE/TABLE/PARTITION, recycle bin erasure
    **MTMV_APPLY,  # async materialized views: definition, job state, refreshes (catalog/mtmv.py)
}
