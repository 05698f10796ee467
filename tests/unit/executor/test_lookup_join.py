"""The lookup join gives exactly the hash join's rows (as multisets) for every kind it takes,
NULL keys included, over dense and sparse keys, one or two key columns; and declines
duplicate or non-integer build keys."""

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from executor.operators.lookup_join import lookup_join


def _node(kind, residual=None):
    return SimpleNamespace(kind=kind, left_keys=["lk"], right_keys=["rk"], residual=residual)


def _rows(table):
    return sorted(table.to_pylist(), key=repr)


def _tables(rng, build_nulls=False, probe_type=pa.int32()):
    keys = rng.permutation(np.arange(100, 2100))[:1500]
    rk = pa.array(keys, pa.int64(), mask=(rng.random(1500) < 0.05) if build_nulls else None)
    right = pa.table({"rk": rk, "name": pa.array([f"n{k}" for k in keys])})
    probe = rng.integers(0, 2300, 20000)
    lk = pa.array(probe, probe_type, mask=rng.random(20000) < 0.03)
    left = pa.table({"lk": lk, "v": pa.array(np.arange(20000))})
    return left, right


@pytest.mark.parametrize("kind", ["inner", "left outer", "left semi", "left anti",
                                  "right semi", "right anti"])
@pytest.mark.parametrize("build_nulls", [False, True])
def test_matches_the_hash_join(kind, build_nulls):
    rng = np.random.default_rng(11)
    left, right = _tables(rng, build_nulls, pa.int64())
    got = lookup_join(left, right, _node(kind))
    assert got is not None
    want = left.join(right, keys="lk", right_keys="rk", join_type=kind, coalesce_keys=False)
    assert got.column_names == want.column_names
    assert _rows(got) == _rows(want)


def test_declines_what_it_cannot_answer():
    rng = np.random.default_rng(3)
    left, right = _tables(rng)
    dup = pa.concat_tables([right, right.slice(0, 1)])
    assert lookup_join(left, dup, _node("inner")) is None  # duplicate build key
    sparse = right.set_column(0, "rk", pa.array(np.arange(len(right)) * 10**9, pa.int64()))
    assert lookup_join(left, right, _node("full outer")) is None
    # semi and anti joins only need membership: duplicate and sparse build keys are fine
    for kind in ("left semi", "left anti", "right semi", "right anti"):
        for build in (dup, sparse):
            got = lookup_join(left, build, _node(kind))
            wide = left.set_column(0, "lk", left.column("lk").cast(pa.int64()))
            want = wide.join(build, keys="lk", right_keys="rk", join_type=kind)
            assert _rows(got.cast(want.schema)) == _rows(want), kind
    assert lookup_join(left, right, _node("left outer", residual=object())) is None
    text = pa.table({"lk": pa.array(["a"]), "v": pa.array([1])})
    assert lookup_join(text, right, _node("inner")) is None


@pytest.mark.parametrize("kind", ["inner", "left outer", "left semi", "left anti",
                                  "right semi", "right anti"])
def test_needed_columns_only_and_never_none(kind):
    rng = np.random.default_rng(5)
    left, right = _tables(rng)
    full = lookup_join(left, right, _node(kind))
    got = lookup_join(left, right, _node(kind), needed=frozenset({"v", "name"}))
    assert got.column_names == [c for c in full.column_names if c in ("v", "name")]
    assert _rows(got) == _rows(full.select(got.column_names))
    bare = lookup_join(left, right, _node(kind), needed=frozenset())
    assert bare.num_columns >= 1 and bare.num_rows == full.num_rows
    assert lookup_join(left, right, _node(kind, residual=object())) is None or kind == "inner"


@pytest.mark.parametrize("kind", ["inner", "left outer"])
@pytest.mark.parametrize("spread", [1, 10**7])  # dense: position table; sparse: sorted keys
def test_two_integer_keys(kind, spread):
    rng = np.random.default_rng(spread % 97)
    a = np.repeat(np.arange(300), 4) * spread
    b = np.tile(np.arange(4), 300) * 7
    right = pa.table({"ra": pa.array(a, pa.int64()), "rb": pa.array(b, pa.int64()),
                      "w": pa.array(np.arange(1200))})
    pick = rng.integers(0, 1200, 5000)
    la = pa.array(np.where(rng.random(5000) < 0.1, a[pick] + 1, a[pick]), pa.int64(),
                  mask=rng.random(5000) < 0.05)
    left = pa.table({"la": la, "lb": pa.array(b[pick], pa.int64()), "v": np.arange(5000)})
    node = SimpleNamespace(kind=kind, left_keys=["la", "lb"], right_keys=["ra", "rb"],
                           residual=None)
    got = lookup_join(left, right, node)
    assert got is not None
    want = left.join(right, keys=["la", "lb"], right_keys=["ra", "rb"], join_type=kind,
                     coalesce_keys=False)
    assert _rows(got) == _rows(want)
    dup = pa.concat_tables([right, right.slice(5, 1)])
    assert lookup_join(left, dup, node) is None
