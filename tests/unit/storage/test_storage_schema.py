"""TabletSchema: short key layout (seed 004 prefix index), validation, JSON round trip."""

import json

import pytest
from storage_testutil import column, schema

from storage import TabletSchema


def test_seed_004_example_1_bigint_int_varchar_prefix():
    # "user_id(8 Bytes) + age(4 Bytes) + message(prefix 20 Bytes)"
    s = schema([column("user_id", "BIGINT", key=True), column("age", "INT", key=True),
                column("message", "VARCHAR", 100, key=True),
                column("max_dwell_time", "DATETIME", key=True),
                column("min_dwell_time", "DATETIME", key=True)])
    assert s.short_key_column_count == 3
    assert s.short_key_widths == [8, 4, 20]


def test_seed_004_example_2_leading_varchar_ends_the_prefix():
    # "user_name(20 Bytes) ... 因为遇到 VARCHAR,所以直接截断"
    s = schema([column("user_name", "VARCHAR", 20, key=True), column("age", "INT", key=True),
                column("message", "VARCHAR", 100, key=True)])
    assert s.short_key_widths == [20]


def test_prefix_stops_at_36_bytes_and_3_columns():
    s = schema([column("a", "LARGEINT", key=True), column("b", "LARGEINT", key=True),
                column("c", "LARGEINT", key=True)])
    assert s.short_key_widths == [16, 16]  # a third 16-byte column would pass 36 bytes
    s = schema([column("a", "INT", key=True), column("b", "INT", key=True),
                column("c", "INT", key=True), column("d", "INT", key=True)])
    assert s.short_key_widths == [4, 4, 4]  # at most 3 columns
    s = schema([column("a", "LARGEINT", key=True), column("b", "LARGEINT", key=True),
                column("c", "VARCHAR", 30, key=True)])
    assert s.short_key_widths == [16, 16, 4]  # a string is cut to the remaining bytes
    s = schema([column("a", "CHAR", 200, key=True), column("b", "INT", key=True)])
    assert s.short_key_widths == [36]


def test_float_key_ends_the_prefix():
    s = schema([column("a", "INT", key=True), column("f", "DOUBLE", key=True),
                column("b", "INT", key=True)])
    assert s.short_key_widths == [4]


def test_unique_values_merge_as_replace_and_dup_values_do_not_merge():
    u = schema([column("k", "INT", key=True), column("v", "INT")], "UNIQUE_KEYS")
    assert u.aggregation_of("v") == "REPLACE"
    assert u.merges_on_read
    d = schema([column("k", "INT", key=True), column("v", "INT")], "DUP_KEYS")
    assert d.aggregation_of("v") is None and not d.merges_on_read


def test_validation():
    with pytest.raises(ValueError):
        schema([column("k", "INT", key=True), column("v", "INT")], "AGG_KEYS")  # no aggregation
    with pytest.raises(ValueError):
        schema([column("v", "INT"), column("k", "INT", key=True)])  # key after value
    with pytest.raises(ValueError):
        schema([column("k", "INT", key=True), column("k", "INT")])
    with pytest.raises(ValueError):
        schema([column("k", "INT", key=True)], "MAGIC_KEYS")


def test_json_round_trip():
    s = schema([column("k", "DATETIME", 6, key=True), column("d", "DECIMAL", 27, 9, agg="SUM"),
                column("s", "VARCHAR", 10, agg="REPLACE_IF_NOT_NULL", nullable=False)],
               "AGG_KEYS")
    again = TabletSchema.from_dict(json.loads(json.dumps(s.to_dict())))
    assert again == s
    assert again.short_key_widths == [8]
