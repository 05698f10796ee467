"""kill -9 at random points of dynamic partition rounds (issue 17 item 5): a writer moves the
scheduler's clock a day at a time, runs a round (partitions created ahead, old ones dropped:
journaled DDL) and loads a row into the newest partition, until the server is killed; several
times. After each restart every acknowledged row is there, in its partition, and nothing else
but the one statement in flight.

The clock stays within six days of today, so no round ever drops a partition holding a row
(rows go to clock + 3 days; a round drops what is older than clock - 3 days). After a restart
the clock is real time again and the start-up round may add today's partitions: the check is
about rows and their partitions, not the exact partition list.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
import time

import pymysql

DDL = """
CREATE TABLE dp (dt DATE NOT NULL, v INT) DUPLICATE KEY(dt)
PARTITION BY RANGE(dt) () DISTRIBUTED BY HASH(dt) BUCKETS 2
PROPERTIES ("replication_num" = "1", "dynamic_partition.enable" = "true",
    "dynamic_partition.time_unit" = "DAY", "dynamic_partition.start" = "-3",
    "dynamic_partition.end" = "3", "dynamic_partition.prefix" = "p",
    "dynamic_partition.buckets" = "2")
"""
ROUNDS = 4


def test_kill9_during_dynamic_partition_rounds(server_factory):
    rng = random.Random(1125)
    srv = server_factory().start()
    with srv.connect().cursor() as cur:
        cur.execute("CREATE DATABASE w")
        cur.execute("USE w")
        cur.execute(DDL)
    today = dt.date.today()
    acked: list[tuple[str, int]] = []
    step = 0
    rounds_run = 0
    for _ in range(ROUNDS):
        in_flight: list = [None]
        stop, errors = threading.Event(), []

        def writer():
            nonlocal step, rounds_run
            sql = "(connect)"
            try:
                conn = srv.connect("w")
                while not stop.is_set():
                    clock = today + dt.timedelta(days=step % 6 + 1)
                    row = ((clock + dt.timedelta(days=3)).isoformat(), step)
                    with conn.cursor() as cur:
                        sql = f"ADMIN SET DYNAMIC PARTITION TIME = '{clock} 10:00:00'"
                        cur.execute(sql)
                        sql = "ADMIN RUN DYNAMIC PARTITION FROM w"
                        cur.execute(sql)
                        rounds_run += 1
                        in_flight[0] = row
                        sql = f"INSERT INTO dp VALUES ('{row[0]}', {row[1]})"
                        cur.execute(sql)
                    acked.append(row)
                    in_flight[0] = None
                    step += 1
            except pymysql.MySQLError as e:
                if not stop.is_set() and e.args and e.args[0] not in (2003, 2006, 2013):
                    errors.append(f"{sql}: {e}")

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        time.sleep(rng.uniform(0.5, 2.0))
        srv.kill9()
        stop.set()
        t.join(timeout=30)
        assert not errors, errors
        srv.start()
        with srv.connect("w").cursor() as cur:
            cur.execute("SELECT CAST(dt AS VARCHAR), v FROM dp ORDER BY v")
            rows = [tuple(r) for r in cur.fetchall()]
            cur.execute("SHOW PARTITIONS FROM dp")
            names = {r[1] for r in cur.fetchall()}
        expected = sorted(acked, key=lambda r: r[1])
        maybe = in_flight[0]
        assert rows == expected or (maybe is not None and rows == expected + [maybe]), \
            (rows[-3:], expected[-3:], maybe)
        if rows != expected:
            acked.append(maybe)
        assert {"p" + d.replace("-", "") for d, _ in rows} <= names
    print(f"\nkill -9 dynamic partitions: {ROUNDS} kills, {rounds_run} rounds, "
          f"{len(acked)} acknowledged rows verified")
    assert len(acked) >= ROUNDS
