"""Workload groups (Doris 2.1's WorkloadGroupMgr): CREATE / ALTER / DROP WORKLOAD GROUP and SHOW
WORKLOAD GROUPS, as metadata only.

Every cluster has the built-in group `normal` (id 1: cpu_share 1024, memory_limit 30%,
enable_memory_overcommit true); it cannot be dropped. A group's properties are checked as
WorkloadGroup.checkProperties checks them and kept as given (a trailing `%` of cpu_hard_limit
and the spill watermarks dropped, as Doris stores them); the memory_limit of the groups of one
tag may not sum over 100%, nor their cpu_hard_limit. Nothing enforces the limits: a session's
`workload_group` variable only has to name an existing group when it runs a query (Doris's
`Workload group g does not exist`).

Journal operations (entries of `catalog/catalog.py:_APPLY`), state `Catalog.workload_groups`
({name: {id, name, properties, version}}, `normal` added at start-up when absent):

    op                      data
    create_workload_group   {id, name, properties, version}
    alter_workload_group    the same, the whole group after the change
    drop_workload_group     {name}
"""

from __future__ import annotations

import re

from catalog.errors import DdlError
from catalog.names import COMMON_NAME_REGEX, check_common_name

NORMAL = "normal"
NORMAL_ID = 1
NORMAL_PROPERTIES = {"cpu_share": "1024", "memory_limit": "30%",
                     "enable_memory_overcommit": "true"}
MAX_GROUPS = 15  # FE config workload_group_max_num
INT_MAX = 2**31 - 1

# SHOW WORKLOAD GROUPS' columns after Id and Name, each with the value shown when unset
# (WorkloadGroupMgr.WORKLOAD_GROUP_PROC_NODE_TITLE_NAMES, ALL_PROPERTIES_DEFAULT_VALUE_MAP)
SHOWN = (("cpu_share", "-1"), ("memory_limit", "-1"), ("enable_memory_overcommit", "true"),
         ("max_concurrency", str(INT_MAX)), ("max_queue_size", "0"), ("queue_timeout", "0"),
         ("cpu_hard_limit", "-1"), ("scan_thread_num", "-1"),
         ("max_remote_scan_thread_num", "-1"), ("min_remote_scan_thread_num", "-1"),
         ("spill_threshold_low_watermark", "50%"), ("spill_threshold_high_watermark", "80%"),
         ("tag", ""), ("read_bytes_per_second", "-1"), ("remote_read_bytes_per_second", "-1"))
COLUMNS = ["Id", "Name", *(k for k, _ in SHOWN), "running_query_num", "waiting_query_num"]
_PERCENT_SHOWN = {"cpu_hard_limit", "spill_threshold_low_watermark",
                  "spill_threshold_high_watermark"}


def ensure_normal(cat) -> None:
    """The built-in group, added (not journaled) when the catalog has none (Doris's
    appendInternalWorkloadGroup at every start)."""
    if NORMAL not in cat.workload_groups:
        cat.workload_groups[NORMAL] = {"id": NORMAL_ID, "name": NORMAL, "version": 0,
                                       "properties": dict(NORMAL_PROPERTIES)}


def create_group(cat, name: str, props: dict[str, str], if_not_exists: bool = False) -> None:
    check_common_name("workload group", name)
    props = _normalised(props)
    with cat.lock:
        if name in cat.workload_groups:
            if if_not_exists:
                return
            raise DdlError(f"workload group {name} already exist")
        if len(cat.workload_groups) >= MAX_GROUPS:
            raise DdlError(f"workload group number can not be exceed {MAX_GROUPS}")
        group = {"id": cat._alloc_id(),  # noqa: SLF001
                  "name": name, "properties": props, "version": 0}
        _check_sums(cat, group)
        cat._log("create_workload_group", group)  # noqa: SLF001


