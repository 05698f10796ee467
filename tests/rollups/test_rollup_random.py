"""Randomized: a rollup built while loads go on answers every query it serves as the base does.

Two tables get the same rows, batch by batch: `t` with rollups and `twin` without any. The
rollups of `t` are added while another connection keeps loading both tables (and a DELETE runs),
so the job's watershed falls between loads and the double-written loads matter. Then random
queries that a rollup of `t` serves (its columns, aggregates matching its aggregation, `=`,
`IN` and range filters) must name that rollup in EXPLAIN and return exactly the twin's rows.
"""

from __future__ import annotations

import random
import threading

import pytest

MODELS = {
    "agg": ("k1 INT, k2 INT, k3 VARCHAR(8), v1 BIGINT SUM, v2 INT MAX, v3 INT MIN",
            "AGGREGATE KEY(k1, k2, k3)",
            [("r_k2", "k2, k3, v1, v2, v3"), ("r_k3", "k3, v1, v3"), ("r_k21", "k2, k1, k3, v1")],
            ["sum(v1)", "max(v2)", "min(v3)", "count(DISTINCT k1)", "max(k1)"]),
    "dup": ("k1 INT, k2 INT, k3 VARCHAR(8), v1 BIGINT, v2 INT, v3 INT",
            "DUPLICATE KEY(k1, k2, k3)",
            [("r_k2", "k2, k3, v1, v2, v3"), ("r_k3", "k3, k1, v1, v3")],
            ["sum(v1)", "max(v2)", "min(v3)", "count(*)", "count(v2)", "avg(v1)"]),
}


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def _batch(rng: random.Random, n: int) -> str:
    rows = []
    for _ in range(n):
        v2 = "NULL" if rng.random() < 0.1 else rng.randint(-50, 50)
        rows.append(f"({rng.randint(0, 30)}, {rng.randint(0, 6)}, 's{rng.randint(0, 4)}', "
                    f"{rng.randint(-100, 100)}, {v2}, {rng.randint(-9, 9)})")
    return ", ".join(rows)


def _load(conn, rng: random.Random, batches: int) -> None:
    for _ in range(batches):
        values = _batch(rng, rng.randint(5, 40))
        query(conn, f"INSERT INTO t VALUES {values}")
        query(conn, f"INSERT INTO twin VALUES {values}")


def _filter(rng: random.Random, cols: list[str]) -> str:
    col = rng.choice(cols)
    value = (lambda: f"'s{rng.randint(0, 4)}'") if col == "k3" else (lambda: rng.randint(0, 6))
    kind = rng.choice(["=", "in", "range", "none"])
    if kind == "=":
        return f" WHERE {col} = {value()}"
    if kind == "in":
        return f" WHERE {col} IN ({value()}, {value()})"
    if kind == "range":
        return f" WHERE {col} >= {value()}"
    return ""


@pytest.mark.parametrize("model", sorted(MODELS))
def test_rollups_answer_as_the_base(server_factory, model):
    columns, keys, rollups, aggregates = MODELS[model]
    rng = random.Random(f"rollups-{model}")
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE rr")
    query(conn, "USE rr")
    for name in ("t", "twin"):
        query(conn, f"CREATE TABLE {name} ({columns}) {keys} DISTRIBUTED BY HASH(k1) BUCKETS 4 "
                    f"PROPERTIES (\"replication_num\" = \"1\")")
    _load(conn, rng, 6)
    query(conn, 'ADMIN SET FRONTEND CONFIG ("rollup_job_tablet_delay_ms" = "30")')

    loader = srv.connect("rr")
    loader_rng = random.Random(f"loader-{model}")
    failed: list[Exception] = []

    def load_meanwhile():
        try:
            _load(loader, loader_rng, 12)
        except Exception as e:  # noqa: BLE001 - reported by the test below
            failed.append(e)
    thread = threading.Thread(target=load_meanwhile)
    thread.start()
    for name, cols in rollups:
        query(conn, f"ALTER TABLE t ADD ROLLUP {name} ({cols})")
        query(conn, "ADMIN WAIT ALTER TABLE")
    thread.join()
    # Loads running while ADD ROLLUP starts are waited for (catalog/load_gate.py), not refused.
    assert not failed, failed
    query(conn, "DELETE FROM t WHERE k3 = 's4'")
    query(conn, "DELETE FROM twin WHERE k3 = 's4'")
    _load(conn, rng, 2)
    assert [r[8] for r in query(conn, "SHOW ALTER TABLE ROLLUP")] == ["FINISHED"] * len(rollups)

    served = set()
    for _ in range(60):
        name, cols = rng.choice(rollups)
        cols = [c.strip() for c in cols.split(",")]
        keys_ = [c for c in cols if c.startswith("k")]
        group = rng.sample(keys_, rng.randint(1, len(keys_)))
        aggs = [a for a in aggregates if all(
            tok in cols for tok in ("k1", "v1", "v2", "v3") if tok in a)]
        picked = rng.sample(aggs, rng.randint(1, min(3, len(aggs)))) if aggs else []
        select = ", ".join([*group, *picked])
        sql = f"SELECT {select} FROM {{}}{_filter(rng, keys_)} GROUP BY {', '.join(group)}"
        plan = "\n".join(r[0] for r in query(conn, "EXPLAIN " + sql.format("t")))
        chosen = next(line.split("rollup: ")[1].strip() for line in plan.splitlines()
                      if "rollup: " in line)
        if chosen != "t":
            served.add(chosen)
        got = sorted(query(conn, sql.format("t")), key=repr)
        want = sorted(query(conn, sql.format("twin")), key=repr)
        assert got == want, (sql, chosen)
    assert served, "no query was served by a rollup"


