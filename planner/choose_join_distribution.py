"""Rule: choose each hash join's distribution, in Doris's order of preference.

1. COLOCATE: both sides scan tables of one stable colocation group and the equality keys cover
   every distribution column in position order (t1.k1 = t2.k1 AND t1.k2 = t2.k2 for HASH(k1, k2)).
2. BUCKET_SHUFFLE: the probe (left) side scans a hash-distributed table and the keys cover its
   distribution columns; only the build side moves, to the probe's buckets
   (session variable `enable_bucket_shuffle_join`).
3. BROADCAST or PARTITIONED (shuffle). As Nereids (RequestPropertyDeriver.visitPhysicalHashJoin,
   JoinUtils.checkBroadcastJoinStats), broadcast is a candidate only when the build side is
   small: at most `broadcast_row_count_limit` rows (30000000) and at most `exec_mem_limit` x
   `broadcast_hashtable_mem_limit_percentage` (0.2) bytes; with the legacy planner
   (`enable_nereids_planner` = false) the byte limit is `exec_mem_limit` x
   `auto_broadcast_join_threshold` (0.8). Between the candidates the cost decides: broadcast
   moves build bytes x probe instances, shuffle moves probe bytes + build bytes; a tie goes to
   broadcast. RIGHT/FULL OUTER and RIGHT SEMI/ANTI joins never broadcast. Hints `JOIN
   [broadcast]` / `JOIN [shuffle]` override the choice (and turn colocation off, as in Doris).

When colocation is not used, the reason is recorded in Doris's words.
"""

from __future__ import annotations

from dataclasses import dataclass

COLOCATE, BUCKET_SHUFFLE, BROADCAST, SHUFFLE = "COLOCATE", "BUCKET_SHUFFLE", "BROADCAST", "PARTITIONED"
_NO_BROADCAST = ("right outer", "full outer", "right semi", "right anti")


@dataclass
class SideInfo:
    """What the rule needs to know about one join input."""

    scan_table: object | None     # OlapTable when the side is (a filtered) scan, else None
    dist_columns: list[str]       # internal names of the hash distribution columns, in order
    rows: int
    bytes: int
    instances: int
    group: object | None = None   # colocation group (catalog), when there is one
    group_stable: bool = True


@dataclass
class JoinDistribution:
    kind: str
    colocate_reason: str          # "" when colocated


def _covers(keys: list[str], other: list[str], dist: list[str]) -> list[str] | None:
    """The partner keys in distribution-column order, if the keys cover every column."""
    if not dist:
        return None
    pairs = dict(zip(keys, other))
    if any(d not in pairs for d in dist):
        return None
    return [pairs[d] for d in dist]


def choose(left: SideInfo, right: SideInfo, join_kind: str, left_keys: list[str],
           right_keys: list[str], hint: str | None, session: dict, fe_config: dict) -> JoinDistribution:
    reason = _colocate_reason(left, right, left_keys, right_keys, hint, session, fe_config)
    if not reason:
        return JoinDistribution(COLOCATE, "")
    if join_kind == "null aware left anti":
        return JoinDistribution(BROADCAST, reason)  # NOT IN needs every right row in one place
    if hint == "broadcast" and join_kind not in _NO_BROADCAST:
        return JoinDistribution(BROADCAST, reason)
    if hint == "shuffle":
        return JoinDistribution(SHUFFLE, reason)
    if hint in ("bucket", "bucket_shuffle") or (
            hint is None and session.get("enable_bucket_shuffle_join", True)):
        if left.scan_table is not None and _covers(left_keys, right_keys, left.dist_columns):
            return JoinDistribution(BUCKET_SHUFFLE, reason)
    if join_kind in _NO_BROADCAST or not _small_build_side(right, session):
        return JoinDistribution(SHUFFLE, reason)
    broadcast_cost = right.bytes * max(left.instances, 1)
    shuffle_cost = left.bytes + right.bytes
    return JoinDistribution(BROADCAST if broadcast_cost <= shuffle_cost else SHUFFLE, reason)


# Doris 2.1's defaults of the session variables the broadcast limit reads.
BROADCAST_DEFAULTS = {"broadcast_row_count_limit": 30000000,
                      "broadcast_hashtable_mem_limit_percentage": 0.2,
                      "auto_broadcast_join_threshold": 0.8,
                      "exec_mem_limit": 2147483648, "enable_nereids_planner": True}


def _small_build_side(right: SideInfo, session: dict) -> bool:
    def get(name: str):
        value = session.get(name)
        return BROADCAST_DEFAULTS[name] if value is None else value
    share = get("broadcast_hashtable_mem_limit_percentage") if get("enable_nereids_planner") \
        else get("auto_broadcast_join_threshold")
    return right.rows <= get("broadcast_row_count_limit") and \
        right.bytes <= get("exec_mem_limit") * float(share)


def _colocate_reason(left: SideInfo, right: SideInfo, left_keys: list[str],
                     right_keys: list[str], hint: str | None, session: dict,
                     fe_config: dict) -> str:
    """"" when the join can be colocated, else Doris's reason text."""
    if fe_config.get("disable_colocate_join"):
        return "Colocate join is disabled by config"
    if session.get("disable_colocate_plan"):
        return "Colocate plan is disabled by session variable"
    if hint is not None:
        return "Has join hint"
    if left.scan_table is None or right.scan_table is None:
        return "Node is not olap scan node"
    if left.group is None or right.group is None or left.group is not right.group:
        return "Tables are not in the same group"
    if not (left.group_stable and right.group_stable):
        return "group is not stable"
    partner = _covers(left_keys, right_keys, left.dist_columns)
    if partner is None or partner != right.dist_columns:
        return "Inconsistent distribution of table and querie(s)"
    return ""
