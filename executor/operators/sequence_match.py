"""sequence_match / sequence_count finished from each group's collected (timestamp, condition
bits) lists, as Doris's AggregateFunctionSequenceMatch (ClickHouse's sequenceMatch) evaluates
them:

- only rows where at least one condition holds are events (the others are skipped), ordered by
  timestamp (equal timestamps keep their input order; Doris leaves their order undefined);
- the pattern (planner/sequence_match.py:parse_pattern) is searched, not anchored: it starts
  with an implicit `.*`; `.*` is lazy; `(?t op S)` compares the seconds between the event at
  hand and the last matched one (for > / >= / == events may be skipped until it holds);
- sequence_match: whether the pattern occurs (BOOLEAN); sequence_count: how many
  non-overlapping chains match, each search starting after the previous chain (BIGINT).

A pattern without time conditions becomes a regular expression over the group's events written
as fixed-width tokens ("0101;" per event: one character per condition), built for all events at
once with numpy; Python's backtracking engine then explores the chains in the same order as
Doris's matcher (leftmost start, lazy stars). Patterns with time conditions run a transcription
of the backtracking matcher, event by event in Python, per group.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner.sequence_match import parse_pattern

_ONE, _ZERO, _END = ord("1"), ord("0"), ord(";")


def sequence_match(ts_lists, bit_lists, pattern: str, conds: int, count: bool) -> pa.Array:
    ts_lists = ts_lists.combine_chunks() if isinstance(ts_lists, pa.ChunkedArray) else ts_lists
    bit_lists = bit_lists.combine_chunks() if isinstance(bit_lists, pa.ChunkedArray) \
        else bit_lists
    n = len(ts_lists)
    flat_ts = pc.list_flatten(ts_lists)
    parents = np.asarray(pc.list_parent_indices(ts_lists).to_numpy(), dtype=np.int64)
    ts = np.asarray(flat_ts.cast(pa.int64()).fill_null(0).to_numpy(), dtype=np.int64)
    bits = np.asarray(pc.list_flatten(bit_lists).fill_null(0).to_numpy(), dtype=np.int64)
    keep = np.asarray(pc.is_valid(flat_ts).to_numpy(zero_copy_only=False), dtype=bool) & \
        (bits != 0)
    ts, bits, parents = ts[keep], bits[keep], parents[keep]
    order = np.lexsort((ts, parents))
    ts, bits, parents = ts[order], bits[order], parents[order]
    ends = np.cumsum(np.bincount(parents, minlength=n))
    starts = ends - np.bincount(parents, minlength=n)
    actions = [("star",)] + parse_pattern(pattern, conds)
    timed = any(a[0] == "time" for a in actions)
    consuming = any(a[0] in ("event", "any") for a in actions)
    out = np.zeros(n, dtype=np.int64)
    if not timed and consuming:
        width = conds + 1
        tokens = np.full((len(bits), width), _END, dtype=np.uint8)
        for k in range(conds):
            tokens[:, k] = np.where((bits >> k) & 1 == 1, _ONE, _ZERO)
        text = tokens.tobytes().decode("ascii")
        rx = re.compile(_regex(actions[1:], conds))
        for g in np.flatnonzero(ends > starts).tolist():
            s = text[int(starts[g]) * width:int(ends[g]) * width]
            out[g] = sum(1 for _ in rx.finditer(s)) if count else rx.search(s) is not None
    else:
        for g in range(n):
            a, b = int(starts[g]), int(ends[g])
            out[g] = _count(ts[a:b].tolist(), bits[a:b].tolist(), actions, not count)
    return pa.array(out) if count else pa.array(out.astype(bool))


def _regex(actions: list[tuple], conds: int) -> str:
    """The pattern over tokens; each match starts at a token boundary."""
    parts = ["(?:(?<=;)|^)"]
    for a in actions:
        if a[0] == "event":
            parts.append(f"[01]{{{a[1]}}}1[01]{{{conds - a[1] - 1}}};")
        elif a[0] == "any":
            parts.append(f"[01]{{{conds}}};")
        else:
            parts.append(f"(?:[01]{{{conds}}};)*?")
    return "".join(parts)


def _holds(diff: int, op: str, seconds: int) -> bool:
    return {"<=": diff <= seconds, "<": diff < seconds, ">=": diff >= seconds,
            ">": diff > seconds, "==": diff == seconds}[op]


def _count(ts: list[int], bits: list[int], actions: list[tuple], first_only: bool) -> int:
    """Chains matched one after another from the first event (stops at the first failure)."""
    found, e = 0, 0
    while e < len(ts):
        matched, e = _backtracking_match(ts, bits, e, actions)
        if not matched:
            break
        found += 1
        if first_only:
            break
    return found


def _backtracking_match(ts: list[int], bits: list[int], start: int,
                        actions: list[tuple]) -> tuple[bool, int]:
    """One search from event `start`: (matched, the event after the chain)."""
    n, a, e, base = len(ts), 0, start, start
    stack: list[tuple[int, int, int]] = []

    def backtrack() -> bool:
        nonlocal a, e, base
        while stack:
            a, e0, base = stack.pop()
            e = e0 + 1
            if e != n:
                return True
        return False

    while a < len(actions) and e < n:
        act = actions[a]
        if act[0] == "event":
            if bits[e] >> act[1] & 1:
                base, a, e = e, a + 1, e + 1
            elif not backtrack():
                break
        elif act[0] == "any":
            base, a, e = e, a + 1, e + 1
        elif act[0] == "star":
            stack.append((a, e, base))
            base, a = e, a + 1
        else:
            _, op, seconds = act
            if _holds((ts[e] - ts[base]) // 1_000_000, op, seconds):
                stack.append((a, e, base))
                base, a = e, a + 1
            elif op in ("<=", "<"):
                if not backtrack():
                    break
            else:
                e += 1
                if e == n and not backtrack():
                    break
    while a < len(actions) and (actions[a][0] == "star" or actions[a][0] == "time" and (
            actions[a][1] in ("<=", "<") or actions[a][1] == ">=" and actions[a][2] == 0)):
        a += 1  # what is left matches no event at all
    if e == start:
        e += 1
    return a == len(actions), e
