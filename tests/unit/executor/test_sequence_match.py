"""sequence_match / sequence_count (executor/operators/sequence_match.py): the regular
expression path for patterns without time conditions gives what the transcription of Doris's
backtracking matcher gives, on random event streams; time conditions; skipped rows."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from executor.operators.sequence_match import _count, sequence_match
from planner.sequence_match import parse_pattern

PATTERNS = ["(?1)(?2)", "(?1).*(?2)", "(?1).(?2)", "(?2)(?1)(?3)", "(?1).*(?2).*(?3)",
            "(?3)", ".(?1)", "(?1)(?1)"]


def lists(groups):
    ts = pa.array([[t for t, _ in g] for g in groups], pa.list_(pa.timestamp("us")))
    bits = pa.array([[b for _, b in g] for g in groups], pa.list_(pa.int64()))
    return ts, bits


@pytest.mark.parametrize("pattern", PATTERNS)
def test_regex_path_equals_the_backtracking_matcher(pattern):
    rng = random.Random(pattern)
    actions = [("star",)] + parse_pattern(pattern, 3)
    for _ in range(40):
        groups = [sorted(((rng.randint(0, 30) * 1_000_000, rng.randint(0, 7))
                          for _ in range(rng.randint(0, 14))), key=lambda e: e[0])
                  for _ in range(rng.randint(1, 5))]
        ts, bits = lists(groups)
        events = [[(t, b) for t, b in g if b] for g in groups]
        want_count = [_count([t for t, _ in ev], [b for _, b in ev], actions, False)
                      for ev in events]
        want_match = [_count([t for t, _ in ev], [b for _, b in ev], actions, True) > 0
                      for ev in events]
        assert sequence_match(ts, bits, pattern, 3, True).to_pylist() == want_count
        assert sequence_match(ts, bits, pattern, 3, False).to_pylist() == want_match


def test_time_conditions_and_skipped_rows():
    s = 1_000_000
    # events: cond1 at 0 s, an unrelated row at 10 s (no condition: skipped), cond2 at 20 s,
    # cond1 at 100 s, cond2 at 5,000 s
    group = [(0, 1), (10 * s, 0), (20 * s, 2), (100 * s, 1), (5000 * s, 2)]
    ts, bits = lists([group])
    assert sequence_match(ts, bits, "(?1)(?2)", 2, True).to_pylist() == [2]
    assert sequence_match(ts, bits, "(?1)(?t>=3600)(?2)", 2, True).to_pylist() == [1]
    assert sequence_match(ts, bits, "(?1)(?t<=30)(?2)", 2, True).to_pylist() == [1]
    assert sequence_match(ts, bits, "(?1)(?t==20)(?2)", 2, False).to_pylist() == [True]
    assert sequence_match(ts, bits, "(?1)(?t>10000)(?2)", 2, False).to_pylist() == [False]
    assert sequence_match(ts, bits, "(?2)(?1)", 2, True).to_pylist() == [1]
