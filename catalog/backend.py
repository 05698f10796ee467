"""Simulated backends (BEs) as catalog objects: the registry, its journal operations, placement
helpers and the rows of `SHOW BACKENDS` / `SHOW PROC '/backends'`.

A backend here is a name for a set of replica placements, not a process: all backends share
the one storage engine of the process, so a replica is a placement (`TabletMeta.replicas` holds
backend ids), not a second copy on disk. Everything that depends on placement is real: which
backend a scan instance runs on, colocation, decommission and balance. Because placements are
not copies, moving a replica never loses data, even when the last placement of a tablet sits on
a backend that is dropped (Doris would lose that replica's data; minidoris re-places it).

Doris's rules kept here:
- a backend is identified by `host:heartbeat_port`; ids come from the catalog's one id sequence
  (the first backends of a fresh cluster are 10001, 10002, ...);
- a replica may only be placed on an available backend: alive and not decommissioned;
- `TabletNum` counts replicas on the backend; a decommissioned backend is dropped by the tablet
  scheduler once it holds none (Doris's `drop_backend_after_decommission`).

Journal operations (applied by the functions in `APPLY`, registered in `catalog.catalog._APPLY`):
`add_backend`, `set_backend_state` (decommission / cancel), `drop_backend`, `move_replicas`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterator

from catalog.errors import AnalysisError, DdlError

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from catalog.model import OlapTable, Partition, TabletMeta

HEARTBEAT_PORT, BE_PORT, HTTP_PORT, BRPC_PORT = 9050, 9060, 8040, 8060  # Doris's defaults
ARROW_FLIGHT_SQL_PORT = -1  # not configured, as Doris prints it
LOCATION_TAG = '{"location" : "default"}'


@dataclass
class Backend:
    backend_id: int
    host: str
    heartbeat_port: int = HEARTBEAT_PORT
    be_port: int = BE_PORT
    http_port: int = HTTP_PORT
    brpc_port: int = BRPC_PORT
    alive: bool = True
    decommissioned: bool = False
    last_start_time: float = 0.0

    @property
    def host_port(self) -> str:
        return f"{self.host}:{self.heartbeat_port}"

    @property
    def available(self) -> bool:
        """May receive new replicas (Doris's isScheduleAvailable)."""
        return self.alive and not self.decommissioned

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict) -> Backend:
        return Backend(**d)


# -- host:port ---------------------------------------------------------------------------------
def parse_host_port(text: str) -> tuple[str, int]:
    """`host:heartbeat_port` as ALTER SYSTEM takes it (SystemInfoService.validateHostAndPort)."""
    s = "".join(text.split())
    if not s:
        raise AnalysisError(f"Invalid host port: {text}")
    host, sep, port = s.rpartition(":")
    if not sep or not host:
        raise AnalysisError(f"Invalid host port: {text}")
    try:
        value = int(port)
    except ValueError:
        raise AnalysisError(f"Encounter unknown exception: For input string: \"{port}\"") from None
    if not 0 < value < 65536:
        raise AnalysisError(f"Port is out of range: {value}")
    return host, value


def find_backend(cat: Catalog, host: str, port: int) -> Backend | None:
    return next((b for b in cat.backends.values()
                 if b.host == host and b.heartbeat_port == port), None)


def available_ids(cat: Catalog) -> list[int]:
    """Backends that may receive replicas, by id."""
    return sorted(b.backend_id for b in cat.backends.values() if b.available)


# -- walking replicas --------------------------------------------------------------------------
def all_tablets(cat: Catalog) -> Iterator[tuple[OlapTable, Partition, int, int, TabletMeta]]:
    """(table, partition, index id, bucket, tablet) for every tablet of every table."""
    for db in cat.dbs.values():
        for table in db.tables.values():
            for p in table.partitions.values():
                for index_id, tablet_ids in p.tablets_by_index.items():
                    for bucket, tid in enumerate(tablet_ids):
                        yield table, p, index_id, bucket, p.tablets[tid]


def replica_counts(cat: Catalog) -> dict[int, int]:
    """TabletNum: replicas placed on each backend."""
    counts = {bid: 0 for bid in cat.backends}
    for *_, meta in all_tablets(cat):
        for bid in meta.replicas:
            counts[bid] = counts.get(bid, 0) + 1
    return counts


def data_used(cat: Catalog) -> dict[int, int]:
    """DataUsedCapacity: bytes of published rowsets of the replicas on each backend."""
    used = {bid: 0 for bid in cat.backends}
    for *_, meta in all_tablets(cat):
        size = meta.data_size()
        for bid in meta.replicas:
            used[bid] = used.get(bid, 0) + size
    return used


def pick_target(candidates: list[int], exclude: list[int], load: dict[int, int]) -> int | None:
    """The least loaded candidate not in `exclude` (ties: lowest id)."""
    free = [b for b in candidates if b not in exclude]
    return min(free, key=lambda b: (load.get(b, 0), b)) if free else None


