"""Helpers of the in-process server tests: statements run on a DorisSession (no wire)."""

from __future__ import annotations

from server.session import DorisSession


def run(s: DorisSession, sql: str) -> object:
    """The last result of `sql`; an error result is raised."""
    result = s.execute(sql)[-1]
    if isinstance(result, Exception):
        raise result
    return result


def sessions(services, db: str, count: int = 1) -> list[DorisSession]:
    """`count` sessions using database `db` (created if missing)."""
    out = [DorisSession(services) for _ in range(count)]
    run(out[0], f"CREATE DATABASE IF NOT EXISTS {db}")
    for s in out:
        s.database = db
    return out
