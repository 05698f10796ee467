"""The process's memory against Doris's `mem_limit`: what loads and queries check between batches.

Doris's BE tracks every allocation against `mem_limit`; minidoris reads the process's resident
set from /proc at the points where a load can stop cleanly (between batches, after flushing its
memtables and shrinking the page cache): when the resident set still exceeds `mem_limit`, the
load fails with Doris's MEM_LIMIT_EXCEEDED text (`exceeded()`) and the server goes on serving,
instead of growing until the kernel's OOM killer ends it. A query checks the same way between
its batches and materialised intermediates (executor/run.py:check_memory, at most every few
milliseconds), after shrinking the page cache. 0 disables the check.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import time

import pyarrow as pa

from storage import cpu_slots

_PAGE = os.sysconf("SC_PAGE_SIZE")
# Doris's max_sys_mem_available_low_water_mark_bytes default (a cap of the low water mark)
MAX_LOW_WATER_MARK = 6871947673


try:
    _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
except OSError:  # not glibc: the allocator is left as it is
    _LIBC = None
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -2, -3, -8
TRIM_THRESHOLD = 16 << 20
TOP_PAD = 64 << 20


def tune_allocator() -> bool:
    """glibc's malloc, set once at start-up so that freed memory goes back to the system: a
    fixed mmap threshold (1 MB: by default it grows to 32 MB once a large block is freed, and
    a load's 16 MB blocks then stay in the heap) and few arenas (each thread's arena keeps
    what it freed). Fixing the mmap threshold also fixes the trim threshold at its 128 KB
    default, so every numpy temporary of 128 KB - 1 MB (a 20k-row int64 column) was
    returned to the system when freed and faulted in again page by page when allocated
    (a merge-on-read's sort and merge of 20k rows: 1.2 -> 0.55 ms); the heap keeps up to
    TRIM_THRESHOLD free at its top instead (`release_unused` trims it all).

    And TOP_PAD of slack at the heap's top (M_TOP_PAD: added when the heap grows, kept when it
    is trimmed; `release_unused`'s malloc_trim(0) still gives it all back). A read of an
    Aggregate table under a stream of small loads allocates and frees its merge and
    aggregation arrays per tablet per query, and trimming to 16 MB still gave the kernel pages
    the next query faulted in again: in one process (100-row INSERTs and a GROUP BY over 1.4M
    rows in 8 tablets) ~4,900 -> ~300 minor faults and 20.5 -> 10.8 ms of CPU per INSERT +
    query; in the server under 32 mixed clients a third fewer faults and ~5% more queries
    (docs/performance.md, "Allocator, runs and copies"). True when every setting was taken."""
    if _LIBC is None or not hasattr(_LIBC, "mallopt"):
        return False
    return all([_LIBC.mallopt(_M_MMAP_THRESHOLD, 1 << 20) == 1,
                _LIBC.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1,
                _LIBC.mallopt(_M_ARENA_MAX, 4) == 1,
                _LIBC.mallopt(_M_TOP_PAD, TOP_PAD) == 1])


def release_unused() -> None:
    """Give freed memory back to the system: Arrow's pool (mimalloc keeps freed pages) and the
    malloc heap; a load calls it after each round of flushes."""
    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def reclaim(engine) -> None:
    """What the process can give back before a load or query is failed for mem_limit: the
    page cache, garbage held in reference cycles (a failed query's traceback keeps its frames'
    tables until the cycle collector runs) and freed memory kept by the allocators."""
    engine.page_cache.clear()
    gc.collect()
    release_unused()


def physical_bytes() -> int:
    return _PAGE * os.sysconf("SC_PHYS_PAGES")


def resident_bytes() -> int:
    """The process's resident set (VmRSS)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def available_bytes() -> int:
    """The machine's MemAvailable."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def pretty(n: int) -> str:
    """Bytes as Doris's PrettyPrinter writes them: 156.00 MB."""
    for unit, size in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


class ProcessMemory:
    CHECK_INTERVAL_S = 0.005  # `exceeded_recently` reads /proc at most this often

    WAIT_STEP_S = 0.05

    def __init__(self, mem_limit: int = 0, physical: int | None = None, wait_ms: int = 1000):
        self.mem_limit = mem_limit
        self.wait_ms = wait_ms  # Doris's thread_wait_gc_max_milliseconds
        self._checked_at = 0.0
        self._last: str | None = None
        physical = physical_bytes() if physical is None else physical
        self.low_water_mark = max(0, min(physical - mem_limit, physical // 20,
                                         MAX_LOW_WATER_MARK)) if mem_limit else 0

    def exceeded_recently(self) -> str | None:
        """`exceeded`, read at most every CHECK_INTERVAL_S, the last answer in between (a
        query checks between batches, many scan units may finish within a millisecond, and
        every INSERT's sink checks once: reading /proc was 3% of a 100-row INSERT)."""
        if not self.mem_limit:
            return None
        now = time.monotonic()
        if now - self._checked_at < self.CHECK_INTERVAL_S:
            return self._last
        self._last = self.exceeded()
        self._checked_at = now
        return self._last

    def exceeded(self) -> str | None:
        """Doris's process_limit_exceeded_errmsg_str when the resident set is over mem_limit."""
        if not self.mem_limit:
            return None
        used = resident_bytes()
        if used <= self.mem_limit:
            return None
        return (f"process memory used {pretty(used)} exceed limit {pretty(self.mem_limit)} or "
                f"sys available memory {pretty(available_bytes())} less than low water mark "
                f"{pretty(self.low_water_mark)}")


def wait_for_memory(engine) -> str | None:
    """A load over mem_limit, as Doris's thread_wait_gc_max_milliseconds: reclaim what the
    process holds, then wait up to `wait_ms` for other work (a query failing or ending, a
    flush) to free memory; the message if the process is still over the limit."""
    memory = engine.process_memory
    deadline = time.monotonic() + memory.wait_ms / 1000
    while True:
        reclaim(engine)
        message = memory.exceeded()
        if message is None or time.monotonic() >= deadline:
            return message
        with cpu_slots.blocking():  # others run meanwhile (storage/cpu_slots.py)
            time.sleep(memory.WAIT_STEP_S)


def over_limit(engine, recently: bool = False) -> str | None:
    """Doris's message when the process is over `mem_limit` even after the engine's page cache
    is dropped and freed memory returned to the system (what queries and compactions check
    before going on); `recently`: skip the check if one ran within CHECK_INTERVAL_S."""
    memory = getattr(engine, "process_memory", None)
    if memory is None:
        return None
    first = memory.exceeded_recently() if recently else memory.exceeded()
    if first is None:
        return None
    reclaim(engine)
    return memory.exceeded()
