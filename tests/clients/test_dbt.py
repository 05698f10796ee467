"""dbt-doris (dbt-core 1.10.x) against the server: `dbt seed && dbt run && dbt test` on a small
project (tests/clients/dbt_project: a seed, a view, a table with Doris PROPERTIES, an incremental
model with a unique key, column tests), then a second `dbt run` that takes the incremental path.

dbt lives in its own virtualenv (`.venv-dbt` at the repo root, made by .ci/run, or the directory
named by MINIDORIS_DBT_VENV): dbt-core pins packages (protobuf, ...) that must not move the
server's environment. Outside CI the test is skipped when that venv is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).parent / "dbt_project"


@pytest.fixture(scope="module")
def dbt_bin():
    venv = Path(os.environ.get("MINIDORIS_DBT_VENV", REPO / ".venv-dbt"))
    path = venv / "bin" / "dbt"
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing in CI (.ci/run creates the dbt venv)")
        pytest.skip(f"no dbt at {path} (python3 -m venv .venv-dbt && .venv-dbt/bin/pip install "
                    "'dbt-core>=1.10,<1.11' dbt-doris)")
    return path


def test_dbt_seed_run_test(dbt_bin, server, fresh_db, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    (tmp_path / "profiles.yml").write_text(
        "minidoris:\n  target: dev\n  outputs:\n    dev:\n      type: doris\n"
        f"      host: {server.host}\n      port: {server.port}\n      username: root\n"
        f"      password: ''\n      schema: {fresh_db}\n      threads: 1\n")
    env = {**os.environ, "DBT_PROFILES_DIR": str(tmp_path), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}

    def dbt(*args: str) -> str:
        proc = subprocess.run([str(dbt_bin), *args, "--no-use-colors"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, f"dbt {' '.join(args)} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
        return proc.stdout

    dbt("seed")
    dbt("run")
    out = dbt("test")
    assert "PASS=" in out and "ERROR=0" in out.replace(" ", "") or "Completed successfully" in out, out

    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("SELECT city, orders, total FROM city_totals ORDER BY city")
        assert [tuple(map(str, r)) for r in cur.fetchall()] == [
            ("Beijing", "2", "15.75"), ("Shanghai", "1", "20.00"), ("Shenzhen", "1", "7.75")]
        cur.execute("INSERT INTO raw_orders VALUES (5, 'Shanghai', 1.00, '2024-01-05')")
    conn.close()
    dbt("run", "--select", "orders_incremental")  # the incremental path: only id 5 is new
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("SELECT count(*), max(id) FROM orders_incremental")
        assert cur.fetchone() == (5, 5)
        cur.execute("SHOW FULL TABLES")
        kinds = dict(cur.fetchall())
    conn.close()
    assert kinds["stg_orders"] == "VIEW" and kinds["city_totals"] == "BASE TABLE", kinds
