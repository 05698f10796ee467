"""Durability primitives shared by every writer (segments, load files, the journal, Spark's
ETL output): fsync of a file or a directory by path, so a rename or a new file survives a crash."""

from __future__ import annotations

import os


def fsync_path(path: str | os.PathLike) -> None:
    """fsync a file or a directory (after creating or renaming entries in it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
