"""kill -9 at random points of every write path (issue 17 item 5): INSERT, Stream Load, DELETE,
ALTER TABLE ADD/DROP PARTITION, TRUNCATE, ALTER TABLE ADD/DROP COLUMN (light schema change), in
one stream of statements on a Unique table.

A model of the table is kept on the client, updated only when a statement is acknowledged. The
server is killed at a random moment, several times; after each restart the table must equal the
model, or the model with the one statement in flight applied (a statement is atomic).
"""

from __future__ import annotations

import base64
import http.client
import json
import random
import threading
import time
import urllib.error
import urllib.request

import pymysql

DDL = """
CREATE TABLE m (k INT NOT NULL, v INT)
UNIQUE KEY(k)
PARTITION BY RANGE(k) (PARTITION p0 VALUES LESS THAN ("1000"))
DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")
"""
ROUNDS = 5


class Model:
    """The table as acknowledged statements left it: rows, extra columns, partitions."""

    def __init__(self):
        self.rows: dict[int, tuple[int, ...]] = {}  # k -> (v, value of each extra column)
        self.columns: list[str] = []
        self.partitions = 1  # p0 .. p{n-1}, each 1000 keys wide
        # extra columns are the lowest free of c0..c3: a dropped name comes back as a new column

    def copy(self) -> "Model":
        m = Model()
        m.rows, m.columns, m.partitions = dict(self.rows), list(self.columns), self.partitions
        return m

    def next_statement(self, rng: random.Random) -> tuple[str, "Model"]:
        """A random statement and the model after it."""
        after = self.copy()
        roll = rng.random()
        top = self.partitions * 1000
        if roll < 0.50 or not self.rows:
            keys = rng.sample(range(top), 8)
            values = {k: tuple(rng.randrange(1_000_000) for _ in range(1 + len(self.columns)))
                      for k in keys}
            after.rows.update(values)
            cols = ", ".join(["k", "v", *self.columns])
            if rng.random() < 0.4:  # the same rows by Stream Load (HTTP), one transaction
                csv = "\n".join(f"{k},{','.join(map(str, v))}" for k, v in values.items())
                return f"STREAM LOAD {cols}\n{csv}", after
            return (f"INSERT INTO m ({cols}) VALUES "
                    + ", ".join(f"({k}, {', '.join(map(str, v))})"
                                for k, v in values.items()), after)
        if roll < 0.58 and len(self.columns) < 3:
            # a light schema change: older rows read the new column as its DEFAULT
            name = next(f"c{i}" for i in range(4) if f"c{i}" not in self.columns)
            after.columns.append(name)
            after.rows = {k: (*v, 7) for k, v in self.rows.items()}
            return f'ALTER TABLE m ADD COLUMN {name} INT DEFAULT "7"', after
        if roll < 0.62 and self.columns:
            drop = rng.randrange(len(self.columns))
            after.columns.pop(drop)
            after.rows = {k: v[:drop + 1] + v[drop + 2:] for k, v in self.rows.items()}
            return f"ALTER TABLE m DROP COLUMN {self.columns[drop]}", after
        if roll < 0.75:
            k = rng.choice(sorted(self.rows))
            after.rows.pop(k)
            return f"DELETE FROM m WHERE k = {k}", after
        if roll < 0.88 and self.partitions < 6:
            after.partitions += 1
            return (f"ALTER TABLE m ADD PARTITION p{self.partitions} VALUES LESS THAN "
                    f"(\"{(self.partitions + 1) * 1000}\")", after)
        if self.partitions > 1:
            last = self.partitions - 1
            after.partitions -= 1
            after.rows = {k: v for k, v in self.rows.items() if k < last * 1000}
            return f"ALTER TABLE m DROP PARTITION p{last} FORCE", after
        after.rows = {}
        return "TRUNCATE TABLE m", after

    def matches(self, conn) -> bool:
        return not self.differences(_table_state(conn))

    def differences(self, actual: tuple) -> list[str]:
        """How the table (`_table_state`) differs from the model; empty when it matches."""
        names, rows, partitions = actual
        out = []
        if names != ["k", "v", *self.columns]:
            out.append(f"columns {names} != {['k', 'v', *self.columns]}")
        if partitions != self.partitions:
            out.append(f"partitions {partitions} != {self.partitions}")
        got = {r[0]: tuple(r[1:]) for r in rows}
        missing = sorted(set(self.rows) - set(got))
        extra = sorted(set(got) - set(self.rows))
        changed = sorted(k for k in set(got) & set(self.rows) if got[k] != self.rows[k])
        if missing or extra or changed:
            out.append(f"{len(rows)} rows vs {len(self.rows)}: missing keys {missing[:8]}, extra "
                       f"{extra[:8]}, changed {[(k, got[k], self.rows[k]) for k in changed[:4]]}")
        return out


