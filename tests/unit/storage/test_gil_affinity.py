"""GIL affinity (storage/gil_affinity.py): Python threads on one core while statements queue
and hand the GIL over often; free otherwise."""

import os
import threading

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from storage import cpu_slots, gil_affinity

multicore = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="CPU affinity needs Linux and two allowed cores")


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def affinity(monkeypatch):
    clock = Clock()
    usage = {"cpu": 0.0, "switches": 0}
    monkeypatch.setattr(gil_affinity.time, "monotonic", clock)
    monkeypatch.setattr(gil_affinity, "_usage", lambda: (usage["cpu"], usage["switches"]))
    aff = gil_affinity.configure(True)
    yield aff, clock, usage
    gil_affinity.configure(False)


def _trial(aff, clock, usage, switches_per_cpu_s):
    """Statements queue through one free trial with this hand-off density."""
    aff.started(queued=True)
    assert aff.phase == gil_affinity.TRIAL_FREE and not aff.pinned
    usage["cpu"] += 1.0
    usage["switches"] += switches_per_cpu_s
    clock.now += gil_affinity.TRIAL_S
    aff.started(queued=True)


@multicore
def test_many_hand_offs_put_python_threads_on_one_core_and_quiet_frees_them(affinity):
    aff, clock, usage = affinity
    every = set(os.sched_getaffinity(0))
    python_core = {max(every)}
    pc.sum(pa.chunked_array([list(range(1000))] * 64))  # Arrow's pool threads, if any
    native = {int(t) for t in os.listdir("/proc/self/task")} - \
        {t.native_id for t in threading.enumerate()}
    _trial(aff, clock, usage, 30_000)
    assert aff.pinned and aff.phase == gil_affinity.HOLD
    assert os.sched_getaffinity(0) == python_core  # this (Python) thread
    worker = []
    t = threading.Thread(target=lambda: worker.append(os.sched_getaffinity(0)))
    t.start()
    t.join()
    assert worker == [python_core]  # a thread started meanwhile inherits the mask
    # threads Python did not start (Arrow's pool, the allocator's) stay on every core
    for tid in native & {int(t) for t in os.listdir("/proc/self/task")}:
        assert os.sched_getaffinity(tid) == every
    # statements keep queueing: held, then measured again (free) after HOLD_S
    clock.now += 1.0
    aff.started(queued=True)
    assert aff.pinned
    clock.now += gil_affinity.HOLD_S
    aff.started(queued=True)
    assert aff.phase == gil_affinity.TRIAL_FREE and not aff.pinned
    assert os.sched_getaffinity(0) == every
    _trial_end = clock.now + gil_affinity.TRIAL_S
    usage["cpu"] += 1.0
    usage["switches"] += 30_000
    clock.now = _trial_end
    aff.started(queued=True)
    assert aff.pinned and aff._hold == 2 * gil_affinity.HOLD_S  # agreed: measured less often
    # no statement queued for QUIET_S: free again at the next statement
    clock.now += gil_affinity.QUIET_S
    aff.started(queued=False)
    assert not aff.pinned and aff.phase == gil_affinity.IDLE
    assert os.sched_getaffinity(0) == every


@multicore
def test_long_kernels_few_hand_offs_stay_free(affinity):
    aff, clock, usage = affinity
    every = set(os.sched_getaffinity(0))
    _trial(aff, clock, usage, 2_000)
    assert not aff.pinned and aff.phase == gil_affinity.HOLD and aff.changes == 0
    assert os.sched_getaffinity(0) == every


def test_off_or_one_core_never_pins(monkeypatch):
    aff = gil_affinity.configure(False)
    try:
        for _ in range(3):
            aff.started(queued=True)
        assert not aff.pinned and aff.phase == gil_affinity.IDLE and aff.changes == 0
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
        assert not gil_affinity.GilAffinity(True).enabled
    finally:
        gil_affinity.configure(False)


@multicore
def test_pinned_mode_gives_the_query_lane_half_again_as_many_slots(affinity):
    aff, clock, usage = affinity
    cpu_slots.configure(2, 2)
    try:
        queries, loads = cpu_slots._LANES[cpu_slots.QUERY], cpu_slots._LANES[cpu_slots.LOAD]
        _trial(aff, clock, usage, 30_000)
        assert aff.pinned and queries.slots == 3 and loads.slots == 2
        clock.now += gil_affinity.QUIET_S
        aff.started(queued=False)
        assert not aff.pinned and queries.slots == 2 and loads.slots == 2
    finally:
        cpu_slots.configure(0)


def test_queueing_statements_drive_the_trials_and_resumes_do_not(monkeypatch):
    calls = []
    fake = type("Fake", (), {"started": lambda self, queued: calls.append(queued),
                             "follow": lambda self: None})()
    monkeypatch.setattr(gil_affinity, "current", lambda: fake)
    cpu_slots.configure(1, 1, 1)
    try:
        with cpu_slots.slot(cpu_slots.QUERY):
            t = threading.Thread(target=lambda: cpu_slots.slot(cpu_slots.QUERY).__enter__())
            t.start()
            t.join(0.2)
        with cpu_slots.slot(cpu_slots.COMPACTION):  # not a statement: not counted
            pass
        assert calls[0] is False and True in calls and len(calls) == 2
    finally:
        cpu_slots.configure(0)
