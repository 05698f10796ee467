"""The data directory's process lock: one server per data dir.

Two servers on one data dir would both replay and append the journal and both compact the same
tablets, corrupting the metadata. The server takes an exclusive `flock` on `<data dir>/LOCK` at
start-up and keeps the file open for its lifetime (the kernel drops the lock when the process
dies, even by kill -9, so a crash never leaves a stale lock). Doris's BE does the same with a
lock file in each storage root.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

LOCK_FILE = "LOCK"


class DataDirInUse(RuntimeError):
    """Another live process holds the data directory."""


def lock_data_dir(data_dir: Path) -> IO[str]:
    """Take the data dir's lock; return the open lock file (keep it open to hold the lock)."""
    path = Path(data_dir) / LOCK_FILE
    handle = open(path, "a+", encoding="ascii")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise DataDirInUse(f"data dir {data_dir} is in use by another minidoris process "
                           f"(pid {holder}); stop it or pass another --data-dir") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle
