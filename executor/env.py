"""What a running query needs from its surroundings: storage, evaluation context, threads."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from executor.errors import QueryInterrupted
from storage import ScanStats, StorageEngine, cpu_slots


@dataclass
class ExecEnv:
    engine: StorageEngine
    eval_ctx: object                 # executor.expressions.EvalContext
    pool: ThreadPoolExecutor
    scan_stats: ScanStats = field(default_factory=ScanStats)
    mem_limit: int = 0               # exec_mem_limit in bytes; 0 = unlimited
    exchange_bytes: dict = field(default_factory=dict)  # join distribution -> bytes moved
    # EXPLAIN ANALYZE: id(logical node) -> [rows, seconds, exchange bytes]; None = not profiling
    profile: dict | None = None
    cancel: threading.Event | None = None  # set by KILL QUERY: stop at the next operator/batch
    progress: "ScanProgress" = field(default_factory=lambda: ScanProgress())  # the web UI's
    aliases: dict = field(default_factory=dict)  # id(copied node) -> id(planned node)
    spill: object | None = None  # executor.spill.QuerySpill when enable_spill is set

    def check_cancelled(self) -> None:
        """A checkpoint between operators and batches: KILL QUERY stops the query here, and
        a statement that has run a time slice lets waiting ones run (storage/cpu_slots.py)."""
        if self.cancel is not None and self.cancel.is_set():
            raise QueryInterrupted()
        cpu_slots.time_slice()

    def record(self, node: object, rows: int = 0, seconds: float = 0.0, moved: int = 0,
               nbytes: int = -1, part: str | None = None) -> None:
        """Profile counters of a node: [rows, seconds, exchanged bytes, peak output bytes
        (-1: not measured)]; `part` (planner/logical.py: FIRST_PHASE, ...): a step of the
        node's execution that the distributed plan shows as an operator of its own."""
        if self.profile is not None:
            key = self.aliases.get(id(node), id(node))
            key = (part, key) if part is not None else key
            entry = self.profile.setdefault(key, [0, 0.0, 0, -1])
            entry[0] += rows
            entry[1] += seconds
            entry[2] += moved
            entry[3] = max(entry[3], nbytes)

    def alias(self, copy: object, planned: object) -> None:
        """Profile: `copy` (a subtree rebuilt at run time, e.g. with runtime filters) counts
        as `planned`, node by node, so EXPLAIN ANALYZE and profiles find its counters."""
        if self.profile is None:
            return
        stack = [(copy, planned)]
        while stack:
            c, p = stack.pop()
            if c is not p:
                self.aliases[id(c)] = self.aliases.get(id(p), id(p))
            stack += [(getattr(c, a), getattr(p, a)) for a in ("input", "left", "right")
                      if getattr(c, a, None) is not None and getattr(p, a, None) is not None]


class ScanProgress:
    """How far a running query's scans are: tablets planned and read, rows read so far (the web
    UI's progress page polls it while the query runs; units are read in pool threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.tablets_total = 0
        self.tablets_done = 0
        self.rows_read = 0

    def planned(self, tablets: int) -> None:
        with self._lock:
            self.tablets_total += tablets

    def read(self, tablets: int, rows: int) -> None:
        with self._lock:
            self.tablets_done += tablets
            self.rows_read += rows