# -- apply functions ---------------------------------------------------------------------------
def _apply_add_backend(cat: Catalog, data: dict) -> None:
    be = Backend.from_dict(data["backend"])
    cat.backends[be.backend_id] = be
    cat.next_id = max(cat.next_id, data.get("next_id", 0))


def _apply_set_backend_state(cat: Catalog, data: dict) -> None:
    be = cat.backends.get(data["backend_id"])
    if be is not None:
        be.decommissioned = data["decommissioned"]


def _apply_drop_backend(cat: Catalog, data: dict) -> None:
    """Remove a backend; its replicas go with it, except a tablet's last one, which moves to
    the backend the operation names (placements are not copies: no data is lost)."""
    bid = data["backend_id"]
    cat.backends.pop(bid, None)
    rescue = {int(k): v for k, v in data.get("rescue", {}).items()}
    for *_, meta in all_tablets(cat):
        if bid in meta.replicas:
            kept = [b for b in meta.replicas if b != bid]
            if not kept and meta.tablet_id in rescue:
                kept = [rescue[meta.tablet_id]]
            meta.replicas = kept  # a new list: snapshots holding the old one stay consistent


def _apply_move_replicas(cat: Catalog, data: dict) -> None:
    """Non-colocated replica moves: [[tablet_id, from_backend or None, to_backend], ...]."""
    moves = {m[0]: (m[1], m[2]) for m in data["moves"]}
    for *_, meta in all_tablets(cat):
        move = moves.get(meta.tablet_id)
        if move is None:
            continue
        src, dst = move
        replicas = [b for b in meta.replicas if b != src]
        if dst not in replicas:
            if src in meta.replicas:
                replicas.insert(meta.replicas.index(src), dst)
            else:
                replicas.append(dst)
        meta.replicas = replicas


APPLY: dict[str, Callable[[Any, Any], None]] = {
    "add_backend": _apply_add_backend,
    "set_backend_state": _apply_set_backend_state,
    "drop_backend": _apply_drop_backend,
    "move_replicas": _apply_move_replicas,
}


# -- SHOW BACKENDS ------------------------------------------------------------------------------
SHOW_COLUMNS = [
    "BackendId", "Host", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort", "ArrowFlightSqlPort",
    "LastStartTime", "LastHeartbeat", "Alive", "SystemDecommissioned", "TabletNum",
    "DataUsedCapacity", "TrashUsedCapacity", "AvailCapacity", "TotalCapacity", "UsedPct",
    "MaxDiskUsedPct", "RemoteUsedCapacity", "Tag", "ErrMsg", "Version", "Status",
    "HeartbeatFailureCounter", "NodeRole",
]


def byte_text(n: int) -> str:
    """Doris's DebugUtil.printByteWithUnit: three decimals and a unit ("0.000 " for bytes)."""
    for unit, factor in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= factor:
            return f"{n / factor:.3f} {unit}"
    return f"{n:.3f} "


def _time_text(t: float) -> str:
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


def show_rows(cat: Catalog, storage_path: str, version: str, now: float) -> list[tuple]:
    """One row per backend in id order, Doris 2.1's SHOW BACKENDS columns. All simulated
    backends share the process's disk, so capacities are that disk's."""
    counts, used = replica_counts(cat), data_used(cat)
    try:
        disk = shutil.disk_usage(storage_path)
        total, avail = disk.total, disk.free
    except OSError:
        total = avail = 0
    pct = f"{(total - avail) * 100.0 / total:.2f} %" if total else "0.00 %"
    rows = []
    for bid in sorted(cat.backends):
        be = cat.backends[bid]
        status = json.dumps({"lastSuccessReportTabletsTime": _time_text(now),
                             "lastStreamLoadTime": -1, "isQueryDisabled": False,
                             "isLoadDisabled": False}, separators=(",", ":"))
        rows.append((be.backend_id, be.host, be.heartbeat_port, be.be_port, be.http_port,
                     be.brpc_port, ARROW_FLIGHT_SQL_PORT, _time_text(be.last_start_time),
                     _time_text(now), str(be.alive).lower(), str(be.decommissioned).lower(),
                     counts.get(bid, 0), byte_text(used.get(bid, 0)), byte_text(0),
                     byte_text(avail), byte_text(total), pct, pct, byte_text(0), LOCATION_TAG,
                     "", version, status, 0, "mix"))
    return rows


def check_exists(cat: Catalog, host_ports: list[str], message: str) -> list[Backend]:
    """The backends named by `host:port`s; DdlError `message[host:port]` for an unknown one."""
    out = []
    for hp in host_ports:
        host, port = parse_host_port(hp)
        be = find_backend(cat, host, port)
        if be is None:
            raise DdlError(f"{message}[{host}:{port}]")
        out.append(be)
    return out
