"""Group commit (Doris 2.1): many small INSERTs / Stream Loads of a table become one load.

Modes (session variable `group_commit`, Stream Load header `group_commit`):

    off_mode    every load is its own transaction (catalog/load.py)
    sync_mode   the load joins the table's open group and returns once the group is published
                (its data is visible then); reply: the group's label and transaction id
    async_mode  the load's rows are written to a write-ahead log file and fsynced, then the
                load returns (status PREPARE); the group publishes later, and the data is
                visible from then on

A group (`_Group`) is one table's loads waiting together; it commits when
`group_commit_interval_ms` (table property, default 10000) has passed since its first load or
when its rows reach `group_commit_data_bytes` (default 64 MB): the rows of all its loads are
concatenated and loaded as one transaction (`load_table` with the group's label
`group_commit_<hex>_<hex>` and the transaction id it took when it opened): one rowset per
touched tablet for the whole group. Each load's rows are completed and cast on submit, so bad
values fail the statement that sent them, never the group.

WAL (async_mode), `<storage root>/wal/<label>.<n>.arrow`: an Arrow IPC file of the load's
completed rows, its schema metadata naming db, table, table id, label and transaction id;
written, fsynced (file and directory) before the load is acknowledged, deleted once the group's
publish is journaled. At start-up (`recover`, before the server accepts connections) the WAL
files are grouped by label: a label the catalog already knows was published (the crash came
before the deletion), so its files go; any other group is loaded again with its own label and
transaction id. A group whose publish fails keeps its WAL files for the next start.

Not grouped, as in Doris: loads with a label, INSERT ... SELECT, VALUES with expressions.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa
import pyarrow.ipc as ipc

from catalog.catalog import Catalog
from catalog import auto_partition
from catalog.errors import AnalysisError, DdlError
from catalog.load import complete_columns, load_table
from catalog.partitions import route_rows
from storage.durable import fsync_path

log = logging.getLogger(__name__)

MODES = ("off_mode", "sync_mode", "async_mode")
INTERVAL_PROPERTY = "group_commit_interval_ms"
BYTES_PROPERTY = "group_commit_data_bytes"
DEFAULT_INTERVAL_MS = 10000
DEFAULT_DATA_BYTES = 64 * 1024 * 1024


def check_mode(value: str) -> str:
    mode = str(value).strip().lower()
    if mode not in MODES:
        raise ValueError(f"Invalid group_commit mode: {value}")
    return mode


def table_settings(properties: dict[str, str]) -> tuple[float, int]:
    """(interval in seconds, data bytes) of a table."""
    interval = int(properties.get(INTERVAL_PROPERTY, DEFAULT_INTERVAL_MS))  # checked on ALTER
    return interval / 1000.0, int(properties.get(BYTES_PROPERTY, DEFAULT_DATA_BYTES))


def check_properties(properties: dict[str, str]) -> dict[str, str]:
    """The group commit properties among `properties`, validated (CREATE / ALTER TABLE)."""
    found = {k: v for k, v in properties.items() if k in (INTERVAL_PROPERTY, BYTES_PROPERTY)}
    for key, value in found.items():  # Doris's ModifyTablePropertiesClause messages
        try:
            number = int(value)
        except ValueError:
            raise AnalysisError(f"Invalid {key} format: {value}") from None
        if number < 0:
            raise AnalysisError(f"{key} can not be less than 0:{value}")
    return found


def set_properties(catalog: Catalog, db_name: str | None, table_name: str,
                   properties: dict[str, str]) -> None:
    """ALTER TABLE t SET ("group_commit_interval_ms" = ..., "group_commit_data_bytes" = ...)."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
        catalog._log("modify_table_properties", {"db": catalog.get_db(db_name).name,
                                                 "table": table.name, "set": dict(properties)})


def new_label() -> str:
    return f"group_commit_{secrets.token_hex(8)}_{secrets.token_hex(8)}"