def alter_group(cat, name: str, props: dict[str, str]) -> None:
    with cat.lock:
        current = cat.workload_groups.get(name)
        if current is None:
            raise DdlError(f"workload group({name}) does not exist.")
        group = {**current, "properties": _normalised({**current["properties"], **props}),
                 "version": current["version"] + 1}
        _check_sums(cat, group)
        cat._log("alter_workload_group", group)  # noqa: SLF001


def drop_group(cat, name: str, if_exists: bool = False) -> None:
    if name == NORMAL:
        raise DdlError(f"Dropping default workload group {name} is not allowed")
    with cat.lock:
        if name not in cat.workload_groups:
            if if_exists:
                return
            raise DdlError(f"workload group {name} does not exist")
        cat._log("drop_workload_group", {"name": name})  # noqa: SLF001


def show_rows(cat, keep) -> list[tuple]:
    """SHOW WORKLOAD GROUPS rows (by id) of the groups whose name `keep` accepts."""
    with cat.lock:
        groups = sorted(cat.workload_groups.values(), key=lambda g: g["id"])
    rows = []
    for g in groups:
        if not keep(g["name"]):
            continue
        props = g["properties"]
        values = [_shown(k, props.get(k), default) for k, default in SHOWN]
        rows.append((str(g["id"]), g["name"], *values, "0", "0"))
    return rows


def check_exists(cat, name: str) -> None:
    """A query runs in its session's group: it must exist (WorkloadGroupMgr.getWorkloadGroup)."""
    if name and name not in cat.workload_groups:
        raise DdlError(f"Workload group {name} does not exist")


def _shown(key: str, value: str | None, default: str) -> str:
    if not value:
        return default
    if key in _PERCENT_SHOWN and value != "-1":
        return value + "%"
    return value


# -- property checks (WorkloadGroup.checkProperties) --------------------------------------------
_POSITIVE_OR_MINUS_ONE = {
    "cpu_share": "The allowed cpu_share value is -1 or a positive integer, but input value is ",
    "scan_thread_num": "The allowed scan_thread_num value is -1 or a positive integer. but "
                       "input value is ",
    "max_remote_scan_thread_num": "The allowed max_remote_scan_thread_num value is -1 or a "
                                  "positive integer. but input value is ",
    "min_remote_scan_thread_num": "The allowed min_remote_scan_thread_num value is -1 or a "
                                  "positive integer. but input value is ",
    "read_bytes_per_second": "The allowed read_bytes_per_second value should be -1 or an "
                             "positive integer, but input value is ",
    "remote_read_bytes_per_second": "The allowed remote_read_bytes_per_second value should be "
                                    "-1 or an positive integer, but input value is ",
}
_NOT_NEGATIVE = ("max_concurrency", "max_queue_size", "queue_timeout")
ALL_PROPERTIES = {k for k, _ in SHOWN}


