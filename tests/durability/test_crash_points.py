"""kill -9 at deterministic crash points of every write path of a merge-on-write Unique table.

Random kills (test_kill9_write_paths.py) rarely land on the few instructions where a write is
half done; debug points (catalog/debug_points.py) put the kill exactly there. For each point a
server is started with MINIDORIS_DEBUG_POINTS naming it, runs the statement that passes it and
dies; restarted without it, the table must equal the acknowledged state before the statement
or that state with the statement applied (which one the point decides: before the journal
entry is written nothing happened, after it the statement must survive), and the table must
still take loads, DELETEs and compactions. The concurrent cases kill the server inside a
background compaction or a journal checkpoint while a stream of statements runs.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field

import pymysql
import pytest

from server_process import ServerStartError
from test_kill9_write_paths import _table_state as table_state

DDL = """
CREATE TABLE m (k INT NOT NULL, v INT)
UNIQUE KEY(k)
PARTITION BY RANGE(k) (PARTITION p0 VALUES LESS THAN ("1000"))
DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")
"""


@dataclass
class Model:
    """The table as acknowledged statements left it."""
    rows: dict[int, tuple] = field(default_factory=dict)  # k -> (v, c0, ...)
    columns: list[str] = field(default_factory=list)  # columns after k, v
    partitions: int = 1  # p0 .. p{n-1}, each 1000 keys wide

    def copy(self) -> "Model":
        return Model(dict(self.rows), list(self.columns), self.partitions)

    def state(self) -> tuple:
        return (["k", "v", *self.columns], sorted((k, *v) for k, v in self.rows.items()),
                self.partitions)


def stream_load(srv, columns: list[str], rows: list[tuple]) -> None:
    body = "\n".join(",".join(map(str, r)) for r in rows).encode()
    req = urllib.request.Request(f"http://{srv.host}:{srv.http_port}/api/w/m/_stream_load",
                                 data=body, method="PUT")
    req.add_header("Authorization", "Basic " + base64.b64encode(b"root:").decode())
    req.add_header("columns", ", ".join(columns))
    req.add_header("column_separator", ",")
    with urllib.request.urlopen(req, timeout=30) as resp:
        reply = json.loads(resp.read())
    assert reply.get("Status") == "Success", reply


# -- the statements: name -> (run it, the model after it) ---------------------------------------
INSERTED = {5: (50, 500), 1005: (60, 600), 7: (70, 700)}  # 5 replaces an older row
STREAMED = {6: (61, 601), 1006: (62, 602), 1: (11, 111)}  # 1 too


def _with(m: Model, **changes) -> Model:
    after = m.copy()
    for name, value in changes.items():
        setattr(after, name, value)
    return after


def _sql(text: str):
    return lambda srv, conn: execute(conn, text)


STATEMENTS = {
    "insert": (_sql("INSERT INTO m (k, v, c0) VALUES "
                    + ", ".join(f"({k}, {v[0]}, {v[1]})" for k, v in INSERTED.items())),
               lambda m: _with(m, rows={**m.rows, **INSERTED})),
    "stream_load": (lambda srv, conn: stream_load(srv, ["k", "v", "c0"],
                                                  [(k, *v) for k, v in STREAMED.items()]),
                    lambda m: _with(m, rows={**m.rows, **STREAMED})),
    "delete": (_sql("DELETE FROM m WHERE k = 2"),
               lambda m: _with(m, rows={k: v for k, v in m.rows.items() if k != 2})),
    "add_partition": (_sql('ALTER TABLE m ADD PARTITION p2 VALUES LESS THAN ("3000")'),
                      lambda m: _with(m, partitions=m.partitions + 1)),
    "drop_partition": (_sql("ALTER TABLE m DROP PARTITION p1 FORCE"),
                       lambda m: _with(m, partitions=m.partitions - 1,
                                       rows={k: v for k, v in m.rows.items() if k < 1000})),
    "truncate": (_sql("TRUNCATE TABLE m"), lambda m: _with(m, rows={})),
    "add_column": (_sql('ALTER TABLE m ADD COLUMN c1 INT DEFAULT "7"'),
                   lambda m: _with(m, columns=[*m.columns, "c1"],
                                   rows={k: (*v, 7) for k, v in m.rows.items()})),
    "drop_column": (_sql("ALTER TABLE m DROP COLUMN c0"),
                    lambda m: _with(m, columns=[c for c in m.columns if c != "c0"],
                                    rows={k: v[:1] for k, v in m.rows.items()})),
}

# (debug point, statement, what the restarted table must be: "before" the statement, "after"
# it). A point after the journal write is "after" even before the fsync: SIGKILL keeps what
# the process wrote to the OS (a machine crash would not; the statement was not acknowledged)
CASES = [
    ("load.before_publish", "insert", "before"),  # rows in a load file, nothing journaled
    ("load.before_publish", "stream_load", "before"),
    ("load.before_publish", "delete", "before"),  # the sign rows written
    ("journal.torn_append", "insert", "before"),  # half a frame at the end of the log
    ("journal.torn_append", "delete", "before"),
    ("journal.torn_append", "drop_partition", "before"),
    ("journal.torn_append", "truncate", "before"),
    ("journal.torn_append", "add_column", "before"),
    ("journal.before_fsync", "insert", "after"),
    ("publish.before_apply", "stream_load", "after"),  # durable, not visible, not answered
    ("publish.before_apply", "delete", "after"),
    ("publish.after_apply", "insert", "after"),  # visible, not answered
    ("journal.before_apply.add_partitions", "add_partition", "after"),  # no tablets yet
    ("journal.before_apply.drop_partitions", "drop_partition", "after"),  # files still there
    ("journal.before_apply.truncate", "truncate", "after"),
    ("drop_tablets.partial", "truncate", "after"),  # one old tablet's files gone
    ("journal.before_apply.schema_change", "drop_column", "after"),
    ("tablet_schemas.partial", "add_column", "after"),  # one tablet on the new schema
]


def execute(conn, sql: str) -> None:
    with conn.cursor() as cur:
        cur.execute(sql)


def prepare(srv) -> Model:
    """A table with a history of every kind of write: two partitions, a column added by a light
    schema change, rows loaded before and after it, a DELETE."""
    conn = srv.connect()
    execute(conn, "CREATE DATABASE w")
    execute(conn, "USE w")
    execute(conn, DDL)
    m = Model()
    execute(conn, "INSERT INTO m VALUES (1, 10), (2, 20), (3, 30), (5, 5)")
    m.rows.update({1: (10,), 2: (20,), 3: (30,), 5: (5,)})
    execute(conn, 'ALTER TABLE m ADD PARTITION p1 VALUES LESS THAN ("2000")')
    m.partitions = 2
    execute(conn, 'ALTER TABLE m ADD COLUMN c0 INT DEFAULT "7"')
    m.columns = ["c0"]
    m.rows = {k: (*v, 7) for k, v in m.rows.items()}
    execute(conn, "INSERT INTO m VALUES (1001, 1, 2), (1002, 3, 4), (3, 31, 32)")
    m.rows.update({1001: (1, 2), 1002: (3, 4), 3: (31, 32)})
    stream_load(srv, ["k", "v", "c0"], [(4, 40, 41), (1003, 5, 6)])
    m.rows.update({4: (40, 41), 1003: (5, 6)})
    execute(conn, "DELETE FROM m WHERE k = 1002")
    m.rows.pop(1002)
    assert table_state(conn) == m.state()
    conn.close()
    return m


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A stopped server's data directory holding `prepare`'s table, and its model."""
    from server_process import ServerProcess

    base = tmp_path_factory.mktemp("crash_points_seed")
    srv = ServerProcess(base / "data", log_path=base / "data.log")
    try:
        model = prepare(srv.start())
    finally:
        srv.stop()
    return base / "data", model


