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

WAL (async_mode), `<storage root>/wal/<label>.<n>.wal`, as Doris keeps one WAL per group:
an Arrow IPC stream whose schema metadata names db, table, table id, label and transaction id,
created (file and directory fsynced) by the group's first async load; every async load appends
its completed rows as record batches and fdatasyncs the file before it is acknowledged (one
sync per load, no file to create or rename; concurrent loads' syncs overlap). A new file is
started only if the rows' schema changes within a group. The files are closed when the group
commits and deleted once its publish is journaled. At start-up (`recover`, before the server
accepts connections) each file is read up to its last complete batch (a torn tail was never
acknowledged) and the files are grouped by label: a label the catalog already knows was
published (the crash came before the deletion), so its files go; any other group is loaded
again with its own label and transaction id. A group whose publish fails keeps its WAL files
for the next start. A load whose append fails gets an error; if its bytes reached the disk
anyway, a crash before the group commits replays them (Doris's WAL has the same window).
Files of the earlier format (`<label>.<n>.arrow`, one IPC file per load) are still replayed.

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
from catalog.database_alter import check_data_quota
from catalog.load import complete_columns, load_table
from catalog.partitions import route_rows
from storage import cpu_slots
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
    """ALTER TABLE t SET (...) of properties read where they are used, journaled as they are
    (group commit's "group_commit_interval_ms" / "group_commit_data_bytes", the switches of
    catalog/table_flags.py)."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
        catalog._log("modify_table_properties", {"db": catalog.get_db(db_name).name,
                                                 "table": table.name, "set": dict(properties)})


def new_label() -> str:
    return f"group_commit_{secrets.token_hex(8)}_{secrets.token_hex(8)}"


class _WalFile:
    """One group's write-ahead log file: an Arrow IPC stream, record batches appended."""

    def __init__(self, path: str, schema: pa.Schema):
        self.path, self.schema = path, schema
        self.lock = threading.Lock()
        self.file = open(path, "wb")
        try:
            self.writer = ipc.new_stream(self.file, schema)
            self.file.flush()
            os.fsync(self.file.fileno())
            fsync_path(os.path.dirname(path))  # the new file's name is durable too
        except BaseException:
            self.file.close()
            raise

    def fits(self, rows: pa.Table) -> bool:
        return rows.schema.equals(self.schema, check_metadata=False)

    def append(self, rows: pa.Table) -> None:
        """Durable when this returns: the batches written, then the file fdatasynced (outside
        the lock, so that another load's write can go on meanwhile)."""
        with self.lock:
            self.writer.write_table(rows.replace_schema_metadata(self.schema.metadata))
            self.file.flush()
        os.fdatasync(self.file.fileno())

    def close(self) -> None:
        with self.lock:
            try:
                self.writer.close()
            finally:
                self.file.close()


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
    wal: _WalFile | None = None  # the file async loads append to now
    pending: int = 0  # async loads registered whose rows are not durable yet
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
        check_data_quota(self.catalog, db_name)
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
            group.parts.append(full)
            group.bytes += full.nbytes
            if mode == "async_mode":
                group.pending += 1
            self._cond.notify_all()
        if mode == "async_mode":
            # Appended outside the manager's lock: the group cannot commit before the rows
            # are durable, because the committer waits for `pending` to reach 0 (see _run).
            try:
                self._wal_for(group, full).append(full)
            except BaseException:
                with self._cond:  # the load failed: its rows leave the group
                    group.parts = [p for p in group.parts if p is not full]
                    group.bytes -= full.nbytes
                    group.pending -= 1
                    self._cond.notify_all()
                raise
            with self._cond:
                group.pending -= 1
                self._cond.notify_all()
            return Submitted(full.num_rows, group.label, group.txn_id)
        with cpu_slots.blocking():  # the group's publish: storage/cpu_slots.py
            group.done.wait()
        if group.error is not None:
            raise group.error
        return Submitted(full.num_rows, group.label, group.txn_id)

    def _wal_for(self, group: _Group, rows: pa.Table) -> _WalFile:
        """The group's WAL file for rows of this schema, created on first use."""
        with self._cond:
            wal = group.wal
            if wal is not None and wal.fits(rows):
                return wal
            self._wal_seq += 1
            name = f"{group.label}.{self._wal_seq}.wal"
            meta = {b"db": group.db.encode(), b"table": group.table.encode(),
                    b"table_id": str(group.table_id).encode(), b"label": group.label.encode(),
                    b"txn_id": str(group.txn_id).encode()}
            wal = _WalFile(os.path.join(self.wal_dir, name),
                           rows.schema.with_metadata(meta))
            group.wal_files.append(name)
            if group.wal is not None:
                group.wal.close()  # no load appends to it any more: its schema is gone
            group.wal = wal
            return wal

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
                while group.pending:
                    self._cond.wait(timeout=1)
                if group.wal is not None:
                    group.wal.close()
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
            table = _read_wal(path)
            if table is None:
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


def _read_wal(path: str) -> pa.Table | None:
    """A WAL file's rows: a stream up to its last complete batch (a torn tail was never
    acknowledged), or a file of the earlier one-file-per-load format; None if unreadable."""
    try:
        with pa.memory_map(path, "r") as source:
            if path.endswith(".arrow"):
                return ipc.open_file(source).read_all()
            reader = ipc.open_stream(source)
            batches = []
            try:
                for batch in reader:
                    batches.append(batch)
            except (pa.ArrowInvalid, OSError):
                pass  # the torn tail of a crash mid-append
            return pa.Table.from_batches(batches, schema=reader.schema)
    except (OSError, pa.ArrowInvalid):
        return None


def _wal_order(name: str) -> tuple:
    parts = name.split(".")
    return (parts[0], int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0)

