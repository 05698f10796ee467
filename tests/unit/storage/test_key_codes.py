"""Packed key codes (storage/key_codes.py) order rows exactly as Arrow's sort does."""

import datetime as dt
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from storage import key_codes
from storage.memtable import CODES_MIN_ROWS, sort_by_key
from storage.merge import group_starts


def _column(rng: random.Random, kind: int, n: int) -> pa.Array:
    mask = np.array([rng.random() < 0.2 for _ in range(n)], dtype=bool)
    values = [rng.randrange(-5, 5) for _ in range(n)]
    if kind == 0:
        return pa.array(values, pa.int32(), mask=mask)
    if kind == 1:
        return pa.array([v * 10**12 for v in values], pa.int64(), mask=mask)
    if kind == 2:
        return pa.array([dt.date(2024, 1, 10) + dt.timedelta(days=v) for v in values],
                        pa.date32(), mask=mask)
    if kind == 3:
        return pa.array([v > 0 for v in values], pa.bool_(), mask=mask)
    return pa.array([v + 5 for v in values], pa.uint16(), mask=mask)


@pytest.mark.parametrize("seed", range(40))
def test_codes_sort_and_group_as_arrow_does(seed):
    rng = random.Random(seed)
    n = rng.choice([0, 1, 7, 300, CODES_MIN_ROWS + 100])
    cols = {f"c{j}": _column(rng, rng.randrange(5), n + 1).slice(1)  # an offset too
            for j in range(rng.randrange(1, 4))}
    table = pa.table({**cols, "row": pa.array(range(n), pa.int64())})
    keys = list(cols)
    want = table.take(pc.sort_indices(table, sort_keys=[(k, "ascending", "at_start")
                                                          for k in keys]))
    got = sort_by_key(table, keys)
    assert got.equals(want)
    if n:  # equal codes <=> equal keys
        starts = key_codes.group_starts(got, keys)
        same = [all(got.column(k)[i].as_py() == got.column(k)[i - 1].as_py() for k in keys)
                for i in range(1, n)]
        assert starts.tolist() == [0] + [i for i in range(1, n) if not same[i - 1]]
        assert group_starts(got, keys).tolist() == starts.tolist()


def test_columns_the_codes_do_not_cover():
    strings = pa.table({"s": ["b", "a"]})
    assert key_codes.codes(strings, ["s"]) is None
    wide = pa.table({"a": pa.array([-2**61, 2**61]), "b": pa.array([0, 1])})
    assert key_codes.codes(wide, ["a", "b"]) is None  # 63 bits + 1 bit
    assert key_codes.codes(wide, ["a"]) is not None
    decimals = pa.table({"d": pa.array([1, 2], pa.decimal128(10, 2))})
    assert key_codes.codes(decimals, ["d"]) is None
