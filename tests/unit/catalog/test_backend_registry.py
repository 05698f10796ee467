"""Backends as catalog objects: ids, ALTER SYSTEM's rules and messages, replica placement over
available backends, decommission and drop moving replicas for real, journal replay."""

import pytest

from catalog import backend as be
from catalog.errors import DorisError
from cluster_testutil import colocated, create, make_catalog, reopen, scheduler, table


def error(fn, *args) -> str:
    with pytest.raises(DorisError) as e:
        fn(*args)
    return e.value.message


def replicas_of(cat, name: str) -> list[list[int]]:
    t = table(cat, name)
    return [p.tablets[tid].replicas for p in t.sorted_partitions() for tid in p.tablets]


def test_initial_backends_and_show_rows(tmp_path):
    cat = make_catalog(tmp_path)
    assert sorted(cat.backends) == [10001, 10002, 10003]
    assert cat.get_db("db").db_id == 10004  # one id sequence, as in Doris
    create(cat, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4")
    rows = be.show_rows(cat, str(tmp_path), "doris-x", 0.0)
    assert [r[:7] for r in rows] == [(10001 + i, f"127.0.0.{i + 1}", 9050, 9060, 8040, 8060, -1)
                                     for i in range(3)]
    assert [r[9:12] for r in rows] == [("true", "false", 4)] * 3  # 4 tablets x 3 replicas
    assert len(be.SHOW_COLUMNS) == len(rows[0]) == 25
    assert rows[0][19:] == ('{"location" : "default"}', "", "doris-x", rows[0][22], 0, "mix")


def test_alter_system_errors(tmp_path):
    cat = make_catalog(tmp_path)
    assert error(cat.add_backends, ["127.0.0.1:9050"]) == "Same backend already exists[127.0.0.1:9050]"
    assert error(cat.decommission_backends, ["10.0.0.1:9050"]) == "Backend does not exist[10.0.0.1:9050]"
    assert error(cat.cancel_decommission, ["10.0.0.1:9050"]) == "Backend does not exist[10.0.0.1:9050]"
    assert error(cat.drop_backends, ["10.0.0.1:9050"], True) == "backend does not exists[10.0.0.1:9050]"
    assert error(cat.drop_backends, ["127.0.0.1:9050"], False).startswith(
        "It is highly NOT RECOMMENDED to use DROP BACKEND stmt.")
    assert error(cat.add_backends, ["nohostport"]) == "Invalid host port: nohostport"
    assert error(cat.add_backends, ["h:70000"]) == "Port is out of range: 70000"
    assert len(cat.backends) == 3


def test_decommission_needs_enough_remaining_backends(tmp_path):
    cat = make_catalog(tmp_path)
    create(cat, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    message = error(cat.decommission_backends, ["127.0.0.1:9050"])
    assert message == ("After decommission, partition t of table db.t 's replication allocation "
                       "{ tag.location.default: 3 } > available backend num 2 on tag "
                       '{"location" : "default"}, otherwise need to decrease the partition\'s '
                       "replication num.")
    assert not any(b.decommissioned for b in cat.backends.values())


def test_placement_avoids_decommissioned_backends(tmp_path):
    cat = make_catalog(tmp_path, backends=4)
    cat.add_backends(["10.0.0.5:9050"])
    added = max(cat.backends)
    assert (cat.backends[added].host, cat.backends[added].heartbeat_port) == ("10.0.0.5", 9050)
    cat.decommission_backends(["127.0.0.1:9050"])
    create(cat, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 8 "
                "PROPERTIES (\"replication_num\" = \"2\")")
    assert all(10001 not in r and len(set(r)) == 2 for r in replicas_of(cat, "t"))
    cat.cancel_decommission(["127.0.0.1:9050"])
    assert cat.backends[10001].available
    assert error(create, cat, "CREATE TABLE u (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                              "PROPERTIES (\"replication_num\" = \"6\")").startswith(
        "Failed to find enough backend")


def test_decommission_moves_replicas_over_several_steps_then_drops(tmp_path):
    cat = make_catalog(tmp_path, backends=4)
    create(cat, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 16 "
                "PROPERTIES (\"replication_num\" = \"2\")")
    create(cat, colocated("c", "g"))
    cat.decommission_backends(["127.0.0.2:9050"])
    sched = scheduler(cat)  # batch of 4 tablets a step
    counts = []
    while 10002 in cat.backends:
        assert sched.step()
        counts.append(be.replica_counts(cat).get(10002, 0))
    assert len(counts) > 3 and counts == sorted(counts, reverse=True)
    assert all(10002 not in r and len(set(r)) == len(r) for r in replicas_of(cat, "t") + replicas_of(cat, "c"))
    assert all(len(r) == 2 for r in replicas_of(cat, "t"))
    assert cat.is_group_stable(cat.colocate_group_of(table(cat, "c")))


def test_dropp_rescues_last_replicas_and_repair_restores_replication(tmp_path):
    cat = make_catalog(tmp_path, backends=3)
    create(cat, "CREATE TABLE one (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 6 "
                "PROPERTIES (\"replication_num\" = \"1\")")
    create(cat, "CREATE TABLE two (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 6 "
                "PROPERTIES (\"replication_num\" = \"2\")")
    create(cat, colocated("c", "g", extra=', "replication_num" = "2"'))
    cat.drop_backends(["127.0.0.3:9050"], True)
    assert 10003 not in cat.backends
    every = replicas_of(cat, "one") + replicas_of(cat, "two") + replicas_of(cat, "c")
    assert all(r and 10003 not in r for r in every)  # no tablet lost its last placement
    g = cat.colocate_group_of(table(cat, "c"))
    assert not cat.is_group_stable(g)
    scheduler(cat).run_until_idle()
    assert all(len(r) == 2 for r in replicas_of(cat, "two") + replicas_of(cat, "c"))
    assert cat.is_group_stable(g)


def test_backends_survive_restart(tmp_path):
    cat = make_catalog(tmp_path, backends=3)
    cat.add_backends(["10.0.0.9:9051"])
    cat.decommission_backends(["10.0.0.9:9051"])
    before = {b: (x.host, x.heartbeat_port, x.decommissioned) for b, x in cat.backends.items()}
    cat = reopen(cat, tmp_path)
    assert {b: (x.host, x.heartbeat_port, x.decommissioned) for b, x in cat.backends.items()} == before
    scheduler(cat).run_until_idle()  # it holds nothing: dropped
    assert sorted(cat.backends) == [10001, 10002, 10003]
