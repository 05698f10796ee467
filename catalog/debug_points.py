"""Crash tests' debug points (as Doris's): `debug_point(name)` kills this process with SIGKILL
when the environment variable MINIDORIS_DEBUG_POINTS (comma-separated) lists `name`, or
`name@n`: at the n-th time the point is passed (a crash after a history of writes).

The variable is read once, at import: a server is started with the points it should die at
(tests/durability/test_crash_points.py), and an unset variable costs one lookup in an empty
frozenset per call. `armed(name)` lets a caller do something special before dying (write half
of a journal frame, for instance) only when the point is due.
"""

from __future__ import annotations

import os
import signal
import threading


def _parse(spec: str) -> dict[str, int]:
    points = {}
    for item in (p.strip() for p in spec.split(",")):
        if item:
            name, _, nth = item.partition("@")
            points[name] = int(nth) if nth else 1
    return points


_DUE = _parse(os.environ.get("MINIDORIS_DEBUG_POINTS", ""))  # name -> passes left to the kill
_ARMED = frozenset(_DUE)
_lock = threading.Lock()


def armed(name: str) -> bool:
    """True when passing `name` now kills this process (counts the pass)."""
    if name not in _ARMED:
        return False
    with _lock:
        _DUE[name] -= 1
        return _DUE[name] == 0


def crash() -> None:
    """SIGKILL this process: no handler, no flush, no atexit (a kill -9)."""
    os.kill(os.getpid(), signal.SIGKILL)


def debug_point(name: str) -> None:
    if name in _ARMED and armed(name):
        crash()
