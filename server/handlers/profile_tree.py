"""A profiled query's operator tree: its distributed plan (planner/fragments.py) with each
operator's actual rows, time and peak output memory, as the web UI's QueryProfile page draws
it (server/webui/profile_page.py).

The tree follows EXPLAIN GRAPH's shape: a fragment's root hangs under the EXCHANGE it feeds, so
one tree holds the whole plan. Each node is a plain dict (kept in the ProfileStore):

    {"id": 3, "name": "HASH JOIN", "fragment": 1, "detail": "join op: INNER JOIN(...)",
     "rows": 1200, "time_ms": 4.2, "bytes": 38400, "children": [...]}

Times are inclusive of a node's inputs (the executor times each operator around its inputs'
work); `self_ms` (the node's time less its children's) is what "slowest" compares. Steps the
executor runs inside one logical node but the plan shows as operators of their own carry a
`(part, id)` source (planner/logical.py): a two-phase aggregate run tablet by tablet times its
first phase (inclusive, like any operator) and the exchange between the phases; a shuffled
join times the hashing of its sides to the instances (the EXCHANGE nodes feeding it). An
exchange's time is its own work only: its subtree's time is added to make it inclusive. What
the executor did not run on its own (an aggregate run in one pass, a BROADCAST exchange) has
None counters.
"""

from __future__ import annotations

_KEY_LINES = ("TABLE:", "join op:", "output:", "group by:", "order by:", "predicates:")


def operator_tree(fragments: list, counters: dict) -> dict | None:
    """The tree of `fragments` (fragment 0 first) annotated with `counters` (ExecEnv.profile:
    id(logical node) -> [rows, seconds, exchanged bytes, peak bytes])."""
    if not fragments:
        return None
    feeders = {}
    for f in fragments[1:]:
        for line in f.sink:
            if line.strip().startswith("EXCHANGE ID:"):
                feeders[int(line.split(":")[1])] = f
    root = _node(fragments[0].root, fragments[0], feeders, counters)
    _self_times(root)
    return root


def _node(pnode, fragment, feeders: dict, counters: dict) -> dict:
    entry = counters.get(pnode.source) if pnode.source is not None else None
    details = [d.strip() for d in pnode.details if d.strip().startswith(_KEY_LINES)]
    out = {"id": pnode.node_id, "name": pnode.name, "fragment": fragment.fragment_id,
           "detail": details[0] if details else "", "rows": None, "time_ms": None,
           "bytes": None, "children": []}
    own = isinstance(pnode.source, tuple)  # a step timed on its own (an exchange's hashing)
    if entry is not None and (own or not pnode.name.endswith("EXCHANGE")):
        _measured(out, entry)
        out["own"] = own and pnode.name.endswith("EXCHANGE")
    if pnode.name.endswith("EXCHANGE") and pnode.node_id in feeders:
        sender = feeders[pnode.node_id]
        below = _node(sender.root, sender, feeders, counters)
        if entry is not None and not own and below["rows"] is None:
            _measured(below, entry)  # a fragment's root planned above its exchange (TOP-N)
        out["children"].append(below)
    out["children"] += [_node(c, fragment, feeders, counters) for c in pnode.children]
    return out


def _measured(out: dict, entry: list) -> None:
    out["rows"], out["time_ms"] = entry[0], round(entry[1] * 1000, 3)
    out["bytes"] = entry[3] if len(entry) > 3 and entry[3] >= 0 else None  # -1: not measured


def _self_times(node: dict) -> float:
    """Each node's own time (its inclusive time less its measured inputs'); the inclusive
    time of the subtree."""
    below = sum(_self_times(c) for c in node["children"])
    if node["time_ms"] is None:
        node["self_ms"] = None
        return below
    if node.pop("own", False):  # an exchange's own work: inclusive = it + its inputs
        node["self_ms"] = node["time_ms"]
        return node["time_ms"] + below
    node["self_ms"] = round(max(0.0, node["time_ms"] - below), 3)
    return node["time_ms"]


def slowest(root: dict | None) -> int | None:
    """The id of the operator with the largest own time."""
    best, best_ms, stack = None, -1.0, [root] if root else []
    while stack:
        node = stack.pop()
        if node.get("self_ms") is not None and node["self_ms"] > best_ms:
            best, best_ms = node["id"], node["self_ms"]
        stack += node["children"]
    return best
