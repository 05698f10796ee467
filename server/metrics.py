"""Prometheus `/metrics` on the HTTP port, in the text exposition format, with Doris FE's
metric names where Doris has the thing:

    doris_fe_query_total / doris_fe_query_err           statements run / failed (counters)
    doris_fe_query_latency_ms{quantile=...} _sum _count  statement latency over the last
                                                         10,000 statements (Doris's quantiles)
    doris_fe_connection_total                            open MySQL connections
    doris_fe_txn_counter{type="begin"}                   transactions begun (ids handed out)
    doris_fe_max_journal_id                              the journal's last entry
    doris_fe_tablet_num / doris_fe_tablet_max_compaction_score
    doris_be_tablet_cumulative_max_compaction_score      the highest cumulative score
    process_resident_memory_bytes                        the server's RSS

Counters are recorded by the session (`QueryMetrics.record`); gauges are read when scraped.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

QUANTILES = (0.75, 0.95, 0.98, 0.99, 0.999)
_WINDOW = 10_000


class QueryMetrics:
    """Statement counters and a window of recent latencies (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = self.errors = 0
        self.latency_sum_ms = 0.0
        self._recent: deque[float] = deque(maxlen=_WINDOW)

    def record(self, seconds: float, failed: bool) -> None:
        ms = seconds * 1000.0
        with self._lock:
            self.total += 1
            self.errors += int(failed)
            self.latency_sum_ms += ms
            self._recent.append(ms)

    def snapshot(self) -> tuple[int, int, float, list[float]]:
        with self._lock:
            recent = np.fromiter(self._recent, dtype=np.float64)
            total, errors, total_ms = self.total, self.errors, self.latency_sum_ms
        values = np.quantile(recent, QUANTILES).tolist() if len(recent) else [0.0] * len(QUANTILES)
        return total, errors, total_ms, values


def _rss_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _family(out: list[str], name: str, kind: str, help_text: str,
            samples: list[tuple[str, float]]) -> None:
    out += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    out += [f"{name}{labels} {value if isinstance(value, int) else repr(float(value))}"
            for labels, value in samples]


def render(services) -> str:
    """The exposition text of every metric, read now."""
    metrics: QueryMetrics = services.metrics
    total, errors, total_ms, quantiles = metrics.snapshot()
    catalog = services.catalog
    out: list[str] = []
    _family(out, "doris_fe_query_total", "counter", "total query", [("", total)])
    _family(out, "doris_fe_query_err", "counter", "total error query", [("", errors)])
    _family(out, "doris_fe_query_latency_ms", "summary", "query latency in ms",
            [(f'{{quantile="{q}"}}', v) for q, v in zip(QUANTILES, quantiles)])
    out += [f"doris_fe_query_latency_ms_sum {total_ms!r}",
            f"doris_fe_query_latency_ms_count {total}"]
    _family(out, "doris_fe_connection_total", "gauge", "total connections",
            [("", len(services.sessions))])
    _family(out, "doris_fe_txn_counter", "counter", "counter of transactions",
            [('{type="begin"}', catalog.last_txn_id)])
    _family(out, "doris_fe_max_journal_id", "gauge", "max journal id of this frontend",
            [("", catalog.journal.seq)])
    tablets, score = _tablet_figures(services)
    _family(out, "doris_fe_tablet_num", "gauge", "tablet number", [("", tablets)])
    _family(out, "doris_fe_tablet_max_compaction_score", "gauge",
            "max tablet compaction score of all backends", [("", score)])
    _family(out, "doris_be_tablet_cumulative_max_compaction_score", "gauge",
            "max cumulative compaction score of the tablets", [("", score)])
    _family(out, "process_resident_memory_bytes", "gauge", "resident memory size in bytes",
            [("", _rss_bytes())])
    return "\n".join(out) + "\n"


def _tablet_figures(services) -> tuple[int, int]:
    """(tablets, the highest cumulative compaction score among them)."""
    engine, scheduler = services.engine, services.compaction
    with services.catalog.lock:
        ids = [tid for db in services.catalog.dbs.values() for t in db.tables.values()
               for p in t.partitions.values() for tids in p.tablets_by_index.values()
               for tid in tids]
    best = 0
    if scheduler is not None:
        for tid in ids:
            if engine.has_tablet(tid):
                try:
                    best = max(best, scheduler.scores(engine.get_tablet(tid))[0])
                except Exception:  # noqa: BLE001 - dropped meanwhile: not scored
                    continue
    return len(ids), best
