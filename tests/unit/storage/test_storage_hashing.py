"""bucket_ids: the vectorised CRC32 chain equals zlib.crc32 chained row by row."""

import decimal
import struct
import zlib
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storage import DataType, bucket_ids
from storage.hashing import crc32_rows

INT = DataType("INT")
BIGINT = DataType("BIGINT")
VARCHAR = DataType.of("VARCHAR", 100)


def row_bytes(value, dtype: DataType) -> bytes:
    """The bytes the docstring promises, computed the slow obvious way."""
    if value is None:
        return b"\x00"
    kind = dtype.kind
    if dtype.is_string:
        return value.encode()
    fmt = {"BOOLEAN": "<?", "TINYINT": "<b", "SMALLINT": "<h", "INT": "<i", "BIGINT": "<q",
           "FLOAT": "<f", "DOUBLE": "<d"}
    if kind in fmt:
        return struct.pack(fmt[kind], value)
    if kind == "DATE":
        return struct.pack("<i", (value - __import__("datetime").date(1970, 1, 1)).days)
    if kind == "DATETIME":
        delta = value - __import__("datetime").datetime(1970, 1, 1)
        micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        return struct.pack("<q", micros)
    wide = decimal.Context(prec=80)
    unscaled = int(value.scaleb(dtype.scale, wide)) if kind == "DECIMAL" else int(value)
    return unscaled.to_bytes(16, "little", signed=True)


def reference(rows: list[tuple], types: list[DataType], buckets: int) -> list[int]:
    out = []
    for row in rows:
        h = 0
        for value, dtype in zip(row, types):
            h = zlib.crc32(row_bytes(value, dtype), h)
        out.append(h % buckets)
    return out


def check(columns: list[list], types: list[DataType], buckets: int = 1 << 32) -> None:
    arrays = [pa.array(c, type=t.arrow()) for c, t in zip(columns, types)]
    got = bucket_ids(arrays, types, buckets)
    assert got.dtype == np.int64
    assert got.tolist() == reference(list(zip(*columns)), types, buckets)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(-2**31, 2**31 - 1)),
                          st.one_of(st.none(), st.text(max_size=12)),
                          st.one_of(st.none(), st.integers(-2**63, 2**63 - 1))),
                min_size=1, max_size=40),
       st.integers(1, 64))
def test_int_string_bigint_chain_matches_zlib(rows, buckets):
    cols = [list(c) for c in zip(*rows)]
    check(cols, [INT, VARCHAR, BIGINT], buckets)


def test_every_type():
    import datetime as dt

    types = [DataType("BOOLEAN"), DataType("TINYINT"), DataType("SMALLINT"),
             DataType("LARGEINT"), DataType("FLOAT"), DataType("DOUBLE"),
             DataType.of("DECIMAL", 38, 10), DataType("DATE"), DataType.of("DATETIME", 6),
             DataType.of("CHAR", 5)]
    cols = [[True, False, None], [-128, 127, None], [-32768, 32767, None],
            [-(10**37), 10**37, None], [1.5, -0.0, None], [2.25, -1e300, None],
            [Decimal("-1234567890123456789012345678.0123456789"), Decimal("0.0000000001"), None],
            [dt.date(1, 1, 1), dt.date(9999, 12, 31), None],
            [dt.datetime(2020, 2, 29, 23, 59, 59, 999999), dt.datetime(1969, 12, 31), None],
            ["ab", "", None]]
    check(cols, types, 1 << 32)


def test_long_unicode_strings_and_sliced_chunked_input():
    rng = np.random.default_rng(5)
    words = ["", "é", "北京", "x" * 300] + ["".join(rng.choice(list("abc😀"), size=int(n)))
                                          for n in rng.integers(0, 50, 200)]
    check([words], [VARCHAR], 7)
    chunked = pa.chunked_array([pa.array(words[:10]), pa.array(words[10:])])
    assert bucket_ids([chunked], [VARCHAR], 7).tolist() == reference(
        [(w,) for w in words], [VARCHAR], 7)
    sliced = pa.array(words).slice(3, 50)
    assert bucket_ids([sliced], [VARCHAR], 7).tolist() == reference(
        [(w,) for w in words[3:53]], [VARCHAR], 7)


def test_large_vectorised_input_matches_a_sample():
    rng = np.random.default_rng(1)
    ints = rng.integers(-2**31, 2**31, 200_000).astype(np.int32)
    got = crc32_rows([pa.array(ints)], [INT])
    for i in rng.integers(0, len(ints), 100):
        assert got[i] == zlib.crc32(struct.pack("<i", int(ints[i])))


def test_rejects_bad_arguments():
    with pytest.raises(ValueError):
        bucket_ids([pa.array([1])], [INT], 0)
    with pytest.raises(ValueError):
        bucket_ids([pa.array([1]), pa.array([1, 2])], [INT, INT], 3)


@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16])
def test_fixed_width_steps_match_zlib_for_every_width(width):
    """Four bytes per step, then two, then one: every remainder agrees with zlib from any
    starting state."""
    from storage.hashing import _crc_fixed
    rng = np.random.default_rng(width)
    matrix = rng.integers(0, 256, (500, width)).astype(np.uint8)
    start = rng.integers(0, 2**32, 500).astype(np.uint32)
    want = [zlib.crc32(matrix[i].tobytes(), int(start[i])) for i in range(500)]
    assert _crc_fixed(matrix, start).tolist() == want


def test_bucket_of_one_row_equals_bucket_ids():
    """The scalar form (a key lookup's bucket pruning) hashes the same bytes as the vectorised
    one, for every type it covers; other types are left to bucket_ids (None)."""
    import random

    from storage.hashing import bucket_of
    rnd = random.Random(7)
    kinds = [("TINYINT", 7), ("SMALLINT", 15), ("INT", 31), ("BIGINT", 63), ("LARGEINT", 120)]
    for _ in range(200):
        types, values = [], []
        for _ in range(rnd.randint(1, 3)):
            if rnd.random() < 0.3:
                t, v = DataType("VARCHAR", length=20), rnd.choice(["", "a", "é漢", "x" * 19])
            else:
                kind, bits = rnd.choice(kinds)
                t = DataType(kind)
                v = rnd.randint(-(1 << bits), (1 << bits) - 1) if bits < 120 else rnd.randint(-10**37, 10**37)
            if rnd.random() < 0.1:
                v = None
            types.append(t)
            values.append(v)
        for num in (1, 3, 16, 1024):
            arrays = [pa.array([v], t.arrow()) for v, t in zip(values, types)]
            assert bucket_of(tuple(values), types, num) == int(bucket_ids(arrays, types, num)[0])
    assert bucket_of((1.5,), [DataType("DOUBLE")], 4) is None
