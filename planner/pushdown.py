"""Predicate pushdown into storage: simple conjuncts become storage ColumnPredicates.

A conjunct `col <op> literal` (either side), `col IN (literals)`, `col BETWEEN a AND b`,
`col IS [NOT] NULL`, or an OR of `col = literal` / `col IN (...)` on one column (one IN, as
Doris's FE rewrites it) on a column of the scanned table becomes a ColumnPredicate that storage
uses to prune with the short key index and zone maps (and the planner partitions and buckets).
A literal may be numeric literals under `+ - *` (`0.06 - 0.01`, folded exactly), or a date
constant,
`DATE 'yyyy-mm-dd'` optionally plus or minus `INTERVAL n DAY|MONTH|YEAR` (folded here, as
Doris's FE folds constants). The Filter stays in the plan above the scan (EXPLAIN shows it);
`storage_predicates` also says whether the predicates are *exactly* the conjunct (every literal
converts to the column type without loss), in which case the executor does not evaluate the
Filter again. A conjunct that does not fit is simply not pushed.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from decimal import Decimal

from sqlglot import exp

from catalog.errors import DdlError
from catalog.values import parse_value
from planner.or_to_in import single_column_values

_OPS = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _column(scan, e: exp.Expression):
    if not isinstance(e, exp.Column) or e.name not in scan.output:
        return None
    return scan.columns[scan.output.index(e.name)]


def _literal(e: exp.Expression) -> str | None:
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
        return "-" + e.this.this
    if isinstance(e, exp.Literal):
        return e.this
    folded = _number(e) if isinstance(e, (exp.Add, exp.Sub, exp.Mul, exp.Paren)) else None
    return None if folded is None else format(folded, "f")


_ARITHMETIC = {exp.Add: lambda a, b: a + b, exp.Sub: lambda a, b: a - b,
               exp.Mul: lambda a, b: a * b}


def _number(e: exp.Expression) -> Decimal | None:
    """A constant of numeric literals under + - * (and parentheses, unary minus), computed
    exactly, as Doris's FE folds `0.06 - 0.01` to 0.05 before pushing it to the scan; None
    for anything else (division's result scale is left to the executor)."""
    if isinstance(e, exp.Paren):
        return _number(e.this)
    if isinstance(e, exp.Neg):
        inner = _number(e.this)
        return None if inner is None else -inner
    if isinstance(e, exp.Literal):
        if e.is_string or not re.fullmatch(r"\d+(\.\d*)?|\.\d+", e.this):
            return None
        return Decimal(e.this)
    fold = _ARITHMETIC.get(type(e))
    if fold is None:
        return None
    left, right = _number(e.this), _number(e.expression)
    return None if left is None or right is None else fold(left, right)


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _date_constant(e: exp.Expression) -> dt.date | None:
    """`DATE 'yyyy-mm-dd'` [+|- INTERVAL n DAY|MONTH|YEAR] as a date, else None."""
    if isinstance(e, exp.Cast) and e.to.this == exp.DataType.Type.DATE \
            and isinstance(e.this, exp.Literal) and e.this.is_string \
            and _ISO_DATE.fullmatch(e.this.this):
        try:
            return dt.date.fromisoformat(e.this.this)
        except ValueError:
            return None
    if isinstance(e, (exp.Add, exp.Sub)) and isinstance(e.expression, exp.Interval):
        base = _date_constant(e.this)
        iv = e.expression
        unit = iv.args.get("unit")
        if base is None or unit is None or not isinstance(iv.this, exp.Literal) \
                or not re.fullmatch(r"\d+", str(iv.this.this)):
            return None
        n = int(iv.this.this) * (1 if isinstance(e, exp.Add) else -1)
        return _shift(base, n, unit.name.upper())
    return None


def _shift(d: dt.date, n: int, unit: str) -> dt.date | None:
    """MySQL's DATE_ADD: months and years clamp the day to the month's last."""
    if unit == "DAY":
        return d + dt.timedelta(days=n)
    months = {"MONTH": n, "YEAR": 12 * n}.get(unit)
    if months is None:
        return None
    total = d.year * 12 + d.month - 1 + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        return None
    day = min(d.day, calendar.monthrange(year, month + 1)[1])
    return dt.date(year, month + 1, day)


def _exact(t, text: str, value) -> bool:
    """Whether `value` (parse_value of the literal `text`) is the literal exactly, so that the
    storage predicate selects exactly the rows the SQL comparison does."""
    if t.is_integer:
        return re.fullmatch(r"\s*-?\d+\s*", text) is not None
    if t.kind == "DECIMAL":
        return isinstance(value, Decimal) and value == Decimal(text)
    if t.kind == "DATE":
        return _ISO_DATE.fullmatch(text.strip()) is not None
    return t.kind in ("VARCHAR", "STRING") and value == text


def to_storage_predicates(conj: exp.Expression, scan) -> list:
    return storage_predicates(conj, scan)[0]


def storage_predicates(conj: exp.Expression, scan) -> tuple[list, bool]:
    """The conjunct's storage predicates, and whether they are exactly the conjunct."""
    from storage import ColumnPredicate

    from catalog.errors import DorisError
    types = scan_types(scan)
    exact = [True]

    def value(col: str, lit: exp.Expression, op: str = "in"):
        t = types.get(col)
        day = _date_constant(lit)
        if t is not None and day is not None and t.kind in ("DATE", "DATETIME"):
            if t.kind == "DATE":
                return day
            exact[0] = False  # the executor decides how DATETIME meets DATE
            return dt.datetime.combine(day, dt.time())
        text = _literal(lit)
        if t is None or text is None or t.is_float or t.is_json:  # JSON / VARIANT: refused above
            raise DdlError("not pushable")
        is_string = isinstance(lit, exp.Literal) and lit.is_string
        if (t.is_string or t.is_temporal) != is_string:
            raise DdlError("not pushable: comparison needs an implicit cast")
        parsed = parse_value(t, text)
        if not _exact(t, text, parsed):
            if t.kind == "DATE" and op in ("<", "!="):
                # '2021-02-28 12:00:00' reads as the day: but the DATE 2021-02-28 (midnight)
                # is below that time, so `d < day` and `d != day` would drop rows it selects
                raise DdlError("not pushable: a DATE against a time of day")
            exact[0] = False
        return parsed

    preds = _predicates(conj, scan, value, ColumnPredicate, DorisError)
    return preds, bool(preds) and exact[0]


def _predicates(conj, scan, value, ColumnPredicate, DorisError) -> list:

    try:
        if type(conj) in _OPS:
            op = _OPS[type(conj)]
            col, other = _column(scan, conj.this), conj.expression
            if col is None:
                col, other, op = _column(scan, conj.expression), conj.this, _FLIP[op]
            if col is None:
                return []
            return [ColumnPredicate(col, op, (value(col, other, op),))]
        if isinstance(conj, exp.In) and not conj.args.get("query"):
            col = _column(scan, conj.this)
            if col is None:
                return []
            return [ColumnPredicate(col, "in", tuple(value(col, v) for v in conj.expressions))]
        if isinstance(conj, (exp.Or, exp.Paren)):  # an OR not bound as IN (a derived one)
            found = single_column_values(conj, value_ok=lambda v: True)
            col = _column(scan, found[0]) if found is not None else None
            if col is None:
                return []
            return [ColumnPredicate(col, "in", tuple(value(col, v) for v in found[1]))]
        if isinstance(conj, exp.Between):
            col = _column(scan, conj.this)
            if col is None:
                return []
            return [ColumnPredicate(col, ">=", (value(col, conj.args["low"], ">="),)),
                    ColumnPredicate(col, "<=", (value(col, conj.args["high"], "<="),))]
        if isinstance(conj, exp.Is) and isinstance(conj.expression, exp.Null):
            col = _column(scan, conj.this)
            return [ColumnPredicate(col, "is_null", ())] if col else []
        if isinstance(conj, exp.Not) and isinstance(conj.this, exp.Is) and isinstance(conj.this.expression, exp.Null):
            col = _column(scan, conj.this.this)
            return [ColumnPredicate(col, "is_not_null", ())] if col else []
    except DorisError:
        return []
    return []


def scan_types(scan) -> dict:
    return scan.column_types