def die_at(srv, point: str, monkeypatch, action, background: bool = False) -> None:
    """Start with `point` armed, run `action`, see the server SIGKILL itself. A `background`
    point (compaction, checkpoint) may be reached by the work the server starts on its own,
    during its start-up or before `action` connects: the server is then dead already, which
    is the same test."""
    monkeypatch.setenv("MINIDORIS_DEBUG_POINTS", point)
    try:
        srv.start()
    except ServerStartError as e:  # the server's own work reached the point while starting
        if not background or "exited with code -9 during start-up" not in str(e):
            raise
        return
    finally:
        monkeypatch.delenv("MINIDORIS_DEBUG_POINTS")
    try:
        conn = srv.connect("w")
    except (pymysql.MySQLError, OSError):
        if not background:
            raise
        try:  # dying: the connection was refused or reset an instant before the exit
            srv.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"no connection, and the server did not die at {point}")
        conn = None
    if conn is not None:
        with pytest.raises((pymysql.MySQLError, OSError)):  # OSError: Stream Load's connection
            action(conn)
    assert srv.proc.wait(timeout=30) == -9, f"the server did not die at {point}"
    srv.proc = None


def check_usable(srv, model: Model) -> None:
    """The restarted table takes a load, a DELETE and a compaction, and reads them back."""
    conn = srv.connect("w")
    cols = ["k", "v", *model.columns]
    row = (999, *range(1, len(cols)))
    execute(conn, f"INSERT INTO m ({', '.join(cols)}) VALUES ({', '.join(map(str, row))})")
    model.rows[999] = row[1:]
    if model.rows.get(3) is not None:
        execute(conn, "DELETE FROM m WHERE k = 3")
        model.rows.pop(3)
    execute(conn, "ADMIN COMPACT TABLE m PARTITION p0 WHERE type = 'CUMULATIVE'")
    assert table_state(conn) == model.state()
    conn.close()