def _normalised(props: dict[str, str]) -> dict[str, str]:
    """`props` checked, with Doris's stored spellings."""
    for k in props:
        if k not in ALL_PROPERTIES:
            raise DdlError(f"Property {k} is not supported.")
    out = {k: v.strip() for k, v in props.items()}
    for k, message in _POSITIVE_OR_MINUS_ONE.items():
        if k in out and not _int_ok(out[k], lambda n: n > 0 or n == -1):
            raise DdlError(message + out[k])
    if "cpu_hard_limit" in out:
        raw = out["cpu_hard_limit"]
        value = raw[:-1] if raw.endswith("%") else raw
        if not _int_ok(value, lambda n: 1 <= n <= 100 or (n == -1 and value == raw)):
            raise DdlError("The allowed cpu_hard_limit value is -1 or a positive integer "
                           f"between 1 and 100, but input value is {raw}")
        out["cpu_hard_limit"] = value
    if "memory_limit" in out:
        _check_memory_limit(out["memory_limit"])
    if "enable_memory_overcommit" in out:
        raw = out["enable_memory_overcommit"]
        if raw.lower() not in ("true", "false"):
            raise DdlError("The value of 'enable_memory_overcommit' must be true or false. but "
                           f"input value is {raw}")
        out["enable_memory_overcommit"] = raw.lower()
    _check_remote_scan(out)
    for k in _NOT_NEGATIVE:
        if k in out and not _int_ok(out[k], lambda n: n >= 0):
            raise DdlError(f"The allowed {k} value is an integer greater than or equal to 0, "
                           f"but input value is {out[k]}")
    marks = {}
    for k, default in (("spill_threshold_low_watermark", 50),
                       ("spill_threshold_high_watermark", 80)):
        value = out.get(k, str(default)).removesuffix("%")
        if not _int_ok(value, lambda n: 1 <= n <= 100):
            raise DdlError(f"The allowed {k} value is an integer value between 1 and 100, but "
                           f"input value is {value}")
        marks[k] = int(value)
        if k in out:
            out[k] = value
    low, high = marks["spill_threshold_low_watermark"], marks["spill_threshold_high_watermark"]
    if low > high:
        raise DdlError(f"spill_threshold_high_watermark({high}) should bigger than "
                       f"spill_threshold_low_watermark({low})")
    if out.get("tag"):
        if not all(re.fullmatch(COMMON_NAME_REGEX, t) for t in out["tag"].split(",")):
            raise DdlError(f"tag format is illegal, {out['tag']}")
        out["tag"] = out["tag"].lower()
    return out


def _check_memory_limit(raw: str) -> None:
    if raw == "-1":
        return
    if not raw.endswith("%"):
        raise DdlError("memory_limit requires a percentage value which ends with a '%' or -1, "
                       f"but input value is {raw}")
    try:
        ok = float(raw[:-1]) > 0
    except ValueError:
        ok = False
    if not ok:
        raise DdlError("The allowed memory_limit value is a positive floating point number, "
                       f"but input value is {raw}")


def _check_remote_scan(out: dict[str, str]) -> None:
    high = int(out.get("max_remote_scan_thread_num", "-1"))
    low = int(out.get("min_remote_scan_thread_num", "-1"))
    if (high == -1) != (low == -1):
        raise DdlError("max_remote_scan_thread_num and min_remote_scan_thread_num must be "
                       "specified simultaneously")
    if high < low:
        raise DdlError("max_remote_scan_thread_num must bigger or equal "
                       "min_remote_scan_thread_num")


def _int_ok(text: str, test) -> bool:
    try:
        n = int(text)
    except ValueError:
        return False
    return -2**31 <= n < 2**31 and test(n)


def _check_sums(cat, group: dict) -> None:
    """checkGlobalUnlock: the groups of one tag share 100% of memory and of hard CPU."""
    tag = group["properties"].get("tag") or None  # Java's null when the group has none
    memory, cpu = 0.0, 0
    for g in [*(g for g in cat.workload_groups.values() if g["name"] != group["name"]), group]:
        if (g["properties"].get("tag") or None) != tag:
            continue
        memory += max(_percent(g["properties"].get("memory_limit")), 0.0)
        cpu += max(int(g["properties"].get("cpu_hard_limit", "0")), 0)
    if memory > 100.0 + 1e-6:
        raise DdlError(f"The sum of all workload group memory_limit within tag {tag or 'null'} "
                       "cannot be greater than 100.0%.")
    if cpu > 100:
        raise DdlError(f"sum of all workload group cpu_hard_limit within tag {tag or 'null'} "
                       "can not be greater than 100% ")


def _percent(value: str | None) -> float:
    if not value or value == "-1":
        return 0.0
    return float(value.removesuffix("%"))


def _apply_put(cat, data: dict) -> None:
    cat.workload_groups[data["name"]] = dict(data)
    cat.next_id = max(cat.next_id, data["id"])


def _apply_drop(cat, data: dict) -> None:
    cat.workload_groups.pop(data["name"], None)


APPLY = {"create_workload_group": _apply_put, "alter_workload_group": _apply_put,
         "drop_workload_group": _apply_drop}
