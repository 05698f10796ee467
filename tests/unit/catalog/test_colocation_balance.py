"""Colocation stability, relocation and balance driven step by step through the tablet
scheduler (seed 000, 5.6-5.8): buckets move together, the group is unstable until done."""

from collections import Counter

from catalog import colocation as co
from catalog.tablet_scheduler import relocate_and_balance
from cluster_testutil import bucket_backends, colocated, create, make_catalog, reopen, scheduler, table


def spread(seq) -> Counter:
    return Counter(b for bucket in seq for b in bucket)


def test_relocate_replaces_unavailable_backends_with_least_used():
    seq = [[1, 2], [2, 3], [3, 1], [1, 2]]
    new = relocate_and_balance(seq, [1, 2, 4], relocate=True, balance=False)
    assert all(3 not in bucket and len(set(bucket)) == 2 for bucket in new)
    assert [b for b in new if 4 in b] == [[2, 4], [4, 1]]
    assert relocate_and_balance(seq, [1, 2, 4], relocate=False, balance=True) == seq


def test_balance_spreads_evenly_and_keeps_balanced_sequences():
    seq = [[1, 2, 3]] * 4  # Doris's example: one backend holds every bucket
    new = relocate_and_balance(seq, [1, 2, 3, 4, 5, 6], balance=True)
    counts = spread(new)
    assert max(counts.values()) - min(counts.values()) <= 1 and set(counts) == {1, 2, 3, 4, 5, 6}
    assert all(len(set(bucket)) == 3 for bucket in new)
    assert relocate_and_balance(new, [1, 2, 3, 4, 5, 6]) == new
    assert relocate_and_balance(seq, [1, 2, 3, 4, 5, 6], balance=False) == seq


def test_decommission_relocates_bucket_by_bucket(tmp_path):
    cat = make_catalog(tmp_path, backends=4)
    create(cat, colocated("t1", "g"))
    create(cat, colocated("t2", "g"))
    g = cat.colocate_group_of(table(cat, "t1"))
    leaving = g.seq[0][0]
    host_port = cat.backends[leaving].host_port
    cat.decommission_backends([host_port])
    assert not cat.is_group_stable(g)  # a backend of the sequence is unavailable
    sched = scheduler(cat)
    assert sched.step()  # a new sequence: every bucket that used it changes; one moves at once
    assert all(leaving not in bucket for bucket in g.seq)
    affected = len(g.pending)
    assert affected == 5  # 8 buckets x 3 replicas over 4 backends: 6 buckets used it
    seen = []
    while g.pending:
        assert not cat.is_group_stable(g)
        sched.step()
        seen.append(len(g.pending))
    assert seen == list(range(affected - 1, -1, -1))
    assert cat.is_group_stable(g)
    want = [set(b) for b in g.seq]
    assert bucket_backends(cat, "t1") == [want] and bucket_backends(cat, "t2") == [want]
    assert leaving in cat.backends  # dropped by the next step, holding nothing
    sched.step()
    assert leaving not in cat.backends and sorted(spread(g.seq)) == sorted(cat.backends)
    counts = spread(g.seq)
    assert max(counts.values()) - min(counts.values()) <= 1


def test_relocation_waits_while_disabled(tmp_path):
    cat = make_catalog(tmp_path, backends=4)
    create(cat, colocated("t1", "g"))
    g = cat.colocate_group_of(table(cat, "t1"))
    before = [list(b) for b in g.seq]
    leaving = g.seq[0][0]
    cat.decommission_backends([cat.backends[leaving].host_port])
    assert scheduler(cat, disable_colocate_relocate=True).run_until_idle() == 0
    assert g.seq == before and not cat.is_group_stable(g) and leaving in cat.backends
    scheduler(cat).run_until_idle()
    assert cat.is_group_stable(g) and leaving not in cat.backends


def test_new_backend_gets_buckets_unless_balance_is_disabled(tmp_path):
    cat = make_catalog(tmp_path, backends=3)
    create(cat, colocated("t1", "g", buckets=6, extra=', "replication_num" = "1"'))
    g = cat.colocate_group_of(table(cat, "t1"))
    cat.add_backends(["127.0.0.9:9050"])
    new_id = max(cat.backends)
    assert scheduler(cat, disable_colocate_balance=True).run_until_idle() == 0
    assert new_id not in spread(g.seq)
    scheduler(cat).run_until_idle()
    assert spread(g.seq)[new_id] >= 1 and cat.is_group_stable(g)
    counts = spread(g.seq)
    assert max(counts.values()) - min(counts.values()) <= 1
    assert bucket_backends(cat, "t1") == [[set(b) for b in g.seq]]


def test_pending_buckets_survive_restart(tmp_path):
    cat = make_catalog(tmp_path, backends=4)
    create(cat, colocated("t1", "g"))
    g = cat.colocate_group_of(table(cat, "t1"))
    cat.decommission_backends([cat.backends[g.seq[0][0]].host_port])
    sched = scheduler(cat)
    sched.step()
    sched.step()
    pending, seq = set(g.pending), [list(b) for b in g.seq]
    cat = reopen(cat, tmp_path)
    g = cat.colocate_group_of(table(cat, "t1"))
    assert g.pending == pending and g.seq == seq and not cat.is_group_stable(g)
    scheduler(cat).run_until_idle()
    assert cat.is_group_stable(g) and co.info_rows(cat)[0][6] == "true"
