"""executor/operators/scan._read_units: an indexed scan's units of one tablet each are read in
the statement's thread while they stay within INLINE_BUDGET_S or decode at most
INLINE_ROWS_PER_SEGMENT rows per segment, then in the pool; a scan of whole columns (unindexed, or grouped
units) always uses the pool; the results keep the units' order."""

import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from executor.operators import scan
from storage import ScanStats


class _Node:
    def __init__(self, indexed: bool):
        self.__dict__["_page_indexes"] = indexed  # what _indexed works out once per node


class _Clock:
    """scan's clock in these tests: it moves only by what the fake reads cost, so that a busy
    machine's scheduling delays do not count as read time."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    fake = _Clock()
    monkeypatch.setattr(scan, "time", fake)
    return fake


def _reader(cost_s: float, rows_read: int = 100_000):
    """Reads that take `cost_s` each (of the fake clock) and decode `rows_read` rows of the
    unit's one segment."""
    threads = []

    def read(unit):
        threads.append(threading.current_thread())
        scan.time.now += cost_s
        return sum(unit) * 10, ScanStats(segments_total=1, rows_total=200_000,
                                         rows_read=rows_read)
    return read, threads


def _values(results):
    return [value for value, _ in results]


def test_cheap_indexed_units_stay_in_the_calling_thread():
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        read, threads = _reader(0)
        assert _values(scan._read_units(_Node(True), [[u] for u in range(8)], env, read)) == \
            [u * 10 for u in range(8)]
        assert set(threads) == {threading.current_thread()}


def test_indexed_units_over_the_budget_go_to_the_pool_in_order():
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        read, threads = _reader(scan.INLINE_BUDGET_S * 1.5)
        assert _values(scan._read_units(_Node(True), [[u] for u in range(6)], env, read)) == \
            [u * 10 for u in range(6)]
        here = threading.current_thread()
        assert threads[0] is here and here not in threads[1:]


def test_selective_indexed_units_stay_past_the_budget():
    """Few rows decoded per segment leave per-segment Python, which the pool cannot share."""
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        few = scan.INLINE_ROWS_PER_SEGMENT
        read, threads = _reader(scan.INLINE_BUDGET_S * 1.5, rows_read=few)
        assert _values(scan._read_units(_Node(True), [[u] for u in range(4)], env, read)) == \
            [u * 10 for u in range(4)]
        assert set(threads) == {threading.current_thread()}
        read, threads = _reader(scan.INLINE_BUDGET_S * 1.5, rows_read=few + 1)
        scan._read_units(_Node(True), [[u] for u in range(4)], env, read)
        assert threads[0] is threading.current_thread()
        assert threading.current_thread() not in threads[1:]


def test_unindexed_units_use_the_pool():
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        read, threads = _reader(0)
        assert _values(scan._read_units(_Node(False), [[u] for u in range(4)], env, read)) == \
            [0, 10, 20, 30]
        assert threading.current_thread() not in threads


def test_grouped_units_use_the_pool():
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        read, threads = _reader(0)
        assert _values(scan._read_units(_Node(True), [[0, 1], [2], [3, 4]], env, read)) == \
            [10, 20, 70]
        assert threading.current_thread() not in threads
