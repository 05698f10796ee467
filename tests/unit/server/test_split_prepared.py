"""server/parser/literals.split_prepared equals split_literals of the bound text
(server/protocol/prepared.bind_sql) for every statement and parameters it accepts, and gives
None only where the parameters are not integers or plain strings or the text would not split."""

import random

import pytest

from server.parser.literals import split_literals, split_prepared
from server.protocol.prepared import bind_sql, placeholders

TEXTS = [
    "SELECT * FROM customer WHERE c_custkey = ?",
    "SELECT a, 'x' FROM t WHERE k = ? AND s = ? AND n IN (1, 2.5, ?)",
    "SELECT `k?` FROM `t1` WHERE k1 = ? AND k2 = -? LIMIT 10",
    "SELECT * FROM t WHERE s = ? AND d = '2024-01-01' AND v > 3e5",
    "SELECT * FROM t WHERE k = ? /* hint */",
    "SELECT * FROM t WHERE k = ? AND @x = 1",
    "SELECT * FROM t WHERE k = -? AND j = ? - ?",
    "SELECT * FROM t WHERE k = ?-1 AND s = 'a'",
]
VALUES = [0, 7, -3, 12345678901234, "abc", "", "it's", "'", "''x'", "back\\slash", "é", 1.5, None,
          True]


@pytest.mark.parametrize("seed", range(400))
def test_split_prepared_equals_splitting_the_bound_text(seed):
    rng = random.Random(seed)
    sql = rng.choice(TEXTS)
    spots = placeholders(sql)
    values = [rng.choice(VALUES) for _ in spots]
    segments: dict = {}
    for _ in range(2):  # the second time with the segments kept
        got = split_prepared(sql, spots, values, segments)
        want = split_literals(bind_sql(sql, spots, values))
        if got is None:
            plain = all(type(v) is int or (type(v) is str and "\\" not in v)
                        for v in values)
            assert not plain or want is None
        else:
            assert got == want


def test_a_negative_parameter_after_a_minus_is_left_to_the_bound_text():
    sql = "SELECT * FROM t WHERE k = -?"
    assert split_literals(bind_sql(sql, placeholders(sql), [-3])) is None
    assert split_prepared(sql, placeholders(sql), [-3], {}) is None
    assert split_prepared(sql, placeholders(sql), [3], {}) == \
        split_literals(bind_sql(sql, placeholders(sql), [3]))


def test_value_encoders_equal_binary_value():
    """server/protocol/prepared.value_encoder(t) encodes as _binary_value(value, t) does."""
    import datetime as dt
    from decimal import Decimal

    from mysql_mimic.types import ColumnType

    from server.protocol.prepared import _binary_value, binary_row, value_encoder
    cases = {ColumnType.TINY: [0, -128, 127, True], ColumnType.SHORT: [-32768, 5],
             ColumnType.LONG: [-2**31, 2**31 - 1], ColumnType.LONGLONG: [-2**63, 2**63 - 1],
             ColumnType.FLOAT: [1.5, -0.0], ColumnType.DOUBLE: [0.1, 1e300],
             ColumnType.DATE: [dt.date(2024, 2, 29)],
             ColumnType.DATETIME: [dt.datetime(2024, 1, 2, 3, 4, 5),
                                   dt.datetime(2024, 1, 2, 3, 4, 5, 678)],
             ColumnType.NEWDECIMAL: [Decimal("-1.50")],
             ColumnType.VAR_STRING: ["", "é", "x" * 250, "y" * 251, "z" * 70_000, b"\x00\x01"],
             ColumnType.STRING: ["[1, 2]"], ColumnType.JSON: ['{"a":1}']}
    for t, values in cases.items():
        for v in values:
            assert value_encoder(t)(v) == _binary_value(v, t), (t, v)
    encoders = [value_encoder(ColumnType.LONG), value_encoder(ColumnType.VAR_STRING)] * 5
    row = binary_row([1, None, None, "a"] + [None] * 6, encoders)
    assert row == b"\x00" + bytes([0b11011000, 0b00001111]) + \
        _binary_value(1, ColumnType.LONG) + _binary_value("a", ColumnType.VAR_STRING)
