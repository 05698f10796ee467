"""Colocation groups (seed 000): creation, schema checks with Doris's messages, shared bucket
sequence placement, ALTER TABLE SET colocate_with, group removal, journal replay."""

import pytest

from catalog import colocation as co
from catalog.errors import DorisError
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from cluster_testutil import bucket_backends, colocated, create, make_catalog, reopen, scheduler, table


def error(cat, sql: str) -> DorisError:
    with pytest.raises(DorisError) as e:
        create(cat, sql)
    return e.value


SEED_TBL1 = """CREATE TABLE `tbl1` (
    `k1` date NOT NULL COMMENT "", `k2` int(11) NOT NULL COMMENT "", `v1` int(11) SUM NOT NULL COMMENT ""
) ENGINE=OLAP AGGREGATE KEY(`k1`, `k2`)
PARTITION BY RANGE(`k1`) (PARTITION p1 VALUES LESS THAN ('2019-05-31'),
                          PARTITION p2 VALUES LESS THAN ('2019-06-30'))
DISTRIBUTED BY HASH(`k2`) BUCKETS 8 PROPERTIES ("colocate_with" = "group1")"""
SEED_TBL2 = """CREATE TABLE `tbl2` (
    `k1` datetime NOT NULL COMMENT "", `k2` int(11) NOT NULL COMMENT "", `v1` double SUM NOT NULL COMMENT ""
) ENGINE=OLAP AGGREGATE KEY(`k1`, `k2`)
DISTRIBUTED BY HASH(`k2`) BUCKETS 8 PROPERTIES ("colocate_with" = "group1")"""


def test_seed_tables_share_one_group_and_bucket_sequence(tmp_path):
    cat = make_catalog(tmp_path)
    create(cat, SEED_TBL1)
    create(cat, SEED_TBL2)
    db = cat.get_db("db")
    g1, g2 = cat.colocate_group_of(table(cat, "tbl1")), cat.colocate_group_of(table(cat, "tbl2"))
    assert g1 is g2 and cat.is_group_stable(g1) and cat.colocation_of(table(cat, "tbl1")) == (g1, True)
    assert g1.group_id == f"{db.db_id}.{g1.grp_id}" and g1.full_name == f"{db.db_id}_group1"
    assert g1.table_ids == [table(cat, "tbl1").table_id, table(cat, "tbl2").table_id]
    # Bucket i of every partition of every table sits on the group's backends seq[i].
    want = [set(b) for b in g1.seq]
    assert bucket_backends(cat, "tbl1") == [want, want] and bucket_backends(cat, "tbl2") == [want]
    rows = co.info_rows(cat)
    assert rows == [(g1.group_id, g1.full_name, f"{g1.table_ids[0]}, {g1.table_ids[1]}", 8, 3,
                     "int(11)", "true", "")]
    assert table(cat, "tbl2").properties["colocate_with"] == "group1"


def test_seed_figure_bucket_sequence_on_four_backends(tmp_path):
    cat = make_catalog(tmp_path, backends=4)
    create(cat, colocated("t", "g"))
    a, b, c, d = sorted(cat.backends)
    assert cat.colocate_group_of(table(cat, "t")).seq == [
        [a, b, c], [b, c, d], [c, d, a], [d, a, b], [a, b, c], [b, c, d], [c, d, a], [d, a, b]]


@pytest.mark.parametrize("sql, message", [
    (colocated("t2", "g", buckets=10), "Colocate tables must have same bucket num: 10 should be 8"),
    (colocated("t2", "g", key_type="BIGINT"),
     "Colocate tables distribution columns must have the same data type: k1 should be INT"),
    ("CREATE TABLE t2 (k1 INT, k2 INT, v INT SUM) DISTRIBUTED BY HASH(k1, k2) BUCKETS 8 "
     "PROPERTIES (\"colocate_with\" = \"g\")",
     "Colocate tables distribution columns size must be same: 2 should be 1"),
    (colocated("t2", "g", extra=', "replication_num" = "2"'),
     "Colocate tables must have same replication allocation: { tag.location.default: 2 } "
     "should be { tag.location.default: 3 }"),
])
def test_schema_mismatch_is_rejected_with_doris_messages(tmp_path, sql, message):
    cat = make_catalog(tmp_path)
    create(cat, colocated("t1", "g"))
    e = error(cat, sql)
    assert e.message == message and e.code == 5063
    assert "t2" not in cat.get_db("db").tables
    assert len(cat.colocation.groups) == 1


