"""Query profiles users can see: `SET enable_profile = true`, then SHOW QUERY PROFILE.

    SHOW QUERY PROFILE "/"            the kept profiles, newest first: QueryId, User, DefaultDb,
                                      SQL, QueryType, StartTime, EndTime, TotalTime, QueryState
    SHOW QUERY PROFILE "/<query_id>"  one row, column Profile: the profile text (below); deeper
                                      paths ("/<id>/<fragment>/<instance>") give the same text,
                                      minidoris runs a query as one fragment instance

A SELECT run with enable_profile on is tracked by `track` (called by handlers/query.py): when
its last batch has been handed to the connection, its storage scan counters
(`ExecEnv.scan_stats`, a `storage.ScanStats` summed over every tablet read) are kept in the
server's `ProfileStore`, the last `MAX_PROFILES` queries (Doris's max_query_profile_num).
The text follows Doris's layout; the SegmentIterator section lists minidoris's counter names
(storage/stats.py) and then the same numbers under Doris's names where Doris has the counter:

    Summary:
       - Profile ID: 6f1c...-9a0b...
       ...
    Execution Profile 6f1c...-9a0b...:(Active: 3ms)
      Fragment 0:
        OLAP_SCAN_NODE (all scans):
           - RowsReturned: 12
          SegmentIterator:
             - RowsShortKeyFiltered: 4096
             ...
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from catalog.errors import AnalysisError
from catalog.storage_statements import ShowQueryProfileStmt
from planner.logical import olap_scans
from server.handlers.context import StatementContext
from server.handlers.profile_tree import operator_tree
from server.results import RowsResult, text_columns
from storage import ScanStats
from storage.stats import PROFILE_NAMES

MAX_PROFILES = 100
LIST_COLUMNS = ["QueryId", "User", "DefaultDb", "SQL", "QueryType", "StartTime", "EndTime",
                "TotalTime", "QueryState"]
_SCANNER = ("rows_del_filtered", "rows_merged", "rows_value_filtered", "rowsets_read",
            "rows_returned")


@dataclass
class QueryProfile:
    query_id: str
    user: str
    default_db: str
    sql: str
    start: float
    end: float
    state: str
    rows_returned: int
    stats: ScanStats = field(default_factory=ScanStats)
    indexes: list[str] = field(default_factory=list)  # db.table(materialized index) per scan
    operators: dict | None = None  # the operator tree with counters (profile_tree.py)

    def total(self) -> str:
        ms = int(round((self.end - self.start) * 1000))
        return f"{ms}ms" if ms < 1000 else f"{ms // 1000}sec{ms % 1000}ms"

    def row(self) -> tuple:
        """The profile's row in SHOW QUERY PROFILE "/" (LIST_COLUMNS)."""
        return (self.query_id, self.user, self.default_db, self.sql, "Query", _stamp(self.start),
                _stamp(self.end), self.total(), self.state)

    def text(self) -> str:
        scanner = {PROFILE_NAMES[k] for k in _SCANNER}
        lines = ["Summary:", f"   - Profile ID: {self.query_id}", "   - Task Type: QUERY",
                 f"   - Start Time: {_stamp(self.start)}", f"   - End Time: {_stamp(self.end)}",
                 f"   - Total: {self.total()}", f"   - Task State: {self.state}",
                 f"   - User: {self.user}", f"   - Default Db: {self.default_db}",
                 f"   - Sql Statement: {self.sql}", f"   - Rows Sent: {self.rows_returned}",
                 f"Execution Profile {self.query_id}:(Active: {self.total()})",
                 "  Fragment 0:", "    OLAP_SCAN_NODE (all scans):",
                 *(f"       - Table: {i}" for i in self.indexes),
                 f"       - RowsReturned: {self.stats.rows_returned}", "      OlapScanner:"]
        lines += [f"         - {PROFILE_NAMES[k]}: {getattr(self.stats, k)}"
                  for k in _SCANNER[:-1]]
        lines.append("        SegmentIterator:")
        lines += [f"           - {name}: {value}" for name, value in self.stats.profile().items()
                  if name not in scanner]
        lines.append("        SegmentIterator (Doris counter names):")
        lines += [f"           - {name}: {value}"
                  for name, value in self.stats.doris_profile().items()]
        return "\n".join(lines)


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


class ProfileStore:
    """The profiles of the last `capacity` profiled queries of this server."""

    def __init__(self, capacity: int = MAX_PROFILES):
        self._profiles: deque[QueryProfile] = deque(maxlen=capacity)
        self._lock = threading.Lock()

    def add(self, profile: QueryProfile) -> None:
        with self._lock:
            self._profiles.append(profile)

    def newest_first(self) -> list[QueryProfile]:
        with self._lock:
            return list(reversed(self._profiles))

    def get(self, query_id: str) -> QueryProfile | None:
        with self._lock:
            return next((p for p in self._profiles if p.query_id == query_id), None)


def new_query_id() -> str:
    raw = uuid.uuid4().hex
    return f"{raw[:16]}-{raw[16:]}"


def store_of(ctx: StatementContext) -> ProfileStore:
    return ctx.session.services.profiles


def scanned_indexes(plan: object) -> list[str]:
    """`db.table(index)` for every OlapScan of a plan: the materialized index each one read."""
    return sorted(f"{n.db}.{n.table}({n.index_name or n.table})" for n in olap_scans(plan))


def enabled(ctx: StatementContext) -> bool:
    variables = ctx.session.variables  # is_report_success: the name before Doris 0.15
    return bool(variables.get("enable_profile") or variables.get("is_report_success"))


def track(ctx: StatementContext, env, result: RowsResult, started: float,
          indexes: list[str] | None = None, fragments: list | None = None) -> RowsResult:
    """`result` unchanged unless enable_profile is on; then its batches are counted and its
    profile kept once the connection has taken the last one, with the operator tree of
    `fragments` when given."""
    if not enabled(ctx):
        return result
    store = store_of(ctx)

    def batches():
        rows, state = 0, "CANCELLED"
        try:
            for batch in result.batches:
                rows += batch.num_rows
                yield batch
            state = "EOF"
        except Exception:
            state = "ERR"
            raise
        finally:
            tree = operator_tree(fragments, env.profile or {}) if fragments else None
            store.add(QueryProfile(new_query_id(), ctx.session.username or "root", ctx.db or "",
                                   ctx.sql, started, time.time(), state, rows, env.scan_stats,
                                   indexes or [], tree))

    return RowsResult(result.columns, batches())


def show_query_profile(stmt: ShowQueryProfileStmt, ctx: StatementContext) -> RowsResult:
    path = stmt.path.strip()
    if not path.startswith("/"):
        raise AnalysisError(f"Invalid profile path: {path}")
    store = store_of(ctx)
    parts = [p for p in path.split("/") if p]
    if not parts:
        rows = [p.row() for p in store.newest_first()]
        return text_columns(LIST_COLUMNS, rows)
    profile = store.get(parts[0])
    if profile is None:
        raise AnalysisError(f"Query {parts[0]} does not exist or its profile is not kept")
    return text_columns(["Profile"], [(profile.text(),)])
