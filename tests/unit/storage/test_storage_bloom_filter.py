"""Bloom filter index (seed 003 §6): hash, sizing, bit layout, page pruning and its counters."""

import math
import random
from decimal import Decimal

import mmh3
import numpy as np
import pyarrow as pa
import pytest
from storage_testutil import column, read_all, schema, table_for, write_and_open

from storage import ColumnPredicate, DataType, ScanStats, TabletSchema
from storage.segment import bloom_filter as bf
from storage.segment.murmur import SEED, hash_array, hash_values
from storage.segment.reader import IndexOptions


def _mmh3(data: bytes) -> int:
    return mmh3.hash64(data, seed=SEED, signed=False)[0]


def test_numpy_murmur_equals_mmh3_for_strings_and_fixed_width():
    rng = random.Random(7)
    strings = ["", "a", "x" * 15, "y" * 16, "z" * 17, "é" * 40] + [
        "".join(rng.choice("ab\x00é") for _ in range(rng.randint(0, 70))) for _ in range(300)]
    got = hash_array(pa.array(strings), DataType.of("STRING"))
    assert [int(h) for h in got] == [_mmh3(s.encode()) for s in strings]
    sliced = pa.array(strings).slice(5, 100)  # offsets that do not start at 0
    assert [int(h) for h in hash_array(sliced, DataType.of("STRING"))] == \
        [_mmh3(s.encode()) for s in strings[5:105]]
    for kind, fmt in [("SMALLINT", "<i2"), ("INT", "<i4"), ("BIGINT", "<i8"), ("DATE", "<i4")]:
        values = np.array([0, 1, -1, 12345, -(2 ** 15)], dtype=fmt)
        arr = pa.array(values).cast(DataType.of(kind).arrow()) if kind != "DATE" else \
            pa.array(values.astype(np.int32)).view(pa.date32())
        assert [int(h) for h in hash_array(arr, DataType.of(kind))] == \
            [_mmh3(v.tobytes()) for v in values], kind
    dec = pa.array([Decimal("1.25"), Decimal("-3.50")], pa.decimal128(10, 2))
    raw = np.frombuffer(dec.buffers()[1], np.uint8)
    assert [int(h) for h in hash_array(dec, DataType.of("DECIMAL", 10, 2))] == \
        [_mmh3(raw[:16].tobytes()), _mmh3(raw[16:32].tobytes())]


def test_filter_size_follows_the_seed_formula_rounded_to_a_power_of_two():
    for n, fpp in [(0, 0.05), (1, 0.05), (1000, 0.05), (1000, 0.0001), (8192, 0.01)]:
        size = bf.num_bytes(n, fpp)
        bits = -max(n, 1) * math.log(fpp) / math.log(2) ** 2
        assert size & (size - 1) == 0 and size % bf.BYTES_PER_BLOCK == 0
        assert size * 8 >= bits and (size * 8 == bf.MIN_BITS or size * 4 < bits)


def test_each_value_sets_eight_salt_bits_in_its_block():
    h = np.array([0x9E3779B97F4A7C15], dtype=np.uint64)
    blocks = 4
    key = int(h[0]) & 0xFFFFFFFF
    block = (int(h[0]) >> 32) & (blocks - 1)
    expected = np.zeros(blocks * 8, np.uint32)
    for i, salt in enumerate(bf.SALT.tolist()):
        expected[block * 8 + i] |= 1 << (((key * salt) & 0xFFFFFFFF) >> 27)
    bits = np.zeros(blocks * 256, bool)
    bits[bf._positions(h, blocks).ravel()] = True
    assert np.array_equal(np.packbits(bits, bitorder="little").view("<u4"), expected)
    one = np.frombuffer(bf.build(h, 0.05), "<u4")  # one value: the minimum, one block
    assert len(one) == 8 and sum(bin(int(w)).count("1") for w in one) == 8


def test_false_positive_rate_is_near_the_configured_fpp():
    # The seed's size formula is the classic one; 8 bits within one 256-bit block collide
    # more than independent bits would, so the measured rate sits a little above fpp.
    t = DataType.of("BIGINT")
    members = hash_values(list(range(0, 20000, 2)), t)
    filters = bf.BloomFilters(np.array([bf.num_bytes(len(members), 0.05)]), np.array([False]),
                              np.frombuffer(bf.build(members, 0.05), np.uint8))
    assert all(filters.may_contain(members[i:i + 1])[0] for i in range(0, len(members), 97))
    probes = hash_values(list(range(1, 20000, 2)), t)
    rate = np.mean([filters.may_contain(probes[i:i + 1])[0] for i in range(len(probes))])
    assert rate < 0.1


SCHEMA = schema([column("k", "INT", key=True), column("u", "BIGINT"), column("s", "VARCHAR", 20)],
                "DUP_KEYS")


def _bf_schema(fpp=0.05):
    return TabletSchema(SCHEMA.columns, "DUP_KEYS", ("u", "s"), fpp)


@pytest.fixture
def segment(tmp_path):
    rng = np.random.default_rng(3)
    n = 20000
    u = rng.integers(0, 1 << 40, n)
    u[::1000] = -1  # spread over every page: zone maps cannot prune -1 ... nor any u
    data = {"k": list(range(n)), "u": [None if i % 777 == 0 else int(x) for i, x in enumerate(u)],
            "s": [f"user-{int(x)}" for x in u]}
    sch = _bf_schema()
    table = table_for(sch, data)
    return write_and_open(tmp_path, sch, table, page_size=4096), data


def test_equality_drops_pages_whose_filter_misses(segment):
    reader, data = segment
    target = data["u"][12345]
    got, stats = read_all(reader, [ColumnPredicate("u", "=", (target,))], ["k"])
    assert got.column("k").to_pylist() == [i for i, v in enumerate(data["u"]) if v == target]
    assert stats.rows_zone_map_filtered == 0  # random values: every page spans the range
    assert stats.pages_bloom_filter_filtered > 0.75 * reader.columns["u"].num_pages
    assert stats.rows_bloom_filter_filtered > 0.75 * len(data["k"])
    assert stats.rows_total == stats.rows_bloom_filter_filtered + stats.rows_read


def test_in_strings_and_is_null(segment):
    reader, data = segment
    wanted = [data["s"][5], data["s"][19999], "nobody"]
    got, stats = read_all(reader, [ColumnPredicate("s", "in", tuple(wanted))], ["k"])
    assert got.column("k").to_pylist() == [i for i, v in enumerate(data["s"]) if v in wanted]
    assert stats.rows_bloom_filter_filtered > 0
    got, stats = read_all(reader, [ColumnPredicate("u", "is_null")], ["k"])
    assert got.column("k").to_pylist() == [i for i, v in enumerate(data["u"]) if v is None]


def test_values_that_do_not_fit_the_type_and_other_operators_keep_all_pages(segment):
    reader, data = segment
    for pred in [ColumnPredicate("u", "=", (2.5,)), ColumnPredicate("u", "<", (0,)),
                 ColumnPredicate("u", "!=", (data["u"][1],))]:
        _, stats = read_all(reader, [pred], ["k"])
        assert stats.rows_bloom_filter_filtered == 0, pred


def test_a_tablet_schema_without_the_column_ignores_the_filters(segment):
    reader, data = segment
    stats = ScanStats()
    pred = ColumnPredicate("u", "=", (data["u"][3],))
    reader.read(["k"], [pred], stats, indexes=IndexOptions(frozenset({"s"})))
    assert stats.rows_bloom_filter_filtered == 0