WHERE_VIEWS = [("mv_k2", "SELECT k1, k3, SUM(v1), MAX(v2), COUNT(v3) FROM t WHERE k2 >= 3 "
                         "GROUP BY k1, k3", "k2 >= 3"),
               ("mv_s1", "SELECT k2, k1, v1 FROM t WHERE k3 = 's1' ORDER BY k2, k1", "k3 = 's1'")]


def test_where_views_answer_as_the_base(server_factory):
    """Materialized views with a WHERE, built while loads go on: every query whose WHERE holds
    a view's conjunct (plus random others) is served by it and answers as the twin does."""
    rng = random.Random("where-views")
    columns, keys = MODELS["dup"][:2]
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE rw")
    query(conn, "USE rw")
    for name in ("t", "twin"):
        query(conn, f"CREATE TABLE {name} ({columns}) {keys} DISTRIBUTED BY HASH(k1) BUCKETS 4 "
                    f"PROPERTIES (\"replication_num\" = \"1\")")
    _load(conn, rng, 6)
    query(conn, 'ADMIN SET FRONTEND CONFIG ("rollup_job_tablet_delay_ms" = "30")')
    loader = srv.connect("rw")
    thread = threading.Thread(target=_load, args=(loader, random.Random("where-loader"), 12))
    thread.start()
    for name, select, _ in WHERE_VIEWS:
        query(conn, f"CREATE MATERIALIZED VIEW {name} AS {select}")
        query(conn, "ADMIN WAIT ALTER TABLE")
    thread.join()
    _load(conn, rng, 2)
    served = set()
    for _ in range(40):
        name, _, where = rng.choice(WHERE_VIEWS)
        extra = _filter(rng, ["k1"] if name == "mv_k2" else ["k1", "k2"]).replace(" WHERE ", "")
        cond = " AND ".join(c for c in (where, extra) if c)
        if name == "mv_k2":
            group = rng.sample(["k1", "k3"], rng.randint(1, 2))
            aggs = rng.sample(["sum(v1)", "max(v2)", "count(v3)"], rng.randint(1, 3))
        else:
            group = rng.sample(["k1", "k2"], rng.randint(1, 2))
            aggs = rng.sample(["sum(v1)", "count(*)", "min(v1)"], rng.randint(1, 3))
        sql = (f"SELECT {', '.join([*group, *aggs])} FROM {{}} WHERE {cond} "
               f"GROUP BY {', '.join(group)}")
        plan = "\n".join(r[0] for r in query(conn, "EXPLAIN " + sql.format("t")))
        chosen = next(line.split("rollup: ")[1].strip() for line in plan.splitlines()
                      if "rollup: " in line)
        served.add(chosen)
        got = sorted(query(conn, sql.format("t")), key=repr)
        want = sorted(query(conn, sql.format("twin")), key=repr)
        assert got == want, (sql, chosen)
    assert {"mv_k2", "mv_s1"} <= served, served
