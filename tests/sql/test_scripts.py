"""Run every golden SQL script (`tests/sql/**/*.test`) through the wire on the shared server.

The format and the runner live in `runner.py`. MINIDORIS_REGENERATE=1 rewrites differing expected
outputs in place (review them with `git diff` before committing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import runner

HERE = Path(__file__).resolve().parent
SCRIPTS = sorted(HERE.rglob("*.test"))


def test_scripts_found():
    assert SCRIPTS, f"no *.test scripts under {HERE}"
    names = [runner.database_name(p) for p in SCRIPTS]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"scripts would share a database name: {dupes}"


@pytest.mark.parametrize("path", SCRIPTS, ids=[str(p.relative_to(HERE)) for p in SCRIPTS])
def test_script(server, path):
    try:
        result = runner.run_script(path, server.host, server.port)
    except runner.SetupError as e:
        pytest.fail(str(e), pytrace=False)
    if result.regenerated:
        print(f"{path}: rewrote {result.regenerated} record(s) ({runner.REGENERATE_ENV}=1)")
    if result.failures:
        pytest.fail(result.report(), pytrace=False)


@pytest.mark.parametrize("path", SCRIPTS, ids=[str(p.relative_to(HERE)) for p in SCRIPTS])
def test_script_queries_twice(server, path):
    """Every query of every script run twice: the second run takes the plan the first one left
    (server/handlers/plan_cache.py) and must return the same rows."""
    try:
        result = runner.run_script(path, server.host, server.port, regenerate=False,
                                   repeat_queries=True)
    except runner.SetupError as e:
        pytest.fail(str(e), pytrace=False)
    if result.failures:
        pytest.fail(result.report(), pytrace=False)
