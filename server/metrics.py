"""Prometheus `/metrics` on the HTTP port, exposed with prometheus_client (a registry per
server, `generate_latest`), with Doris's metric names and labels where Doris has the thing:

    doris_fe_query_total / doris_fe_query_err           statements run / failed
    doris_fe_query_latency_ms{quantile=...} _sum _count  statement latency over the last
                                                         10,000 statements (Doris's quantiles)
    doris_fe_connection_total                            open MySQL connections
    doris_fe_txn_counter{type="begin"}                   transactions begun (ids handed out)
    doris_fe_txn_num                                     running transactions: pre-committed
                                                         loads and Stream Loads in flight
    doris_fe_max_journal_id                              the journal's last entry
    doris_fe_tablet_num / doris_fe_tablet_max_compaction_score
    doris_be_tablet_cumulative_max_compaction_score      the highest cumulative score
    doris_be_stream_load{type="load_rows"|"receive_bytes"}  rows loaded / bytes received by
                                                         Stream Loads
    process_resident_memory_bytes, process_cpu_seconds_total, ...  prometheus_client's
                                                         ProcessCollector

Counters are recorded by the session (`QueryMetrics.record`) and the Stream Load endpoint
(`record_load`); everything is read when scraped, by `DorisCollector`. prometheus_client names
a counter family `x` and its sample `x_total`: Doris's `doris_fe_query_total` is such a counter,
but Doris's counters without the suffix (`doris_fe_query_err`, `doris_fe_txn_counter`,
`doris_be_stream_load`) keep their names as untyped metrics (`# TYPE ... untyped`), which
Prometheus stores and rates alike.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector

QUANTILES = (0.75, 0.95, 0.98, 0.99, 0.999)
_WINDOW = 10_000
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # the text format generate_latest writes


class QueryMetrics:
    """Statement counters, a window of recent latencies, Stream Load totals (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = self.errors = 0
        self.latency_sum_ms = 0.0
        self._recent: deque[float] = deque(maxlen=_WINDOW)
        self.load_rows = self.load_bytes = 0

    def record(self, seconds: float, failed: bool) -> None:
        ms = seconds * 1000.0
        with self._lock:
            self.total += 1
            self.errors += int(failed)
            self.latency_sum_ms += ms
            self._recent.append(ms)

    def record_load(self, rows: int, received: int) -> None:
        with self._lock:
            self.load_rows += rows
            self.load_bytes += received

    def snapshot(self) -> tuple[int, int, float, list[float]]:
        with self._lock:
            recent = np.fromiter(self._recent, dtype=np.float64)
            total, errors, total_ms = self.total, self.errors, self.latency_sum_ms
        values = np.quantile(recent, QUANTILES).tolist() if len(recent) else [0.0] * len(QUANTILES)
        return total, errors, total_ms, values


def _untyped(name: str, doc: str, samples: list[tuple[dict, float]]) -> Metric:
    metric = Metric(name, doc, "unknown")
    for labels, value in samples:
        metric.add_sample(name, labels, value)
    return metric


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


class DorisCollector:
    """The server's metrics, read from `services` at each scrape."""

    def __init__(self, services, running_loads=lambda: 0) -> None:
        self.services = services
        self.running_loads = running_loads  # Stream Loads in flight (the HTTP service's)

    def collect(self):
        services = self.services
        metrics: QueryMetrics = services.metrics
        total, errors, total_ms, quantiles = metrics.snapshot()
        catalog = services.catalog
        yield CounterMetricFamily("doris_fe_query", "total query", value=total)
        yield _untyped("doris_fe_query_err", "total error query", [({}, errors)])
        latency = Metric("doris_fe_query_latency_ms", "query latency in ms", "summary")
        for q, v in zip(QUANTILES, quantiles):
            latency.add_sample("doris_fe_query_latency_ms", {"quantile": str(q)}, v)
        latency.add_sample("doris_fe_query_latency_ms_sum", {}, total_ms)
        latency.add_sample("doris_fe_query_latency_ms_count", {}, total)
        yield latency
        yield _gauge("doris_fe_connection_total", "total connections", len(services.sessions))
        yield _untyped("doris_fe_txn_counter", "counter of transactions",
                       [({"type": "begin"}, catalog.last_txn_id)])
        prepared = services.prepared_txns.prepared() if services.prepared_txns else []
        yield _gauge("doris_fe_txn_num", "number of running transactions",
                     len(prepared) + self.running_loads())
        yield _gauge("doris_fe_max_journal_id", "max journal id of this frontend",
                     catalog.journal.seq)
        tablets, score = _tablet_figures(services)
        yield _gauge("doris_fe_tablet_num", "tablet number", tablets)
        yield _gauge("doris_fe_tablet_max_compaction_score",
                     "max tablet compaction score of all backends", score)
        yield _gauge("doris_be_tablet_cumulative_max_compaction_score",
                     "max cumulative compaction score of the tablets", score)
        yield _untyped("doris_be_stream_load", "stream load",
                       [({"type": "load_rows"}, metrics.load_rows),
                        ({"type": "receive_bytes"}, metrics.load_bytes)])


def registry_of(services, running_loads=lambda: 0) -> CollectorRegistry:
    """A registry of the server's metrics and the process's (memory, CPU, open files)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DorisCollector(services, running_loads))
    ProcessCollector(registry=registry)
    return registry


def render(registry: CollectorRegistry) -> bytes:
    """The exposition text of every metric, read now."""
    return generate_latest(registry)


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
