"""CPU time of processes, read from /proc: what a benchmark reports beside wall time, since a
busy shared machine distorts wall time more than the CPU a process spends."""

from __future__ import annotations

import os
from pathlib import Path


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU of process `pid` so far (0 without one)."""
    if not pid:
        return 0.0
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants(root: int) -> list[int]:
    """The live processes below `root` (children, grandchildren, ...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                children.setdefault(int(_stat(int(entry))[1]), []).append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    out, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def tree_cpu(root: int, exclude: tuple[int, ...] = ()) -> dict[int, float]:
    """CPU seconds so far of each live process below `root`, without `exclude` (and their
    own descendants); a process that ended meanwhile is not counted."""
    skip = set(exclude)
    for pid in exclude:
        skip.update(descendants(pid))
    out = {}
    for pid in descendants(root):
        if pid not in skip:
            try:
                out[pid] = cpu_seconds(pid)
            except OSError:
                continue
    return out


def spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two `tree_cpu` readings (processes started meanwhile count
    from zero)."""
    return sum(v - before.get(pid, 0.0) for pid, v in after.items())
