"""Segment files: every type (boundaries, NULL) survives write + read; pages and encodings."""

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from storage_testutil import column, read_all, schema, write_and_open

from storage.segment import encoding
from storage.types import DataType

D38 = 10**38 - 1
DAY_0000_01_01 = -719528
DAY_9999_12_31 = 2932896
US_PER_DAY = 86_400_000_000


def assert_same(got: pa.Table, expected: pa.Table) -> None:
    assert got.column_names == expected.column_names
    assert got.num_rows == expected.num_rows
    for name in expected.column_names:
        a, b = got.column(name).combine_chunks(), expected.column(name).combine_chunks()
        assert a.type == b.type, name
        assert a.is_valid().equals(b.is_valid()), name
        if pa.types.is_floating(a.type):
            x = np.asarray(pc.fill_null(a, 0))
            y = np.asarray(pc.fill_null(b, 0))
            assert np.array_equal(x.view(f"u{x.itemsize}"), y.view(f"u{y.itemsize}")), name
        else:
            assert a.equals(b), name


def every_type_table() -> tuple:
    f32 = np.finfo(np.float32)
    f64 = np.finfo(np.float64)
    cols = [column("k", "INT", key=True),
            column("b", "BOOLEAN"), column("t", "TINYINT"), column("s", "SMALLINT"),
            column("i", "INT"), column("bi", "BIGINT"), column("li", "LARGEINT"),
            column("f", "FLOAT"), column("d", "DOUBLE"), column("dec", "DECIMAL", 38, 10),
            column("dec0", "DECIMAL", 38, 0), column("dt", "DATE"), column("ts", "DATETIME", 6),
            column("c", "CHAR", 10), column("v", "VARCHAR", 65533), column("str", "STRING")]
    sch = schema(cols)
    n = 8
    data = {
        "k": list(range(n)),
        "b": [True, False, None, True, False, True, None, False],
        "t": [-128, 127, 0, None, -1, 1, 5, None],
        "s": [-32768, 32767, 0, None, -1, 1, 5, 7],
        "i": [-2**31, 2**31 - 1, 0, None, -1, 1, 5, 7],
        "bi": [-2**63, 2**63 - 1, 0, None, -1, 1, 5, 7],
        "li": [-D38, D38, 0, None, -1, 1, 10**20, -(10**20)],
        "f": [float(f32.min), float(f32.max), float("inf"), float("-inf"), float("nan"), -0.0,
              float(f32.smallest_subnormal), None],
        "d": [f64.min, f64.max, float("inf"), float("-inf"), float("nan"), -0.0,
              float(f64.smallest_subnormal), None],
        "c": ["", "abcdefghij", None, "北京", "a\x00b", " ", "z", "é"],
        "v": ["", "x" * 65533, None, "😀" * 1000, "a\x00", "Zürich", "\x7f", "\U0010ffff"],
        "str": ["", "y" * 200_000, None, "long " * 5000, "\x00", "ü", "a", "b"],
    }
    table = {c.name: pa.array(data[c.name], type=c.type.arrow()) for c in cols
             if c.name in data}
    from decimal import Decimal
    big = "9" * 28 + "." + "9" * 10
    table["dec"] = pa.array([Decimal("-" + big), Decimal(big), None,
                             Decimal("0.0000000001"), Decimal("-0.0000000001"), Decimal(0),
                             Decimal("12345.6789"), Decimal(1)], type=pa.decimal128(38, 10))
    table["dec0"] = pa.array([Decimal(-D38), Decimal(D38), None, 0, 1, -1, 2, 3],
                             type=pa.decimal128(38, 0))
    days = np.array([DAY_0000_01_01, DAY_9999_12_31, 0, -1, 19000, 0, 0, 0], np.int32)
    table["dt"] = pa.array(days, mask=np.array([0, 0, 0, 0, 0, 1, 0, 0], bool)).cast(pa.date32())
    micros = np.array([DAY_0000_01_01 * US_PER_DAY, (DAY_9999_12_31 + 1) * US_PER_DAY - 1,
                       0, -1, 1_600_000_000_123_456, 0, 1, 999_999], np.int64)
    table["ts"] = pa.array(micros, mask=np.array([0, 0, 0, 0, 0, 1, 0, 0], bool)).cast(
        pa.timestamp("us"))
    return sch, pa.table({c.name: table[c.name] for c in cols})


