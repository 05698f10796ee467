"""Pushdown: date constants (DATE 'x' +/- INTERVAL) fold into storage predicates, and only
conjuncts whose literals convert without loss are marked as exactly pushed."""

import datetime as dt
from types import SimpleNamespace

import sqlglot
from sqlglot import exp

from planner.pushdown import storage_predicates
from storage.types import DataType

SCAN = SimpleNamespace(output=["d", "i", "m", "s", "t"], columns=["d", "i", "m", "s", "t"],
                       column_types={"d": DataType.of("DATE"), "i": DataType.of("INT"),
                                     "m": DataType.of("DECIMAL", 15, 2),
                                     "s": DataType.of("VARCHAR", 10),
                                     "t": DataType.of("DATETIME")})


def pushed(where: str):
    conj = sqlglot.parse_one(f"SELECT * FROM x WHERE {where}", read="doris").args["where"].this
    preds, exact = storage_predicates(conj, SCAN)
    return [(p.column, p.op, p.values) for p in preds], exact


def test_date_constants_fold():
    assert pushed("d <= date '1998-12-01' - interval 90 day") == \
        ([("d", "<=", (dt.date(1998, 9, 2),))], True)
    assert pushed("d < date '1994-01-31' + interval '1' month") == \
        ([("d", "<", (dt.date(1994, 2, 28),))], True)
    assert pushed("d >= date '1994-01-01' + interval '1' year")[0] == \
        [("d", ">=", (dt.date(1995, 1, 1),))]
    preds, exact = pushed("t < date '1994-01-01'")
    assert preds == [("t", "<", (dt.datetime(1994, 1, 1),))] and not exact


def test_exactness():
    assert pushed("i BETWEEN 1 AND 3")[1]
    assert pushed("m BETWEEN 0.05 AND 0.07")[1]
    assert pushed("s = 'AMERICA'")[1]
    assert pushed("i IN (1, 2, 3)")[1]
    assert pushed("d = '1994-01-01'")[1]
    assert not pushed("d = '1994-01-01 10:00:00'")[1]
    assert pushed("i + 1 = 3") == ([], False)


def test_numeric_constants_fold_exactly():
    from decimal import Decimal
    assert pushed("m BETWEEN 0.06 - 0.01 AND 0.06 + 0.01") == \
        ([("m", ">=", (Decimal("0.05"),)), ("m", "<=", (Decimal("0.07"),))], True)
    assert pushed("i <= 1 + 10") == ([("i", "<=", (11,))], True)
    assert pushed("i > (2 * 3) - -1") == ([("i", ">", (7,))], True)
    assert pushed("i < 1 / 2") == ([], False)  # division: the executor's result type rules
    assert pushed("i < i + 1") == ([], False)


def test_or_of_equalities_on_one_column_is_an_in():
    """Doris's FE rewrites `a = x OR a = y` to `a IN (x, y)` (SSB Q4.1's p_mfgr): pushed."""
    assert pushed("s = 'MFGR#1' or s = 'MFGR#2'") == ([("s", "in", ("MFGR#1", "MFGR#2"))], True)
    preds, exact = pushed("(i = 1 or (3 = i)) or i in (5, 7)")
    assert [(c, op, sorted(v)) for c, op, v in preds] == [("i", "in", [1, 3, 5, 7])] and exact
    assert pushed("i = 1 or s = 'a'") == ([], False)  # two columns: not one IN
    assert pushed("i = 1 or i > 5") == ([], False)
    assert pushed("i = 1 or i = i") == ([], False)
    assert not pushed("d = '1994-01-01' or d = '1994-01-02 10:00:00'")[1]
