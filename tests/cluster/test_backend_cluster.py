"""Backends and colocation through the wire on a private server (5 backends, a fast tablet
scheduler): decommission and DROPP move replicas over time, groups go unstable and back,
a new backend receives buckets, nothing is lost, and all of it survives a restart."""

from __future__ import annotations

import time

import pytest

SCHEDULE_MS = 50


@pytest.fixture
def cluster(server_factory, tmp_path):
    conf = tmp_path / "cluster.conf"
    conf.write_text(f"backend_num = 5\ntablet_schedule_interval_ms = {SCHEDULE_MS}\n")
    srv = server_factory(extra_args=("--config", str(conf)))
    srv.start()
    return srv


def rows(conn, sql: str) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(str(v) for v in r) for r in cur.fetchall()]


def wait_for(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(SCHEDULE_MS / 1000)
    raise AssertionError("condition not reached in time")


def backends(conn) -> dict[str, tuple]:
    return {r[0]: r for r in rows(conn, "SHOW BACKENDS")}


def group(conn) -> tuple:
    [row] = [r for r in rows(conn, "SHOW PROC '/colocation_group'") if r[1].endswith("_g")]
    return row


def test_decommission_drop_add_and_restart(cluster):
    conn = cluster.connect()
    for sql in [
        "CREATE DATABASE d", "USE d",
        'CREATE TABLE t1 (k INT, v INT SUM) DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ("colocate_with" = "g")',
        'CREATE TABLE t2 (k INT, v INT SUM) DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ("colocate_with" = "g")',
        'CREATE TABLE n (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ("replication_num" = "2")',
        "INSERT INTO t1 VALUES " + ", ".join(f"({i}, {i})" for i in range(100)),
        "INSERT INTO t2 VALUES " + ", ".join(f"({i}, {2 * i})" for i in range(100)),
        "INSERT INTO n VALUES " + ", ".join(f"({i}, {i})" for i in range(100)),
    ]:
        rows(conn, sql)
    check = "SELECT count(*), sum(t1.v + t2.v) FROM t1 JOIN t2 ON t1.k = t2.k UNION ALL SELECT count(*), sum(v) FROM n"
    expected = rows(conn, check)
    assert expected == [("100", "14850"), ("100", "4950")]
    gid, name, table_ids, *rest = group(conn)
    assert name == f"{gid.split('.')[0]}_g" and len(table_ids.split(", ")) == 2
    assert rest == ["8", "3", "int(11)", "true", ""]
    seq = rows(conn, f"SHOW PROC '/colocation_group/{gid}'")
    assert [r[0] for r in seq] == [str(i) for i in range(8)]
    assert all(len(r[1].split(", ")) == 3 for r in seq)

    # Decommission with relocation disabled: unstable, nothing moves; then enabled: it moves.
    rows(conn, 'ADMIN SET FRONTEND CONFIG ("disable_colocate_relocate" = "true")')
    rows(conn, 'ALTER SYSTEM DECOMMISSION BACKEND "127.0.0.2:9050"')
    assert backends(conn)["10002"][10] == "true"
    assert group(conn)[6] == "false" and group(conn)[7].startswith("get unhealthy tablet")
    plan = "\n".join(r[0] for r in rows(conn, "EXPLAIN SELECT * FROM t1 JOIN t2 ON t1.k = t2.k"))
    assert "colocate: false, reason: group is not stable" in plan
    time.sleep(0.3)
    assert group(conn)[6] == "false" and "10002" in backends(conn)
    seen = {int(backends(conn)["10002"][11])}  # TabletNum before anything may move
    rows(conn, 'ADMIN SET FRONTEND CONFIG ("disable_colocate_relocate" = "false")')

    def decommissioned() -> bool:
        be = backends(conn)
        if "10002" in be:
            seen.add(int(be["10002"][11]))
        return "10002" not in be
    wait_for(decommissioned)
    assert len(seen) > 1  # TabletNum went down over several rounds
    wait_for(lambda: group(conn)[6] == "true")
    assert all("10002" not in r[1] for r in rows(conn, f"SHOW PROC '/colocation_group/{gid}'"))
    assert rows(conn, check) == expected
    plan = "\n".join(r[0] for r in rows(conn, "EXPLAIN SELECT * FROM t1 JOIN t2 ON t1.k = t2.k"))
    assert "colocate: true" in plan

    # DROPP: the backend goes at once; its replicas are re-placed in the background.
    rows(conn, 'ALTER SYSTEM DROPP BACKEND "127.0.0.3:9050"')
    assert sorted(backends(conn)) == ["10001", "10004", "10005"]
    wait_for(lambda: group(conn)[6] == "true")
    assert rows(conn, check) == expected

    # A new backend: the balancer spreads the group's buckets onto it.
    rows(conn, 'ALTER SYSTEM ADD BACKEND "127.0.0.9:9050"')
    new_id = max(backends(conn))
    wait_for(lambda: group(conn)[6] == "true" and int(backends(conn)[new_id][11]) > 0)
    assert rows(conn, check) == expected
    # balancing done (no round left to begin after the picture below and be half done at
    # the restart: COLOCATE_MISMATCH, a flaky compare): stable, and no tablet moved in 0.5 s

    def settled() -> bool:
        counts = {b: r[11] for b, r in backends(conn).items()}
        time.sleep(0.5)
        return group(conn)[6] == "true" and counts == {b: r[11] for b, r in
                                                      backends(conn).items()}
    wait_for(settled)
    before = (backends(conn).keys(), group(conn), rows(conn, f"SHOW PROC '/colocation_group/{gid}'"))
    conn.close()

    cluster.restart()
    conn = cluster.connect("d")
    after = (backends(conn).keys(), group(conn), rows(conn, f"SHOW PROC '/colocation_group/{gid}'"))
    assert after == before and rows(conn, check) == expected
    conn.close()