@pytest.mark.parametrize("page_size", [64 * 1024, 64])
def test_every_type_round_trips(tmp_path, page_size):
    sch, table = every_type_table()
    reader = write_and_open(tmp_path, sch, table, page_size=page_size)
    got, stats = read_all(reader)
    assert_same(got, table)
    assert stats.rows_read == stats.rows_returned == table.num_rows
    # a projection in another order, with a repeated column
    got, _ = read_all(reader, columns=["str", "k", "str"])
    assert got.column_names == ["str", "k", "str"]
    assert got.column(0).equals(table.column("str"))


def test_single_page_has_no_ordinal_index_and_multi_page_has_one(tmp_path):
    sch = schema([column("k", "BIGINT", key=True), column("v", "VARCHAR", 10)])
    small = pa.table({"k": pa.array([1, 2, 3], pa.int64()), "v": ["a", None, "c"]})
    reader = write_and_open(tmp_path, sch, small, name="1_0.dat")
    assert reader.columns["k"].meta["ordinal_index"] is None
    assert reader.columns["k"].meta["data_page"] is not None
    n = 50_000
    big = pa.table({"k": pa.array(np.arange(n), pa.int64()),
                    "v": pa.array([f"value-{i}" for i in range(n)])})
    reader = write_and_open(tmp_path, sch, big, name="2_0.dat", page_size=4096)
    meta = reader.columns["k"].meta
    assert meta["data_page"] is None and meta["ordinal_index"] is not None
    assert meta["num_pages"] == n * 8 // 4096 + 1
    got, stats = read_all(reader)
    assert got.equals(big)
    assert stats.pages_read == stats.pages_total == meta["num_pages"] + \
        reader.columns["v"].num_pages


def test_nullable_all_null_and_empty_string_pages(tmp_path):
    sch = schema([column("k", "INT", key=True), column("v", "VARCHAR", 10),
                  column("x", "DOUBLE")])
    n = 3000
    table = pa.table({"k": pa.array(np.arange(n, dtype=np.int32)),
                      "v": pa.array([None] * 1000 + [""] * 1000 + ["a"] * 1000, pa.string()),
                      "x": pa.array([None] * n, pa.float64())})
    reader = write_and_open(tmp_path, sch, table, page_size=512)
    got, _ = read_all(reader)
    assert got.equals(table)


def test_dictionary_encoding_is_used_when_smaller():
    dtype = DataType.of("VARCHAR", 20)
    low = pa.array(["alpha", "beta", None, "gamma"] * 500)
    high = pa.array([f"unique-{i}" for i in range(2000)])
    assert encoding.encode(low, dtype).encoding == encoding.DICT
    assert encoding.encode(high, dtype).encoding == encoding.BINARY
    for arr in (low, high, low.slice(7, 100)):
        page = encoding.encode(arr, dtype)
        back = encoding.decode(page.encoding, page.has_nulls, pa.py_buffer(page.body()),
                               len(arr), dtype)
        assert back.equals(arr)


def test_footer_is_json_and_file_is_self_describing(tmp_path):
    sch = schema([column("k", "INT", key=True), column("v", "BIGINT")])
    table = pa.table({"k": pa.array([1, 2], pa.int32()), "v": pa.array([3, 4], pa.int64())})
    reader = write_and_open(tmp_path, sch, table)
    raw = open(reader.path, "rb").read()
    assert raw[:4] == b"MDSG" and raw[-4:] == b"MDF1"
    size = int.from_bytes(raw[-12:-8], "little")
    footer = json.loads(raw[-12 - size:-12])
    assert footer["num_rows"] == 2
    assert [c["name"] for c in footer["columns"]] == ["k", "v"]
    assert footer["short_key"]["columns"] == ["k"]
    assert os.path.getsize(reader.path) == reader.file_size
