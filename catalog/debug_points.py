"""Crash tests' debug points (as Doris's): `debug_point(name)` kills this process with SIGKILL
when the environment variable MINIDORIS_DEBUG_POINTS (comma-separated) lists `name`.

The variable is read once, at import: a server is started with the points it should die at
(tests/durability/test_crash_points.py), and an unset variable costs one lookup in an empty
frozenset per call. `armed(name)` lets a caller do something special before dying (write half
of a journal frame, for instance) only when the point is set.
"""

from __future__ import annotations

import os
import signal

_ARMED = frozenset(p.strip() for p in os.environ.get("MINIDORIS_DEBUG_POINTS", "").split(",")
                   if p.strip())


def armed(name: str) -> bool:
    """True when this process should die at `name`."""
    return name in _ARMED


def debug_point(name: str) -> None:
    if name in _ARMED:
        os.kill(os.getpid(), signal.SIGKILL)
