"""Crash tests' debug points (as Doris's): `debug_point(name)` kills this process with SIGKILL
when the environment variable MINIDORIS_DEBUG_POINTS (comma-separated) lists `name`."""

from __future__ import annotations

import os
import signal


def debug_point(name: str) -> None:
    if name in os.environ.get("MINIDORIS_DEBUG_POINTS", "").split(","):
        os.kill(os.getpid(), signal.SIGKILL)
