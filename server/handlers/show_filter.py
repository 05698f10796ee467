"""WHERE, ORDER BY and LIMIT over a SHOW result.

Doris accepts a filter, an order and a limit after many SHOW statements (`SHOW TABLE STATUS
WHERE Engine = 'Doris'`, `SHOW VARIABLES WHERE Variable_name = 'x'`, `SHOW PARTITIONS FROM t
WHERE PartitionName = 'p1' ORDER BY PartitionId DESC LIMIT 1`, `SHOW TABLETS FROM t LIMIT 2,
3`). A SHOW result is a handful of metadata rows, so the predicate is evaluated per row over
the result's column names (case-insensitive); a value that reads as a number compares
numerically with a number, otherwise values compare as text, as Doris's string columns do.
Columns a statement filters on without showing them (SHOW TABLETS's IndexName) come in
`hidden`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa
import sqlglot
from sqlglot import exp

from catalog.errors import NotSupported, SyntaxError_, UnknownColumn
from server.results import RowsResult


@dataclass
class ShowTail:
    where: exp.Expression | None = None
    order: list[exp.Ordered] = field(default_factory=list)
    limit: int | None = None
    offset: int = 0

    def __bool__(self) -> bool:
        return self.where is not None or bool(self.order) or self.limit is not None \
            or bool(self.offset)


def _number(node) -> int:
    if node is None:
        return 0
    node = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else node
    if not isinstance(node, exp.Literal) or node.is_string:
        raise SyntaxError_(f"Syntax error: LIMIT needs a number, not {node.sql()}")
    return int(node.this)


def parse_tail(text: str) -> ShowTail:
    """`[WHERE ...] [ORDER BY ...] [LIMIT [offset,] n | LIMIT n OFFSET m]` (the text after a
    SHOW statement's own clauses)."""
    text = text.strip().rstrip(";").strip()
    if not text:
        return ShowTail()
    try:
        select = sqlglot.parse_one(f"SELECT * FROM _show {text}", read="doris")
    except sqlglot.errors.ParseError as e:
        raise SyntaxError_(f"Syntax error near '{text[:80]}'") from e
    if not isinstance(select, exp.Select) or select.args.get("group") or select.args.get("joins"):
        raise SyntaxError_(f"Syntax error near '{text[:80]}'")
    return tail_of(select)


def tail_of(node: exp.Expression) -> ShowTail:
    """The WHERE / ORDER BY / LIMIT / OFFSET a sqlglot node (exp.Show or exp.Select) carries."""
    where = node.args.get("where")
    order = node.args.get("order")
    limit = node.args.get("limit")
    return ShowTail(where.this if where is not None else None,
                    list(order.expressions) if order is not None else [],
                    _number(limit) if limit is not None else None,
                    _number(node.args.get("offset") or (limit.args.get("offset")
                                                        if isinstance(limit, exp.Limit) else None)))


def apply(result: RowsResult, tail: ShowTail, hidden: dict[str, list] | None = None) -> RowsResult:
    """`result` with its rows filtered, ordered and limited as `tail` says."""
    if not tail:
        return result
    table = pa.concat_tables(result.batches) if result.batches else None
    names = [c.name.lower() for c in result.columns]
    rows = [] if table is None else [list(r.values()) for r in table.to_pylist()]
    index = {n: i for i, n in enumerate(names)}
    extra = {k.lower(): v for k, v in (hidden or {}).items()}
    keep = list(range(len(rows)))
    if tail.where is not None:
        keep = [i for i in keep if _truth(_eval(tail.where, rows[i], index, extra, i))]
    for ordered in reversed(tail.order):  # stable sorts, last key first
        col = _order_column(ordered.this, index, extra, len(names))
        values = [_value_of(col, rows[i], index, extra, i) for i in keep]
        numeric = all(v is None or _as_number(v) is not None for v in values)
        key = dict(zip(keep, values))
        desc = bool(ordered.args.get("desc"))
        keep.sort(key=lambda i: _sort_key(key[i], numeric), reverse=desc)
    keep = keep[tail.offset:]
    if tail.limit is not None:
        keep = keep[:tail.limit]
    if table is None:
        return result
    return RowsResult(result.columns, [table.take(pa.array(keep, pa.int64()))])


def _order_column(node, index, extra, width) -> str | int:
    if isinstance(node, exp.Literal) and not node.is_string:
        pos = int(node.this)
        if not 1 <= pos <= width:
            raise UnknownColumn(f"Unknown column '{pos}' in 'order clause'")
        return pos - 1
    if isinstance(node, exp.Column):
        name = node.name.lower()
        if name not in index and name not in extra:
            raise UnknownColumn(f"Unknown column '{node.name}' in 'order clause'")
        return name
    raise NotSupported(f"ORDER BY {node.sql()} is not supported in SHOW")


def _value_of(col, row, index, extra, i):
    if isinstance(col, int):
        return row[col]
    return row[index[col]] if col in index else extra[col][i]


def _sort_key(v, numeric: bool):
    if v is None:
        return (0, 0)
    return (1, _as_number(v)) if numeric else (1, str(v))


def _as_number(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            try:
                return float(v)
            except ValueError:
                return None
    return None


def _truth(v) -> bool:
    return v is not None and bool(v)


def _compare(op: str, a, b):
    if a is None or b is None:
        return None
    na, nb = _as_number(a), _as_number(b)
    if na is not None and nb is not None and (not isinstance(a, str) or not isinstance(b, str)):
        a, b = na, nb
    else:
        a, b = str(a), str(b)
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


_OPS = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


def _like(value, pattern, case_insensitive: bool) -> bool | None:
    if value is None or pattern is None:
        return None
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch)
                    for ch in str(pattern))
    flags = re.DOTALL | (re.IGNORECASE if case_insensitive else 0)
    return re.fullmatch(regex, str(value), flags) is not None


