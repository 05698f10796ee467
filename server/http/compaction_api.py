"""The BE compaction HTTP API (Doris's CompactionAction) on the HTTP port.

    GET  /api/compaction/show?tablet_id=N          the tablet's compaction status: policy,
                                                   cumulative point, last failure / success
                                                   times, rowsets "[start-end] segments
                                                   DATA|DELETE OVERLAPPING|NONOVERLAPPING size",
                                                   missing_rowsets, stale_rowsets, stale
                                                   version path
    POST /api/compaction/run?tablet_id=N&compact_type=base|cumulative
                                                   prepare now, run in the background (one
                                                   manual task at a time)
    GET  /api/compaction/run_status                tablets compacting, by type and disk
    GET  /api/compaction/run_status?tablet_id=N    whether the manual task runs on it

Replies and error texts are Doris's (docs: "Compaction Action"). minidoris's tablets have no
rowset for the versions of loads that did not touch them; those are empty, not missing, so
missing_rowsets is always empty.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import parse_qs

from catalog.compaction import BASE, CUMULATIVE, CompactionError, find_tablet

NOT_FOUND = {"status": "Fail", "msg": "Tablet not found"}


def _millis(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _bytes(n: int) -> str:
    value, unit = float(n), "B"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            break
        value /= 1024
    return f"{value:.2f} {unit}"


def rowset_info(r) -> str:
    kind = "DELETE" if r.is_delete else "DATA"
    return f"[{r.start_version}-{r.end_version}] {r.num_segments} {kind} NONOVERLAPPING " \
           f"{_bytes(r.data_size)}"


def _tablet_id(query: dict) -> int | None:
    raw = query.get("tablet_id", [""])[0]
    return int(raw) if raw.isdigit() else None


def show(services, query: dict) -> tuple[int, dict]:
    tid = _tablet_id(query)
    engine = services.catalog.engine
    if tid is None or not engine.has_tablet(tid):
        return 200, NOT_FOUND
    tablet = engine.get_tablet(tid)
    state = tablet.compaction
    stale = tablet.stale_rowsets()
    path = [{"path id": "1", "last create time": _millis(max(r.creation_time for r in stale)),
             "path list": "1-> " + " -> ".join(f"[{r.start_version}-{r.end_version}]"
                                               for r in stale)}] if stale else []
    return 200, {
        "cumulative policy type": "SIZE_BASED",
        "cumulative point": state.cumulative_point,
        "last cumulative failure time": _millis(state.last_cumu_failure),
        "last base failure time": _millis(state.last_base_failure),
        "last cumulative success time": _millis(state.last_cumu_success),
        "last base success time": _millis(state.last_base_success),
        "rowsets": [rowset_info(r) for r in tablet.rowsets()],
        "missing_rowsets": [],
        "stale_rowsets": [rowset_info(r) for r in stale],
        "stale version path": path,
    }


def run(services, query: dict) -> tuple[int, dict]:
    tid = _tablet_id(query)
    kind = query.get("compact_type", [""])[0].lower()
    if kind not in (BASE, CUMULATIVE):
        return 200, {"status": "Fail", "msg": "compaction type is invalid"}
    ref = find_tablet(services.catalog, tid) if tid is not None else None
    if ref is None or not services.catalog.engine.has_tablet(tid):
        return 200, NOT_FOUND
    try:
        services.compaction.run_manual(ref, kind)
    except CompactionError as exc:
        return 200, {"status": "Fail", "msg": str(exc)}
    return 200, {"status": "Success", "msg": "compaction task is successfully triggered."}


def run_status(services, query: dict) -> tuple[int, dict]:
    if "tablet_id" not in query:
        return 200, services.compaction.running()
    tid = _tablet_id(query)
    if tid is None or not services.catalog.engine.has_tablet(tid):
        return 200, NOT_FOUND
    manual = services.compaction.manual_status()
    running = manual is not None and manual[0] == tid
    return 200, {"status": "Success", "run_status": running,
                 "msg": f"this tablet_id is {'running' if running else 'not running'}",
                 "tablet_id": tid, "compact_type": manual[1] if running else ""}


ROUTES = {("GET", "/api/compaction/show"): show, ("POST", "/api/compaction/run"): run,
          ("GET", "/api/compaction/run_status"): run_status}
PATHS = sorted({path for _, path in ROUTES})


def handle(services, method: str, path: str, query_string: str) -> tuple[int, dict] | None:
    """The reply of a compaction endpoint, or None if `path` is not one."""
    handler = ROUTES.get((method, path))
    if handler is None:
        if any(p == path for _, p in ROUTES):
            return 405, {"status": "Fail", "msg": f"{method} is not allowed on {path}"}
        return None
    return handler(services, parse_qs(query_string))


def owns(path: str) -> bool:
    """Whether `path` is one of the compaction endpoints (any method)."""
    return any(p == path for _, p in ROUTES)
