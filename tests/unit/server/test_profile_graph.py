"""A profile's operator tree (server/handlers/profile_tree.py) and its SVG layout
(server/webui/graph.py): counters land on the right operators, an exchange's counters go to the
fragment root it feeds when that root has none, own time is inclusive time less the inputs',
the slowest is the largest own time, and boxes never overlap."""

from __future__ import annotations

from planner.fragments import Fragment, PNode
from server.handlers.profile_tree import operator_tree, slowest
from server.webui.graph import BOX_H, BOX_W, layout


def _plan():
    """F0: EXCHANGE 4 <- F1: JOIN 3 (SCAN 0, EXCHANGE 2 <- F2: SCAN 1)."""
    scan_b = PNode(1, "OlapScanNode", ["TABLE: d.b(b)"], source=101)
    scan_a = PNode(0, "OlapScanNode", ["TABLE: d.a(a)"], source=100)
    ex2 = PNode(2, "EXCHANGE", [], source=None)
    join = PNode(3, "HASH JOIN", ["join op: INNER JOIN (BROADCAST)"], [scan_a, ex2], source=103)
    ex4 = PNode(4, "EXCHANGE", [], source=104)
    return [Fragment("UNPARTITIONED", ex4, ["RESULT SINK"], fragment_id=0),
            Fragment("HASH", join, ["STREAM DATA SINK", "  EXCHANGE ID: 04"], fragment_id=1),
            Fragment("RANDOM", scan_b, ["STREAM DATA SINK", "  EXCHANGE ID: 02"], fragment_id=2)]


def test_counters_own_times_and_the_slowest():
    counters = {100: [1000, 0.004, 0, 8000], 101: [10, 0.001, 0, 80],
                103: [900, 0.010, 0, 7200]}
    root = operator_tree(_plan(), counters)
    assert (root["id"], root["rows"]) == (4, None)  # an exchange: not measured on its own
    join = root["children"][0]
    assert (join["name"], join["rows"], join["bytes"], join["detail"]) == \
        ("HASH JOIN", 900, 7200, "join op: INNER JOIN (BROADCAST)")
    scan_a, ex2 = join["children"]
    assert scan_a["self_ms"] == 4.0 and ex2["children"][0]["rows"] == 10
    assert join["self_ms"] == 5.0  # 10 ms less its inputs' 4 + 1
    assert slowest(root) == 3


def test_an_exchange_passes_its_counters_to_an_unmeasured_root_below():
    counters = {104: [5, 0.002, 0, 40]}  # only the exchange's source (a TOP-N above it) ran
    root = operator_tree(_plan(), counters)
    assert root["rows"] is None and root["children"][0]["rows"] == 5


def test_layout_places_parents_over_children_without_overlap():
    graph = layout(operator_tree(_plan(), {}), None)
    assert len(graph.boxes) == 5 and len(graph.edges) == 4
    for i, a in enumerate(graph.boxes):
        for b in graph.boxes[i + 1:]:
            assert abs(a.x - b.x) >= BOX_W or abs(a.y - b.y) >= BOX_H
    by_id = {b.node_id: b for b in graph.boxes}
    assert by_id[4].y < by_id[3].y < by_id[0].y  # the root on top
    assert by_id[0].x < by_id[2].x  # probe side left of the build side
    assert all("(not measured on its own)" in b.lines for b in graph.boxes)
    assert layout(None, None) is None


def test_exchanges_and_first_phases_timed_on_their_own():
    """F0: AGG merge 3 <- EXCHANGE 2 (own: 1 ms) <- F1: AGG serialize 1 <- SCAN 0."""
    scan = PNode(0, "OlapScanNode", ["TABLE: d.a(a)"], source=100)
    first = PNode(1, "AGGREGATE (update serialize)", [], [scan], source=("update serialize", 7))
    ex = PNode(2, "EXCHANGE", [], source=("exchange", 7))
    merge = PNode(3, "AGGREGATE (merge finalize)", [], [ex], source=7)
    plan = [Fragment("UNPARTITIONED", merge, ["RESULT SINK"], fragment_id=0),
            Fragment("RANDOM", first, ["STREAM DATA SINK", "  EXCHANGE ID: 02"], fragment_id=1)]
    counters = {100: [1000, 0.006, 0, -1], ("update serialize", 7): [40, 0.010, 0, -1],
                ("exchange", 7): [40, 0.001, 0, -1], 7: [4, 0.013, 0, -1]}
    root = operator_tree(plan, counters)
    exchange = root["children"][0]
    serialize = exchange["children"][0]
    assert (serialize["rows"], serialize["self_ms"]) == (40, 4.0)  # 10 ms less the scan's 6
    assert (exchange["rows"], exchange["time_ms"], exchange["self_ms"]) == (40, 1.0, 1.0)
    assert root["self_ms"] == 2.0  # 13 ms less the exchange and what feeds it (1 + 10)
    assert slowest(root) == 0  # the scan's 6 ms