def _eval(e: exp.Expression, row: list, index: dict, extra: dict, i: int):
    def ev(x):
        return _eval(x, row, index, extra, i)

    if isinstance(e, exp.Paren):
        return ev(e.this)
    if isinstance(e, exp.Column):
        name = e.name.lower()
        if name in index:
            return row[index[name]]
        if name in extra:
            return extra[name][i]
        raise UnknownColumn(f"Unknown column '{e.name}' in 'table list'")
    if isinstance(e, exp.Literal):
        return e.this if e.is_string else (_as_number(e.this))
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Neg):
        v = _as_number(ev(e.this))
        return None if v is None else -v
    if isinstance(e, exp.And):
        a, b = ev(e.this), ev(e.expression)
        if a is not None and not a or b is not None and not b:
            return False
        return None if a is None or b is None else True
    if isinstance(e, exp.Or):
        a, b = ev(e.this), ev(e.expression)
        if _truth(a) or _truth(b):
            return True
        return None if a is None or b is None else False
    if isinstance(e, exp.Not):
        v = ev(e.this)
        return None if v is None else not v
    if type(e) in _OPS:
        return _compare(_OPS[type(e)], ev(e.this), ev(e.expression))
    if isinstance(e, (exp.Like, exp.ILike)):
        return _like(ev(e.this), ev(e.expression), isinstance(e, exp.ILike))
    if isinstance(e, exp.In):
        v = ev(e.this)
        if v is None:
            return None
        return any(_compare("=", v, ev(x)) for x in e.expressions)
    if isinstance(e, exp.Between):
        v = ev(e.this)
        lo, hi = _compare(">=", v, ev(e.args["low"])), _compare("<=", v, ev(e.args["high"]))
        return None if lo is None or hi is None else lo and hi
    if isinstance(e, exp.Is):
        v = ev(e.this)
        target = e.expression
        if isinstance(target, exp.Null):
            return v is None
        return v is not None and bool(v) == bool(ev(target))
    raise NotSupported(f"Unsupported predicate in SHOW ... WHERE: {e.sql(dialect='doris')}")