def test_varchar_lengths_may_differ_int_bigint_may_not(tmp_path):
    cat = make_catalog(tmp_path)
    create(cat, colocated("a", "gs", key_type="VARCHAR(10)"))
    create(cat, colocated("b", "gs", key_type="VARCHAR(200)"))
    create(cat, "CREATE TABLE c (v1 INT, k1 STRING) DUPLICATE KEY(v1) DISTRIBUTED BY HASH(k1) "
                "BUCKETS 8 PROPERTIES (\"colocate_with\" = \"gs\")")
    assert len(cat.colocate_group_of(table(cat, "a")).table_ids) == 3
    create(cat, colocated("i", "gi", key_type="INT"))
    assert "should be INT" in error(cat, colocated("j", "gi", key_type="BIGINT")).message


def test_random_distribution_and_dynamic_buckets_are_rejected(tmp_path):
    cat = make_catalog(tmp_path)
    e = error(cat, "CREATE TABLE r (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY RANDOM BUCKETS 8 "
                   "PROPERTIES (\"colocate_with\" = \"g\")")
    assert e.message == "Random distribution for colocate table is unsupported"
    e = error(cat, colocated("d", "g", extra=', "dynamic_partition.buckets" = "3"'))
    assert e.message.startswith("Dynamic partition buckets must equal the distribution buckets")
    assert not cat.colocation.groups


def test_group_disappears_with_its_last_table(tmp_path):
    cat = make_catalog(tmp_path)
    create(cat, colocated("t1", "g"))
    create(cat, colocated("t2", "g"))
    cat.drop_table("db", "t1", force=True)
    assert len(cat.colocation.groups) == 1
    cat.drop_table("db", "t2", force=True)
    assert not cat.colocation.groups
    create(cat, colocated("t3", "g", buckets=4))  # a new group: any schema
    cat.drop_database("db", force=True)
    assert not cat.colocation.groups


def test_a_recycled_table_keeps_its_group_until_erased(tmp_path):
    """Doris keeps a table in the colocate index while it is in the recycle bin
    (Env.onEraseOlapTable removes it): the group and its schema stay."""
    cat = make_catalog(tmp_path)
    create(cat, colocated("t1", "g"))
    t1 = table(cat, "t1").table_id
    cat.drop_table("db", "t1")
    assert [g.table_ids for g in cat.colocation.groups.values()] == [[t1]]
    e = error(cat, colocated("t2", "g", buckets=4))
    assert "Colocate tables must have same bucket num" in e.message
    from catalog import recycle_ops
    recycle_ops.erase_instantly(cat, "TableId", t1)
    assert not cat.colocation.groups


def test_groups_belong_to_a_database(tmp_path):
    cat = make_catalog(tmp_path)
    cat.create_database("other")
    create(cat, colocated("t1", "g"))
    cat.create_table("other", parse_create_table(TokenCursor(colocated("t1", "g", buckets=4))))
    names = sorted(g.full_name for g in cat.colocation.groups.values())
    assert names == sorted([f"{cat.get_db('db').db_id}_g", f"{cat.get_db('other').db_id}_g"])


