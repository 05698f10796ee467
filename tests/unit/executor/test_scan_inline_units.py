"""executor/operators/scan._read_units: an indexed scan's units of one tablet each are read in
the statement's thread while they stay within INLINE_BUDGET_S, then in the pool; a scan of whole
columns (unindexed, or grouped units) always uses the pool; the results keep the units' order."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from executor.operators import scan


class _Node:
    def __init__(self, indexed: bool):
        self.__dict__["_page_indexes"] = indexed  # what _indexed works out once per node


def _reader(cost_s: float):
    threads = []

    def read(unit):
        threads.append(threading.current_thread())
        time.sleep(cost_s)
        return sum(unit) * 10
    return read, threads


def test_cheap_indexed_units_stay_in_the_calling_thread():
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        read, threads = _reader(0)
        assert scan._read_units(_Node(True), [[u] for u in range(8)], env, read) == \
            [u * 10 for u in range(8)]
        assert set(threads) == {threading.current_thread()}


def test_indexed_units_over_the_budget_go_to_the_pool_in_order():
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        read, threads = _reader(scan.INLINE_BUDGET_S)
        assert scan._read_units(_Node(True), [[u] for u in range(6)], env, read) == \
            [u * 10 for u in range(6)]
        here = threading.current_thread()
        assert threads[0] is here and here not in threads[1:]


def test_unindexed_units_use_the_pool():
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        read, threads = _reader(0)
        assert scan._read_units(_Node(False), [[u] for u in range(4)], env, read) == [0, 10, 20, 30]
        assert threading.current_thread() not in threads


def test_grouped_units_use_the_pool():
    with ThreadPoolExecutor(2) as pool:
        env = SimpleNamespace(pool=pool)
        read, threads = _reader(0)
        assert scan._read_units(_Node(True), [[0, 1], [2], [3, 4]], env, read) == [10, 20, 70]
        assert threading.current_thread() not in threads