@dataclass
class _Group:
    db: str
    table: str
    table_id: int
    label: str
    txn_id: int
    deadline: float
    max_bytes: int
    parts: list[pa.Table] = field(default_factory=list)
    bytes: int = 0
    wal_files: list[str] = field(default_factory=list)
    written: int = 0  # WAL files of wal_files already durable
    done: threading.Event = field(default_factory=threading.Event)
    error: Exception | None = None
    closed: bool = False


@dataclass
class Submitted:
    rows: int
    label: str
    txn_id: int


class GroupCommitManager:
    """The server's open groups (one per table) and the thread that commits them."""

    def __init__(self, catalog: Catalog, wal_dir: str, clock=time.monotonic):
        self.catalog = catalog
        self.wal_dir = wal_dir
        os.makedirs(wal_dir, exist_ok=True)
        self.clock = clock
        self._groups: dict[int, _Group] = {}
        self._cond = threading.Condition()
        self._wal_seq = 0
        self._stop = False
        self._thread: threading.Thread | None = None

    # -- submitting ----------------------------------------------------------------------------
    def submit(self, db_name: str | None, table_name: str, data: pa.Table, mode: str,
               now) -> Submitted:
        """Add a load's rows to the table's group; returns when `mode` allows (see module)."""
        with self.catalog.lock:
            table = self.catalog.get_table(db_name, table_name)
            db_name = self.catalog.get_db(db_name).name
        for name in data.column_names:
            if table.column(name) is None:
                raise AnalysisError(f"Unknown column '{name}' in '{table.name}'")
        full = complete_columns(table, data, now)
        auto_partition.ensure(self.catalog, table, full)  # AUTO PARTITION tables
        route_rows(table, full)  # a row without a partition fails this load, not the group
        if full.num_rows == 0:
            return Submitted(0, new_label(), 0)
        interval, max_bytes = table_settings(table.properties)
        with self._cond:
            group = self._groups.get(table.table_id)
            if group is None or group.closed:
                group = _Group(db_name, table.name, table.table_id, new_label(),
                               self.catalog.begin_txn(), self.clock() + interval, max_bytes)
                self._groups[table.table_id] = group
            if mode == "async_mode":
                self._wal_seq += 1
                name = f"{group.label}.{self._wal_seq}.arrow"
            group.parts.append(full)
            group.bytes += full.nbytes
            if mode == "async_mode":
                group.wal_files.append(name)
                pending_wal = name
            self._cond.notify_all()
        if mode == "async_mode":
            # Written outside the lock: the group cannot commit before it is durable, because
            # the committer waits for every registered WAL file to be written (see _commit).
            try:
                self._write_wal(pending_wal, group, full)
            except BaseException:
                with self._cond:  # the load failed: its rows leave the group
                    group.parts = [p for p in group.parts if p is not full]
                    group.wal_files.remove(pending_wal)
                    group.bytes -= full.nbytes
                    self._cond.notify_all()
                raise
            with self._cond:
                group.written += 1
                self._cond.notify_all()
            return Submitted(full.num_rows, group.label, group.txn_id)
        group.done.wait()
        if group.error is not None:
            raise group.error
        return Submitted(full.num_rows, group.label, group.txn_id)

    def _write_wal(self, name: str, group: _Group, rows: pa.Table) -> None:
        meta = {b"db": group.db.encode(), b"table": group.table.encode(),
                b"table_id": str(group.table_id).encode(), b"label": group.label.encode(),
                b"txn_id": str(group.txn_id).encode()}
        table = rows.replace_schema_metadata(meta)
        tmp = os.path.join(self.wal_dir, name + ".tmp")
        with open(tmp, "wb") as f:
            with ipc.new_file(f, table.schema) as writer:
                writer.write_table(table)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(self.wal_dir, name))
        fsync_path(self.wal_dir)

    # -- committing ----------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="group-commit", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Commit what is open, then stop the committer."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def flush(self) -> None:
        """Commit every open group now (tests, shutdown)."""
        with self._cond:
            for group in self._groups.values():
                group.deadline = 0
            self._cond.notify_all()
        for group in list(self._groups.values()):
            group.done.wait(timeout=60)

    def _run(self) -> None:
        while True:
            with self._cond:
                group = self._due()
                while group is None and not self._stop:
                    self._cond.wait(timeout=self._wait_seconds())
                    group = self._due()
                if group is None:  # stopping with nothing open
                    return
                group.closed = True
                if self._groups.get(group.table_id) is group:
                    del self._groups[group.table_id]
                while group.written < len(group.wal_files):
                    self._cond.wait(timeout=1)
            self._commit(group)

    def _due(self) -> _Group | None:
        now = self.clock()
        for group in self._groups.values():
            if self._stop or group.deadline <= now or group.bytes >= group.max_bytes:
                return group
        return None

    def _wait_seconds(self) -> float:
        if not self._groups:
            return 1.0
        return max(0.001, min(g.deadline for g in self._groups.values()) - self.clock())

    def _commit(self, group: _Group) -> None:
        try:
            rows = pa.concat_tables(group.parts)
            load_table(self.catalog, group.db, group.table, rows, datetime.now(), group.label,
                       txn_id=group.txn_id)
        except Exception as exc:  # reported to sync loads; async ones keep their WAL
            log.exception("group commit %s of %s.%s failed", group.label, group.db, group.table)
            group.error = exc if isinstance(exc, DdlError) else AnalysisError(
                f"group commit failed: {exc}")
        else:
            self._remove_wal(group.wal_files)
        group.parts = []
        group.done.set()

    def _remove_wal(self, names: list[str]) -> None:
        for name in names:
            try:
                os.remove(os.path.join(self.wal_dir, name))
            except FileNotFoundError:
                pass
        if names:
            fsync_path(self.wal_dir)

    # -- start-up ------------------------------------------------------------------------------
    def recover(self) -> int:
        """Replay the WAL of async loads not yet published (before serving); rows loaded."""
        groups: dict[str, list[tuple[str, pa.Table]]] = {}
        for name in sorted(os.listdir(self.wal_dir), key=_wal_order):
            path = os.path.join(self.wal_dir, name)
            if name.endswith(".tmp"):
                os.remove(path)  # never acknowledged
                continue
            try:
                with pa.memory_map(path, "r") as source:
                    table = ipc.open_file(source).read_all()
            except (OSError, pa.ArrowInvalid):
                log.warning("unreadable WAL file %s removed", name)
                os.remove(path)
                continue
            groups.setdefault(table.schema.metadata[b"label"].decode(), []).append((name, table))
        loaded = 0
        for label, files in groups.items():
            meta = files[0][1].schema.metadata
            db, table_name = meta[b"db"].decode(), meta[b"table"].decode()
            names = [n for n, _ in files]
            with self.catalog.lock:
                known = self.catalog.dbs.get(db)
                current = known.tables.get(table_name) if known else None
            if self.catalog.label_txn(db, label) is not None:
                self._remove_wal(names)  # published before the crash
                continue
            if current is None or str(current.table_id) != meta[b"table_id"].decode():
                log.warning("WAL %s: table %s.%s is gone; %d files dropped", label, db,
                            table_name, len(names))
                self._remove_wal(names)
                continue
            rows = pa.concat_tables([t.replace_schema_metadata(None) for _, t in files])
            load_table(self.catalog, db, table_name, rows, datetime.now(), label,
                       txn_id=int(meta[b"txn_id"]))
            loaded += rows.num_rows
            self._remove_wal(names)
        if loaded:
            log.info("group commit: %d rows replayed from the WAL", loaded)
        return loaded


def _wal_order(name: str) -> tuple:
    parts = name.split(".")
    return (parts[0], int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0)

