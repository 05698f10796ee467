"""window_funnel's vectorised finisher (executor/operators/window_funnel.py) against a direct
transcription of Doris's row loop (AggregateFunctionWindowFunnel's _match_event_list /
_get_internal), on random event streams, for every mode."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from executor.operators.window_funnel import MODES, window_funnel


def reference(events: list[tuple[int, int]], window_s: int, mode: str, levels: int) -> int:
    """events: (timestamp in microseconds, condition bits), already in timestamp order."""
    rows = len(events)
    if rows == 0 or levels == 0:
        return 0
    ts = [t for t, _ in events]

    def holds(k: int, r: int) -> bool:
        return bool(events[r][1] >> k & 1)

    def find(k: int, start: int) -> int:
        return next((r for r in range(start, rows) if holds(k, r)), rows)

    best, start_row = 0, 0
    while start_row < rows:
        match = find(0, start_row)
        start_row = match + 1
        count = 0
        if match < rows:
            end = ts[match] + window_s * 1_000_000
            prev_ts, last, count, k, row = ts[match], match, 1, 1, match + 1
            while k < levels and row < rows:
                if mode == "fixed":
                    if holds(k, row) and ts[row] <= end:
                        count += 1
                        k += 1
                        row += 1
                        continue
                    break
                row = find(k, row)
                if row >= rows:
                    break
                ok = ts[row] <= end and (mode != "increase" or ts[row] > prev_ts)
                if not ok:
                    break
                prev_ts = ts[row]
                if mode == "deduplication":
                    if row != last + 1 and any(find(j, last + 1) < row for j in range(k)):
                        break
                    last = row
                count += 1
                k += 1
                row += 1
        if count == levels:
            return count
        best = max(best, count)
    return best


@pytest.mark.parametrize("mode", MODES)
def test_matches_dorises_loop_on_random_streams(mode):
    rng = random.Random(hash(mode) & 0xFFFF)
    for _ in range(30):
        levels = rng.randint(1, 4)
        groups = rng.randint(1, 6)
        ts_lists, bit_lists, expected = [], [], []
        for _ in range(groups):
            n = rng.randint(0, 12)
            events = sorted(((rng.randint(0, 20) * 1_000_000, rng.randint(0, 2 ** levels - 1))
                             for _ in range(n)), key=lambda e: e[0])
            window = 5
            expected.append(reference(events, window, mode, levels))
            shuffled = events[:]
            # input order only matters among equal timestamps: keep it, shuffle the rest
            shuffled.sort(key=lambda e: (e[0], rng.random() * 0))
            ts_lists.append([t for t, _ in shuffled])
            bit_lists.append([b for _, b in shuffled])
        got = window_funnel(pa.array(ts_lists, pa.list_(pa.timestamp("us"))),
                            pa.array(bit_lists, pa.list_(pa.int64())), 5, mode, levels)
        assert got.to_pylist() == expected, (mode, ts_lists, bit_lists)


def test_rows_with_a_null_timestamp_are_skipped_and_empty_groups_are_zero():
    ts = pa.array([[None, 1_000_000, 2_000_000], [], [None]], pa.list_(pa.timestamp("us")))
    bits = pa.array([[1, 1, 2], [], [3]], pa.list_(pa.int64()))
    assert window_funnel(ts, bits, 10, "default", 2).to_pylist() == [2, 0, 0]