def _table_state(conn) -> tuple:
    with conn.cursor() as cur:
        cur.execute("SELECT * FROM m ORDER BY k")
        names = [d[0] for d in cur.description]
        rows = [tuple(r) for r in cur.fetchall()]
        cur.execute("SHOW PARTITIONS FROM m")
        partitions = len(cur.fetchall())
    return names, rows, partitions


class _Died(Exception):
    """The server went away under a request."""


def _stream_load(srv, action: str) -> None:
    header, body = action.split("\n", 1)
    req = urllib.request.Request(f"http://{srv.host}:{srv.http_port}/api/w/m/_stream_load",
                                 data=body.encode(), method="PUT")
    req.add_header("Authorization", "Basic " + base64.b64encode(b"root:").decode())
    req.add_header("columns", header[len("STREAM LOAD "):])
    req.add_header("column_separator", ",")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            reply = json.loads(resp.read())
    except (urllib.error.URLError, ConnectionError, http.client.HTTPException, OSError) as e:
        raise _Died(str(e)) from None
    if reply.get("Status") != "Success":
        raise pymysql.MySQLError(1105, f"stream load refused: {reply}")


def test_kill9_at_random_points_of_every_write_path(server_factory):
    rng = random.Random(20261125)
    srv = server_factory().start()
    with srv.connect().cursor() as cur:
        cur.execute("CREATE DATABASE w")
        cur.execute("USE w")
        cur.execute(DDL)
    model, acknowledged, kinds = Model(), 0, set()
    for round_no in range(ROUNDS):
        state = {"model": model, "in_flight": None}
        stop, errors = threading.Event(), []

        def writer():
            nonlocal acknowledged
            sql = "(connect)"
            try:
                conn = srv.connect("w")
                while not stop.is_set():
                    sql, after = state["model"].next_statement(rng)
                    state["in_flight"], state["sql"] = after, sql
                    if sql.startswith("STREAM LOAD"):
                        _stream_load(srv, sql)
                    else:
                        with conn.cursor() as cur:
                            cur.execute(sql)
                    state["model"], state["in_flight"] = after, None
                    state["acknowledged_sql"] = sql
                    acknowledged += 1
                    kinds.add(" ".join(sql.split()[:2]) if sql.startswith("STREAM") else
                              sql.split()[0] if not sql.startswith("ALTER") else
                              " ".join(sql.split()[3:5]))
            except _Died:
                return  # the server died under the Stream Load
            except pymysql.MySQLError as e:
                if not stop.is_set() and e.args and e.args[0] not in (2003, 2006, 2013):
                    errors.append(f"{sql}: {e}")  # a statement refused: not a crash
                return  # the server died under the statement

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        time.sleep(rng.uniform(0.5, 2.5))
        srv.kill9()
        stop.set()
        t.join(timeout=30)
        assert not t.is_alive()
        assert not errors, errors
        srv.start()
        conn = srv.connect("w")
        before, in_flight = state["model"], state["in_flight"]
        actual = _table_state(conn)
        ok = not before.differences(actual) or \
            (in_flight is not None and not in_flight.differences(actual))
        assert ok, (f"round {round_no}: after kill -9 the table is neither the acknowledged "
                    f"state nor that state plus the statement in flight; last acknowledged: "
                    f"{str(state.get('acknowledged_sql'))[:120]!r}; in flight: "
                    f"{str(state.get('sql'))[:120] if in_flight is not None else None!r}; vs "
                    f"acknowledged: {before.differences(actual)}; vs in flight: "
                    f"{in_flight.differences(actual) if in_flight is not None else None}")
        model = in_flight if in_flight is not None and in_flight.matches(conn) else before
        conn.close()
    print(f"\nkill -9 write paths: {ROUNDS} kills, {acknowledged} acknowledged statements "
          f"verified ({', '.join(sorted(kinds))})")
    assert acknowledged >= ROUNDS * 3
