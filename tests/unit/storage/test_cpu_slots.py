"""CPU slots (storage/cpu_slots.py): how many statements run at once, and their hand-offs."""

import threading
import time

import pytest

from storage import cpu_slots


@pytest.fixture
def slots():
    cpu_slots.configure(2, 1)
    yield cpu_slots
    cpu_slots.configure(0)


def _running_at_once(lane: str, threads: int, work) -> int:
    running, peak, lock = [0], [0], threading.Lock()

    def statement():
        with cpu_slots.slot(lane):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            work()
            with lock:
                running[0] -= 1

    pool = [threading.Thread(target=statement) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return peak[0]


def test_at_most_the_lanes_slots_run_at_once(slots):
    assert _running_at_once(cpu_slots.QUERY, 6, lambda: time.sleep(0.02)) == 2
    assert _running_at_once(cpu_slots.LOAD, 4, lambda: time.sleep(0.02)) == 1
    assert _running_at_once(cpu_slots.GROUP_COMMIT, 6, lambda: time.sleep(0.02)) == 2


def test_inserts_take_the_load_lane_and_grouped_ones_the_group_commit_lane():
    from server.session import _lane

    grouped = {"group_commit": "async_mode"}
    assert _lane("SELECT 1", grouped) == cpu_slots.QUERY
    assert _lane(" insert INTO t VALUES (1)", {}) == cpu_slots.LOAD
    assert _lane("INSERT INTO t VALUES (1)", {"group_commit": "OFF_MODE"}) == cpu_slots.LOAD
    assert _lane("INSERT INTO t VALUES (1)", grouped) == cpu_slots.GROUP_COMMIT
    assert _lane("INSERT INTO t SELECT * FROM s", grouped) == cpu_slots.LOAD  # never grouped


def test_a_blocking_wait_hands_the_slot_on(slots):
    def work():
        with cpu_slots.blocking():  # an fsync, say: others run meanwhile
            time.sleep(0.05)

    assert _running_at_once(cpu_slots.QUERY, 6, work) > 2


def test_nested_slots_are_free_and_off_means_no_limit(slots):
    with cpu_slots.slot():
        with cpu_slots.slot(cpu_slots.LOAD):  # an INSERT ... SELECT's query: no second slot
            pass
    cpu_slots.configure(0)
    assert _running_at_once(cpu_slots.QUERY, 5, lambda: time.sleep(0.02)) == 5


def test_a_waiter_gives_up_after_the_bound_instead_of_deadlocking(slots, monkeypatch):
    monkeypatch.setattr(cpu_slots, "START_WAIT_S", 0.05)
    release = threading.Event()
    holders = [threading.Thread(target=lambda: _hold(release)) for _ in range(2)]
    for t in holders:
        t.start()
    time.sleep(0.05)
    began = time.monotonic()
    with cpu_slots.slot():  # both slots are held by threads waiting for us: run anyway
        waited = time.monotonic() - began
    release.set()
    for t in holders:
        t.join()
    assert 0.04 <= waited < 1.0
    assert cpu_slots._LANES[cpu_slots.QUERY].overflows == 1


def _hold(release: threading.Event) -> None:
    with cpu_slots.slot():
        release.wait(5)


def test_the_pool_runs_tasks_in_the_caller_while_statements_wait(slots):
    pool = cpu_slots.SlotPool(max_workers=2)
    try:
        caller = threading.get_ident()
        assert set(pool.map(lambda _: threading.get_ident() != caller, range(4))) == {True}
        lane = cpu_slots._LANES[cpu_slots.QUERY]
        lane._starts.append(threading.Lock())  # as if a statement waited for a slot
        try:
            assert set(pool.map(lambda _: threading.get_ident(), range(4))) == {caller}
            assert pool.submit(threading.get_ident).result() == caller
        finally:
            lane._starts.clear()
    finally:
        pool.shutdown()


def test_time_slice_requeues_a_long_statement_behind_waiters(slots, monkeypatch):
    monkeypatch.setattr(cpu_slots, "SLICE_S", 0.0)
    order: list[str] = []
    started = threading.Event()

    def long():
        with cpu_slots.slot(cpu_slots.LOAD):
            started.set()
            time.sleep(0.05)  # meanwhile the short one queues
            cpu_slots.time_slice()
            order.append("long")

    def short():
        started.wait(5)
        with cpu_slots.slot(cpu_slots.LOAD):
            order.append("short")

    threads = [threading.Thread(target=long), threading.Thread(target=short)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order == ["short", "long"]


def test_compaction_has_its_own_lane(slots):
    cpu_slots.configure(1, 1, 1)
    order = []
    gate = threading.Event()

    def statement():
        with cpu_slots.slot(cpu_slots.QUERY):
            order.append("query")
            gate.wait(5)

    t = threading.Thread(target=statement)
    t.start()
    while not order:
        time.sleep(0.001)
    began = time.monotonic()
    with cpu_slots.slot(cpu_slots.COMPACTION):  # not queued behind the running statement
        order.append("compaction")
    assert time.monotonic() - began < 0.5
    gate.set()
    t.join()
    assert order == ["query", "compaction"]


def test_a_lane_resized_grants_new_slots_and_takes_surplus_ones_back(slots):
    cpu_slots.configure(1, 2)
    lane = cpu_slots._LANES[cpu_slots.LOAD]
    lane.resize(1)
    assert _running_at_once(cpu_slots.LOAD, 4, lambda: time.sleep(0.02)) == 1
    lane.resize(2)
    assert _running_at_once(cpu_slots.LOAD, 4, lambda: time.sleep(0.02)) == 2
    # shrunk while both slots are held: the first release is taken back, not handed on
    held, release = threading.Barrier(3), threading.Event()

    def holder():
        with cpu_slots.slot(cpu_slots.LOAD):
            held.wait(5)
            release.wait(5)

    holders = [threading.Thread(target=holder) for _ in range(2)]
    for t in holders:
        t.start()
    held.wait(5)
    lane.resize(1)
    release.set()
    for t in holders:
        t.join()
    assert lane._free == 1 and lane.slots == 1
    assert _running_at_once(cpu_slots.LOAD, 4, lambda: time.sleep(0.02)) == 1
