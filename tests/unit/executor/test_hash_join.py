"""`hash_join` gives Acero's answer for every join type whichever path it takes: the key lookup
on a unique side (dense or sorted, single or composite integer keys, DATE keys, NULL keys),
Acero with the inputs swapped so that the smaller one is built, the inner join plus unmatched
rows for a preserved build side, and output columns limited to `needed`."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest

from executor.operators import join as J
from executor.operators import lookup_join as LJ

KINDS = ["inner", "left outer", "right outer", "full outer", "left semi", "left anti",
         "right semi", "right anti"]


def _reference(left, right, lkeys, rkeys, kind):
    return left.join(right, keys=lkeys, right_keys=rkeys, join_type=kind, coalesce_keys=False,
                     use_threads=False)


def _rows(table: pa.Table) -> list:
    return sorted(table.to_pylist(), key=repr)


def _tables(rng, n_left, n_right, unique_right, nulls, span, composite=False):
    rk = rng.choice(span, n_right, replace=False) if unique_right else rng.integers(0, span, n_right)
    lk = rng.integers(-3, span + 3, n_left)
    left = {"lk": pa.array(lk, mask=rng.random(n_left) < nulls), "lv": pa.array(np.arange(n_left))}
    right = {"rk": pa.array(rk), "rv": pa.array([f"s{i}" for i in range(n_right)])}
    if composite:
        left["lk2"] = pa.array(lk % 3, pa.int32())
        right["rk2"] = pa.array(rk % 3, pa.int32())
    return pa.table(left), pa.table(right)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", ["dense", "sorted", "composite", "not unique", "left unique"])
def test_every_path_matches_acero(kind, shape):
    rng = np.random.default_rng(7)
    span = {"dense": 500, "sorted": 10 ** 9}.get(shape, 400)
    left, right = _tables(rng, 3000, 300, shape != "not unique", 0.05, span,
                          composite=shape == "composite")
    lkeys, rkeys = ["lk"], ["rk"]
    if shape == "composite":
        lkeys, rkeys = ["lk", "lk2"], ["rk", "rk2"]
    if shape == "left unique":  # the unique side is the left (and the smaller) one
        left, right = right.rename_columns(["lk", "lv"]), left.rename_columns(["rk", "rv"])
    got = J.hash_join(left, right, lkeys, rkeys, kind)
    want = _reference(left, right, lkeys, rkeys, kind)
    assert got.column_names == want.column_names
    assert _rows(got) == _rows(want)


def test_lookup_applies_only_with_a_unique_integer_side():
    rng = np.random.default_rng(1)
    left, right = _tables(rng, 100, 50, True, 0.0, 80)
    assert LJ.lookup_join(left, right, ["lk"], ["rk"], "inner", None) is not None
    dup_left, dup_right = _tables(rng, 100, 50, False, 0.0, 10)
    assert LJ.lookup_join(dup_left, dup_right, ["lk"], ["rk"], "inner", None) is None
    strings = pa.table({"rk": pa.array(["a", "b"]), "rv": pa.array([1, 2])})
    assert LJ.lookup_join(pa.table({"lk": ["a"]}), strings, ["lk"], ["rk"], "inner", None) is None
    null_key = pa.table({"rk": pa.array([1, None]), "rv": pa.array([1, 2])})
    # NULL keys on the only candidate side: Acero's path
    assert LJ.lookup_join(pa.table({"lk": [1, 1]}), null_key, ["lk"], ["rk"], "inner", None) is None


def test_date_keys():
    days = [datetime.date(2024, 1, 1) + datetime.timedelta(days=i) for i in range(30)]
    right = pa.table({"d": pa.array(days), "v": pa.array(range(30))})
    left = pa.table({"ld": pa.array([days[i % 30] for i in range(100)] + [None])})
    got = J.hash_join(left, right, ["ld"], ["d"], "left outer")
    assert _rows(got) == _rows(_reference(left, right, ["ld"], ["d"], "left outer"))


@pytest.mark.parametrize("kind", ["inner", "left outer", "right outer", "left semi", "right anti"])
def test_needed_columns_only(kind):
    rng = np.random.default_rng(3)
    left, right = _tables(rng, 200, 40, False, 0.0, 30)  # no unique side: Acero's path
    left = left.append_column("lx", pa.array(range(200)))
    needed = {"lv", "rv"}
    got = J.hash_join(left, right, ["lk"], ["rk"], kind, needed)
    want = _reference(left, right, ["lk"], ["rk"], kind)
    want = want.select([c for c in want.column_names if c in needed] or want.column_names[:1])
    assert set(got.column_names) <= needed | {"lk", "rk"}
    assert len(got) == len(want)
    if set(got.column_names) == set(want.column_names):
        assert _rows(got.select(want.column_names)) == _rows(want)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("unique", [True, False])
def test_no_column_needed_keeps_the_row_count(kind, unique):
    rng = np.random.default_rng(5)
    left, right = _tables(rng, 300, 40, unique, 0.05, 60)
    got = J.hash_join(left, right, ["lk"], ["rk"], kind, {"__instance"})
    assert got.num_rows == _reference(left, right, ["lk"], ["rk"], kind).num_rows


def test_dense_single_key_lookup_edges():
    """One key column in the direct-address array: probe keys below the build's lowest key,
    above its highest (and past the array), in gaps, NULL, and of a wider type all find the
    right row or none."""
    index = LJ._Index([pa.array([10, 12, 13, 20], pa.int32())])
    assert index.dense is not None
    probe = pa.array([10, 11, 13, 20, 21, 9, -5, None, 2**40, 12], pa.int64())
    assert index.find([probe]).tolist() == [0, -1, 2, 3, -1, -1, -1, -1, -1, 1]
    assert index.find([pa.array([], pa.int32())]).tolist() == []