def test_alter_table_moves_between_groups_and_removes(tmp_path):
    cat = make_catalog(tmp_path)
    create(cat, colocated("t1", "g1"))
    create(cat, colocated("t2", "g1"))
    create(cat, colocated("t3", "g2"))
    create(cat, colocated("t4", "g3", buckets=4))
    with pytest.raises(DorisError) as e:
        cat.alter_colocation_properties("db", "t4", {"colocate_with": "g1"})
    assert e.value.message == "Colocate tables must have same bucket num: 4 should be 8"
    assert cat.colocate_group_of(table(cat, "t4")).name == "g3"
    assert cat.alter_colocation_properties("db", "t2", {"colocate_with": "g2"})
    g2 = cat.colocate_group_of(table(cat, "t2"))
    assert g2.name == "g2" and g2.table_ids == [table(cat, "t3").table_id, table(cat, "t2").table_id]
    assert table(cat, "t2").properties["colocate_with"] == "g2"
    cat.alter_table_colocate("db", "t1", "")
    assert cat.colocate_group_of(table(cat, "t1")) is None
    assert "colocate_with" not in table(cat, "t1").properties
    assert sorted(g.name for g in cat.colocation.groups.values()) == ["g2", "g3"]  # g1 emptied
    cat.alter_table_colocate("db", "t1", "fresh")  # a new group takes the table's placement
    fresh = cat.colocate_group_of(table(cat, "t1"))
    assert fresh.seq == co.table_seq(table(cat, "t1")) and cat.is_group_stable(fresh)


def test_joining_with_another_placement_is_unstable_until_moved(tmp_path):
    cat = make_catalog(tmp_path, backends=4)
    create(cat, colocated("t1", "g", extra=', "replication_num" = "1"'))
    create(cat, "CREATE TABLE t2 (k1 INT, v1 INT SUM) DISTRIBUTED BY HASH(k1) BUCKETS 8 "
                "PROPERTIES (\"replication_num\" = \"1\")")
    cat.alter_table_colocate("db", "t2", "g")
    g = cat.colocate_group_of(table(cat, "t2"))
    assert g.pending and not cat.is_group_stable(g)  # round-robin placed t2 elsewhere
    t1 = table(cat, "t1")
    tablet = t1.sorted_partitions()[0].tablets_by_index[t1.base_index_id][min(g.pending)]
    assert co.info_rows(cat)[0][6:] == (
        "false", f"get unhealthy tablet {tablet} in colocate table. status: COLOCATE_MISMATCH")
    assert scheduler(cat).run_until_idle() == 8  # one bucket a step
    assert cat.is_group_stable(g) and bucket_backends(cat, "t2") == bucket_backends(cat, "t1")


def test_add_partition_and_replication_changes_must_keep_the_schema(tmp_path):
    cat = make_catalog(tmp_path)
    create(cat, SEED_TBL1)
    t = table(cat, "tbl1")
    with pytest.raises(DorisError) as e:
        cat.new_partition(t, "p3", None, None, None, 5, 3)
    assert e.value.message == "Colocate tables must have same bucket num: 5 should be 8"
    with pytest.raises(DorisError) as e:
        cat.new_partition(t, "p3", None, None, None, 8, 2)
    assert e.value.message.startswith("Colocate tables must have same replication allocation")
    p = cat.new_partition(t, "p3", None, None, None, 8, 3)
    g = cat.colocate_group_of(t)
    assert [set(p.tablets[tid].replicas) for tid in p.tablets_by_index[t.base_index_id]] == \
        [set(b) for b in g.seq]
    for key in ("replication_num", "default.replication_num", "dynamic_partition.replication_num"):
        with pytest.raises(DorisError) as e:
            cat.alter_colocation_properties("db", "tbl1", {key: "1"})
        assert e.value.message == "Cannot change replication allocation of colocate table."


def test_groups_survive_restart(tmp_path):
    cat = make_catalog(tmp_path)
    create(cat, SEED_TBL1)
    create(cat, SEED_TBL2)
    cat.alter_table_colocate("db", "tbl2", "")
    before = co.info_rows(cat)
    seq = cat.colocate_group_of(table(cat, "tbl1")).seq
    cat = reopen(cat, tmp_path)
    assert co.info_rows(cat) == before and cat.colocate_group_of(table(cat, "tbl1")).seq == seq
    cat.journal.checkpoint(cat.state())  # and from an image
    cat = reopen(cat, tmp_path)
    assert co.info_rows(cat) == before
