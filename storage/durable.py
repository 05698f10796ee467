"""Durability primitives shared by every writer (segments, load files, the journal, Spark's
ETL output): fsync of a file or a directory by path, so a rename or a new file survives a crash.

A statement waiting for the disk needs no CPU: `fsync` hands the caller's CPU slot to the next
statement meanwhile (storage/cpu_slots.py). Callers holding the catalog lock, which slot holders
wait for, use `os.fsync` instead (a slot coming back behind them would only be a delay, but one
every reader pays).
"""

from __future__ import annotations

import os

from storage import cpu_slots


def fsync(fd: int) -> None:
    """os.fsync(fd), the caller's CPU slot handed on while the disk works."""
    with cpu_slots.blocking():
        os.fsync(fd)


def fsync_path(path: str | os.PathLike) -> None:
    """fsync a file or a directory (after creating or renaming entries in it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fsync(fd)
    finally:
        os.close(fd)