@pytest.mark.parametrize("point,statement,outcome", CASES,
                         ids=[f"{p}-{s}" for p, s, _ in CASES])
def test_crash_point(seeded, server_factory, tmp_path, monkeypatch, point, statement, outcome):
    seed_dir, before = seeded
    shutil.copytree(seed_dir, tmp_path / "data")
    srv = server_factory("data")
    run, model_after = STATEMENTS[statement]
    die_at(srv, point, monkeypatch, lambda conn: run(srv, conn))
    after = model_after(before)
    srv.start()
    conn = srv.connect("w")
    actual = table_state(conn)
    conn.close()
    want = after if outcome == "after" else before
    found = "after" if actual == after.state() else "before" if actual == before.state() \
        else "neither"
    assert actual == want.state(), f"{point} in {statement}: the table is {found}, not {outcome}"
    want = want.copy()
    check_usable(srv, want)
    srv.stop()  # and once more, after a clean stop: the same table
    srv.start()
    conn = srv.connect("w")
    assert table_state(conn) == want.state()
    conn.close()


# -- crash points of background work, while statements run -------------------------------------
CONCURRENT_CONF = ("cumulative_compaction_skip_window_seconds = 0\n"
                   "cumulative_compaction_min_deltas = 2\n"
                   "generate_compaction_tasks_min_interval_ms = 5\n"
                   "cumulative_compaction_rounds_for_each_base_compaction_round = 1\n"
                   "edit_log_roll_num = 7\n")


def next_write(rng: random.Random, m: Model):
    """A random INSERT, Stream Load or DELETE of the prepared table: (run it, model after)."""
    roll = rng.random()
    if roll < 0.2 and m.rows:
        k = rng.choice(sorted(m.rows))
        return _sql(f"DELETE FROM m WHERE k = {k}"), \
            _with(m, rows={x: v for x, v in m.rows.items() if x != k})
    rows = {k: (rng.randrange(1000), rng.randrange(1000)) for k in rng.sample(range(2000), 6)}
    after = _with(m, rows={**m.rows, **rows})
    if roll < 0.5:
        return (lambda srv, conn: stream_load(srv, ["k", "v", "c0"],
                                              [(k, *v) for k, v in rows.items()])), after
    return _sql("INSERT INTO m (k, v, c0) VALUES "
                + ", ".join(f"({k}, {v[0]}, {v[1]})" for k, v in rows.items())), after


@pytest.mark.parametrize("point", [
    "compaction.after_merge@3",  # the output written, not journaled
    "journal.before_apply.compact@3",  # journaled, the tablet not swapped
    "compaction.after_swap@3",
    "checkpoint.before_rename@2",  # the image written to its temporary name
    "checkpoint.before_truncate@2",  # the image in place, the log not yet emptied
])
def test_crash_point_in_background_work(seeded, server_factory, tmp_path, monkeypatch, point):
    seed_dir, model = seeded
    shutil.copytree(seed_dir, tmp_path / "data")
    conf = tmp_path / "c.conf"
    conf.write_text(CONCURRENT_CONF)
    srv = server_factory("data", extra_args=("--config", str(conf)))
    rng = random.Random(point)
    in_flight: list[Model] = []

    def writes(conn):
        nonlocal model
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            run, after = next_write(rng, model)
            in_flight[:] = [after]
            run(srv, conn)
            model, in_flight[:] = after, []
        raise AssertionError(f"the server never reached {point}")

    die_at(srv, point, monkeypatch, writes, background=True)
    srv.start()
    conn = srv.connect("w")
    actual = table_state(conn)
    conn.close()
    assert actual in [m.state() for m in [model, *in_flight]], \
        f"{point}: the table is neither the acknowledged state nor that state plus the write " \
        f"in flight"
    check_usable(srv, (in_flight[0] if in_flight and actual == in_flight[0].state()
                       else model).copy())
